"""The ACP SDK's stdio transport, hardened: every line is checked before the SDK sees it.

:class:`LineTransport` is an ``acp`` *Transport* (``send``, ``receive``, ``close``)
over newline-delimited JSON.  Each incoming line goes through
:func:`plankit.jsonrpc.check_line`: a malformed one is answered here with a JSON-RPC
error and skipped, so one bad line never reaches the SDK's message loop (which a
``[]`` or a ``null`` would stop) and the peer always gets an answer.  A line longer
than :data:`~plankit.jsonrpc.MAX_LINE_BYTES` is skipped unread.

At the end of the input, ``on_eof`` is awaited (the agent cancels what runs), then the
transport waits, up to ``settle`` seconds, for every request already received to be
answered, so a turn cut short by the client's departure still writes its report
before the SDK shuts the connection down.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from plankit.jsonrpc import MAX_LINE_BYTES, check_line, encode, too_long

log = logging.getLogger("plankit.acp")

_TOO_LONG = object()


class LineTransport:
    """See the module documentation."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        on_eof: Callable[[], Awaitable[None]] | None = None,
        settle: float = 0.0,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.on_eof = on_eof
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
        self.writer.write(encode(message))
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
