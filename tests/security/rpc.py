"""Talking JSON-RPC to a server over real pipes, one line at a time, as a hostile
client would: raw bytes in, each answer read back with a deadline.

Also the malformed lines both protocols must answer, with the error code each gets
and the id the answer must carry.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from tests.waiting import DEADLINE

NESTED = b"[" * 100_000 + b"]" * 100_000
"""A line nested a hundred thousand levels deep."""

BAD_LINES: list[tuple[str, bytes, int, Any]] = [
    ("empty array", b"[]", -32600, None),
    ("array of numbers", b"[1,2,3]", -32600, None),
    ("batch", b'[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}]', -32600, None),
    ("number", b"123", -32600, None),
    ("string", b'"str"', -32600, None),
    ("null", b"null", -32600, None),
    ("boolean", b"true", -32600, None),
    ("not JSON", b"hello", -32700, None),
    ("truncated", b'{"jsonrpc":"2.0","id":1,"meth', -32700, None),
    ("not UTF-8", b'{"jsonrpc":"2.0","id":1,"method":"\xff"}', -32700, None),
    ("deep nesting", NESTED, -32700, None),
    (
        "deep params",
        b'{"jsonrpc":"2.0","id":5,"method":"x","params":{"a":' + b"[" * 200 + b"]" * 200 + b"}}",
        -32600,
        5,
    ),
    ("jsonrpc 1.0", b'{"jsonrpc":"1.0","id":7,"method":"initialize","params":{}}', -32600, 7),
    ("no jsonrpc", b'{"id":8,"method":"initialize","params":{}}', -32600, 8),
    (
        "object id",
        b'{"jsonrpc":"2.0","id":{"a":1},"method":"initialize","params":{}}',
        -32600,
        None,
    ),
    ("array id", b'{"jsonrpc":"2.0","id":[1],"method":"initialize","params":{}}', -32600, None),
    (
        "fractional id",
        b'{"jsonrpc":"2.0","id":1.5,"method":"initialize","params":{}}',
        -32600,
        None,
    ),
    ("boolean id", b'{"jsonrpc":"2.0","id":true,"method":"initialize","params":{}}', -32600, None),
    ("string params", b'{"jsonrpc":"2.0","id":9,"method":"initialize","params":"x"}', -32600, 9),
    ("array params", b'{"jsonrpc":"2.0","id":10,"method":"initialize","params":[1]}', -32602, 10),
    ("numeric method", b'{"jsonrpc":"2.0","id":11,"method":5}', -32600, 11),
    ("neither request nor response", b'{"jsonrpc":"2.0","id":12}', -32600, 12),
]
"""(name, line, error code, id of the answer) for each malformed line."""


class Peer:
    """A server process spoken to over its stdin and stdout (stderr kept in a file)."""

    def __init__(self, command: list[str], *, cwd: Path, env: dict[str, str]) -> None:
        self.stderr_path = cwd.parent / f"stderr-{os.getpid()}-{id(self)}.txt"
        self._stderr = open(self.stderr_path, "wb")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        assert self.proc.stdout is not None
        self._reader = threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True)
        self._reader.start()
        self.next_id = 1000

    def _read(self, out: IO[bytes]) -> None:
        for line in out:
            self._lines.put(line)
        self._lines.put(b"")

    def send_raw(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_raw(json.dumps(message).encode())

    def receive(self, what: str, seconds: float = DEADLINE) -> dict[str, Any]:
        """The next message; fails saying ``what`` was awaited."""
        try:
            line = self._lines.get(timeout=seconds)
        except queue.Empty:
            raise AssertionError(f"waited {seconds:g} s for {what}; nothing came") from None
        if not line:
            raise AssertionError(
                f"the server closed its output while awaiting {what}:\n" + self.stderr()
            )
        message: dict[str, Any] = json.loads(line)
        return message

    def answer(self, what: str) -> dict[str, Any]:
        """The next answer (a message without a method); notifications are skipped."""
        while True:
            message = self.receive(what)
            if "method" not in message:
                return message

    def request(
        self,
        method: str,
        params: dict[str, Any],
        *,
        on_request: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None,
        seen: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Send a request and return its answer; messages in between go to ``seen``, and
        the server's own requests to ``on_request`` (its return value is sent back)."""
        self.next_id += 1
        ident = self.next_id
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        while True:
            message = self.receive(f"the answer to {method}")
            if message.get("id") == ident and "method" not in message:
                return message
            if seen is not None:
                seen.append(message)
            if "method" in message and "id" in message and on_request is not None:
                answer = on_request(message)
                if answer is not None:
                    self.send(answer)

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def wait(self, seconds: float = DEADLINE) -> int:
        return self.proc.wait(timeout=seconds)

    def stderr(self) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None and not stream.closed:
                with contextlib.suppress(OSError):
                    stream.close()
        self._stderr.close()


def check_bad_lines(peer: Peer) -> list[str]:
    """Send every line of :data:`BAD_LINES`; what went wrong with their answers."""
    problems = []
    for name, line, code, ident in BAD_LINES:
        peer.send_raw(line)
        answer = peer.answer(f"the answer to the {name} line")
        error = answer.get("error") or {}
        if answer.get("jsonrpc") != "2.0" or error.get("code") != code:
            problems.append(f"{name}: expected error {code}, got {answer}")
        elif answer.get("id") != ident:
            problems.append(f"{name}: expected id {ident!r}, got {answer.get('id')!r}")
        elif not isinstance(error.get("message"), str) or not error["message"]:
            problems.append(f"{name}: the error has no message: {answer}")
    return problems


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            state = f.read().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")
