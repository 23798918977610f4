"""An ACP agent (SDK) for ``plankit acp run`` tests, in one of two modes (``$AGENT_MODE``):

- ``stubborn``: the prompt never ends and ``session/cancel`` is ignored; the agent
  writes its process id to ``$AGENT_DIR/pid`` when the prompt starts and touches
  ``$AGENT_DIR/cancelled`` when a cancel arrives (only a signal stops it);
- ``markup``: sends a plan, a tool call (asking permission) and a message full of
  rich markup (``[bold]``, ``[/]``) and terminal control sequences, then ends the turn.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
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

MODE = os.environ.get("AGENT_MODE", "markup")
DIR = Path(os.environ.get("AGENT_DIR", "."))

TITLE = "[bold]Loud[/bold] plan"
ENTRY = "[red]first[/red] step [/]"
TOOL = 'echo "[/] x"'
MESSAGE = "[blink]hello[/blink] \x1b]0;pwned\x07 done"


class Scripted:
    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=1, agent_capabilities=AgentCapabilities())

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id="scripted-1")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        (DIR / "cancelled").touch()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        if MODE == "stubborn":
            part = DIR / "pid.part"
            part.write_text(str(os.getpid()), encoding="utf-8")
            part.rename(DIR / "pid")
            await asyncio.Event().wait()  # forever, whatever the client says
        update = acp.update_plan([acp.plan_entry(ENTRY, status="in_progress")])
        update.field_meta = {"plankit": {"title": TITLE}}
        await self.conn.session_update(session_id, update)
        await self.conn.session_update(
            session_id, acp.start_tool_call("t1", TOOL, kind="execute", status="pending")
        )
        await self.conn.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate(tool_call_id="t1", title=TOOL),
            options=[PermissionOption(option_id="yes", name="[bold]Allow[/]", kind="allow_once")],
        )
        await self.conn.session_update(session_id, acp.update_tool_call("t1", status="completed"))
        await self.conn.session_update(session_id, acp.update_agent_message_text(MESSAGE))
        done = acp.update_plan([acp.plan_entry(ENTRY, status="completed")])
        done.field_meta = {"plankit": {"title": TITLE}}
        await self.conn.session_update(session_id, done)
        return PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(acp.run_agent(Scripted()))
