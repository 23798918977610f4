"""``plankit acp run``: drive any ACP agent over stdio and show its plan live.

The client spawns ``AGENT [ARGS…]``, initializes (offering ``fs/read_text_file``
inside the working directory, and ``fs/write_text_file`` and ``terminal/*`` only when
the user asked for them, see :mod:`.host`), opens a session in the working
directory, sends the prompt and shows every update on a :class:`~.display.View` until
the turn ends.  Permission requests are answered by the policy: ``approve`` picks the
"allow once" option, ``deny`` the "reject once" one, ``ask`` asks at the terminal
(and denies when there is none).  A Ctrl-C while a question is asked gives it up:
the request is answered ``cancelled`` and ``session/cancel`` is sent.

The agent runs in a session of its own, so a terminal's Ctrl-C reaches only the
client: the first one sends ``session/cancel`` (the agent stops its work and records
the turn), a second one stops the agent (SIGTERM to its process group, SIGKILL at the
third).  Every line the agent sends is checked (:class:`~plankit.acp.wire.LineTransport`),
and everything it says is shown literally (:mod:`.display`).

Exit status (as acpx's): 0 the turn ended normally; 1 an error (the agent failed to
start or answered an error, or stopped with ``refusal``, ``max_tokens`` or
``max_turn_requests``); 5 a permission was denied; 130 cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal, TypeAlias, TypeVar, cast

from plankit.acp.asking import option_name
from plankit.acp.display import View
from plankit.acp.host import FileMethods, Files, Terminals
from plankit.acp.host import TerminalMethods as TerminalMethods  # also imported from here

Policy: TypeAlias = Literal["ask", "approve", "deny"]
T = TypeVar("T")

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_DENIED = 5
EXIT_CANCELLED = 130

AGENT_EXIT_WAIT = 10.0
"""Seconds the agent is given to exit once its stdin is closed, before SIGTERM (and as
long again before SIGKILL)."""


def _dump(model: Any) -> dict[str, Any]:
    data: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return data


def pick(options: list[dict[str, Any]], allow: bool) -> str | None:
    """The option a flag chooses: allow once (else always), or reject once (else always)."""
    kinds = ("allow_once", "allow_always") if allow else ("reject_once", "reject_always")
    for kind in kinds:
        for option in options:
            if option.get("kind") == kind:
                return str(option["optionId"])
    return None


def _not_offered(method: str, flag: str) -> Exception:
    from acp import RequestError

    details = f"{method} was not offered: the user did not start plankit acp run with {flag}"
    return RequestError(-32601, "Method not found", {"method": method, "details": details})


async def in_thread(work: Callable[[], T]) -> T:
    """Run ``work`` in a daemon thread of its own: unlike :func:`asyncio.to_thread`,
    a thread still blocked when the run ends never keeps the client from exiting."""
    import threading

    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(cast(T, result))

    def target() -> None:
        try:
            result = work()
        except BaseException as exc:  # handed to the awaiting coroutine
            with contextlib.suppress(RuntimeError):  # the loop has closed
                loop.call_soon_threadsafe(settle, None, exc)
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, result, None)

    threading.Thread(target=target, name="acp-ask", daemon=True).start()
    return await future


@dataclass(slots=True)
class PlanClient(FileMethods, TerminalMethods):
    """The ACP client (an ``acp.Client``): a view, a permission policy, files, terminals."""

    view: View
    """Where updates are shown."""
    policy: Policy
    """How permission requests are answered."""
    root: Path
    """The working directory (the session's ``cwd``)."""
    denied: int = 0
    """Permission requests denied (by the policy, the user, or for want of a terminal)."""
    files: Files = field(init=False)
    terminals: Terminals = field(init=False)
    writes: bool = False
    """Whether ``fs/write_text_file`` is offered (``--allow-writes``)."""
    terminal: bool = False
    """Whether ``terminal/*`` is offered (``--allow-terminal``)."""
    stop: threading.Event = field(default_factory=threading.Event)
    """Set by Ctrl-C: a question being asked is given up and answered ``cancelled``,
    and so is every later permission request."""

    def __post_init__(self) -> None:
        self.files = Files(self.root)
        self.terminals = Terminals(self.root)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.view.update(_dump(update))

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> Any:
        from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

        call = _dump(tool_call)
        choices = [_dump(o) for o in options]
        if self.stop.is_set():
            choice, how = None, "the turn is being cancelled"
        elif self.policy == "ask":
            choice = await in_thread(lambda: self.view.ask(call, choices, self.stop))
            how = "asked"
            if self.stop.is_set():
                choice, how = None, "Ctrl-C"
            elif choice is None:
                choice, how = pick(choices, allow=False), "no terminal to ask: denied"
        else:
            choice = pick(choices, allow=self.policy == "approve")
            how = f"--{self.policy}-all" if self.policy == "deny" else "--approve-all"
        if choice is None:
            self.denied += 1
            self.view.decided(call, "cancelled", how)
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        kind = next((c.get("kind") for c in choices if c.get("optionId") == choice), "")
        if str(kind).startswith("reject"):
            self.denied += 1
        self.view.decided(call, option_name(choices, choice), how)
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=choice)
        )

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[Any] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> Any:
        if not self.terminal:
            raise _not_offered("terminal/create", "--allow-terminal")
        return await TerminalMethods.create_terminal(
            self, session_id, command, args, env, cwd, output_byte_limit, **kwargs
        )

    def check_write(self) -> None:
        if not self.writes:
            raise _not_offered("fs/write_text_file", "--allow-writes")


class JsonTranscript:
    """Writes every JSON-RPC message as one NDJSON line: ``{"from", "message"}``."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out

    def __call__(self, event: Any) -> None:
        sender = "client" if event.direction.value == "outgoing" else "agent"
        self.out.write(json.dumps({"from": sender, "message": event.message}) + "\n")
        self.out.flush()


class QuietView:
    """A view that shows nothing (``--json``); asking goes to the terminal, if any."""

    def __init__(self) -> None:
        from plankit.acp.display import LineView

        self._asker = LineView(sys.stderr)

    def update(self, update: dict[str, Any]) -> None:
        pass

    def decided(self, tool_call: dict[str, Any], choice: str, how: str) -> None:
        pass

    def ask(
        self, tool_call: dict[str, Any], options: list[dict[str, Any]], stop: threading.Event
    ) -> str | None:
        return self._asker.ask(tool_call, options, stop)

    def note(self, text: str) -> None:
        print(text, file=sys.stderr)

    def close(self) -> None:
        pass


def _stop_code(reason: str, denied: int) -> int:
    if reason == "cancelled":
        return EXIT_CANCELLED
    if reason != "end_turn":
        return EXIT_ERROR
    return EXIT_DENIED if denied else EXIT_OK


def _signal_group(process: asyncio.subprocess.Process, sig: signal.Signals) -> None:
    """Send ``sig`` to the agent's process group (it leads a session of its own)."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)


async def end_agent_process(process: asyncio.subprocess.Process, grace: float) -> None:
    """End an agent the way a well-behaved one expects: its stdin closed, then ``grace``
    seconds to exit, then SIGTERM to its process group, then SIGKILL, each with the same
    grace (``plankit acp run`` and ``agentctl run`` both stop their agents so)."""
    if process.stdin is not None:
        with contextlib.suppress(OSError, RuntimeError):
            process.stdin.close()
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None:
            _signal_group(process, sig)
        try:
            await asyncio.wait_for(process.wait(), grace)
            break
        except TimeoutError:
            continue


@asynccontextmanager
async def agent_process(
    client: Any, command: list[str], *, cwd: Path, observers: list[Any]
) -> AsyncIterator[tuple[Any, asyncio.subprocess.Process]]:
    """Start the agent in a new session and connect to it over its stdio; on the way
    out, close its stdin and give it :data:`AGENT_EXIT_WAIT` seconds to finish."""
    from acp import connect_to_agent
    from plankit.acp.wire import LineTransport, notification_screen
    from plankit.jsonrpc import MAX_LINE_BYTES

    program = shutil.which(command[0]) or command[0]
    process = await asyncio.create_subprocess_exec(
        program,
        *command[1:],
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=None,
        env=dict(os.environ),
        cwd=cwd,
        start_new_session=True,
        limit=MAX_LINE_BYTES,
    )
    assert process.stdin is not None and process.stdout is not None
    transport = LineTransport(
        process.stdout,
        process.stdin,
        screen=notification_screen({"session/update": ("sessionId",)}),
    )
    conn = connect_to_agent(client, transport, observers=observers)
    try:
        yield conn, process
    finally:
        await conn.close()
        await end_agent_process(process, AGENT_EXIT_WAIT)


class Interrupts:
    """What Ctrl-C does: cancel the turn, then stop the agent."""

    def __init__(
        self, view: View, process: asyncio.subprocess.Process, stop: threading.Event
    ) -> None:
        self.view = view
        self.process = process
        self.stop = stop
        """Set at the first Ctrl-C: a pending permission request is answered
        ``cancelled``."""
        self.count = 0
        self.cancel: Callable[[], Any] | None = None
        """Sends ``session/cancel`` once a prompt runs."""
        self._tasks: set[asyncio.Task[Any]] = set()

    def __call__(self) -> None:
        self.count += 1
        self.stop.set()
        if self.count == 1 and self.cancel is not None:
            self.view.note("cancelling… (Ctrl-C again to stop the agent)")
            task = asyncio.ensure_future(self.cancel())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            return
        self.view.note("stopping the agent…")
        _signal_group(self.process, signal.SIGTERM if self.count <= 2 else signal.SIGKILL)


async def run_prompt(
    command: list[str],
    prompt: str,
    *,
    view: View,
    policy: Policy,
    cwd: Path,
    transcript: Any = None,
    writes: bool = False,
    terminal: bool = False,
) -> int:
    """Run one prompt against the agent ``command``; the exit status.  ``fs`` reads are
    always offered; writes and terminals only when ``writes`` / ``terminal``."""
    from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation

    from acp import Client, RequestError, text_block
    from plankit.acp.contract import version

    client = PlanClient(view, policy, cwd, writes=writes, terminal=terminal)
    observers = [transcript] if transcript is not None else []
    loop = asyncio.get_running_loop()
    interrupts: Interrupts | None = None
    try:
        async with agent_process(cast(Client, client), command, cwd=cwd, observers=observers) as (
            conn,
            process,
        ):
            interrupts = Interrupts(view, process, client.stop)
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signal.SIGINT, interrupts)
            try:
                init = await conn.initialize(
                    protocol_version=1,
                    client_capabilities=ClientCapabilities(
                        fs=FileSystemCapabilities(read_text_file=True, write_text_file=writes),
                        terminal=terminal,
                    ),
                    client_info=Implementation(
                        name="plankit", title="plankit acp run", version=version()
                    ),
                )
                if init.protocol_version != 1:
                    view.note(f"the agent speaks ACP version {init.protocol_version}, not 1")
                    return EXIT_ERROR
                session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
                session_id = session.session_id
                interrupts.cancel = lambda: conn.cancel(session_id=session_id)
                if interrupts.count:  # Ctrl-C while the session was being opened
                    return EXIT_CANCELLED
                response = await conn.prompt(session_id=session_id, prompt=[text_block(prompt)])
            finally:
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.remove_signal_handler(signal.SIGINT)
                await client.terminals.close()
            view.note(f"[done] {response.stop_reason}")
            return _stop_code(response.stop_reason, client.denied)
    except FileNotFoundError:
        view.note(f"plankit: cannot run the agent: '{command[0]}' not found")
        return EXIT_ERROR
    except PermissionError:
        view.note(f"plankit: cannot run the agent: '{command[0]}' is not executable")
        return EXIT_ERROR
    except RequestError as exc:
        view.note(f"plankit: the agent answered an error: {exc}")
        return EXIT_ERROR
    except ConnectionError:
        view.note("plankit: the agent closed the connection")
        return EXIT_CANCELLED if interrupts is not None and interrupts.count else EXIT_ERROR
    finally:
        view.close()


def make_view(as_json: bool, policy: Policy) -> tuple[View, Any]:
    """The view for a run and the NDJSON transcript writer (``--json``), if any."""
    if as_json:
        return QuietView(), JsonTranscript(sys.stdout)
    if sys.stdout.isatty():
        from plankit.acp.display import LiveView

        return LiveView(), None
    from plankit.acp.display import LineView

    return LineView(sys.stdout), None


class Both:
    """Two transcript writers as one."""

    def __init__(self, first: Any, second: Any) -> None:
        self.first, self.second = first, second

    def __call__(self, event: Any) -> None:
        self.first(event)
        self.second(event)


def board_transcript(cwd: Path) -> tuple[JsonTranscript, IO[str]]:
    """A transcript in ``.plankit/acp/`` of ``cwd`` (``--board``): ``plankit board``
    finds it there and shows the agent's plan as it changes."""
    import datetime as _dt

    folder = cwd / ".plankit" / "acp"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    handle = (folder / f"run-{stamp}.jsonl").open("x", encoding="utf-8")
    return JsonTranscript(handle), handle


def run(
    command: list[str],
    prompt: str,
    *,
    policy: Policy,
    as_json: bool,
    cwd: Path,
    board: bool = False,
    writes: bool = False,
    terminal: bool = False,
) -> int:
    """``plankit acp run``: the exit status."""
    view, transcript = make_view(as_json, policy)
    handle: IO[str] | None = None
    if board:
        kept, handle = board_transcript(cwd)
        transcript = Both(transcript, kept) if transcript is not None else kept
    try:
        return asyncio.run(
            run_prompt(
                command,
                prompt,
                view=view,
                policy=policy,
                cwd=cwd,
                transcript=transcript,
                writes=writes,
                terminal=terminal,
            )
        )
    finally:
        if handle is not None:
            handle.close()
