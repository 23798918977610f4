"""An ACP agent (the SDK's) that leaves its terminal running: for the client tests.

Its prompt is a shell command; it runs it in the client's terminal with ``bash -c``,
waits until the file ``started`` exists in the working directory, and ends the turn
without killing or releasing the terminal.  The client must stop what it started.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from acp.schema import AgentCapabilities, InitializeResponse, NewSessionResponse, PromptResponse

import acp


class LeavesItRunning:
    def __init__(self) -> None:
        self.conn: Any = None
        self.cwd = ""

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=1, agent_capabilities=AgentCapabilities())

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        self.cwd = cwd
        return NewSessionResponse(session_id="terminal-1")

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        command = prompt[0].text
        await self.conn.create_terminal(
            session_id=session_id, command="bash", args=["-c", command], cwd=self.cwd
        )
        while not os.path.exists(os.path.join(self.cwd, "started")):
            await asyncio.sleep(0.02)
        await self.conn.session_update(
            session_id, acp.update_agent_message_text("left the terminal running")
        )
        return PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(acp.run_agent(LeavesItRunning()))
