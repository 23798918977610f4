"""Running an EXECUTE command: its own session, a timeout, capped output, nothing left behind.

The command runs under bash (or /bin/sh when there is no bash) in a new session.  On
Linux it runs below :mod:`~plankit.teddy.run.reaper`, a small supervisor that is a
child subreaper: when the shell exits, every process the command left running is
stopped — ``cmd &``, a subshell's ``(cmd &)``, ``setsid cmd``, ``nohup cmd``, a
daemon's double fork alike — with SIGTERM, then SIGKILL after 2 s, and the result
says how many there were.  Elsewhere the command's process group is stopped that way.
A timeout or Ctrl-C stops the command and everything it started the same way.

stdout and stderr are read as they come, in the calling thread; each keeps its first
and last ``cap // 2`` bytes and says how much was cut in between.  Reading ends when
the command has ended: what the pipes hold is taken, and a process that escaped and
still holds a pipe open delays nothing.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

_GRACE = 2.0  # seconds between SIGTERM and SIGKILL (the reaper's too)
_READ = 65536

SUPERVISE = sys.platform == "linux"
"""Whether commands run below the reaper (Linux); elsewhere only their process group
is stopped.  Tests turn it off to check the fallback."""


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a command did."""

    exit_code: int | None
    """The exit status (negative for a signal); None when it was stopped by teddy."""
    duration: float
    """Wall-clock seconds."""
    stdout: str
    """Captured standard output (cut in the middle when over the cap)."""
    stderr: str
    """Captured standard error (cut in the middle when over the cap)."""
    timed_out: bool = False
    """Stopped because it ran past the timeout."""
    interrupted: bool = False
    """Stopped because the user pressed Ctrl-C."""
    stopped: int = 0
    """Processes the command left running when it ended (a server started with ``&``, a
    daemon), which were stopped; 0 when there were none or the command was stopped."""

    @property
    def ok(self) -> bool:
        """Whether the command finished with exit status 0."""
        return self.exit_code == 0 and not self.timed_out and not self.interrupted


class CappedOutput:
    """Keeps the first and the last ``cap // 2`` bytes of a stream fed to :meth:`add`."""

    def __init__(self, cap: int) -> None:
        self.half = max(1, cap // 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        """Take the next chunk of the stream."""
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            excess = len(self.tail) - self.half
            if excess > 0:
                del self.tail[:excess]
                self.dropped += excess

    def text(self) -> str:
        """What was kept, with a marker saying how much was cut in between."""
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        if self.dropped:
            return f"{head}\n[… {self.dropped} bytes cut …]\n{tail}"
        return head + tail


class _Capture(CappedOutput):
    """A :class:`CappedOutput` filled from a pipe, read without blocking."""

    def __init__(self, stream: IO[bytes], cap: int) -> None:
        super().__init__(cap)
        self.stream = stream
        self.fd = stream.fileno()
        self.ended = False
        os.set_blocking(self.fd, False)

    def take(self, chunks: int = 16) -> None:
        """Read what the pipe holds now (at most ``chunks`` reads); note its end."""
        for _ in range(chunks):
            if self.ended:
                return
            try:
                chunk = os.read(self.fd, _READ)
            except BlockingIOError:
                return
            if chunk:
                self.add(chunk)
            else:
                self.ended = True


class _Status:
    """The reaper's status pipe: ``pid N`` when the shell runs, ``exit C stopped S`` at
    the end (see :mod:`~plankit.teddy.run.reaper`)."""

    def __init__(self, fd: int) -> None:
        self.fd: int | None = fd
        self.data = b""

    def take(self, *, wait: bool) -> None:
        """Read what was written (``wait``: up to the end, once the reaper has exited)."""
        import select

        while self.fd is not None:
            if not wait and not select.select([self.fd], [], [], 0)[0]:
                return
            chunk = os.read(self.fd, 4096)
            if not chunk:
                self.close()
            self.data += chunk

    def field(self, name: str) -> int | None:
        """The number after ``name`` in what was read so far."""
        words = self.data.decode("ascii", "replace").split()
        for key, value in itertools.pairwise(words):
            if key == name:
                try:
                    return int(value)
                except ValueError:
                    return None
        return None

    def close(self) -> None:
        """Release the pipe."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def shell() -> str:
    """bash when there is one, else /bin/sh."""
    return shutil.which("bash") or "/bin/sh"


def _signal_group(pgid: int, sig: signal.Signals) -> bool:
    """Send ``sig`` to process group ``pgid``; whether the group was there."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _count_group(pgid: int) -> int:
    """How many processes group ``pgid`` has (at least 1: it was found to exist)."""
    try:
        listed = subprocess.run(
            ["ps", "-A", "-o", "pgid="], capture_output=True, text=True, check=False
        ).stdout.split()
    except OSError:
        return 1
    return max(1, listed.count(str(pgid)))


def _stop_group(pgid: int) -> int:
    """Stop what is left of an ended command's process group; how many it had."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return 0
    count = _count_group(pgid)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if not _signal_group(pgid, sig):
            return count
        deadline = time.monotonic() + _GRACE
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, 0)
            except (ProcessLookupError, PermissionError):
                return count
            time.sleep(0.02)  # not our children: their end cannot be waited for
    return count


class Launch:
    """How one command is started and stopped, whatever spawns it (:func:`run_command`
    with :mod:`subprocess`, ``teddy acp`` with asyncio).

    Spawn :attr:`argv` in a new session with :meth:`environment` and :attr:`pass_fds`,
    stdin closed, then call :meth:`spawned` (or :meth:`close` when it failed).  To stop
    it, :meth:`terminate`, then :meth:`kill` when it has not ended :attr:`grace` seconds
    later.  Once it has ended, :meth:`finish` gives the shell's exit status and how many
    leftover processes were stopped.
    """

    def __init__(self, command: str, *, program: list[str] | None = None) -> None:
        self.argv = program if program is not None else [shell(), "-c", command]
        """What to spawn: the reaper with the shell below it, or the shell alone
        (``program``, a path and its arguments, in place of the shell: an ACP
        client's terminal)."""
        self.pass_fds: tuple[int, ...] = ()
        """File descriptors the spawned process keeps (the status pipe's end)."""
        self.grace = _GRACE
        """Seconds from :meth:`terminate` until :meth:`kill` is due."""
        self.pid: int | None = None
        self._status: _Status | None = None
        if SUPERVISE and sys.executable:
            read_end, write_end = os.pipe()
            self._status, self.pass_fds = _Status(read_end), (write_end,)
            reaper = os.fspath(Path(__file__).with_name("reaper.py"))
            self.argv = [sys.executable, "-I", "-S", reaper, str(write_end), "-", *self.argv]
            self.grace = 3 * _GRACE  # the reaper's grace for the shell, then its leftovers'

    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        """The environment to spawn with: this process's, with ``env`` on top."""
        environ = {**os.environ, **env}
        if self._status is not None:  # the reaper's Python may change LC_CTYPE (PEP 538)
            lc_ctype = environ.get("LC_CTYPE")
            self.argv[5] = "-" if lc_ctype is None else "=" + lc_ctype
        return environ

    def spawned(self, pid: int) -> None:
        """The process ``pid`` runs: the status pipe's far end is its alone now."""
        self.pid = pid
        fds, self.pass_fds = self.pass_fds, ()
        for fd in fds:
            os.close(fd)

    def terminate(self) -> None:
        """Ask the command to stop: SIGTERM to it (and, from the reaper, to everything
        it started)."""
        if self.pid is not None:
            _signal_group(self.pid, signal.SIGTERM)

    def kill(self) -> None:
        """Stop the command now (SIGKILL)."""
        if self.pid is None:
            return
        _signal_group(self.pid, signal.SIGKILL)
        if self._status is not None:
            self._status.take(wait=False)
            shell_pid = self._status.field("pid")
            if shell_pid is not None:
                _signal_group(shell_pid, signal.SIGKILL)

    def finish(self, returncode: int | None, *, stopped_early: bool) -> tuple[int | None, int]:
        """(the shell's exit status, leftover processes stopped) once the spawned
        process ended with ``returncode``; without the reaper, this stops what is left
        of the shell's process group (also after a timeout or Ctrl-C: what ignored the
        SIGTERM).  ``stopped_early``: teddy stopped the command (no leftovers are counted)."""
        try:
            if self._status is None:
                leftovers = 0 if self.pid is None else _stop_group(self.pid)
                return returncode, 0 if stopped_early else leftovers
            self._status.take(wait=True)
            code = self._status.field("exit")
            return (returncode if code is None else code), self._status.field("stopped") or 0
        finally:
            self.close()

    def close(self) -> None:
        """Release the pipes."""
        for fd in self.pass_fds:
            os.close(fd)
        self.pass_fds = ()
        if self._status is not None:
            self._status.close()


class _TimedOut(Exception):
    pass


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux ≥ 5.3, or it has ended already
        return None


def _pump(proc: subprocess.Popen[bytes], captures: list[_Capture], deadline: float) -> None:
    """Read the pipes until the process ends; :class:`_TimedOut` at ``deadline``."""
    import selectors

    pidfd = _pidfd(proc.pid)
    try:
        with selectors.DefaultSelector() as selector:
            for capture in captures:
                selector.register(capture.fd, selectors.EVENT_READ, capture)
            if pidfd is not None:
                selector.register(pidfd, selectors.EVENT_READ, None)
            while proc.poll() is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _TimedOut
                # without a pidfd, the end of the process is noticed by polling
                for key, _ in selector.select(left if pidfd is not None else min(left, 0.05)):
                    capture = key.data
                    if capture is not None:
                        capture.take()
                        if capture.ended:
                            selector.unregister(capture.fd)
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _stop(proc: subprocess.Popen[bytes], launch: Launch) -> None:
    """Stop a running command: SIGTERM, then SIGKILL after a grace period."""
    launch.terminate()
    try:
        proc.wait(timeout=launch.grace)
        return
    except subprocess.TimeoutExpired:
        pass
    launch.kill()
    proc.wait()


def run_command(
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str] = {},
    timeout: float = 600.0,
    cap: int = 65536,
) -> CommandResult:
    """Run ``command`` in a shell; Ctrl-C stops it and returns ``interrupted=True``.

    Whatever the command left running when its shell exited is stopped too
    (``stopped`` says how many); reading its output never waits for them.
    """
    started = time.monotonic()
    launch = Launch(command)
    try:
        proc = subprocess.Popen(
            launch.argv,
            cwd=cwd,
            env=launch.environment(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            pass_fds=launch.pass_fds,
        )
    except BaseException:
        launch.close()
        raise
    timed_out = interrupted = False
    captures: list[_Capture] = []
    try:
        # a Ctrl-C may land anywhere from here on (on a busy machine the command can be
        # well under way before this process gets the processor back): the command must
        # be stopped whatever step it interrupts, not only the wait
        launch.spawned(proc.pid)
        assert proc.stdout is not None and proc.stderr is not None
        captures.append(_Capture(proc.stdout, cap))
        captures.append(_Capture(proc.stderr, cap))
        _pump(proc, captures, started + timeout)
    except _TimedOut:
        timed_out = True
        _stop(proc, launch)
    except KeyboardInterrupt:
        interrupted = True
        launch.spawned(proc.pid)  # when the Ctrl-C came before it: known, to be stopped
        _stop(proc, launch)
    code, stopped = launch.finish(proc.returncode, stopped_early=timed_out or interrupted)
    assert proc.stdout is not None and proc.stderr is not None  # both are pipes
    streams = (proc.stdout, proc.stderr)
    while len(captures) < 2:
        captures.append(_Capture(streams[len(captures)], cap))
    for capture in captures:  # what the pipes hold; never their end (an escapee may hold it)
        capture.take(chunks=64)
        capture.stream.close()
    if timed_out or interrupted:
        code, stopped = None, 0
    return CommandResult(
        code,
        time.monotonic() - started,
        captures[0].text(),
        captures[1].text(),
        timed_out,
        interrupted,
        stopped,
    )
