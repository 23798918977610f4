"""What ``teddy acp``'s stdio runner and its agent agree on.

The runner (:mod:`.stdio`) answers ``initialize`` itself before the SDK is loaded and
then starts the agent (:mod:`.agent`); the agent answers ``initialize`` through the
SDK.  Both must give the same answer and read the client's capabilities the same way,
and both speak of the same *planner*; those live here, so neither module imports the
other to get them.  Nothing heavy is imported.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from plankit.teddy.session.layout import Turn

Planner = Callable[[str, "Turn"], str]
"""Writes a turn's plan: (the prompt's text, the turn) → TeDDy plan Markdown."""

PROTOCOL_VERSION = 1
"""The ACP protocol version spoken (stable schema v1)."""

AGENT_NAME = "teddy"
"""The agent's name in ``agentInfo``."""


def version() -> str:
    """plankit's version."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("plankit")
    except PackageNotFoundError:  # pragma: no cover - a source tree without metadata
        return "0"


def initialize_result() -> dict[str, Any]:
    """TeDDy's answer to ``initialize`` (JSON form): protocol 1, ``session/load`` and
    ``session/list``, embedded context in prompts (no image, no audio), no MCP, no
    authentication."""
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
            "sessionCapabilities": {"list": {}},
        },
        "authMethods": [],
        "agentInfo": {"name": AGENT_NAME, "title": "TeDDy (plankit)", "version": version()},
    }


def client_caps(params: Mapping[str, Any]) -> tuple[bool, bool, bool]:
    """(fs read, fs write, terminal) from ``initialize`` params (JSON form)."""
    caps = params.get("clientCapabilities") or {}
    fs = caps.get("fs") or {} if isinstance(caps, dict) else {}
    return (
        bool(isinstance(fs, dict) and fs.get("readTextFile")),
        bool(isinstance(fs, dict) and fs.get("writeTextFile")),
        bool(isinstance(caps, dict) and caps.get("terminal")),
    )
