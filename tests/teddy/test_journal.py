"""The turn journal, and finishing a turn from it at each point a crash can leave it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plankit.teddy.run import execute as execute_module
from plankit.teddy.run.approval import Approval, Decision, ScriptedApprover, ScriptedChat
from plankit.teddy.run.execute import execute_turn
from plankit.teddy.run.journal import JOURNAL_FILE, STOPPED_NOTE, replay
from plankit.teddy.run.recovery import open_session, recover_session
from plankit.teddy.run.report import Status
from plankit.teddy.session.config import Config
from plankit.teddy.session.layout import Turn, create_session
from plankit.teddy.session.prompts import get_prompt
from plankit.textio import StagedWrite
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
    # the three CREATEs run as one group (plankit.teddy.run.batch): all three start,
    # one flush, then each file takes its name and its action finishes
    assert _events(turn) == [
        "begin",
        "memos",
        *["start"] * 3,
        *["finish"] * 3,
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


def _crash_publishing(number: int, monkeypatch: pytest.MonkeyPatch, before=None) -> None:  # type: ignore[no-untyped-def]
    """Kill teddy while the ``number``-th staged file of a group (a.txt, b.txt, c.txt)
    takes its name."""
    real = StagedWrite.publish
    calls = []

    def publish(self: StagedWrite) -> None:
        if self.target.endswith(".txt"):
            calls.append(self)
        if len(calls) == number:
            if before is not None:
                before()
            raise Crash
        real(self)

    monkeypatch.setattr(StagedWrite, "publish", publish)


def test_crash_in_the_middle_of_an_action(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    turn = _turn(tmp_path)

    def torn() -> None:  # the temporary file a killed write leaves
        (tmp_path / ".b.txt.0123abcd.tmp").write_text("half")

    _crash_publishing(2, monkeypatch, torn)
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
    # c.txt had started too (its bytes staged in the same group), not taken its name
    assert STOPPED_NOTE in sections[2]
    assert (tmp_path / "a.txt").exists()
    assert not (tmp_path / "b.txt").exists() and not (tmp_path / "c.txt").exists()
    assert not (tmp_path / ".b.txt.0123abcd.tmp").exists()  # the stray is cleaned
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert turn.session.latest().name == "02"


def test_a_torn_start_line_means_the_action_never_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the kill came while the second action's start was written: it had not begun
    turn = _turn(tmp_path)
    real = execute_module.run_action
    calls = []

    def dies_before_the_second(action, runtime, *staged):  # type: ignore[no-untyped-def]
        calls.append(action)
        if len(calls) == 2:
            raise Crash
        return real(action, runtime, *staged)

    monkeypatch.setattr(execute_module, "run_action", dies_before_the_second)
    with pytest.raises(Crash):
        _execute(turn)
    monkeypatch.undo()
    journal = turn.file(JOURNAL_FILE)
    text = journal.read_text()
    assert text.endswith('"targets": ["b.txt"], "time": "' + text.rsplit('"time": "', 1)[1])
    journal.write_text(text[: text.rindex('"targets"')])  # the start line, torn
    recovered = recover_session(turn.session)
    assert recovered is not None and recovered.interrupted
    sections = turn.report_path.read_text().split("## 4. Action Log")[1].split("\n### ")[1:]
    assert STOPPED_NOTE in sections[0]  # staged in the group, not published
    assert not (tmp_path / "a.txt").exists()
    assert "skipped: execution was interrupted" in sections[1]  # not "was running"
    assert STOPPED_NOTE not in sections[1]
    assert replay(journal).closed


# --- the recovered report tells what the turn's own report would have told ------------


def _crash_writing_the_report(
    turn: Turn, monkeypatch: pytest.MonkeyPatch, decision: Approval | str, config: Config
) -> str:
    """Run the turn until it writes report.md, then kill it: the report it was writing."""
    real = execute_module.write_text_atomic
    written: list[str] = []

    def dies_writing_the_report(path: Path, text: str, *args: object, **kwargs: object) -> None:
        if path == turn.report_path:
            written.append(text)
            raise Crash
        real(path, text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(execute_module, "write_text_atomic", dies_writing_the_report)
    with pytest.raises(Crash):
        execute_turn(
            turn, approver=ScriptedApprover([decision]), chat=ScriptedChat([]), config=config
        )
    monkeypatch.undo()
    assert not turn.report_path.exists()
    return written[0]


def _without_times(report: str) -> str:
    return "\n".join(
        line
        for line in report.splitlines()
        if not line.startswith(("- **Start Time:**", "- **End Time:**"))
    )


MIXED = "\n\n".join(
    [
        "### `CREATE`\n- **File Path:** [a.txt](/a.txt)\n```\na\n```",
        "### `CREATE`\n- **File Path:** [b.txt](/b.txt)\n```\nb\n```",
        "### `CREATE`\n- **File Path:** [c.txt](/c.txt)\n```\nc\n```",
        "### `EXECUTE`\n```shell\necho checking the build; exit 3\n```",
        "### `CREATE`\n- **File Path:** [d.txt](/d.txt)\n```\nd\n```",
    ]
)


def test_a_report_recovered_from_the_journal_is_the_one_the_turn_would_have_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the user left out the first action and changed the third; the check fails, so the
    # last action is skipped; two memo changes are applied, the user left out the third
    turn = _turn(tmp_path, MIXED)
    (tmp_path / ".teddy" / "memos.yaml").write_text("- Old rule.\n- Keep me.\n")
    memos = "[+] Keep functions small. # agreed\n[-] Old rule.\n[+] Use tabs."
    turn.plan_path.write_text(plan(MIXED, memos=memos), encoding="utf-8")
    approval = Approval(
        Decision.APPROVE,
        selected=frozenset({1, 2, 3, 4}),
        modified={2: "path changed by the user"},
        memos_selected=frozenset({0, 1}),
    )
    config = Config(execute_checkpoint=False)
    would_have = _crash_writing_the_report(turn, monkeypatch, approval, config)
    assert "- `[+]` Keep functions small. — applied" in would_have
    assert "- `[-]` Old rule. — applied" in would_have
    assert "- `[+]` Use tabs. — not applied (not selected)" in would_have
    assert "Skipped 🟡 (not selected)" in would_have
    assert "skipped after the failure of `EXECUTE` above" in would_have
    assert "path changed by the user" in would_have

    recovered = recover_session(turn.session)
    assert recovered is not None
    assert _without_times(turn.report_path.read_text()) == _without_times(would_have)
    assert recovered.report == turn.report_path.read_text()
    assert recovered.status is Status.PARTIAL
    assert (recovered.interrupted, recovered.recovered) == (False, True)
    assert recovered.message == "turn 01 was cut short; it was finished from its journal"
    assert recovered.next_turn is not None and recovered.next_turn.name == "02"
    assert _events(turn)[-2:] == ["reported", "closed"]
    last = json.loads(turn.file(JOURNAL_FILE).read_text().splitlines()[-1])
    assert last["next"] == "02"


def test_a_plan_the_user_skipped_is_reported_skipped_after_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turn = _turn(tmp_path)
    would_have = _crash_writing_the_report(turn, monkeypatch, "skip", Config())
    assert would_have.count("Skipped 🟡 (the plan was skipped by the user)") == 3
    recovered = recover_session(turn.session)
    assert recovered is not None
    assert _without_times(turn.report_path.read_text()) == _without_times(would_have)
    assert recovered.status is Status.SKIPPED
    assert recovered.interrupted is False  # nothing was cut short: nothing was to run
    assert not any((tmp_path / f"{n}.txt").exists() for n in "abc")


def test_a_turn_killed_overnight_keeps_the_time_it_began(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turn = _turn(tmp_path)
    _crash_writing_the_report(turn, monkeypatch, "approve", Config())
    # the kill came in the evening; the next command runs in the morning
    journal = turn.file(JOURNAL_FILE)
    entries = [json.loads(line) for line in journal.read_text().splitlines()]
    assert entries[0]["event"] == "begin"
    entries[0]["time"] = "2026-03-01T21:07:09.250000Z"
    journal.write_text("".join(json.dumps(e) + "\n" for e in entries))
    recover_session(turn.session)
    report = turn.report_path.read_text()
    assert "- **Start Time:** 2026-03-01T21:07:09Z\n" in report
    assert "- **End Time:** 2026-03-01" not in report


def test_a_turn_cut_short_in_its_last_action_is_reported_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turn = _turn(tmp_path)
    _crash_publishing(3, monkeypatch)
    with pytest.raises(Crash):
        _execute(turn)
    monkeypatch.undo()
    recovered = recover_session(turn.session)
    assert recovered is not None and recovered.interrupted
    assert recovered.status is Status.PARTIAL
    report = turn.report_path.read_text()
    assert (
        "- **Note:** execution was interrupted: teddy stopped before the turn ended (killed, "
        "crashed or Ctrl-C); this report was written from the turn's journal\n" in report
    )


def test_a_validation_report_written_before_the_crash_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.txt").write_text("exists")
    turn = _turn(tmp_path)
    monkeypatch.setattr(execute_module, "prepare_next", killed)
    with pytest.raises(Crash):
        _execute(turn)
    monkeypatch.undo()
    report = turn.report_path.read_text()
    assert _events(turn) == ["validation-failed", "reported"]
    recovered = recover_session(turn.session)
    assert recovered is not None
    assert recovered.status is Status.VALIDATION_FAILED
    assert recovered.report == report == turn.report_path.read_text()
    assert recovered.next_turn is not None and recovered.next_turn.name == "02"
    assert turn.rel("report.md") not in recovered.next_turn.context_path.read_text()
    assert _events(turn)[-1] == "closed"
    assert recover_session(turn.session) is None


def test_a_tampered_journal_cannot_make_recovery_delete_outside_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    turn = _turn(root)
    monkeypatch.setattr(execute_module, "run_action", killed)
    with pytest.raises(Crash):
        _execute(turn)
    monkeypatch.undo()
    journal = turn.file(JOURNAL_FILE)
    lines = journal.read_text().splitlines()
    start = json.loads(lines[-1])
    assert start["event"] == "start" and start["targets"] == ["a.txt"]
    start["targets"] = ["../outside/notes.txt", "a.txt"]
    journal.write_text("\n".join([*lines[:-1], json.dumps(start)]) + "\n")
    (outside / ".notes.txt.0123abcd.tmp").write_text("someone else's")
    (root / ".a.txt.89abcdef.tmp").write_text("half")
    (root / ".todo.txt.2468ace0.tmp").write_text("not a target's")
    assert recover_session(turn.session) is not None
    assert (outside / ".notes.txt.0123abcd.tmp").exists()
    assert not (root / ".a.txt.89abcdef.tmp").exists()
    assert (root / ".todo.txt.2468ace0.tmp").exists()


def test_a_kill_before_the_first_action_began_is_reported_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # approved, memos done, then killed before the first action's start line: nothing ran,
    # yet nothing was skipped either, so the turn failed rather than being skipped
    turn = _turn(tmp_path)
    monkeypatch.setattr(execute_module.Journal, "start", killed)
    with pytest.raises(Crash):
        _execute(turn)
    monkeypatch.undo()
    assert _events(turn) == ["begin", "memos"]
    recovered = recover_session(turn.session)
    assert recovered is not None and recovered.interrupted
    assert recovered.status is Status.FAILED
    report = turn.report_path.read_text()
    assert "- **Overall Status:** Failed" in report
    assert report.count("skipped: execution was interrupted") == 3
    assert not any((tmp_path / f"{n}.txt").exists() for n in "abc")
