"""Checks of what a session is given: agent session ids and topics."""

from __future__ import annotations

from plankit.agentflow.records import ControlError

MAX_TOPIC = 100
"""Longest topic, in characters."""

MAX_AGENT_SESSION_ID = 200
"""Longest agent session id accepted."""


def _one_line(value: str) -> bool:
    return not any(ord(ch) < 32 or 0x7F <= ord(ch) < 0xA0 or ch in "\u2028\u2029" for ch in value)


def check_agent_session_id(agent_session_id: str) -> None:
    """Refuse an agent session id that is empty, not one line, or too long."""
    if not agent_session_id.strip() or not _one_line(agent_session_id):
        raise ControlError("session-invalid", "the agent session id must be one non-empty line")
    if len(agent_session_id) > MAX_AGENT_SESSION_ID:
        raise ControlError(
            "session-invalid",
            f"the agent session id is {len(agent_session_id)} characters; at most "
            f"{MAX_AGENT_SESSION_ID}",
        )


def session_exists(agent_session_id: str | None, taken: str) -> ControlError:
    """The refusal of a second session for one agent session id."""
    return ControlError(
        "session-exists",
        f"agent session {agent_session_id!r} already has agentflow session {taken}; resume it "
        f"with `agentctl session context --session {taken}`",
    )


def clean_topic(topic: str) -> str:
    """The topic stripped, whitespace runs as one space; refused when empty, not one
    line or too long."""
    if not _one_line(topic.replace("\t", " ")):
        raise ControlError("topic-invalid", "the topic must be one line of text")
    text = " ".join(topic.split())
    if not text:
        raise ControlError("topic-invalid", "the topic is empty; describe the session briefly")
    if len(text) > MAX_TOPIC:
        raise ControlError(
            "topic-invalid", f"the topic is {len(text)} characters; keep it to at most {MAX_TOPIC}"
        )
    return text
