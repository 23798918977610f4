"""``teddy acp`` on stdio: a fast ``initialize``, a clean stdout, then the SDK.

Importing the ACP SDK costs about a second (its ~300 pydantic models), so this
module, which imports nothing heavy, starts that import in a thread and meanwhile
reads the client's first line itself: when it is ``initialize`` it answers at once
(:func:`~plankit.acp.contract.initialize_result`, the same answer the agent gives
through the SDK) and hands the rest of the stream to the SDK once it is loaded.  The
client sees the agent ready in a fraction of a second; ``session/new`` waits for the
import.  Any other first line is left to the SDK unchanged.

Every line is checked before the SDK sees it (:class:`~plankit.acp.wire.LineTransport`):
a malformed one gets a JSON-RPC error and the agent serves the next.  When the client
closes stdin, the running turns are cancelled (their commands stopped) and allowed to
write their reports before the agent exits.

Only ACP messages go to stdout: the real stdout is kept for the protocol and file
descriptor 1 is pointed at stderr, so a stray ``print`` (ours, a library's, a
planner's) cannot corrupt the stream.  Logs go to stderr.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from importlib import import_module
from typing import TYPE_CHECKING, Any

from plankit.acp.contract import Planner, client_caps, initialize_result
from plankit.errors import InputError
from plankit.jsonrpc import read_first_line, write_all

if TYPE_CHECKING:
    import asyncio

__all__ = ["Planner", "answer_initialize", "initialize_result", "load_planner", "serve"]


def load_planner(spec: str) -> Planner:
    """``module:callable`` → the callable (a one-line error when it cannot be had)."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise InputError(f"--planner must be MODULE:CALLABLE, not '{spec}'", code="bad-planner")
    try:
        target = getattr(import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise InputError(f"cannot load planner '{spec}': {exc}", code="bad-planner") from None
    if not callable(target):
        raise InputError(f"planner '{spec}' is not callable", code="bad-planner")
    planner: Planner = target
    return planner


def answer_initialize(line: bytes, out: int) -> tuple[bool, bool, bool] | None:
    """Answer ``line`` on ``out`` when it is an ``initialize`` request; the client's
    capabilities, or None when it is anything else (left to the SDK, malformed lines
    included: its reader answers those)."""
    from plankit.jsonrpc import check_line

    message = check_line(line).message
    if message is None or message.get("method") != "initialize":
        return None
    if "id" not in message or not isinstance(message.get("params"), dict):
        return None
    answer = {"jsonrpc": "2.0", "id": message["id"], "result": initialize_result()}
    write_all(out, (json.dumps(answer, separators=(",", ":")) + "\n").encode("utf-8"))
    return client_caps(message["params"])


def _preload() -> None:
    import acp.schema

    import acp  # noqa: F401 - the SDK and its models, the slow part
    import plankit.acp.agent  # noqa: F401


async def _streams(
    protocol_out: int, pending: bytes
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    import asyncio

    from plankit.acp.wire import stream_reader

    loop = asyncio.get_running_loop()
    reader = stream_reader()
    if pending:
        reader.feed_data(pending)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(0, "rb", 0)
    )
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(protocol_out, "wb", 0)
    )
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)


SETTLE_SECONDS = 30.0
"""How long, after the client closed stdin, the agent waits for its cancelled turns to
write their reports (stopping a command takes a few seconds at most)."""


async def _run(agent: Any, protocol_out: int, pending: bytes) -> None:
    from typing import cast

    from acp import Agent, run_agent
    from plankit.acp.wire import LineTransport, notification_screen

    reader, writer = await _streams(protocol_out, pending)
    transport = LineTransport(
        reader,
        writer,
        on_eof=agent.disconnected,
        settle=SETTLE_SECONDS,
        screen=notification_screen({"session/cancel": ("sessionId",)}),
    )
    try:
        await run_agent(cast(Agent, agent), transport)
    finally:
        agent.shutdown()


def serve(
    planner: Planner | None = None, *, model: str | None = None, verbose: bool = False
) -> None:
    """Run ``teddy acp`` until the client closes stdin."""
    import asyncio

    logging.basicConfig(
        stream=sys.stderr,
        level=logging.INFO if verbose else logging.WARNING,
        format="teddy acp: %(levelname)s %(message)s",
    )
    sys.stdout.flush()
    protocol_out = os.dup(1)
    os.dup2(2, 1)
    loader = threading.Thread(target=_preload, name="acp-import", daemon=True)
    loader.start()
    first, rest = read_first_line(0)
    if first is None and not rest:
        return
    caps = answer_initialize(first, protocol_out) if first is not None else None
    pending = rest if caps is not None else (first or b"") + rest
    loader.join()
    from plankit.acp.agent import TeddyAgent
    from plankit.acp.turn import ClientCaps

    agent = TeddyAgent(planner, model=model)
    if caps is not None:
        agent.caps = ClientCaps(*caps)
    asyncio.run(_run(agent, protocol_out, pending))
