"""TeDDy sessions of every shape on the board, from folders written by hand as TeDDy
writes them (tests/board/sessions.py): failed and partial turns, a plan refused by
validation, an INVOKE and its CONCLUDE, a hundred turns, a turn still waiting, files
that cannot be read."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from plankit.board import views
from plankit.board.discover import PlanRef, discover
from plankit.board.teddy_view import signature_paths
from tests.board.sessions import (
    CONCLUDE,
    CREATE,
    FAILED_EXECUTE,
    INVOKE,
    Action,
    Turn,
    report_md,
    write_session,
)

NAME = "20261120-port"
REL = f".teddy/{NAME}"
REF = PlanRef("teddy", REL)
VALIDATION = "line 19: file-exists `CREATE` on `config.txt`: the file already exists"


def _summary(root: Path) -> dict[str, Any]:
    found = views.summary(REF, root / REL)
    assert found is not None
    return found


def _page(root: Path) -> dict[str, Any]:
    found = views.detail(REF, root / REL)
    assert found is not None
    return found


def _debugging(root: Path) -> Path:
    """A morning's work: a partial turn, a refused plan, the debugger called and back,
    and the developer's next plan waiting to run."""
    return write_session(
        root,
        NAME,
        [
            Turn(
                "Write the config",
                actions=[CREATE, FAILED_EXECUTE],
                status="Partial 🟡",
                model="claude-sonnet",
                tokens=(1200, 340),
            ),
            Turn(
                "Write the config again",
                actions=[CREATE],
                status="Validation Failed 🔴",
                errors=[VALIDATION],
            ),
            Turn(
                "Ask the debugger", actions=[INVOKE], message="The previous plan failed validation."
            ),
            Turn("Found it", agent="Debugger", caller="03", actions=[CONCLUDE]),
            Turn("Use port 8080", actions=[CREATE], status=None),
        ],
        memos="- port 80 belongs to the system web server\n",
    )


def test_only_completed_turns_count_and_a_waiting_plan_is_said(tmp_path: Path) -> None:
    _debugging(tmp_path)
    summary = _summary(tmp_path)
    assert summary["title"] == "Use port 8080"
    assert summary["progress"] == {"done": 2, "total": 5}  # 03 and 04
    assert (summary["status"], summary["state"]) == ("awaiting execution", "todo")
    assert (summary["kind"], summary["id"], summary["path"]) == ("teddy", f"teddy:{REL}", REL)


def test_each_turn_of_the_page_says_who_ran_it_what_failed_and_why(tmp_path: Path) -> None:
    _debugging(tmp_path)
    page = _page(tmp_path)
    turns = {t["turn"]: t for t in page["turns"]}
    assert list(turns) == ["01", "02", "03", "04", "05"]
    first = turns["01"]
    assert (first["status"], first["state"]) == ("Partial 🟡", "failed")
    assert [(a["type"], a["target"], a["outcome"], a["state"]) for a in first["actions"]] == [
        ("CREATE", "config.txt", "success", "done"),
        ("EXECUTE", "echo 'port 80 is taken' >&2; exit 3", "failure", "failed"),
    ]
    assert "port 80 is taken" in first["actions"][1]["text"]
    assert (first["model"], first["input_tokens"], first["output_tokens"]) == (
        "claude-sonnet",
        1200,
        340,
    )
    assert (first["agent"], first["caller"], first["parent"]) == ("Developer", None, None)
    assert first["title"] == "Write the config" and first["plan"] is not None
    assert first["report"].startswith("# Execution Report: Write the config")
    assert first["plan_markdown"].startswith("# Write the config\n")
    assert turns["02"]["reasons"] == [VALIDATION] and turns["02"]["state"] == "failed"
    assert turns["03"]["message"] == "The previous plan failed validation."
    assert turns["03"]["parent"] == "02" and turns["02"]["message"] is None
    assert (turns["04"]["agent"], turns["04"]["caller"], turns["04"]["concluded"]) == (
        "Debugger",
        "03",
        False,
    )
    assert (turns["05"]["status"], turns["05"]["state"], turns["05"]["actions"]) == (
        "awaiting execution",
        "todo",
        [],
    )
    assert page["pending"] == turns["05"]
    assert page["memos"] == ["port 80 belongs to the system web server"]
    assert page["errors"] == [] and all(t["errors"] == [] for t in page["turns"])
    assert page["progress"] == {"done": 2, "total": 5} and page["title"] == "Use port 8080"


def test_a_partial_turn_with_only_skipped_actions_is_skipped_not_failed(tmp_path: Path) -> None:
    skipped = Action("EXECUTE", "make deploy", "```shell\nmake deploy\n```", outcome="skipped")
    write_session(tmp_path, NAME, [Turn("Deploy", actions=[CREATE, skipped], status="Partial 🟡")])
    [turn] = _page(tmp_path)["turns"]
    assert [(a["outcome"], a["state"], a["reason"]) for a in turn["actions"]] == [
        ("success", "done", None),
        ("skipped", "skipped", "not selected"),
    ]
    assert turn["state"] == "skipped"


def test_the_call_stack_goes_down_nested_invokes(tmp_path: Path) -> None:
    tester = Action("INVOKE", "Tester", "- **Agent:** Tester\n\nWrite a test for it.")
    write_session(
        tmp_path,
        NAME,
        [
            Turn("Ask the debugger", actions=[INVOKE]),
            Turn("Ask for a test", agent="Debugger", caller="01", actions=[tester]),
            Turn(None, agent="Tester", caller="02"),
        ],
    )
    page = _page(tmp_path)
    assert page["call_stack"] == ["Tester (turn 03)", "Debugger (turn 02)", "Developer (turn 01)"]
    assert page["pending"] is None  # nothing planned yet
    waiting = page["turns"][2]
    assert (waiting["plan"], waiting["plan_markdown"], waiting["title"]) == (None, None, None)
    assert (waiting["status"], waiting["report"], waiting["concluded"]) == (
        "no plan yet",
        None,
        False,
    )
    summary = _summary(tmp_path)
    assert summary["status"] == "turn 02: Completed 🟢" and summary["title"] == "Ask for a test"


def test_a_hundred_turns_are_in_number_order(tmp_path: Path) -> None:
    turns = [Turn(f"Step {i}", actions=[CREATE]) for i in range(1, 101)]
    write_session(tmp_path, NAME, [*turns, Turn("Step 101", actions=[CREATE], status=None)])
    summary = _summary(tmp_path)
    assert summary["title"] == "Step 101" and summary["status"] == "awaiting execution"
    assert summary["progress"] == {"done": 100, "total": 101}
    names, latest = signature_paths(tmp_path / REL)
    assert names[-3:] == ["99", "100", "101"] and latest == str(tmp_path / REL / "101")


def test_a_turn_not_planned_yet_shows_how_the_last_run_turn_ended(tmp_path: Path) -> None:
    write_session(
        tmp_path,
        NAME,
        [
            Turn("Write the config", actions=[CREATE]),
            Turn("Check the port", actions=[FAILED_EXECUTE], status="Failed 🔴"),
            Turn(None),
        ],
    )
    summary = _summary(tmp_path)
    assert summary["title"] == "Check the port"  # the latest turn with a plan
    assert (summary["status"], summary["state"]) == ("turn 02: Failed 🔴", "failed")
    assert summary["progress"] == {"done": 1, "total": 3}


def test_the_root_agents_conclude_ends_the_session_a_sub_agents_does_not(tmp_path: Path) -> None:
    write_session(
        tmp_path,
        NAME,
        [
            Turn("Ask", actions=[INVOKE]),
            Turn("Back", agent="Debugger", caller="01", actions=[CONCLUDE]),
            Turn(None),
        ],
    )
    summary = _summary(tmp_path)
    assert (summary["status"], summary["state"]) == ("turn 02: Completed 🟢", "done")
    assert summary["progress"] == {"done": 2, "total": 3}
    other = tmp_path / "other"
    write_session(
        other, NAME, [Turn("Ask", actions=[CREATE]), Turn("Done", actions=[CONCLUDE]), Turn(None)]
    )
    summary = _summary(other)
    assert (summary["status"], summary["state"]) == ("concluded", "done")
    assert summary["progress"] == {"done": 3, "total": 3}
    turns = _page(other)["turns"]
    assert [t["concluded"] for t in turns] == [False, True, False]


def test_a_conclude_that_failed_does_not_end_the_session(tmp_path: Path) -> None:
    failed = Action("CONCLUDE", "", "Done.", outcome="failure", body="The handoff file is missing.")
    write_session(tmp_path, NAME, [Turn("Done", actions=[failed], status="Failed 🔴"), Turn(None)])
    summary = _summary(tmp_path)
    assert (summary["status"], summary["state"]) == ("turn 01: Failed 🔴", "failed")
    assert _page(tmp_path)["turns"][0]["concluded"] is False


def test_an_earlier_turn_with_a_long_report_still_counts(tmp_path: Path) -> None:
    output = "\n".join(f"test_{i} PASSED" for i in range(2000))  # a test run's output
    long = Action("EXECUTE", "pytest", "```shell\npytest\n```", body=f"```text\n{output}\n```")
    write_session(
        tmp_path,
        NAME,
        [Turn("Run the tests", actions=[long]), Turn("Next", actions=[CREATE], status=None)],
    )
    assert (tmp_path / REL / "01" / "report.md").stat().st_size > 4096
    assert _summary(tmp_path)["progress"] == {"done": 1, "total": 2}


def test_a_session_with_no_turn_yet_is_named_after_its_folder(tmp_path: Path) -> None:
    write_session(tmp_path, NAME, [])
    summary = _summary(tmp_path)
    assert summary["title"] == NAME and summary["progress"] == {"done": 0, "total": 0}
    assert (summary["status"], summary["state"]) == (None, "todo")
    page = _page(tmp_path)
    assert (page["turns"], page["call_stack"], page["pending"], page["memos"]) == ([], [], None, [])


@pytest.mark.parametrize("newest", ["turn folder", "plan.md", "report.md"])
def test_updated_is_the_latest_change_in_the_latest_turn(tmp_path: Path, newest: str) -> None:
    session = write_session(
        tmp_path, NAME, [Turn("Old", actions=[CREATE]), Turn("New", actions=[CREATE])]
    )
    base = 1_780_000_000
    os.utime(session / "01" / "report.md", (base + 500, base + 500))  # an older turn: not read
    paths = {
        "turn folder": session / "02",
        "plan.md": session / "02" / "plan.md",
        "report.md": session / "02" / "report.md",
    }
    for i, (name, path) in enumerate(sorted(paths.items())):
        stamp = base + 100 if name == newest else base + i
        os.utime(path, (stamp, stamp))
    assert _summary(tmp_path)["updated"] == "2026-05-28T20:28:20Z"  # base + 100


def test_a_report_or_plan_that_cannot_be_read_is_said_in_the_status(tmp_path: Path) -> None:
    session = write_session(
        tmp_path,
        NAME,
        [Turn("Write", actions=[CREATE]), Turn("Next", actions=[CREATE], status=None)],
    )
    (session / "02" / "plan.md").unlink()
    os.mkfifo(session / "02" / "plan.md")
    assert _summary(tmp_path)["status"].startswith("not shown: plan.md is a named pipe (FIFO)")
    (session / "02" / "report.md").mkdir()
    assert _summary(tmp_path)["status"].startswith("not shown: report.md is a directory")


def test_a_broken_meta_yaml_is_an_error_on_the_page_not_a_500(tmp_path: Path) -> None:
    session = write_session(tmp_path, NAME, [Turn("Write", actions=[CREATE])])
    (session / "01" / "meta.yaml").write_text(
        'turn_id: "01"\nagent: "Developer"\ninput_tokens: -3\n'
    )
    [turn] = _page(tmp_path)["turns"]
    [problem] = turn["errors"]
    assert (problem["code"], problem["file"]) == ("bad-meta", f"{REL}/01/meta.yaml")
    assert problem["message"] == (
        f"{REL}/01/meta.yaml: 'input_tokens' must be a whole number of tokens, not -3"
    )
    assert turn["agent"] is None
    (session / "01" / "meta.yaml").write_text("agent: [Developer\n")  # a YAML typo
    [problem] = _page(tmp_path)["turns"][0]["errors"]
    assert (problem["code"], problem["file"]) == ("bad-yaml", f"{REL}/01/meta.yaml")


def test_memos_that_are_not_a_list_are_an_error_on_the_page(tmp_path: Path) -> None:
    write_session(tmp_path, NAME, [Turn("Write", actions=[CREATE])], memos="port: 80\n")
    page = _page(tmp_path)
    assert page["memos"] == []
    assert page["errors"] == [
        {
            "code": "bad-memos",
            "message": ".teddy/memos.yaml: memos.yaml must be a list of strings",
            "line": None,
            "file": ".teddy/memos.yaml",
        }
    ]
    (tmp_path / ".teddy" / "memos.yaml").write_text("- port 80 is taken\n- [port 8080\n")
    [problem] = _page(tmp_path)["errors"]
    assert (problem["code"], problem["file"]) == ("bad-yaml", ".teddy/memos.yaml")
    (tmp_path / ".teddy" / "memos.yaml").unlink()
    os.mkfifo(tmp_path / ".teddy" / "memos.yaml")
    [problem] = _page(tmp_path)["errors"]
    assert (problem["code"], problem["file"]) == ("file-refused", ".teddy/memos.yaml")
    assert problem["message"].startswith("memos.yaml is a named pipe (FIFO)")


def test_a_plan_with_problems_shows_them_on_its_turn(tmp_path: Path) -> None:
    session = write_session(tmp_path, NAME, [Turn("Write", actions=[CREATE], status=None)])
    (session / "01" / "plan.md").write_text(
        "# Write\n\n## Action Plan\n\n### `CREATE`\n- **File Path:** [a.txt](/a.txt)\n```\nx\n```\n"
    )
    [turn] = _page(tmp_path)["turns"]
    assert turn["errors"] and {e["file"] for e in turn["errors"]} == {f"{REL}/01/plan.md"}
    assert turn["status"] == "awaiting execution"


def test_the_summary_changes_on_disk_change_the_signature(tmp_path: Path) -> None:
    session = write_session(
        tmp_path,
        NAME,
        [Turn("Write", actions=[CREATE]), Turn("Next", actions=[CREATE], status=None)],
    )
    before = views.signature(REF, session)
    assert views.signature(REF, session) == before
    (session / "02" / "report.md").write_text(
        "# Execution Report: Next\n- **Overall Status:** Completed 🟢\n"
    )
    ran = views.signature(REF, session)
    assert ran != before
    with (session / "02" / "report.md").open("a") as edit:  # rewritten in place
        edit.write("- **Note:** re-run\n")
    edited = views.signature(REF, session)
    assert edited != ran
    with (session / "02" / "plan.md").open("a") as edit:  # the user fixes the plan in place
        edit.write("\n")
    assert views.signature(REF, session) != edited
    ran = views.signature(REF, session)
    (session / "03").mkdir()  # teddy's next turn
    assert views.signature(REF, session) != ran
    assert views.signature(REF, tmp_path / ".teddy" / "gone") == ((0, 0),) * 4 + (0,)


def test_only_dated_session_folders_are_sessions(tmp_path: Path) -> None:
    write_session(tmp_path, NAME, [Turn("Write", actions=[CREATE])])
    (tmp_path / ".teddy" / "2026112-short").mkdir()
    (tmp_path / ".teddy" / "20261120_port").mkdir()
    (tmp_path / ".teddy" / "sessions-old").mkdir()
    assert [r.id for r in discover(tmp_path)] == [f"teddy:{REL}"]


def test_a_call_stack_that_loops_stops_and_an_unnamed_agent_is_a_question_mark(
    tmp_path: Path,
) -> None:
    session = write_session(
        tmp_path,
        NAME,
        [
            Turn("Ask", actions=[INVOKE]),
            Turn("Back", agent="Debugger", caller="01", actions=[CREATE]),
        ],
    )
    (session / "01" / "meta.yaml").write_text(
        'turn_id: "01"\ncaller_turn_id: "02"\n'
    )  # hand-edited
    page = _page(tmp_path)
    assert page["call_stack"] == ["Debugger (turn 02)", "? (turn 01)", "Debugger (turn 02)"]


def test_a_turn_lists_every_file_it_could_not_read_and_its_broken_meta(tmp_path: Path) -> None:
    session = write_session(tmp_path, NAME, [Turn("Write", actions=[CREATE])])
    (session / "01" / "report.md").unlink()
    os.mkfifo(session / "01" / "report.md")
    (session / "01" / "message.md").mkdir()
    (session / "01" / "meta.yaml").write_text("input_tokens: many\n")
    [turn] = _page(tmp_path)["turns"]
    pipe = "is a named pipe (FIFO), not a regular file; the board reads files only"
    assert [(e["code"], e["file"], e["message"]) for e in turn["errors"][:2]] == [
        ("file-refused", f"{REL}/01/report.md", f"report.md {pipe}"),
        (
            "file-refused",
            f"{REL}/01/message.md",
            "message.md is a directory, not a regular file; the board reads files only",
        ),
    ]
    assert [e["code"] for e in turn["errors"][2:]] == ["bad-meta"]


def test_a_session_with_no_turn_depends_on_its_folder(tmp_path: Path) -> None:
    session = write_session(tmp_path, NAME, [])
    signature = views.signature(REF, session)
    assert signature[1] == signature[0] != (0, 0)
    assert signature_paths(session) == ([], str(session))


def test_a_plan_the_parser_fails_on_is_an_error_on_its_turn_not_a_500(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plankit.teddy.format import parse

    def overflow(text: str) -> object:
        raise RecursionError("maximum recursion depth exceeded")

    write_session(tmp_path, NAME, [Turn("Write", actions=[CREATE], status=None)])
    monkeypatch.setattr(parse, "check_plan", overflow)
    [turn] = _page(tmp_path)["turns"]
    assert turn["errors"] == [
        {
            "code": "unreadable",
            "message": "maximum recursion depth exceeded",
            "line": None,
            "file": f"{REL}/01/plan.md",
        }
    ]
    assert turn["plan"] is None and turn["plan_markdown"].startswith("# Write")


def test_a_session_concluded_in_its_first_turn_is_complete(tmp_path: Path) -> None:
    write_session(tmp_path, NAME, [Turn("Nothing to do", actions=[CONCLUDE]), Turn(None)])
    summary = _summary(tmp_path)
    assert (summary["status"], summary["state"], summary["progress"]) == (
        "concluded",
        "done",
        {"done": 2, "total": 2},
    )


def test_the_latest_turns_report_gives_the_sessions_state(tmp_path: Path) -> None:
    write_session(tmp_path, NAME, [Turn("Write", actions=[CREATE])])
    summary = _summary(tmp_path)
    assert (summary["status"], summary["state"]) == ("Completed 🟢", "done")
    other = tmp_path / "other"
    write_session(
        other,
        NAME,
        [Turn("Check", actions=[CREATE, FAILED_EXECUTE], status="Partial 🟡"), Turn(None)],
    )
    assert _summary(other)["status"] == "turn 01: Partial 🟡"


def test_only_numbered_folders_are_turns(tmp_path: Path) -> None:
    session = write_session(
        tmp_path, NAME, [Turn("Write", actions=[CREATE]), Turn("Next", actions=[CREATE])]
    )
    (session / "scratch").mkdir()  # the user's notes beside the turns
    (session / "03").write_text("not a turn\n")
    (session / "04").symlink_to(session / "01", target_is_directory=True)
    assert [t["turn"] for t in _page(tmp_path)["turns"]] == ["01", "02"]
    assert _summary(tmp_path)["progress"] == {"done": 2, "total": 2}


def test_a_partial_turn_with_a_failed_action_is_failed_in_the_list_as_on_its_page(
    tmp_path: Path,
) -> None:
    write_session(
        tmp_path,
        NAME,
        [Turn("Check", actions=[CREATE, FAILED_EXECUTE], status="Partial 🟡"), Turn(None)],
    )
    assert _page(tmp_path)["turns"][0]["state"] == "failed"
    summary = _summary(tmp_path)
    assert (summary["status"], summary["state"]) == ("turn 01: Partial 🟡", "failed")
    skipped = Action("EXECUTE", "make deploy", "```shell\nmake deploy\n```", outcome="skipped")
    other = tmp_path / "other"
    session = write_session(
        other, NAME, [Turn("Deploy", actions=[CREATE, skipped], status="Partial 🟡")]
    )
    assert (_summary(other)["status"], _summary(other)["state"]) == ("Partial 🟡", "skipped")
    (session / "01" / "report.md").write_text(
        report_md(NAME, "01", Turn("Deploy", actions=[CREATE, FAILED_EXECUTE], status="Partial 🟡"))
    )
    assert (_summary(other)["status"], _summary(other)["state"]) == ("Partial 🟡", "failed")


def test_a_partial_turn_whose_report_is_too_big_to_read_whole_still_gives_a_line(
    tmp_path: Path,
) -> None:
    """An EXECUTE that printed megabytes: the status line at the top of report.md is
    read, the actions below cannot be, and the list answers without them."""
    session = write_session(
        tmp_path,
        NAME,
        [Turn("Build", actions=[CREATE, FAILED_EXECUTE], status="Partial 🟡"), Turn(None)],
    )
    report = session / "01" / "report.md"
    report.write_text(report.read_text(encoding="utf-8") + "build log line\n" * 150_000)
    assert report.stat().st_size > 2_000_000
    summary = _summary(tmp_path)
    assert summary["status"] == "turn 01: Partial 🟡"
    assert summary["state"] == "skipped"  # no failure can be read from it
