"""Planners for ``teddy acp --planner tests.acp.planners:NAME`` in subprocess tests."""

from __future__ import annotations

import sys
from typing import Any

from tests.acp.kit import create, plan_text


def noisy(text: str, turn: Any) -> str:
    """Prints to stdout and stderr (neither may reach the ACP stream), then plans a
    CREATE of ``noisy.txt`` with the prompt as its content."""
    print("stray output from a planner")
    sys.stdout.flush()
    print("a log line", file=sys.stderr)
    return plan_text(create("noisy.txt", text))
