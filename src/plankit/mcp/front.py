"""The MCP handshake answered before the SDK is loaded.

Importing the MCP SDK and building a server costs a second or more (hundreds of
pydantic models), and MCP clients with short start-up timeouts give up on a server
that is slow to answer ``initialize``.  So :func:`plankit.mcp.stdio.run_stdio` starts
that work in a thread and meanwhile reads the client's first line itself: when it is
an ``initialize`` request this module can vouch for (well-formed, valid Unicode, the
fields the protocol requires of the right kinds), :func:`initialize_answer` gives the
answer at once; it is the answer the SDK would give (the same capabilities, version
negotiation, server name, version and instructions; a test compares the two).  The
line is still handed to the SDK, so the session is initialised there too, and the
SDK's own answer to it is dropped.  Any other first line is left to the SDK.

Nothing here imports the SDK.
"""

from __future__ import annotations

from typing import Any

from plankit.jsonrpc import check_line, surrogate_problem

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The protocol revisions the SDK negotiates through ``initialize``, oldest first (a
test checks them against ``mcp_types.version``); any other request gets the newest."""

CAPABILITIES: dict[str, Any] = {"tools": {"listChanged": False}}
"""What the servers advertise: tools, and nothing they do not have."""


def _vouched(params: Any) -> bool:
    """Whether ``params`` are initialize parameters the SDK accepts for sure."""
    if not isinstance(params, dict):
        return False
    info = params.get("clientInfo")
    return (
        isinstance(params.get("protocolVersion"), str)
        and _plain_capabilities(params.get("capabilities"))
        and isinstance(info, dict)
        and isinstance(info.get("name"), str)
        and isinstance(info.get("version"), str)
    )


def _plain_capabilities(capabilities: Any) -> bool:
    """Capabilities every value of which is an object (what the schema asks)."""
    return isinstance(capabilities, dict) and all(
        isinstance(value, dict) for value in capabilities.values()
    )


def initialize_result(requested: str, name: str, instructions: str, version: str) -> dict[str, Any]:
    """The ``initialize`` result the servers give for a client asking ``requested``."""
    negotiated = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
    return {
        "capabilities": CAPABILITIES,
        "instructions": instructions,
        "protocolVersion": negotiated,
        "serverInfo": {"name": name, "version": version},
    }


def initialize_answer(line: bytes, name: str, instructions: str) -> dict[str, Any] | None:
    """The answer to ``line`` when it is an ``initialize`` request this module can
    vouch for, else None (the line is the SDK's to answer)."""
    from plankit import __version__

    message = check_line(line, object_results=True).message
    if message is None or message.get("method") != "initialize" or "id" not in message:
        return None
    if surrogate_problem(message) is not None or not _vouched(message.get("params")):
        return None
    requested = message["params"]["protocolVersion"]
    result = initialize_result(requested, name, instructions, __version__)
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}
