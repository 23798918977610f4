"""The board's one vocabulary of states (plankit.board.states): each plan system's own
words in the board's, and a TeDDy turn's state from its report."""

from __future__ import annotations

import pytest

from plankit.board.states import STATES, board_state, turn_state


@pytest.mark.parametrize(
    ("kind", "native", "state"),
    [
        ("checklist", "todo", "todo"),
        ("checklist", "doing", "doing"),
        ("checklist", "review", "review"),
        ("checklist", "blocked", "blocked"),
        ("checklist", "done", "done"),
        ("agentflow", "waiting", "waiting"),
        ("agentflow", "ready", "todo"),
        ("agentflow", "pending", "todo"),
        ("agentflow", "claimed", "doing"),
        ("agentflow", "in_progress", "doing"),
        ("agentflow", "blocked", "blocked"),
        ("agentflow", "failed", "failed"),
        ("agentflow", "done", "done"),
        ("agentflow", "untracked", "untracked"),
        ("teddy", "success", "done"),
        ("teddy", "failure", "failed"),
        ("teddy", "skipped", "skipped"),
        ("teddy", "pending", "todo"),
        ("acp", "pending", "todo"),
        ("acp", "in_progress", "doing"),
        ("acp", "awaiting_permission", "doing"),
        ("acp", "review", "review"),
        ("acp", "blocked", "blocked"),
        ("acp", "completed", "done"),
        ("acp", "failed", "failed"),
        ("acp", "skipped", "skipped"),
        ("acp", "rejected", "skipped"),
        ("acp", "cancelled", "skipped"),
    ],
)
def test_each_systems_word_in_the_boards(kind: str, native: str, state: str) -> None:
    assert board_state(kind, native) == state
    assert state in STATES or state == "untracked"


@pytest.mark.parametrize(
    ("kind", "native"),
    [("acp", "completed_maybe"), ("acp", None), ("acp", ""), ("teddy", "done"), ("gantt", "done")],
)
def test_a_word_the_board_does_not_know_is_not_done(kind: str, native: str | None) -> None:
    assert board_state(kind, native) == "todo"


@pytest.mark.parametrize(
    ("status", "outcomes", "state"),
    [
        (None, [], "todo"),
        ("", [], "todo"),
        ("no plan yet", [], "todo"),
        ("awaiting execution", [], "todo"),
        ("Completed 🟢", ["success"], "done"),
        ("Partial 🟡", ["success", "failure"], "failed"),
        ("Partial 🟡", ["success", "skipped"], "skipped"),
        ("Skipped ⚪", ["skipped"], "skipped"),
        ("Failed 🔴", ["failure"], "failed"),
        ("Validation Failed 🔴", [], "failed"),
        ("Interrupted", ["success"], "failed"),
    ],
)
def test_a_turns_state_from_its_report(status: str | None, outcomes: list[str], state: str) -> None:
    assert turn_state(status, outcomes) == state
