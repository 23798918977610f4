"""The turn journal, and finishing a turn from it at each point a crash can leave it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plankit.teddy.run import execute as execute_module
from plankit.teddy.run.approval import ScriptedApprover, ScriptedChat
from plankit.teddy.run.execute import execute_turn
from plankit.teddy.run.journal import JOURNAL_FILE, STOPPED_NOTE
from plankit.teddy.run.recovery import open_session, recover_session
from plankit.teddy.run.report import Status
from plankit.teddy.session.config import Config
from plankit.teddy.session.layout import Turn, create_session
from plankit.teddy.session.prompts import get_prompt
from tests.teddy.test_session_e2e import plan

ACTIONS = "\n\n".join(
    f"### `CREATE`\n- **File Path:** [{name}.txt](/{name}.txt)\n```\n{name}\n```"
    for name in ("a", "b", "c")
)


class Crash(BaseException):
    """Stands for a kill: nothing after it runs, not even except Exception blocks."""


def killed(*args: object, **kwargs: object) -> None:
    """A function that never returns: the process dies in it."""
    raise Crash


def _turn(tmp_path: Path, actions: str = ACTIONS) -> Turn:
    session = create_session(tmp_path, "journal", get_prompt("Developer"), "Developer")
    turn = session.latest()
    turn.plan_path.write_text(plan(actions), encoding="utf-8")
    return turn


def _execute(turn: Turn) -> object:
    return execute_turn(
        turn, approver=ScriptedApprover(["approve"]), chat=ScriptedChat([]), config=Config()
    )


def _events(turn: Turn) -> list[str]:
    lines = turn.file(JOURNAL_FILE).read_text().splitlines()
    return [json.loads(line)["event"] for line in lines]


def test_a_whole_turn_is_journaled_in_order(tmp_path: Path) -> None:
    turn = _turn(tmp_path)
    _execute(turn)
    assert _events(turn) == [
        "begin",
        "memos",
        *["start", "finish"] * 3,
        "reported",
        "closed",
    ]
    assert recover_session(turn.session) is None  # nothing to finish


def test_crash_after_the_report_before_the_next_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turn = _turn(tmp_path)

    monkeypatch.setattr(execute_module, "prepare_next", killed)
    with pytest.raises(Crash):
        _execute(turn)
    report = turn.report_path.read_text()
    assert [t.name for t in turn.session.turns()] == ["01"]  # stuck, before the fix
    monkeypatch.undo()
    _, recovered = open_session(tmp_path, None)
    assert recovered is not None and recovered.recovered
    assert recovered.next_turn is not None and recovered.next_turn.name == "02"
    assert turn.report_path.read_text() == report  # the report that was written stays
    assert recovered.status is Status.COMPLETED
    assert _events(turn)[-1] == "closed"
    assert turn.rel("report.md") in recovered.next_turn.context_path.read_text()


def test_crash_after_the_next_turn_appeared_before_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The next turn's folder appears in one rename; a kill just after it leaves turn 01's
    journal without its closed line. Recovery closes it, naming turn 02, and makes no
    turn 03."""
    turn = _turn(tmp_path)
    monkeypatch.setattr(execute_module.Journal, "closed", killed)
    with pytest.raises(Crash):
        _execute(turn)
    monkeypatch.undo()
    assert [t.name for t in turn.session.turns()] == ["01", "02"]
    assert _events(turn)[-1] == "reported"
    assert recover_session(turn.session) is None  # turn 02 is whole: nothing to redo
    assert _events(turn)[-1] == "closed"
    last = json.loads(turn.file(JOURNAL_FILE).read_text().splitlines()[-1])
    assert last["next"] == "02"
    assert [t.name for t in turn.session.turns()] == ["01", "02"]


def test_crash_in_the_middle_of_an_action(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    turn = _turn(tmp_path)
    real = execute_module.run_action
    calls = []

    def run_action(action, runtime):  # type: ignore[no-untyped-def]
        calls.append(action)
        if len(calls) == 2:
            (tmp_path / ".b.txt.0123abcd.tmp").write_text("half")  # a torn temp file
            raise Crash
        return real(action, runtime)

    monkeypatch.setattr(execute_module, "run_action", run_action)
    with pytest.raises(Crash):
        _execute(turn)
    monkeypatch.undo()
    assert not turn.report_path.exists()
    outcome = _execute(turn)  # the next execute finishes the turn instead of running
    assert getattr(outcome, "recovered", False)
    report = turn.report_path.read_text()
    assert "- **Overall Status:** Partial 🟡" in report
    assert "execution was interrupted" in report
    sections = report.split("## 4. Action Log")[1].split("\n### ")[1:]
    assert "Execution:** Success" in sections[0]  # a.txt was created
    assert STOPPED_NOTE in sections[1]  # b.txt was being created
    assert "skipped: execution was interrupted" in sections[2]  # c.txt never started
    assert (tmp_path / "a.txt").exists() and not (tmp_path / "c.txt").exists()
    assert not (tmp_path / ".b.txt.0123abcd.tmp").exists()  # the stray is cleaned
    assert turn.session.latest().name == "02"


def test_crash_before_the_plan_began_leaves_the_turn_to_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turn = _turn(tmp_path)

    class Dies:
        def review(self, plan: object, plan_file: object) -> object:
            raise Crash

    with pytest.raises(Crash):
        execute_turn(turn, approver=Dies(), chat=ScriptedChat([]), config=Config())  # type: ignore[arg-type]
    assert recover_session(turn.session) is None
    outcome = _execute(turn)
    assert getattr(outcome, "status", None) is Status.COMPLETED
    assert all((tmp_path / f"{n}.txt").exists() for n in "abc")


def test_crash_before_a_validation_report_validates_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.txt").write_text("exists")
    turn = _turn(tmp_path)

    monkeypatch.setattr(execute_module, "write_text_atomic", killed)
    with pytest.raises(Crash):
        _execute(turn)
    monkeypatch.undo()
    assert _events(turn) == ["validation-failed"]
    assert recover_session(turn.session) is None  # nothing ran: the journal is dropped
    outcome = _execute(turn)
    assert getattr(outcome, "status", None) is Status.VALIDATION_FAILED
    assert turn.session.latest().name == "02"


def test_a_torn_last_line_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    turn = _turn(tmp_path)

    monkeypatch.setattr(execute_module, "prepare_next", killed)
    with pytest.raises(Crash):
        _execute(turn)
    monkeypatch.undo()
    with turn.file(JOURNAL_FILE).open("a") as handle:
        handle.write('{"event": "clo')  # a kill in the middle of a write
    recovered = recover_session(turn.session)
    assert recovered is not None and recovered.next_turn is not None
