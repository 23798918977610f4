"""What executing a turn produced, shared by ``teddy execute`` and crash recovery."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from pathlib import Path

from plankit.errors import Diagnostic, InputError, PlanError
from plankit.teddy.format.model import Plan
from plankit.teddy.format.parse import parse_plan
from plankit.teddy.run.report import Status
from plankit.teddy.session.layout import Turn
from plankit.textio import read_text


class ExecuteError(InputError):
    """``teddy execute`` cannot start (a lock held, a turn already executed …)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What ``teddy execute`` did."""

    status: Status | None
    """The report's status; None when nothing was executed (quit, no terminal)."""
    report: str | None
    """The report's Markdown (None when none was made)."""
    next_turn: Turn | None
    """The turn prepared for what comes next (None in stateless mode or on quit)."""
    message: str = ""
    """What to tell the user when nothing was executed."""
    interrupted: bool = False
    """Whether Ctrl-C stopped the execution."""
    validation: tuple[Diagnostic, ...] = ()
    """The pre-flight problems, when validation failed."""
    refused: bool = False
    """Nothing ran because nobody could be asked for approval (no terminal)."""
    recovered: bool = False
    """The turn was one teddy had stopped in (killed, crashed): it was finished from its
    journal instead of running a plan now."""


def now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC)


def load_plan(path: Path) -> tuple[Plan | None, list[Diagnostic], str]:
    """The plan, or its parse problems as validation issues (with their lines and codes,
    told like validation's own: :meth:`~plankit.errors.Diagnostic.describe`)."""
    text = read_text(path).text
    try:
        return parse_plan(text), [], text
    except PlanError as exc:
        return None, list(exc.diagnostics), text


def turn_to_execute(root: Path, plan: Path | None, session_name: str | None) -> Turn | None:
    """The turn whose plan ``teddy execute [PLAN]`` (and ``--check``) runs: the latest
    turn of the session when no ``plan`` is given, the turn a ``plan.md`` inside
    ``.teddy/`` belongs to, or None for any other file (stateless mode)."""
    from plankit.teddy.session.layout import find_session, turn_of_plan

    if plan is not None:
        return turn_of_plan(root, plan)
    if not (root / ".teddy").is_dir():
        raise ExecuteError(
            "no .teddy/ directory here or above: give a PLAN file, or `teddy new NAME`",
            code="no-session",
        )
    return find_session(root, session_name).latest()


def check_executable(turn: Turn, latest: Turn, action: str = "execute") -> None:
    """Raise :class:`ExecuteError` unless ``turn`` (with ``latest`` the session's latest
    turn) is one ``teddy execute`` may run: the latest, with a plan and no report."""
    if turn.number != latest.number:
        raise ExecuteError(
            f"turn {turn.name} is not the session's latest turn ({latest.name}); {action} "
            "the latest one",
            code="not-latest",
        )
    if turn.report_path.exists():
        raise ExecuteError(
            f"turn {turn.name} was already executed (its report.md exists)",
            code="already-executed",
        )
    if not turn.plan_path.exists():
        raise ExecuteError(
            f"turn {turn.name} has no plan.md yet; write one or run `teddy plan`",
            code="no-plan",
        )
