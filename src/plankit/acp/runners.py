"""Running an EXECUTE command for an ACP session, so that ``session/cancel`` stops it.

Two ways, both coroutines on the agent's event loop returning a
:class:`~plankit.teddy.run.shell.CommandResult`:

- :func:`run_in_terminal` — in the client's terminal (``terminal/create``,
  ``wait_for_exit``, ``output``, ``kill``, ``release``) when the client advertises
  ``terminal``: the user sees the output live in their editor.  The terminal has a
  single output stream (reported as stdout).
- :func:`run_locally` — ``bash -c`` in a new session, stdin closed (never the ACP
  channel), stdout and stderr each kept to their first and last halves of the cap;
  started and stopped as :class:`~plankit.teddy.run.shell.Launch` says, so that what
  the command leaves running is stopped when it ends, as with ``teddy execute``.

A timeout or a cancel stops the command (locally: everything it started, SIGTERM, then
SIGKILL after a grace period).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from plankit.teddy.run.shell import CappedOutput, CommandResult, Launch, shell

_GRACE = 2.0


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


async def run_locally(
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    cap: int,
    cancel: asyncio.Event,
) -> CommandResult:
    """Run ``command`` here; a cancel or the timeout stops it and all it started, and
    what it leaves running when it ends is stopped too (:class:`Launch`)."""
    started = time.monotonic()
    launch = Launch(command)
    try:
        proc = await asyncio.create_subprocess_exec(
            *launch.argv,
            cwd=cwd,
            env=launch.environment(env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            pass_fds=launch.pass_fds,
        )
    except BaseException:
        launch.close()
        raise
    launch.spawned(proc.pid)
    assert proc.stdout is not None and proc.stderr is not None
    out, err = _Capped(cap), _Capped(cap)
    readers = asyncio.gather(out.read(proc.stdout), err.read(proc.stderr))
    waiter = asyncio.ensure_future(proc.wait())
    timed_out, cancelled = await first(waiter, cancel, timeout)
    if timed_out or cancelled:
        launch.terminate()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(waiter), launch.grace)
        if not waiter.done():
            launch.kill()
    await waiter
    code, stopped = await asyncio.to_thread(
        launch.finish, proc.returncode, stopped_early=timed_out or cancelled
    )
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(readers, 5)  # a process that escaped may hold the pipes
    if timed_out or cancelled:
        code, stopped = None, 0
    return CommandResult(
        code,
        time.monotonic() - started,
        out.text(),
        err.text(),
        timed_out,
        cancelled,
        stopped,
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
