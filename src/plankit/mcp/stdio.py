"""plankit's MCP servers on stdio: a fast handshake, every malformed line answered.

:func:`run_stdio` builds the server (importing the MCP SDK) in a thread while it reads
the client's first line; an ``initialize`` request is answered at once
(:mod:`plankit.mcp.front`), then the server, once built, is handed the whole stream,
that line included, and its own answer to it is dropped.

The MCP SDK's stdio transport drops a line it cannot read (not JSON, an array, a
``null``, an object id, string params …) without a word, so the client waits forever.
Here each line is checked first (:func:`plankit.jsonrpc.check_line`, then the SDK's
own message model): a bad one is answered with a JSON-RPC error (``id: null`` when no
usable id can be read) and skipped, and the server goes on serving.  A line longer
than :data:`~plankit.jsonrpc.MAX_LINE_BYTES` is skipped unread.

While serving, file descriptor 0 reads the null device and 1 writes to stderr, so a
tool, a library or a child process cannot read the protocol's input or corrupt its
output; the protocol keeps private duplicates of both.  ``plankit mcp`` and
``agentctl mcp`` both serve through :func:`run_stdio`.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from plankit.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    MAX_LINE_BYTES,
    Checked,
    check_line,
    encode,
    error_reply,
    read_first_line,
    surrogate_problem,
    too_long,
    write_all,
)

if TYPE_CHECKING:
    import anyio
    from mcp.server.mcpserver import MCPServer


class _Output:
    """The protocol's stdout: whole lines, one writer at a time; once the client has
    stopped reading, what is written is dropped (the server ends with its input)."""

    def __init__(self, fd: int, drop: Any = None) -> None:
        import anyio

        self.fd = fd
        self.lock = anyio.Lock()
        self.closed = False
        self.drop = drop
        """The id of the request already answered (initialize): the SDK's answer to it
        is not sent again."""

    async def write(self, text: str) -> int:
        import anyio

        if self.drop is not None and self._answers_dropped(text):
            return len(text)
        async with self.lock:
            if not self.closed:
                try:
                    await anyio.to_thread.run_sync(write_all, self.fd, _utf8(text))
                except (BrokenPipeError, ConnectionResetError):
                    self.closed = True
        return len(text)

    async def flush(self) -> None:
        pass

    def _answers_dropped(self, text: str) -> bool:
        try:
            message = json.loads(text)
        except ValueError:
            return False
        if not isinstance(message, dict) or "method" in message:
            return False
        if message.get("id") != self.drop or type(message.get("id")) is not type(self.drop):
            return False
        self.drop = None
        return "result" in message  # an error is passed on: the client should see it


def _utf8(line: str) -> bytes:
    """A JSON line as UTF-8, a lone surrogate written as the text of its escape."""
    try:
        return line.encode("utf-8")
    except UnicodeEncodeError:
        return encode(json.loads(line))


def _text_check(message: dict[str, Any]) -> Checked:
    """A message holding a lone surrogate: a request is refused (-32602, naming where),
    a notification dropped, a response passed on with the character as text."""
    why = surrogate_problem(message)
    if why is None:
        return Checked(message=message)
    if "method" not in message:
        return Checked(message=json.loads(encode(message)))
    if "id" not in message:
        return Checked()
    return Checked(reply=error_reply(message["id"], INVALID_PARAMS, why))


def _sdk_check(message: dict[str, Any]) -> Checked:
    """What the SDK's message model says of a message that passed the generic check."""
    import mcp_types
    from pydantic import ValidationError

    try:
        mcp_types.jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError as exc:
        ident = message.get("id")
        if "method" not in message:  # a response we cannot read: the request fails
            why = f"the peer's answer is not an MCP message ({exc.error_count()} problems)"
            return Checked(message=error_reply(ident, -32603, why))
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"][1:]) or "the message"
        why = f"not an MCP message: {where}: {first['msg']}"
        return Checked(reply=error_reply(ident, INVALID_REQUEST, why))
    return Checked(message=message)


class _CheckedLines:
    """The protocol's stdin as the SDK reads it: an async iterator of good lines; bad
    ones are answered on ``out`` and skipped."""

    def __init__(self, fd: int, out: _Output, pending: bytes = b"") -> None:
        self.file: BinaryIO = os.fdopen(fd, "rb", closefd=False)
        self.out = out
        self.pending = pending

    def __aiter__(self) -> _CheckedLines:
        return self

    async def __anext__(self) -> str:
        import anyio

        while True:
            line = await anyio.to_thread.run_sync(self._read, abandon_on_cancel=True)
            if line is None:
                raise StopAsyncIteration
            if not isinstance(line, bytes):  # longer than the limit
                await self._answer(too_long())
                continue
            checked = check_line(line, object_results=True)
            if checked.message is not None and checked.reply is None:
                checked = _text_check(checked.message)
            if checked.message is not None and checked.reply is None:
                checked = _sdk_check(checked.message)
            if checked.reply is not None:
                await self._answer(checked.reply)
                continue
            if checked.message is not None:
                return json.dumps(checked.message)

    async def _answer(self, reply: dict[str, Any]) -> None:
        await self.out.write(encode(reply).decode("utf-8"))

    def _read(self) -> bytes | object | None:
        head = b""
        if self.pending:
            line, newline, rest = self.pending.partition(b"\n")
            if newline:
                self.pending = rest
                return line + newline
            head, self.pending = self.pending, b""
        line = head + self.file.readline(MAX_LINE_BYTES + 1)
        if not line:
            return None
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while (more := self.file.readline(65536)) and not more.endswith(b"\n"):
                pass
            return _LONG
        return line


_LONG = object()


def _claim_stdio() -> tuple[int, int]:
    """Private duplicates of fds 0 and 1 for the protocol; 0 then reads the null device
    and 1 writes to stderr."""
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out


async def serve_stdio(
    server: MCPServer[Any], wire_in: int, wire_out: int, pending: bytes = b"", drop: Any = None
) -> None:
    """Serve ``server`` on the two file descriptors until the input ends; ``pending``:
    bytes already read from ``wire_in``; ``drop``: the id of a request already
    answered."""
    from mcp.server.stdio import stdio_server

    out = _Output(wire_out, drop)
    lines = _CheckedLines(wire_in, out, pending)
    stdin = cast("anyio.AsyncFile[str]", lines)
    stdout = cast("anyio.AsyncFile[str]", out)
    async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):
        # MCPServer.run_stdio_async, with our streams (it has no parameter for them)
        lowlevel = server._lowlevel_server
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


def run_stdio(build: Callable[[], MCPServer[Any]], name: str, instructions: str) -> None:
    """Serve the server ``build`` makes over standard input and output until the
    client disconnects, answering ``initialize`` while it is being built (``name`` and
    ``instructions`` are the server's; see :mod:`plankit.mcp.front`).  An error
    building it is raised once the first line has been read."""
    import anyio

    from plankit.mcp.front import initialize_answer

    wire_in, wire_out = _claim_stdio()
    built: list[MCPServer[Any]] = []
    failed: list[BaseException] = []

    def load() -> None:
        try:
            built.append(build())
        except BaseException as exc:  # raised below, in the main thread
            failed.append(exc)

    loader = threading.Thread(target=load, name="mcp-import", daemon=True)
    loader.start()
    first, rest = read_first_line(wire_in)
    answer = initialize_answer(first, name, instructions) if first is not None else None
    if answer is not None:
        write_all(wire_out, encode(answer))
    loader.join()
    if failed:
        raise failed[0]
    if first is None and not rest:
        return
    drop = answer["id"] if answer is not None else None
    anyio.run(serve_stdio, built[0], wire_in, wire_out, (first or b"") + rest, drop)
