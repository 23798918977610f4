"""ACP runs on the board (plankit.board.acp_view), from transcripts written by hand the
way ``plankit acp run --board`` writes them: the latest plan wins, TeDDy's rich status
beats the wire's, and lines that are not plan updates are passed over."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from plankit.board.acp_view import read

REL = ".plankit/acp/run-1.jsonl"


def _line(update: dict[str, Any], *, wrapped: bool = True) -> str:
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s1", "update": update},
    }
    return json.dumps({"from": "agent", "message": message} if wrapped else message) + "\n"


def _plan(*entries: dict[str, Any], title: object = None) -> dict[str, Any]:
    update: dict[str, Any] = {"sessionUpdate": "plan", "entries": list(entries)}
    if title is not None:
        update["_meta"] = {"plankit": {"title": title}}
    return update


def _entry(content: str, status: object, rich: object = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"content": content, "status": status, "priority": "medium"}
    if rich is not None:
        entry["_meta"] = {"plankit": {"status": rich}}
    return entry


def _transcript(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "run-1.jsonl"
    path.write_text("".join(lines))
    return path


def test_the_latest_plan_wins_and_other_lines_are_passed_over(tmp_path: Path) -> None:
    path = _transcript(
        tmp_path,
        _line(_plan(_entry("Read the code", "pending"), title="First plan")),
        '{"from": "client", "message": {"jsonrpc": "2.0", "id": 3, "result": {}}}\n',
        "not json at all\n",
        "[1, 2]\n",
        '{"from": "agent", "message": "session/update"}\n',
        _line({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}),
        '{"jsonrpc": "2.0", "method": "session/update", "params": "plan"}\n',
        _line(
            _plan(
                _entry("Read the code", "completed"), _entry("Change it", "in_progress"), "a note"
            )
        ),
        '{"from": "agent", "message": {"jsonrpc": "2.0", "method": "session/upd',  # torn
    )
    found = read(path, REL, detail=True)
    assert [e["content"] for e in found["entries"]] == ["Read the code", "Change it"]
    assert [e["state"] for e in found["entries"]] == ["done", "doing"]
    assert found["title"] == "First plan"  # the latest plan said no title
    assert (found["progress"], found["state"], found["status"]) == (
        {"done": 1, "total": 2},
        "doing",
        None,
    )
    assert found["errors"] == []


def test_a_bare_json_rpc_line_is_read_too(tmp_path: Path) -> None:
    path = _transcript(
        tmp_path, _line(_plan(_entry("Ship", "completed"), title="Bare"), wrapped=False)
    )
    found = read(path, REL, detail=False)
    assert (found["title"], found["progress"], found["state"]) == (
        "Bare",
        {"done": 1, "total": 1},
        "done",
    )
    assert "entries" not in found and "errors" not in found


def test_teddys_rich_status_beats_the_wires_completed(tmp_path: Path) -> None:
    path = _transcript(
        tmp_path,
        _line(
            _plan(
                _entry("Write the config", "completed", "completed"),
                _entry("Check the port", "completed", "failed"),
                _entry("Deploy", "completed", "rejected"),
                _entry("Tell the team", "completed", "cancelled"),
                _entry("Odd", 7, {"not": "a status"}),
                _entry("Odder", ["completed"]),
                title="Port fix",
            )
        ),
    )
    found = read(path, REL, detail=True)
    assert [e["state"] for e in found["entries"]] == [
        "done",
        "failed",
        "skipped",
        "skipped",
        "todo",
        "todo",
    ]
    assert found["status"] == "1 failed, 2 skipped"
    assert (found["progress"], found["state"]) == ({"done": 1, "total": 6}, "doing")


def test_a_plan_with_nothing_done_is_todo_and_odd_entries_are_dropped(tmp_path: Path) -> None:
    path = _transcript(
        tmp_path,
        _line(
            {
                "sessionUpdate": "plan",
                "entries": [_entry("A", "pending"), "B", None],
                "_meta": {"plankit": {"title": 3}},
            }
        ),
    )
    found = read(path, REL, detail=True)
    assert [e["content"] for e in found["entries"]] == ["A"]
    assert (found["title"], found["state"], found["status"]) == ("run-1", "todo", None)


def test_a_transcript_with_no_plan_is_named_after_its_file(tmp_path: Path) -> None:
    path = _transcript(tmp_path, _line({"sessionUpdate": "plan"}))
    os.utime(path, (1_764_150_764, 1_764_150_764))
    found = read(path, REL, detail=True)
    assert found == {
        "title": "run-1",
        "progress": {"done": 0, "total": 0},
        "updated": "2025-11-26T09:52:44Z",
        "status": None,
        "state": "todo",
        "entries": [],
        "errors": [],
    }


def test_a_transcript_that_is_a_fifo_says_why_it_is_not_shown(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "run-1.jsonl")
    found = read(tmp_path / "run-1.jsonl", REL, detail=True)
    assert (
        found["status"]
        == "not shown: run-1.jsonl is a named pipe (FIFO), not a regular file; the board reads files only"
    )
    [problem] = found["errors"]
    assert (problem["code"], problem["file"]) == ("file-refused", REL)
