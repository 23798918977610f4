"""Finishing a turn that teddy stopped in (killed, crashed, Ctrl-C between actions).

:func:`finish_from_journal` reads the turn's journal (:mod:`plankit.teddy.run.journal`)
and does what the turn would have done: the report (written from what the journal
recorded), the temporary files of a killed write removed, and the next turn prepared.
Whether or not there was a turn to finish, it then sweeps the temporary files that
TeDDy's own killed writes left (``report.md``, ``input.md``, ``meta.yaml``, ``memos.yaml``
…) from ``.teddy/``, the session's folder and its latest turns (every turn after a
recovery); a temporary file a running write holds is never taken
(:func:`plankit.write_temps.remove_abandoned_temp_files`).
``teddy execute`` calls it under the session lock before anything else, and on Ctrl-C;
``teddy resume``, ``context`` and ``plan`` call :func:`recover_session`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from plankit.errors import PlanError, PlankitError
from plankit.teddy.format.model import Plan
from plankit.teddy.format.parse import parse_plan
from plankit.teddy.run.journal import (
    JOURNAL_FILE,
    Journal,
    Replay,
    memo_results_from,
    parse_time,
    replay,
    results_from,
)
from plankit.teddy.run.outcome import Outcome, load_plan, now
from plankit.teddy.run.report import ActionResult, Report, Status, overall_status, render_report
from plankit.teddy.run.transition import prepare_next
from plankit.teddy.session.layout import Session, Turn
from plankit.textio import write_text_atomic


def finish_from_journal(turn: Turn) -> Outcome | None:
    """Finish ``turn`` from its journal when teddy stopped before the turn ended (see
    :mod:`plankit.teddy.run.journal`); None when there is nothing to finish.  Then the
    temporary files of TeDDy's own killed writes are swept.  The caller holds the
    session lock."""
    outcome = _finish(turn)
    sweep_own_temp_files(turn.session, every_turn=outcome is not None)
    return outcome


def sweep_own_temp_files(session: Session, *, every_turn: bool = False) -> int:
    """Remove the temporary files killed writes of TeDDy's own files left in ``.teddy/``,
    the session's folder, its URL cache and its last two turns (``every_turn``: all of
    them); how many."""
    from plankit.write_temps import remove_abandoned_temp_files

    turns = sorted(
        (Path(e.path) for e in os.scandir(session.path) if e.is_dir() and e.name.isdigit()),
        key=lambda path: int(path.name),
    )
    folders = [session.root / ".teddy", session.path, session.path / ".cache" / "urls"]
    folders += turns if every_turn else turns[-2:]
    return sum(remove_abandoned_temp_files(folder) for folder in folders)


def _finish(turn: Turn) -> Outcome | None:
    path = turn.file(JOURNAL_FILE)
    if not path.is_file():
        return None
    state = replay(path)
    if state.closed or not (state.begun or state.validation_failed):
        return None
    if state.validation_failed and not state.reported:
        path.unlink()  # nothing ran: the turn is simply executed again
        return None
    journal = Journal(turn)
    try:
        plan: Plan | None = None
        results: list[ActionResult] = []
        text = turn.report_path.read_text(encoding="utf-8") if state.reported else None
        if state.begun:
            try:
                plan = parse_plan(state.plan_text)
            except PlanError:  # the journal is ours; still, never let it block the session
                plan, _, _ = load_plan(turn.plan_path)
            if plan is None:
                return None
            results = results_from(state, plan)
            _remove_stray_temp_files(turn.session.root, state.started.values())
            if text is None:
                text = _recovered_report(turn, plan, state, results)
                write_text_atomic(turn.report_path, text)
                journal.reported()
        entry = turn.rel("report.md") if state.begun else None
        next_turn = prepare_next(turn, plan, results, entry)
        journal.closed(next_turn.name)
    finally:
        journal.close()
    status = Status.VALIDATION_FAILED if state.validation_failed else _status_of(results, state)
    return Outcome(
        status,
        text,
        next_turn,
        message=f"turn {turn.name} was cut short; it was finished from its journal",
        interrupted=_interrupted(state, results),
        recovered=True,
    )


def _interrupted(state: Replay, results: Sequence[ActionResult]) -> bool:
    """Whether teddy stopped before every action had its result (a plan the user
    skipped had none to wait for)."""
    return not state.skipped and len(state.finished) < len(results)


def _status_of(results: Sequence[ActionResult], state: Replay) -> Status:
    if state.skipped:
        return Status.SKIPPED
    return overall_status(results, interrupted=_interrupted(state, results))


def _recovered_report(turn: Turn, plan: Plan, state: Replay, results: list[ActionResult]) -> str:
    start = parse_time(state.start_time) or now()
    notes: tuple[str, ...] = ()
    if _interrupted(state, results):
        notes = (
            "execution was interrupted: teddy stopped before the turn ended (killed, "
            "crashed or Ctrl-C); this report was written from the turn's journal",
        )
    report = Report(
        title=plan.title,
        status=_status_of(results, state),
        plan_path=turn.rel("plan.md"),
        start=start,
        end=now(),
        rationale=plan.rationale,
        memos=tuple(memo_results_from(state)),
        results=tuple(results),
        notes=notes,
    )
    return render_report(report)


def _remove_stray_temp_files(root: Path, targets: Iterable[list[str]]) -> None:
    """Temporary files a killed atomic write left next to the actions' targets."""
    from plankit.workspace import PathRefused, resolve
    from plankit.write_temps import remove_abandoned_temp_files

    for paths in targets:
        for target in paths:
            try:
                where = resolve(root, target)
            except PathRefused:
                continue
            remove_abandoned_temp_files(where.parent, where.name)


LOCK_WAIT = 5.0
"""Seconds :func:`recover_session` waits for the session lock."""


def recover_session(session: Session) -> Outcome | None:
    """Finish the session's latest turn when teddy stopped before it ended (``teddy
    resume``, ``context`` and ``plan`` call this first); None when nothing was cut
    short.  Waits a few seconds for the lock (what a killed ``teddy execute`` started
    may still be ending), then leaves the turn to the live ``teddy execute`` that
    holds it."""
    from plankit.locking import try_lock

    with try_lock(session.path / ".lock", LOCK_WAIT) as held:
        if not held:
            return None  # a live execute owns the turn
        latest = session.latest()
        _close_behind(latest)
        return finish_from_journal(latest)


def _close_behind(latest: Turn) -> None:
    """A kill between the next turn's folder appearing (one rename) and the ``closed``
    line leaves the previous turn's journal open behind a complete turn: the turn is
    over, so its journal is closed, naming the turn that continues it."""
    try:
        parent = latest.meta().parent_turn_id
    except (PlankitError, OSError):  # no readable meta.yaml: not a turn TeDDy made whole
        return
    if parent is None or parent == latest.name:
        return
    path = latest.session.path / parent / JOURNAL_FILE
    if not path.is_file():
        return
    state = replay(path)
    if state.closed or not state.reported:
        return
    journal = Journal(Turn(latest.session, parent))
    try:
        journal.closed(latest.name)
    finally:
        journal.close()


def open_session(root: Path, name: str | None = None) -> tuple[Session, Outcome | None]:
    """The session ``name`` (default: the current one), with its latest turn finished
    first when teddy stopped in it: every command that works on a session starts here."""
    from plankit.teddy.session.layout import find_session

    session = find_session(root, name)
    return session, recover_session(session)
