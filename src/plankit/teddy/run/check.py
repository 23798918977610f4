"""``teddy execute --check``: a plan's validation alone, with nothing written.

The plan is chosen as ``teddy execute`` chooses it (the current turn's ``plan.md``, a
``plan.md`` inside ``.teddy/``, or any other file in stateless mode) and validated
against the same workspace (:func:`~plankit.teddy.run.validate.turn_workspace`), but
no lock is taken, no journal or report is written, no turn is prepared, and a turn
teddy stopped in is not finished: it is refused instead, since its plan has partly
run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from plankit.errors import Diagnostic
from plankit.teddy.run.journal import JOURNAL_FILE, replay
from plankit.teddy.run.outcome import ExecuteError, check_executable, load_plan, turn_to_execute
from plankit.teddy.run.validate import Workspace, turn_workspace, validate_plan
from plankit.teddy.session.config import Config
from plankit.teddy.session.layout import Turn


@dataclass(frozen=True, slots=True)
class Checked:
    """What validation found."""

    turn: Turn | None
    """The session turn whose plan was checked (None in stateless mode)."""
    plan: str
    """The plan as shown in messages: root-relative in a session, else as given."""
    issues: tuple[Diagnostic, ...]
    """Every problem (none when the plan may run)."""
    actions: int
    """The plan's actions (0 when it does not parse)."""


def _session_turn(turn: Turn) -> None:
    """Refuse what ``teddy execute`` would refuse, without its side effects."""
    latest = turn.session.latest()
    journal = turn.file(JOURNAL_FILE)
    if journal.is_file():
        state = replay(journal)
        if not state.closed and (state.begun or state.validation_failed):
            raise ExecuteError(
                f"turn {turn.name} was cut short while it ran; `teddy execute` or `teddy "
                "resume` finishes it first",
                code="cut-short",
            )
    check_executable(turn, latest, "check")


def check_plan(
    root: Path, plan: Path | None, *, session_name: str | None = None, config: Config
) -> Checked:
    """Validate the plan ``teddy execute`` would run (see the module documentation)."""
    from plankit.teddy.session.memos import load_memos
    from plankit.textio import read_text

    turn = turn_to_execute(root, plan, session_name)
    if turn is not None:
        _session_turn(turn)
        path, shown = turn.plan_path, turn.rel("plan.md")
    else:
        assert plan is not None
        read_text(plan)  # a clear error for a missing or unreadable file
        path, shown = plan, str(plan)
    parsed, issues, _ = load_plan(path)
    if parsed is None:
        return Checked(turn, shown, tuple(issues), 0)
    if turn is not None:
        ws = turn_workspace(turn, config)
    else:
        ws = Workspace(root=root, memos=tuple(load_memos(root)), config=config)
    return Checked(turn, shown, tuple(validate_plan(parsed, ws)), len(parsed.actions))
