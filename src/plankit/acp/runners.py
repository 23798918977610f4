"""Running an EXECUTE command for an ACP session, so that ``session/cancel`` stops it.

Two ways, both coroutines on the agent's event loop returning a
:class:`~plankit.teddy.run.shell.CommandResult`:

- :func:`run_in_terminal` — in the client's terminal (``terminal/create``,
  ``wait_for_exit``, ``output``, ``kill``, ``release``) when the client advertises
  ``terminal``: the user sees the output live in their editor.  The terminal has a
  single output stream (reported as stdout).
- :func:`run_locally` — ``bash -c`` in a new session, stdin closed (never the ACP
  channel), stdout and stderr each kept to their first and last halves of the cap.

A timeout or a cancel stops the command (its whole process group, locally: SIGTERM,
then SIGKILL after 2 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from plankit.teddy.run.shell import CappedOutput, CommandResult

_GRACE = 2.0


def shell() -> str:
    """bash when there is one, else /bin/sh."""
    return shutil.which("bash") or "/bin/sh"


async def first(
    main: asyncio.Future[Any], cancel: asyncio.Event, timeout: float | None = None
) -> tuple[bool, bool]:
    """Wait for ``main``; (timed_out, cancelled) when it did not finish first."""
    stopper = asyncio.ensure_future(cancel.wait())
    try:
        done, _ = await asyncio.wait(
            {main, stopper}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        stopper.cancel()
    if main in done:
        return False, False
    return stopper not in done, stopper in done


class _Capped(CappedOutput):
    """A :class:`~plankit.teddy.run.shell.CappedOutput` filled from an asyncio stream."""

    async def read(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            self.add(chunk)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def run_locally(
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    cap: int,
    cancel: asyncio.Event,
) -> CommandResult:
    """Run ``command`` here; a cancel or the timeout stops its process group."""
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        shell(),
        "-c",
        command,
        cwd=cwd,
        env={**os.environ, **env},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    out, err = _Capped(cap), _Capped(cap)
    readers = asyncio.gather(out.read(proc.stdout), err.read(proc.stderr))
    waiter = asyncio.ensure_future(proc.wait())
    timed_out, cancelled = await first(waiter, cancel, timeout)
    if timed_out or cancelled:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            _signal_group(proc.pid, sig)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(waiter), _GRACE)
                break
    await waiter
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(readers, 5)  # a grandchild may hold the pipes open
    code = None if (timed_out or cancelled) else proc.returncode
    return CommandResult(
        code, time.monotonic() - started, out.text(), err.text(), timed_out, cancelled
    )


async def run_in_terminal(
    conn: Any,
    session_id: str,
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    cap: int,
    cancel: asyncio.Event,
    on_terminal: Callable[[str], Awaitable[None]] | None = None,
) -> CommandResult:
    """Run ``command`` in the client's terminal (``conn`` is the agent-side connection).

    ``on_terminal`` is told the terminal id as soon as it exists (to embed it in the
    tool call).
    """
    from acp.schema import EnvVariable

    started = time.monotonic()
    created = await conn.create_terminal(
        session_id=session_id,
        command=shell(),
        args=["-c", command],
        env=[EnvVariable(name=k, value=v) for k, v in env.items()],
        cwd=str(cwd),
        output_byte_limit=cap,
    )
    terminal_id: str = created.terminal_id
    try:
        if on_terminal is not None:
            await on_terminal(terminal_id)
        waiter = asyncio.ensure_future(
            conn.wait_for_terminal_exit(session_id=session_id, terminal_id=terminal_id)
        )
        timed_out, cancelled = await first(waiter, cancel, timeout)
        if timed_out or cancelled:
            await conn.kill_terminal(session_id=session_id, terminal_id=terminal_id)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(waiter), _GRACE * 2)
        output = await conn.terminal_output(session_id=session_id, terminal_id=terminal_id)
    finally:
        with contextlib.suppress(Exception):
            await conn.release_terminal(session_id=session_id, terminal_id=terminal_id)
    text: str = output.output
    if output.truncated:
        text = f"[… the client kept only the last {cap} bytes …]\n{text}"
    code: int | None = None
    if not (timed_out or cancelled):
        exited = waiter.result()
        code = exited.exit_code
        if code is None:
            number = signal.Signals.__members__.get(exited.signal or "")
            code = -number.value if number is not None else -1
    return CommandResult(code, time.monotonic() - started, text, "", timed_out, cancelled)
