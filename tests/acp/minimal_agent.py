"""A minimal ACP agent written with the SDK, for ``plankit acp run`` tests.

It sends a three-entry plan (no ``_meta``), asks permission for one tool call, writes
``minimal.txt`` through the client's fs when allowed, updates the plan as it goes
(adding a fourth entry on the way), and ends the turn.
"""

from __future__ import annotations

import asyncio
from typing import Any

from acp.schema import (
    AgentCapabilities,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    ToolCallUpdate,
)

import acp


class Minimal:
    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=1, agent_capabilities=AgentCapabilities())

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        self.cwd = cwd
        return NewSessionResponse(session_id="minimal-1")

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        async def plan(*states: str) -> None:
            names = ["Read the request", "Write minimal.txt", "Say goodbye", "Double-check"]
            entries = [
                acp.plan_entry(names[i], priority="high" if i == 1 else "medium", status=s)  # type: ignore[arg-type]
                for i, s in enumerate(states)
            ]
            await self.conn.session_update(session_id, acp.update_plan(entries))

        await plan("in_progress", "pending", "pending")
        await plan("completed", "in_progress", "pending")
        await self.conn.session_update(
            session_id,
            acp.start_tool_call("w1", "Write minimal.txt", kind="edit", status="pending"),
        )
        answer = await self.conn.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate(tool_call_id="w1", title="Write minimal.txt"),
            options=[
                PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
                PermissionOption(option_id="no", name="Reject", kind="reject_once"),
            ],
        )
        allowed = answer.outcome.outcome == "selected" and answer.outcome.option_id == "yes"
        if allowed:
            await self.conn.write_text_file(
                session_id=session_id, path=f"{self.cwd}/minimal.txt", content="written\n"
            )
        await self.conn.session_update(
            session_id, acp.update_tool_call("w1", status="completed" if allowed else "failed")
        )
        await plan("completed", "completed", "in_progress", "pending")
        text = prompt[0].text if prompt else ""
        await self.conn.session_update(
            session_id, acp.update_agent_message_text(f"you said: {text}")
        )
        await plan("completed", "completed", "completed", "completed")
        return PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(acp.run_agent(Minimal()))
