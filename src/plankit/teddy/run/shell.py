"""Running an EXECUTE command: a shell in its own process group, a timeout, capped output.

The command runs under bash (or /bin/sh when there is no bash) in a new session, so
that stopping it — on timeout or on Ctrl-C — stops its whole process group.  stdout
and stderr are read concurrently; each keeps its first and last ``cap // 2`` bytes and
says how much was cut in between.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

_GRACE = 2.0  # seconds between SIGTERM and SIGKILL


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
    """A :class:`CappedOutput` filled by a thread reading a pipe."""

    def __init__(self, stream: IO[bytes], cap: int) -> None:
        super().__init__(cap)
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream: IO[bytes]) -> None:
        while chunk := stream.read(65536):
            self.add(chunk)
        stream.close()

    def text(self) -> str:
        self.thread.join(timeout=5)
        return super().text()


def _shell() -> str:
    return shutil.which("bash") or "/bin/sh"


def _stop(proc: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=_GRACE)
            return
        except subprocess.TimeoutExpired:
            continue


def run_command(
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str] = {},
    timeout: float = 600.0,
    cap: int = 65536,
) -> CommandResult:
    """Run ``command`` in a shell; Ctrl-C stops it and returns ``interrupted=True``."""
    started = time.monotonic()
    proc = subprocess.Popen(
        [_shell(), "-c", command],
        cwd=cwd,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    timed_out = interrupted = False
    captures: list[_Capture] = []
    try:
        # a Ctrl-C may land anywhere from here on: the command must be stopped whatever
        # step it interrupts, not only the wait
        captures.append(_Capture(proc.stdout, cap))
        captures.append(_Capture(proc.stderr, cap))
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _stop(proc)
    except KeyboardInterrupt:
        interrupted = True
        _stop(proc)
    streams = (proc.stdout, proc.stderr)
    while len(captures) < 2:  # the stopped command's pipes end at once
        captures.append(_Capture(streams[len(captures)], cap))
    out, err = captures
    code = None if (timed_out or interrupted) else proc.returncode
    return CommandResult(
        code, time.monotonic() - started, out.text(), err.text(), timed_out, interrupted
    )
