"""JSON-RPC 2.0 lines from an untrusted peer, checked before any SDK sees them.

``teddy acp``, ``plankit mcp`` and ``agentctl mcp`` read one JSON-RPC message per line
from a client they do not control.  The SDKs behind them assume well-formed messages:
a line that is not an object kills the ACP SDK's message loop, and the MCP SDK drops
what it cannot validate without a word, so the client waits forever.  Every line goes
through :func:`check_line` first, which either passes the message on or gives the
error answer to send instead (``id: null`` when no usable id can be read):

=========================================================  ==============================
the line                                                   the answer
=========================================================  ==============================
not UTF-8, not JSON, truncated, nested too deep to parse   -32700 parse error
an array (a batch: neither protocol has them), a scalar,
``null``, ``jsonrpc`` other than ``"2.0"``, an ``id`` that
is not a string or an integer, a ``method`` that is not a
string, ``params`` that are not an object, nesting deeper
than :data:`MAX_DEPTH`, neither a request nor a response   -32600 invalid request
``params`` given as an array (by position)                 -32602 invalid params
=========================================================  ==============================

A response whose ``error`` is not a proper error object (``{"code": int, "message":
str}``) is passed on with a well-formed error instead, so the request it answers
fails rather than waits; a response with ``id: null`` answers nothing we sent and is
dropped, as are blank lines.  Nothing here imports an SDK.

JSON may carry a lone UTF-16 surrogate (``"\\ud800"``), which decodes to a Python
string that UTF-8 cannot encode: a reply echoing it could never be written, and the
client would wait for ever.  :func:`encode` therefore writes each such character as
the text of its escape (the client reads ``\\ud800``, six characters), and
:func:`surrogate_problem` finds one in a message, for a server whose SDK serialises
replies itself (the MCP servers refuse such a request with -32602, naming where the
character is).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

MAX_DEPTH = 64
"""Deepest nesting of objects and arrays accepted in a message (the protocols need
fewer than ten levels)."""

MAX_LINE_BYTES = 50 * 1024 * 1024
"""Longest line read; a longer one is answered with -32600 and skipped."""


@dataclass(frozen=True, slots=True)
class Checked:
    """What to do with one line."""

    message: dict[str, Any] | None = None
    """The message to pass on (None: nothing to pass on)."""
    reply: dict[str, Any] | None = None
    """The error answer to send back instead (None: no answer)."""


def error_reply(ident: Any, code: int, message: str) -> dict[str, Any]:
    """A JSON-RPC error response."""
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_in_json(found: re.Match[str]) -> str:
    return f"\\\\u{ord(found.group()):04x}"


def escape_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by the six characters of its escape
    (``\\ud800``): plain text that UTF-8 can carry."""
    return _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def encode(message: dict[str, Any]) -> bytes:
    """One message as a compact JSON line; a lone surrogate in any string is written
    as the text of its escape (see the module documentation), never as an error."""
    text = json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n"
    try:
        return text.encode()
    except UnicodeEncodeError:  # only inside strings: escape the backslash for JSON
        return _SURROGATE.sub(_escape_in_json, text).encode()


def surrogate_problem(message: dict[str, Any]) -> str | None:
    """Where ``message`` holds a lone surrogate, as a one-line reason, or None."""
    stack: list[tuple[Any, str]] = [(message, "")]
    while stack:
        value, where = stack.pop()
        if isinstance(value, str):
            found = _SURROGATE.search(value)
            if found:
                place = where or "the message"
                return (
                    f"{place} holds a lone UTF-16 surrogate (\\u{ord(found.group()):04x}), "
                    "which is not text; send valid Unicode"
                )
        elif isinstance(value, dict):
            for key, item in value.items():
                name = escape_surrogates(str(key))
                inner = f"{where}.{name}" if where else name
                stack.append((key, f"a key of {where or 'the message'}"))
                stack.append((item, inner))
        elif isinstance(value, list):
            stack.extend((item, f"{where}[{i}]") for i, item in enumerate(value))
    return None


def too_long() -> dict[str, Any]:
    """The answer to a line longer than :data:`MAX_LINE_BYTES`."""
    limit = MAX_LINE_BYTES // (1024 * 1024)
    return error_reply(None, INVALID_REQUEST, f"message longer than {limit} MiB; skipped")


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Whether ``value`` nests deeper than ``limit`` (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values() if isinstance(v, dict | list))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item if isinstance(v, dict | list))
    return False


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def check_line(line: bytes | str, *, object_results: bool = False) -> Checked:
    """Check one line (see the module documentation); ``object_results``: a response's
    ``result`` must be an object (MCP), else it is passed on as an error."""
    if isinstance(line, bytes):
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            return Checked(reply=error_reply(None, PARSE_ERROR, f"not UTF-8 (byte {exc.start})"))
    else:
        text = line
    text = text.strip()
    if not text:
        return Checked()
    try:
        value = json.loads(text)
    except RecursionError:
        return Checked(reply=error_reply(None, PARSE_ERROR, "not JSON: nested too deeply"))
    except ValueError as exc:
        return Checked(reply=error_reply(None, PARSE_ERROR, f"not JSON: {exc}"))
    if isinstance(value, list):
        why = "an empty batch" if not value else "batches are not supported"
        return Checked(reply=error_reply(None, INVALID_REQUEST, f"{why}: send one object per line"))
    if not isinstance(value, dict):
        kind = _kind(value)
        return Checked(
            reply=error_reply(None, INVALID_REQUEST, f"a message is a JSON object, not {kind}")
        )
    return check_message(value, object_results=object_results)


def check_message(message: dict[str, Any], *, object_results: bool = False) -> Checked:
    """Check one decoded JSON object as a JSON-RPC 2.0 message (see :func:`check_line`)."""
    has_id = "id" in message
    ident = message.get("id")
    usable = ident if _valid_id(ident) else None

    def invalid(why: str, code: int = INVALID_REQUEST) -> Checked:
        return Checked(reply=error_reply(usable, code, why))

    if has_id and ident is not None and not _valid_id(ident):
        return invalid(f"id must be a string or an integer, not {_kind(ident)}")
    if message.get("jsonrpc") != "2.0":
        return invalid('"jsonrpc" must be "2.0"')
    if _depth_exceeds(message, MAX_DEPTH):
        return invalid(f"nested deeper than {MAX_DEPTH} levels")
    if "method" in message:
        method = message["method"]
        if not isinstance(method, str) or not method:
            return invalid("method must be a non-empty string")
        if has_id and ident is None:
            return invalid("a request's id must be a string or an integer, not null")
        params = message.get("params")
        if isinstance(params, list):
            return invalid("params must be an object (named parameters)", INVALID_PARAMS)
        if params is not None and not isinstance(params, dict):
            return invalid(f"params must be an object, not {_kind(params)}")
        return Checked(message=message)
    has_result, has_error = "result" in message, "error" in message
    if not has_id or has_result == has_error:
        return invalid("neither a request (method) nor a response (id and one of result or error)")
    if ident is None:
        return Checked()  # an answer to nothing we sent
    error = message.get("error")
    if has_error and not (
        isinstance(error, dict)
        and _valid_id(error.get("code"))
        and not isinstance(error.get("code"), str)
        and isinstance(error.get("message"), str)
    ):
        fixed = error_reply(ident, INTERNAL_ERROR, "the peer answered with a malformed error")
        return Checked(message=fixed)
    if has_result and object_results and not isinstance(message["result"], dict):
        why = f"the peer answered with {_kind(message['result'])} instead of a result object"
        return Checked(message=error_reply(ident, INTERNAL_ERROR, why))
    return Checked(message=message)


# --- the first line, read before an SDK is imported -----------------------------------------


FIRST_LINE_MAX = 1024 * 1024
"""A first line longer than this is left to the SDK's reader."""


def read_first_line(fd: int) -> tuple[bytes | None, bytes]:
    """The first line of ``fd`` (None at the end of input, or when it is longer than
    :data:`FIRST_LINE_MAX`) and whatever was read after it."""
    buffer = b""
    while b"\n" not in buffer:
        if len(buffer) > FIRST_LINE_MAX:
            return None, buffer
        chunk = os.read(fd, 65536)
        if not chunk:
            return (buffer or None), b""
        buffer += chunk
    line, _, rest = buffer.partition(b"\n")
    return line + b"\n", rest


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd`` (a pipe may take less than asked at once)."""
    while data:
        data = data[os.write(fd, data) :]
