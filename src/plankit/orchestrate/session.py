"""One ACP agent of a run: started, prompted, stopped, and never left behind.

:class:`AgentSession` starts the agent's command in a process group of its own (its
standard error goes to a log file), initializes it offering ``fs`` and ``terminal``
(:mod:`.client`), opens a session in the given directory with the agentflow MCP server
among ``mcpServers``, and runs prompts.  A prompt ends with the agent's stop reason, or
is stopped: when the run is stopping (Ctrl-C, a lost lease) or the turn outlives its
timeout, the agent gets ``session/cancel`` and a few seconds to end the turn.  On the
way out every terminal it started is killed, its stdin is closed, and its whole process
group gets SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from plankit.errors import PlankitError
from plankit.orchestrate.client import Record, RunClient

CANCEL_GRACE = 10.0
"""Seconds an agent has to end its turn after ``session/cancel``."""
EXIT_GRACE = 5.0
"""Seconds an agent has to exit once its stdin is closed (then SIGTERM, then SIGKILL)."""


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """How a prompt ended."""

    stop_reason: str | None
    """The agent's stop reason (``end_turn``, ``refusal``, ``cancelled`` …), or None when
    it gave none (it crashed, or answered an error)."""
    problem: str | None = None
    """Why the turn did not end well, in a few words (None for ``end_turn``)."""


def mcp_server(env: dict[str, str]) -> Any:
    """The agentflow MCP server as an ``mcpServers`` entry (stdio), with the session's
    environment."""
    from acp.schema import EnvVariable, McpServerStdio

    found = shutil.which("agentctl")
    if found is not None:
        command, args = found, ["mcp"]
    else:
        command = sys.executable
        args = ["-c", "from plankit.agentflow.cli import main; main()", "mcp"]
    return McpServerStdio(
        name="agentflow",
        command=command,
        args=args,
        env=[EnvVariable(name=k, value=v) for k, v in env.items()],
    )


class AgentSession:
    """An agent started for one piece of work (see the module documentation)."""

    def __init__(
        self,
        command: list[str],
        cwd: Path,
        *,
        env: dict[str, str],
        log: Path,
        transcript: Path | None,
        stop: asyncio.Event,
    ) -> None:
        self.command = command
        self.cwd = cwd
        self.env = env
        self.log = log
        self.transcript = transcript
        self.stop = stop
        self.record = Record()
        self.client = RunClient(cwd, env, self.record)
        self.process: asyncio.subprocess.Process | None = None
        self.started = 0.0
        """When the command was started (``time.monotonic``)."""
        self.ready = 0.0
        """When its session was open."""
        self.session_id = ""
        self._conn: Any = None
        self._handles: list[Any] = []

    async def __aenter__(self) -> AgentSession:
        try:
            await self._start()
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _start(self) -> None:
        from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation

        from acp import Client, connect_to_agent
        from plankit.acp.contract import version
        from plankit.acp.wire import LineTransport
        from plankit.jsonrpc import MAX_LINE_BYTES

        self.log.parent.mkdir(parents=True, exist_ok=True)
        err = self.log.open("ab")
        self._handles.append(err)
        if self.transcript is not None:
            self.record.out = self.transcript.open("a", encoding="utf-8")
            self._handles.append(self.record.out)
        program = shutil.which(self.command[0]) or self.command[0]
        self.started = time.monotonic()
        try:
            self.process = await asyncio.create_subprocess_exec(
                program,
                *self.command[1:],
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=err,
                env={**os.environ, **self.env},
                cwd=self.cwd,
                start_new_session=True,
                limit=MAX_LINE_BYTES,
            )
        except OSError as exc:
            raise AgentFailed(f"cannot start {self.command[0]!r}: {exc.strerror or exc}") from None
        assert self.process.stdin is not None and self.process.stdout is not None
        transport = LineTransport(self.process.stdout, self.process.stdin)
        self._conn = connect_to_agent(cast(Client, self.client), transport)
        init = await self._guard(
            self._conn.initialize(
                protocol_version=1,
                client_capabilities=ClientCapabilities(
                    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
                    terminal=True,
                ),
                client_info=Implementation(name="plankit", title="agentctl run", version=version()),
            ),
            "initialize",
        )
        if init.protocol_version != 1:
            raise AgentFailed(f"the agent speaks ACP version {init.protocol_version}, not 1")
        opened = await self._guard(
            self._conn.new_session(cwd=str(self.cwd), mcp_servers=[mcp_server(self.env)]),
            "session/new",
        )
        self.session_id = opened.session_id
        self.ready = time.monotonic()

    async def _guard(self, call: Any, what: str) -> Any:
        """Await a request; an agent that fails, exits or is stopped raises AgentFailed."""
        from acp import RequestError

        request = asyncio.ensure_future(call)
        stopper = asyncio.ensure_future(self.stop.wait())
        try:
            done, _ = await asyncio.wait(
                {request, stopper}, timeout=120, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            stopper.cancel()
        if request not in done:
            request.cancel()
            raise AgentFailed(f"{what} was stopped" if done else f"{what} got no answer")
        try:
            return request.result()
        except RequestError as exc:
            raise AgentFailed(f"the agent answered {what} with an error: {exc}") from None
        except (ConnectionError, EOFError, OSError):
            raise AgentFailed(self._exit_text(f"the agent exited during {what}")) from None

    def _exit_text(self, text: str) -> str:
        code = self.process.returncode if self.process is not None else None
        return f"{text} (exit status {code})" if code is not None else text

    async def prompt(self, text: str, timeout: float) -> TurnEnd:
        """One turn: the prompt, then its stop reason; see :class:`TurnEnd`."""
        from acp import RequestError, text_block

        request = asyncio.ensure_future(
            self._conn.prompt(session_id=self.session_id, prompt=[text_block(text)])
        )
        stopper = asyncio.ensure_future(self.stop.wait())
        exited = asyncio.ensure_future(self._exited())
        try:
            done, _ = await asyncio.wait(
                {request, stopper, exited}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            stopper.cancel()
        if request not in done and exited not in done:
            why = "stopped" if stopper in done else f"timed out after {timeout:g} s"
            with contextlib.suppress(Exception):
                await self._conn.cancel(session_id=self.session_id)
            with contextlib.suppress(Exception):
                await asyncio.wait({request, exited}, timeout=CANCEL_GRACE,
                                   return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
            exited.cancel()
            request.cancel()
            return TurnEnd("cancelled", f"the turn was {why}")
        exited.cancel()
        if request not in done:
            await asyncio.wait({request}, timeout=1)
            if not request.done():
                request.cancel()
                return TurnEnd(None, self._exit_text("the agent exited during its turn"))
        try:
            reason = str(request.result().stop_reason)
        except RequestError as exc:
            return TurnEnd(None, f"the agent answered the prompt with an error: {exc}")
        except (ConnectionError, EOFError, OSError, asyncio.CancelledError):
            return TurnEnd(None, self._exit_text("the agent exited during its turn"))
        if reason == "end_turn":
            return TurnEnd(reason)
        return TurnEnd(reason, f"the agent stopped with {reason}")

    async def _exited(self) -> None:
        if self.process is not None:
            await self.process.wait()

    async def close(self) -> None:
        """Kill its terminals, close its stdin, end its process group."""
        with contextlib.suppress(Exception):
            await self.client.terminals.close()
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await self._conn.close()
        process = self.process
        if process is not None:
            from plankit.acp.client import end_agent_process

            await end_agent_process(process, EXIT_GRACE)
            # Whatever the agent left in its group goes with it.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
        for handle in self._handles:
            with contextlib.suppress(OSError):
                handle.close()
        self._handles.clear()


class AgentFailed(PlankitError):
    """The agent could not be started or did not answer; the message says why."""
