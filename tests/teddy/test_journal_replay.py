"""Reading a turn's journal back: what survives a kill, a tampered file, a special file.

``test_journal.py`` crashes whole turns; these tests hand the reader journals written
line by line, as a kill, a full disk or a person's editor leaves them.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import threading
from pathlib import Path

import pytest

from plankit.teddy.format.model import Create, Edit, EditPair, Execute, Memo
from plankit.teddy.format.parse import parse_plan
from plankit.teddy.run import journal as journal_module
from plankit.teddy.run.journal import (
    JOURNAL_FILE,
    NOT_STARTED,
    STOPPED_NOTE,
    Journal,
    action_targets,
    memo_results_from,
    parse_time,
    replay,
    results_from,
)
from plankit.teddy.session.layout import create_session
from plankit.teddy.session.memos import MemoResult
from plankit.teddy.session.prompts import get_prompt
from tests.clocks import new_york_clock, utc_now
from tests.teddy.test_session_e2e import plan

BEGIN = {
    "event": "begin",
    "decision": "approve",
    "plan": "# A plan",
    "time": "2026-05-04T10:11:12.000001Z",
}
PLAN = plan(
    "\n\n".join(
        f"### `CREATE`\n- **File Path:** [{name}.txt](/{name}.txt)\n```\n{name}\n```"
        for name in ("a", "b", "c")
    )
)


def _journal(tmp_path: Path, *lines: object) -> Path:
    """A journal file of ``lines``: dicts as JSON lines, strings as they are."""
    path = tmp_path / JOURNAL_FILE
    path.write_text(
        "".join(json.dumps(line) + "\n" if isinstance(line, dict) else str(line) for line in lines),
        encoding="utf-8",
    )
    return path


def test_each_event_is_read_back(tmp_path: Path) -> None:
    memos = [{"op": "+", "text": "Keep it small.", "comment": None, "applied": True, "note": ""}]
    finish = {"event": "finish", "index": 0, "success": True, "details": "Wrote 1 line."}
    state = replay(
        _journal(
            tmp_path,
            BEGIN,
            {"event": "memos", "results": memos},
            {"event": "start", "index": 0, "targets": ["a.txt"]},
            finish,
            {"event": "start", "index": "1", "targets": None},
            {"event": "reported"},
            {"event": "closed", "next": "02"},
        )
    )
    assert (state.begun, state.skipped, state.validation_failed) == (True, False, False)
    assert state.plan_text == "# A plan"
    assert state.start_time == "2026-05-04T10:11:12.000001Z"
    assert state.memos == memos
    assert state.started == {0: ["a.txt"], 1: []}
    assert state.finished == {0: finish}
    assert (state.reported, state.closed) == (True, True)


def test_a_skipped_plan_and_a_failed_validation_are_read_back(tmp_path: Path) -> None:
    skipped = replay(_journal(tmp_path, {**BEGIN, "decision": "skip"}))
    assert skipped.begun and skipped.skipped
    failed = replay(
        _journal(tmp_path, {"event": "validation-failed", "time": "2026-05-04T10:00:00.5Z"})
    )
    assert failed.validation_failed and not failed.begun
    assert failed.start_time == "2026-05-04T10:00:00.5Z"
    assert (failed.reported, failed.closed, failed.memos) == (False, False, None)


def test_a_torn_last_line_is_left_out(tmp_path: Path) -> None:
    state = replay(_journal(tmp_path, BEGIN, {"event": "reported"}, '{"event": "clo'))
    assert state.reported and not state.closed


def test_lines_that_are_not_objects_are_passed_over(tmp_path: Path) -> None:
    state = replay(_journal(tmp_path, BEGIN, "[1, 2]\n", '"reported"\n', {"event": "closed"}))
    assert state.begun and state.closed and not state.reported


def test_a_line_longer_than_any_entry_ends_the_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(journal_module, "MAX_ENTRY_BYTES", 200)
    huge = {"event": "memos", "results": [{"text": "x" * 300}]}
    state = replay(_journal(tmp_path, BEGIN, huge, {"event": "reported"}))
    assert state.begun and state.memos is None and not state.reported
    # nor is the rest of such a line read as an entry of its own
    foreign = "#" * 200 + '{"event": "reported"}\n'
    assert not replay(_journal(tmp_path, BEGIN, foreign)).reported


def test_a_line_that_is_not_json_ends_the_replay(tmp_path: Path) -> None:
    state = replay(_journal(tmp_path, BEGIN, "<<<<<<< HEAD\n", {"event": "reported"}))
    assert state.begun and not state.reported


def test_a_fifo_in_place_of_the_journal_reads_as_empty_without_waiting(tmp_path: Path) -> None:
    path = tmp_path / JOURNAL_FILE
    os.mkfifo(path)
    done: list[object] = []
    reader = threading.Thread(target=lambda: done.append(replay(path)), daemon=True)
    reader.start()
    reader.join(60)
    waited = reader.is_alive()
    if waited:  # unblock the reader before failing (it then finishes, so look first)
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    assert not waited
    assert done and not done[0].begun  # type: ignore[attr-defined]


def test_time_stamps(tmp_path: Path) -> None:
    assert parse_time("2026-05-04T10:11:12.000001Z") == dt.datetime(
        2026, 5, 4, 10, 11, 12, 1, tzinfo=dt.UTC
    )
    assert parse_time(None) is None
    assert parse_time("") is None
    assert parse_time("yesterday evening") is None
    assert parse_time("2026-05-04 10:11:12") is None


def test_results_come_from_what_the_journal_recorded(tmp_path: Path) -> None:
    parsed = parse_plan(PLAN)
    state = replay(
        _journal(
            tmp_path,
            BEGIN,
            {"event": "start", "index": 0, "targets": ["a.txt"]},
            {
                "event": "finish",
                "index": 0,
                "approved": True,
                "skip_reason": None,
                "success": False,
                "duration": 0.25,
                "details": "",
                "modified": "the path, by the user",
                "notes": ["the disk is full", 7],
            },
            {"event": "start", "index": 1, "targets": ["b.txt"]},
        )
    )
    first, second, third = results_from(state, parsed)
    assert first.action == parsed.actions[0]
    assert (first.approved, first.skip_reason, first.success, first.duration) == (
        True,
        None,
        False,
        0.25,
    )
    assert (first.details, first.modified, first.notes) == (
        "",
        "the path, by the user",
        ("the disk is full", "7"),
    )
    # b.txt had started: it may have been written, or half of it
    assert (second.approved, second.skip_reason, second.success, second.notes) == (
        True,
        None,
        False,
        (STOPPED_NOTE,),
    )
    assert (second.duration, second.details, second.modified) == (None, "", None)
    assert (third.approved, third.skip_reason, third.success) == (True, NOT_STARTED, None)


def test_a_finish_entry_with_fields_missing_reads_as_a_skip(tmp_path: Path) -> None:
    parsed = parse_plan(PLAN)
    state = replay(_journal(tmp_path, BEGIN, {"event": "finish", "index": 2}))
    result = results_from(state, parsed)[2]
    assert (result.approved, result.skip_reason, result.success) == (False, None, None)
    assert (result.details, result.notes, result.modified) == ("", (), None)
    # a begin line without its plan reads as no plan, not as a text such as "None"
    bare = replay(_journal(tmp_path, {"event": "begin", "decision": "approve"}))
    assert bare.begun and bare.plan_text == ""


def test_memo_results_come_from_the_journal(tmp_path: Path) -> None:
    recorded = [
        {"op": "-", "text": "Old rule.", "comment": "replaced", "applied": True, "note": ""},
        {"op": "+", "text": "Use tabs.", "comment": None, "applied": False, "note": "not selected"},
        {"op": "?"},
    ]
    state = replay(_journal(tmp_path, BEGIN, {"event": "memos", "results": recorded}))
    removed, added, odd = memo_results_from(state)
    assert (removed.memo.op, removed.memo.text, removed.memo.comment) == (
        "-",
        "Old rule.",
        "replaced",
    )
    assert (removed.applied, removed.note) == (True, "")
    assert (added.memo.op, added.memo.text, added.memo.comment) == ("+", "Use tabs.", None)
    assert (added.applied, added.note) == (False, "not selected")
    assert (odd.memo.op, odd.memo.text, odd.applied, odd.note) == ("+", "", False, "")
    assert memo_results_from(replay(_journal(tmp_path, BEGIN))) == []


def test_the_memo_results_a_turn_wrote_read_back_as_they_were(tmp_path: Path) -> None:
    session = create_session(tmp_path, "memos", get_prompt("Developer"), "Developer")
    turn = session.latest()
    written = [
        MemoResult(Memo("+", "Keep functions small.", "agreed in review"), True),
        MemoResult(Memo("-", "Old rule."), False, "not in memos.yaml"),
    ]
    journal = Journal(turn)
    journal.begin("# A plan", "approve")
    journal.memos(written)
    journal.close()
    assert memo_results_from(replay(turn.file(JOURNAL_FILE))) == written


def test_only_writes_name_targets() -> None:
    assert action_targets(Create("docs/a.md", "x")) == ["docs/a.md"]
    assert action_targets(Edit("b.py", (EditPair("x", "y"),))) == ["b.py"]
    assert action_targets(Execute("make")) == []


def test_the_journal_is_written_one_line_per_entry(tmp_path: Path) -> None:
    session = create_session(tmp_path, "journal", get_prompt("Developer"), "Developer")
    turn = session.latest()
    journal = Journal(turn)
    old = os.umask(0o022)
    try:
        journal.begin("# A plan with ünïcode", "approve")
    finally:
        os.umask(old)
    journal.start(0, Create("a.txt", "a"))
    journal.closed("02")
    journal.close()  # a second close is harmless
    path = turn.file(JOURNAL_FILE)
    assert path.stat().st_mode & 0o777 == 0o644
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["event"] for line in lines] == ["begin", "start", "closed"]
    assert parse_time(json.loads(lines[0])["time"]) is not None
    assert "ünïcode" in lines[0]  # readable as written, not escaped
    # a journal opened again appends after what is there
    again = Journal(turn)
    again.reported()
    again.close()
    assert replay(path).reported and replay(path).plan_text == "# A plan with ünïcode"


def _reopened(tmp_path: Path, content: bytes) -> bytes:
    """The journal ``content`` after teddy opened it again and wrote ``reported``."""
    tmp_path.mkdir(exist_ok=True)
    session = create_session(tmp_path, "torn", get_prompt("Developer"), "Developer")
    turn = session.latest()
    turn.file(JOURNAL_FILE).write_bytes(content)
    journal = Journal(turn)
    journal.reported()
    journal.close()
    return turn.file(JOURNAL_FILE).read_bytes()


def _reported_line(data: bytes) -> bytes:
    last = data.splitlines(keepends=True)[-1]
    assert json.loads(last)["event"] == "reported"
    return last


@pytest.mark.parametrize(
    "whole",
    [b"", b'{"event": "begin"}\n', b'{"event": "begin"}\n{"event": "start", "index": 0}\n'],
    ids=["nothing-whole", "one-line", "two-lines"],
)
def test_a_torn_piece_is_cut_before_the_next_entry(tmp_path: Path, whole: bytes) -> None:
    data = _reopened(tmp_path, whole + b'{"event": "finish", "ind')
    assert data == whole + _reported_line(data)


def test_a_torn_piece_of_one_byte_is_cut_too(tmp_path: Path) -> None:
    # the kill came right after the first byte of the line: the newline before it is whole
    whole = b'{"event": "begin"}\n'
    data = _reopened(tmp_path, whole + b"{")
    assert data == whole + _reported_line(data)


def test_a_torn_line_longer_than_one_read_is_cut_whole(tmp_path: Path) -> None:
    # a big plan in the begin line, torn: the end of the previous line is far back
    whole = b'{"event": "validation-failed"}\n'
    torn = b'{"event": "begin", "plan": "' + b"x" * 200_000
    data = _reopened(tmp_path, whole + torn)
    assert data == whole + _reported_line(data)
    data = _reopened(tmp_path / "alone", torn)
    assert data == _reported_line(data)
    # the previous line's end exactly where a read begins
    torn = b"y" * (3 * journal_module._CHUNK - 1)
    data = _reopened(tmp_path / "boundary", whole[:-1] + b"\n" + torn)
    assert data == whole + _reported_line(data)


def test_the_cut_reaches_back_to_the_first_byte_and_keeps_a_whole_line_there(
    tmp_path: Path,
) -> None:
    # the look back for the end of the last whole line reads 64 KiB at a time, and
    # here its last read is the journal's first byte alone: a line holding only a
    # newline (no line TeDDy writes, but a whole one) stays, as every whole line does
    torn = b'{"event": "begin", "plan": "' + b"x" * (journal_module._CHUNK - 28)
    assert len(torn) == journal_module._CHUNK
    data = _reopened(tmp_path, b"\n" + torn)
    assert data == b"\n" + _reported_line(data)


def test_journal_times_are_utc_on_a_clock_that_is_not(tmp_path: Path) -> None:
    session = create_session(tmp_path, "journal", get_prompt("Developer"), "Developer")
    journal = Journal(session.latest())
    with new_york_clock():
        before = utc_now()
        journal.begin("# A plan", "approve")
        after = dt.datetime.now(dt.UTC)
    journal.close()
    state = replay(journal.path)
    taken = parse_time(state.start_time)
    assert taken is not None and before <= taken <= after


def test_a_whole_journal_is_only_appended_to(tmp_path: Path) -> None:
    whole = b'{"event": "begin"}\n{"event": "start", "index": 0}\n'
    data = _reopened(tmp_path, whole)
    assert data == whole + _reported_line(data)


def test_the_entries_recovery_relies_on_are_flushed_as_they_are_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plankit import syncing
    from plankit.teddy.run.approval import ScriptedApprover, ScriptedChat
    from plankit.teddy.run.execute import execute_turn
    from plankit.teddy.session.config import Config

    flushed: list[str] = []
    real_barrier = syncing.barrier
    path = tmp_path / JOURNAL_FILE

    def barrier(fd: int) -> None:
        if path.exists() and os.path.samestat(os.fstat(fd), os.stat(path)):
            flushed.append(json.loads(path.read_text().splitlines()[-1])["event"])
        real_barrier(fd)

    monkeypatch.setattr(syncing, "barrier", barrier)
    refused = plan("### `READ`\n- **Resource:** [.git/config](/.git/config)")
    for case, text in (("runs", PLAN), ("refused", refused)):
        (tmp_path / case).mkdir()
        session = create_session(tmp_path / case, "flush", get_prompt("Developer"), "Developer")
        turn = session.latest()
        turn.plan_path.write_text(text, encoding="utf-8")
        path = turn.file(JOURNAL_FILE)
        flushed.clear()
        execute_turn(
            turn, approver=ScriptedApprover(["approve"]), chat=ScriptedChat([]), config=Config()
        )
        first = "begin" if case == "runs" else "validation-failed"
        assert {first, "reported", "closed"} <= set(flushed), (case, flushed)
