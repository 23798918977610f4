"""What the ``plankit checklist`` commands share without click: the store defaults, the
JSON line and a console that cannot fail on a character (used by the click commands and
by :mod:`plankit.launch`)."""

from __future__ import annotations

import sys
from typing import Any

DEFAULT_STORE = "PLAN.md"
"""``--store`` when neither the option nor ``PLANKIT_STORE`` names one."""
DEFAULT_CELL = "AGENT_BASE!C2"
"""``--cell`` when neither the option nor ``PLANKIT_CELL`` names one."""


def json_text(value: Any) -> str:
    """``value`` as one line of JSON, with characters as they are when standard output
    can print them, else as ``\\u`` escapes (the same JSON on any console)."""
    import json

    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode(getattr(sys.stdout, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        text = json.dumps(value)
    return text


def tolerant_output() -> None:
    """Let standard output and error print what their encoding cannot (a cp1252 console
    and ✅): such characters become ``?`` instead of an error after the plan was
    already written."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", None) == "strict":
            import contextlib

            with contextlib.suppress(ValueError, OSError):  # a stream that refuses
                reconfigure(errors="replace")
