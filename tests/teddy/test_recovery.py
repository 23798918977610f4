"""Finishing a turn teddy stopped in: the edges of recovery, and the sweep of the
temporary files TeDDy's own killed writes leave (``plankit.teddy.run.recovery``).

``test_journal.py`` kills whole turns at each step; these tests set up the states a
kill, a hand-made folder or a second teddy leave, and check what recovery does there.
"""

from __future__ import annotations

import json
import locale
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from filelock import FileLock

from plankit.teddy.run import execute as execute_module
from plankit.teddy.run import recovery
from plankit.teddy.run.journal import JOURNAL_FILE
from plankit.teddy.run.recovery import (
    finish_from_journal,
    open_session,
    recover_session,
    sweep_own_temp_files,
)
from plankit.teddy.run.report import Status
from plankit.teddy.session.layout import Session, Turn
from tests.teddy.test_journal import Crash, _events, _execute, _turn, killed

STRAY = ".report.md.0123abcd.tmp"
"""A temporary file a killed atomic write of report.md left."""


def _strays(*folders: Path) -> list[Path]:
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / STRAY).write_text("half a report")
    return [folder / STRAY for folder in folders]


def _crash_in_the_first_action(turn: Turn, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(execute_module, "run_action", killed)
    with pytest.raises(Crash):
        _execute(turn)
    monkeypatch.undo()


# --- the sweep ---------------------------------------------------------------------


def test_the_sweep_takes_teddys_folders_and_the_last_two_turns(tmp_path: Path) -> None:
    session = _turn(tmp_path).session
    # a long session: the last turns by number are 99 and 100, not by name
    turns = [session.path / name for name in ("01", "97", "98", "99", "100")]
    teddy, own, urls = tmp_path / ".teddy", session.path, session.path / ".cache" / "urls"
    swept = _strays(teddy, own, urls, turns[3], turns[4])
    kept = _strays(*turns[:3], tmp_path, session.path / ".next-101", session.path / "x1")
    (session.path / "102").write_text("a file, not a turn")
    assert sweep_own_temp_files(session) == len(swept)
    assert not any(path.exists() for path in swept)
    assert all(path.exists() for path in kept)


def test_after_a_recovery_the_sweep_takes_every_turn(tmp_path: Path) -> None:
    session = _turn(tmp_path).session
    swept = _strays(*(session.path / name for name in ("01", "02", "03")), session.path)
    kept = _strays(tmp_path)  # the user's own folder: not TeDDy's to sweep
    assert sweep_own_temp_files(session, every_turn=True) == len(swept)
    assert not any(path.exists() for path in swept)
    assert all(path.exists() for path in kept)


def test_finishing_a_turn_sweeps_every_turn_and_nothing_to_finish_the_last_two(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turn = _turn(tmp_path)
    session = turn.session
    _crash_in_the_first_action(turn, monkeypatch)
    old = _strays(session.path / "00")  # an older turn, made by hand
    assert finish_from_journal(turn) is not None
    assert not any(path.exists() for path in old)
    # now the turn is whole: only the last two turns (01 and 02) are looked at
    old = _strays(session.path / "00")
    recent = _strays(session.path / "02")
    assert finish_from_journal(session.latest()) is None
    assert all(path.exists() for path in old)
    assert not any(path.exists() for path in recent)


# --- the lock -----------------------------------------------------------------------


def test_a_turn_a_live_execute_holds_is_left_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turn = _turn(tmp_path)
    _crash_in_the_first_action(turn, monkeypatch)
    monkeypatch.setattr(recovery, "LOCK_WAIT", 0.05)
    live = FileLock(turn.session.path / ".lock")
    with live:
        assert recover_session(turn.session) is None
    assert _events(turn)[-1] == "start"  # untouched
    assert not turn.report_path.exists()
    session, outcome = open_session(tmp_path, None)  # the lock is free again
    assert session == turn.session
    assert outcome is not None and outcome.recovered
    assert _events(turn)[-1] == "closed"


def test_a_turn_whose_execute_ends_while_recovery_waits_is_recovered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # what a killed execute started may still be ending: recovery waits for the lock
    import time

    turn = _turn(tmp_path)
    _crash_in_the_first_action(turn, monkeypatch)
    live = FileLock(turn.session.path / ".lock")
    live.acquire()
    waits: list[float] = []

    def ending(seconds: float) -> None:  # the other process lets go while recovery waits
        waits.append(seconds)
        live.release()

    monkeypatch.setattr(time, "sleep", ending)
    outcome = recover_session(turn.session)
    assert waits  # it waited, and then
    assert outcome is not None and outcome.recovered  # finished the turn
    assert _events(turn)[-1] == "closed"


# --- what the journal holds ---------------------------------------------------------


def test_an_empty_journal_leaves_the_turn_to_run_again(tmp_path: Path) -> None:
    # killed after the journal was created, before its first line
    turn = _turn(tmp_path)
    turn.file(JOURNAL_FILE).write_text("")
    assert recover_session(turn.session) is None
    assert not turn.report_path.exists()
    outcome = _execute(turn)
    assert getattr(outcome, "status", None) is Status.COMPLETED
    assert getattr(outcome, "recovered", True) is False


def _rewrite_begin(turn: Turn, plan_text: str) -> None:
    journal = turn.file(JOURNAL_FILE)
    entries = [json.loads(line) for line in journal.read_text().splitlines()]
    entries[0]["plan"] = plan_text
    journal.write_text("".join(json.dumps(e) + "\n" for e in entries))


def test_a_journaled_plan_that_no_longer_parses_is_read_from_plan_md(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a teddy upgraded between the kill and the next command may read plans differently
    turn = _turn(tmp_path)
    _crash_in_the_first_action(turn, monkeypatch)
    _rewrite_begin(turn, "not a plan at all")
    outcome = recover_session(turn.session)
    assert outcome is not None and outcome.status is Status.FAILED  # the first was cut
    report = turn.report_path.read_text()
    assert report.startswith("# Execution Report: A plan\n")
    assert report.split("## 4. Action Log")[1].count("\n### ") == 3  # plan.md's three


def test_a_turn_whose_plan_cannot_be_read_at_all_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turn = _turn(tmp_path)
    _crash_in_the_first_action(turn, monkeypatch)
    _rewrite_begin(turn, "not a plan at all")
    turn.plan_path.write_text("not a plan either\n")
    assert recover_session(turn.session) is None
    assert not turn.report_path.exists()
    assert _events(turn)[-1] == "start"


# --- closing the journal behind a whole next turn -----------------------------------


def _crash_before_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Turn:
    turn = _turn(tmp_path)
    monkeypatch.setattr(execute_module.Journal, "closed", killed)
    with pytest.raises(Crash):
        _execute(turn)
    monkeypatch.undo()
    assert [t.name for t in turn.session.turns()] == ["01", "02"]
    assert _events(turn)[-1] == "reported"
    return turn


def test_a_next_turn_without_meta_closes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turn = _crash_before_closed(tmp_path, monkeypatch)
    (turn.session.path / "02" / "meta.yaml").write_text("parent_turn_id: [unclosed\n")
    assert recover_session(turn.session) is None
    assert _events(turn)[-1] == "reported"
    (turn.session.path / "02" / "meta.yaml").unlink()  # no parent named: the first turn
    assert recover_session(turn.session) is None
    assert _events(turn)[-1] == "reported"


def test_a_parent_turn_without_a_journal_is_left_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turn = _crash_before_closed(tmp_path, monkeypatch)
    journal = turn.file(JOURNAL_FILE).read_text()
    turn.file(JOURNAL_FILE).unlink()
    assert recover_session(Session(turn.session.root, turn.session.name)) is None
    assert not turn.file(JOURNAL_FILE).exists()
    turn.file(JOURNAL_FILE).write_text(journal)
    assert recover_session(turn.session) is None
    assert _events(turn)[-1] == "closed"
    assert recover_session(turn.session) is None
    assert _events(turn).count("closed") == 1  # closed once


# --- the report written before a kill ------------------------------------------------------


@contextmanager
def ascii_locale() -> Iterator[None]:
    """The C library's locale is plain C while the block runs: Python's default text
    encoding is then ASCII (outside Python's UTF-8 mode), as it is Latin-1 or another on
    machines set up with an older locale."""
    saved = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        yield
    finally:
        locale.setlocale(locale.LC_CTYPE, saved)


def test_a_report_written_before_a_kill_is_read_back_as_utf8_whatever_the_locale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the plan's status is "Green 🟢": the report is not ASCII; teddy is killed after
    # writing it, and the next command runs under a locale that is not UTF-8
    turn = _turn(tmp_path)
    monkeypatch.setattr(execute_module, "prepare_next", killed)
    with pytest.raises(Crash):
        _execute(turn)
    monkeypatch.undo()
    report = turn.report_path.read_text(encoding="utf-8")
    assert not report.isascii()
    with ascii_locale():
        _, recovered = open_session(tmp_path, None)
    assert recovered is not None and recovered.recovered
    assert recovered.report == report
    assert turn.report_path.read_text(encoding="utf-8") == report
