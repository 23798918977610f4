"""``session/update`` payloads as wire JSON, and sending them.

Every update ``teddy acp`` sends is built here or in :mod:`.entries` / :mod:`.tools` as
the JSON the v1 schema describes (the tests check each against it), and goes out
through :func:`send_update`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_MODELS = {
    "plan": "AgentPlanUpdate",
    "tool_call": "ToolCallStart",
    "tool_call_update": "ToolCallProgress",
    "agent_message_chunk": "AgentMessageChunk",
    "agent_thought_chunk": "AgentThoughtChunk",
    "user_message_chunk": "UserMessageChunk",
    "available_commands_update": "AvailableCommandsUpdate",
}


def update_model(update: Mapping[str, Any]) -> Any:
    """The SDK model of a ``session/update`` payload given as its JSON form."""
    import acp.schema

    model = getattr(acp.schema, _MODELS[str(update["sessionUpdate"])])
    return model.model_validate(update)


async def send_update(conn: Any, session_id: str, update: Mapping[str, Any]) -> None:
    """Send one ``session/update`` notification.

    Our updates are built as wire JSON (checked against the v1 schema by the tests),
    so they go straight to the SDK's JSON-RPC connection (``conn._conn`` in the pinned
    SDK) instead of through its models: that halves the agent's cost of a 100-entry
    plan update.  Any other connection gets the SDK model.
    """
    rpc = getattr(conn, "_conn", None)
    if rpc is not None and hasattr(rpc, "send_notification"):
        params = {"sessionId": session_id, "update": dict(update)}
        await rpc.send_notification("session/update", params)
        return
    await conn.session_update(session_id=session_id, update=update_model(update))


def message_update(text: str) -> dict[str, Any]:
    """An ``agent_message_chunk`` with ``text``."""
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}


def thought_update(text: str) -> dict[str, Any]:
    """An ``agent_thought_chunk`` with ``text`` (a plan's Rationale)."""
    return {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": text}}


def user_update(text: str) -> dict[str, Any]:
    """A ``user_message_chunk`` with ``text`` (a prompt, replayed by ``session/load``)."""
    return {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": text}}
