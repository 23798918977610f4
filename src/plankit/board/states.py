"""One vocabulary of states for every kind of plan on the board.

Each plan system names its states its own way (a checklist step is ``todo`` or
``doing``, an agentflow task ``ready`` or ``claimed``, a TeDDy action ``success`` or
``failure``, an ACP entry ``completed`` or ``rejected``).  The board shows them all in
these words (the tool's own word stays beside it, as ``native``), and progress counts
only ``done``: a failed, rejected or skipped step is never counted as done.
"""

from __future__ import annotations

STATES = ("waiting", "todo", "doing", "review", "blocked", "failed", "skipped", "done")
"""The board's states: ``waiting`` (cannot start: what it depends on is not done),
``todo`` (can start), ``doing``, ``review`` (done, waiting for a person's look),
``blocked``, ``failed``, ``skipped`` (will not run: rejected, not selected, cancelled),
``done``.  ``untracked`` is said of a task of an earlier agentflow commit."""

_NATIVE: dict[str, dict[str, str]] = {
    "checklist": {
        "todo": "todo",
        "doing": "doing",
        "review": "review",
        "blocked": "blocked",
        "done": "done",
    },
    "agentflow": {
        "waiting": "waiting",
        "ready": "todo",
        "pending": "todo",
        "claimed": "doing",
        "in_progress": "doing",
        "blocked": "blocked",
        "failed": "failed",
        "done": "done",
        "untracked": "untracked",
    },
    "teddy": {
        "success": "done",
        "failure": "failed",
        "skipped": "skipped",
        "pending": "todo",
    },
    "acp": {
        "pending": "todo",
        "in_progress": "doing",
        "awaiting_permission": "doing",
        "review": "review",
        "blocked": "blocked",
        "completed": "done",
        "failed": "failed",
        "skipped": "skipped",
        "rejected": "skipped",
        "cancelled": "skipped",
    },
}


def board_state(kind: str, native: str | None) -> str:
    """The board's word for ``native``, a state of a plan of ``kind`` (an unknown
    state is ``todo``: not done)."""
    return _NATIVE.get(kind, {}).get(native or "", "todo")


def turn_state(status: str | None, outcomes: list[str]) -> str:
    """A TeDDy turn's state from its report's status and its actions' outcomes."""
    if not status or status == "no plan yet":
        return "todo"
    if status == "awaiting execution":
        return "todo"
    if status.startswith("Completed"):
        return "done"
    if status.startswith("Partial"):
        return "failed" if "failure" in outcomes else "skipped"
    if status.startswith("Skipped"):
        return "skipped"
    return "failed"
