r"""The ACP SDK's stdio transport, hardened: every line is checked before the SDK sees it.

:class:`LineTransport` is an ``acp`` *Transport* (``send``, ``receive``, ``close``)
over newline-delimited JSON.  Each incoming line goes through
:func:`plankit.jsonrpc.check_line`: a malformed one is answered here with a JSON-RPC
error and skipped, so one bad line never reaches the SDK's message loop (which a
``[]`` or a ``null`` would stop) and the peer always gets an answer.  A line longer
than :data:`~plankit.jsonrpc.MAX_LINE_BYTES` is skipped unread.

Notifications get no answer, so the SDK can only log (with a traceback) one it cannot
handle: ``screen`` drops them first — a notification whose method this side does not
know, or whose params are not what the method needs (a ``session/cancel`` without a
string ``sessionId``) — with one line in the log.  Replies are encoded so that any
string can be sent: one holding a lone surrogate (echoed from a peer's
``"\ud800"``) is written with ``\u`` escapes instead of failing unsent.

With ``PLANKIT_ACP_TRACE=DIR`` in the environment, every message sent and every
well-formed message received is also appended to ``DIR/<pid>.jsonl`` as
``{"dir": "out"|"in", "message": …}`` (for debugging a client or an agent; the tests
validate every traced message against the v1 schema).

At the end of the input, ``on_eof`` is awaited (the agent cancels what runs), then the
transport waits, up to ``settle`` seconds, for every request already received to be
answered, so a turn cut short by the client's departure still writes its report
before the SDK shuts the connection down.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from plankit.jsonrpc import MAX_LINE_BYTES, check_line, too_long

log = logging.getLogger("plankit.acp")

_TOO_LONG = object()

TRACE_VARIABLE = "PLANKIT_ACP_TRACE"
"""The environment variable naming a directory to trace the messages into."""


class _Trace:
    """Appends messages to ``$PLANKIT_ACP_TRACE/<pid>.jsonl`` when the variable is set."""

    def __init__(self) -> None:
        import os

        folder = os.environ.get(TRACE_VARIABLE)
        self.path = os.path.join(folder, f"{os.getpid()}.jsonl") if folder else None

    def __call__(self, direction: str, message: dict[str, Any]) -> None:
        if self.path is None:
            return
        line = json.dumps({"dir": direction, "message": message}, ensure_ascii=True)
        with contextlib.suppress(OSError), open(self.path, "a", encoding="utf-8") as out:
            out.write(line + "\n")


def _encode(message: dict[str, Any]) -> bytes:
    r"""One message as a compact JSON line.  A string holding a lone surrogate (echoed
    from a peer's ``"\ud800"``) is written as JSON's own ``\u`` escape, so the peer
    reads back exactly what it sent: a request id it chose comes back unchanged and the
    answer is matched (not as text, which would change the id)."""
    text = json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n"
    try:
        return text.encode()
    except UnicodeEncodeError:
        return (json.dumps(message, separators=(",", ":"), ensure_ascii=True) + "\n").encode()


def notification_screen(
    known: Mapping[str, tuple[str, ...]],
) -> Callable[[dict[str, Any]], str | None]:
    """A ``screen`` for :class:`LineTransport`: ``known`` maps each notification method
    this side handles to the params that must be strings (``_``-prefixed extension
    notifications always pass); the reason to drop one, or None."""

    def screen(message: dict[str, Any]) -> str | None:
        method = str(message.get("method"))
        if method.startswith("_"):
            return None
        required = known.get(method)
        if required is None:
            return f"unknown notification {method!r} ignored"
        params = message.get("params")
        for name in required:
            if not isinstance(params, dict) or not isinstance(params.get(name), str):
                return f"notification {method!r} without a string {name!r} ignored"
        return None

    return screen


class LineTransport:
    """See the module documentation."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        on_eof: Callable[[], Awaitable[None]] | None = None,
        settle: float = 0.0,
        screen: Callable[[dict[str, Any]], str | None] | None = None,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.on_eof = on_eof
        self.screen = screen
        self._trace = _Trace()
        self.settle = settle
        self.ended = False
        """Whether the peer closed its side."""
        self._inflight: set[Any] = set()
        self._idle = asyncio.Event()
        self._idle.set()

    async def send(self, message: dict[str, Any]) -> None:
        if "method" not in message and "id" in message:
            self._inflight.discard(message["id"])
            if not self._inflight:
                self._idle.set()
        self._trace("out", message)
        self.writer.write(_encode(message))
        if self.ended:  # the peer may be gone for good: never wait on it
            with contextlib.suppress(ConnectionError, OSError):
                await asyncio.wait_for(self.writer.drain(), 5)
            return
        await self.writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._read_line()
            if line is None:
                await self._end()
                return None
            if line is _TOO_LONG:
                await self._answer(too_long())
                continue
            assert isinstance(line, bytes)
            checked = check_line(line)
            if checked.reply is not None:
                log.info("answered a malformed line: %s", checked.reply["error"]["message"])
                await self._answer(checked.reply)
                continue
            message = checked.message
            if message is None:
                continue
            if "method" in message and "id" in message:
                self._inflight.add(message["id"])
                self._idle.clear()
            elif "method" in message and self.screen is not None:
                dropped = self.screen(message)
                if dropped is not None:
                    log.info("%s", dropped)
                    continue
            self._trace("in", message)
            return message

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()

    async def _answer(self, reply: dict[str, Any]) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            await self.send(reply)

    async def _end(self) -> None:
        self.ended = True
        if self.on_eof is not None:
            await self.on_eof()
        if self.settle > 0 and self._inflight:
            started = time.monotonic()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._idle.wait(), self.settle)
            if self._inflight:
                log.warning(
                    "the client left; %d request(s) still unanswered after %.0f s",
                    len(self._inflight),
                    time.monotonic() - started,
                )

    async def _read_line(self) -> bytes | object | None:
        try:
            return await self.reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            return exc.partial or None
        except asyncio.LimitOverrunError:
            pass
        while True:  # skip the rest of an overlong line
            try:
                await self.reader.readuntil(b"\n")
                return _TOO_LONG
            except asyncio.LimitOverrunError as exc:
                await self.reader.readexactly(exc.consumed)
            except asyncio.IncompleteReadError:
                return _TOO_LONG


def stream_reader() -> asyncio.StreamReader:
    """A reader whose lines may be as long as :data:`~plankit.jsonrpc.MAX_LINE_BYTES`."""
    return asyncio.StreamReader(limit=MAX_LINE_BYTES)
