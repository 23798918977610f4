"""``plankit acp run``: against ``teddy acp`` and against a minimal SDK agent.

The plain-line view (stdout is not a terminal here), ``--json`` transcripts
validated against the v1 schema, the exit codes (0, 1, 5, 130), the client's own
fs/terminal, and the live view rendered by rich.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from plankit.acp.display import LineView, LiveView, PlanState, read_choice
from plankit.acp.entries import Entry, plan_update
from plankit.cli import main
from tests.acp.kit import PLANKIT, ROOT, TEDDY, SchemaCheck, create, execute, plan_text
from tests.console import run_console
from tests.waiting import DEADLINE, record_group, wait_for_group_end, wait_until

MINIMAL = [sys.executable, str(ROOT / "tests" / "acp" / "minimal_agent.py")]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def plankit_run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``plankit acp run ARGS`` (in this process; the agent it starts is a real one)."""
    return run_console(main, "acp", "run", *args, cwd=project, env={"PYTHONPATH": str(ROOT)})


PLAN = plan_text(create("a.txt", "from plankit"), execute("cat a.txt > b.txt"), title="Two steps")


def test_against_teddy_approve_all(project: Path) -> None:
    result = plankit_run(project, "--approve-all", "--", *TEDDY, "acp", PLAN)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (project / "b.txt").read_text() == "from plankit\n"
    out = result.stdout
    assert "[plan] Two steps 0/2 done" in out
    assert "[plan] Two steps 2/2 done" in out
    assert " ▶▶ [in_progress] EXECUTE cat a.txt > b.txt: Run it." in out  # the current task
    assert "[permission] CREATE a.txt: Allow (--approve-all)" in out
    assert "[tool] ✓ EXECUTE cat a.txt > b.txt (execute): completed" in out
    assert "[agent] Completed 🟢: 2 of 2 actions completed" in out
    assert out.rstrip().endswith("[done] end_turn")


def test_against_teddy_deny_all_exits_5(project: Path) -> None:
    result = plankit_run(project, "--deny-all", "--", *TEDDY, "acp", PLAN)
    assert result.returncode == 5, result.stdout + result.stderr
    assert not (project / "a.txt").exists()
    assert "⊘ [rejected] CREATE a.txt: Make it. — rejected by the user" in result.stdout


def test_without_a_terminal_permissions_are_denied(project: Path) -> None:
    result = plankit_run(project, "--", *TEDDY, "acp", PLAN)
    assert result.returncode == 5
    assert "no terminal to ask: denied" in result.stdout
    assert not (project / "a.txt").exists()


def test_json_transcript_is_valid_v1(project: Path, check: SchemaCheck) -> None:
    result = plankit_run(
        project,
        "--approve-all",
        "--allow-writes",
        "--allow-terminal",
        "--json",
        "--",
        *TEDDY,
        "acp",
        PLAN,
    )
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert {r["from"] for r in records} == {"agent", "client"}
    asked: dict[str, dict[object, str]] = {"agent": {}, "client": {}}
    for record in records:
        message = record["message"]
        if "method" in message:
            if "id" in message:
                asked[record["from"]][message["id"]] = message["method"]
            check.check(message)
        else:
            other = "client" if record["from"] == "agent" else "agent"
            check.check(message, asked[other].get(message["id"]))
    methods = [r["message"].get("method") for r in records]
    assert "terminal/create" in methods and "fs/write_text_file" in methods
    assert methods.count("session/update") > 10


def test_against_a_minimal_sdk_agent(project: Path) -> None:
    result = plankit_run(project, "--approve-all", "--allow-writes", "--", *MINIMAL, "hi there")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (project / "minimal.txt").read_text() == "written\n"
    out = result.stdout
    assert "[plan] 0/3 done" in out
    assert "[plan] 2/4 done, 1 added" in out  # an entry added on the way
    assert "[plan] 4/4 done" in out
    assert " ▶▶ [in_progress] Write minimal.txt" in out
    assert "[permission] Write minimal.txt: Allow (--approve-all)" in out  # the name, not "yes"
    assert "[agent] you said: hi there" in out


def test_writes_are_not_offered_unless_asked_for(project: Path) -> None:
    # the minimal agent writes without looking at the capabilities: the client refuses
    result = plankit_run(project, "--approve-all", "--json", "--", *MINIMAL, "hi there")
    assert not (project / "minimal.txt").exists()
    records = [json.loads(line)["message"] for line in result.stdout.splitlines()]
    init = next(m for m in records if m.get("method") == "initialize")
    caps = init["params"]["clientCapabilities"]
    assert caps["fs"]["readTextFile"] and not caps["fs"].get("writeTextFile")
    assert not caps.get("terminal")
    refusals = [m for m in records if m.get("error", {}).get("code") == -32601]
    assert "--allow-writes" in refusals[0]["error"]["data"]["details"]


def test_a_minimal_agent_denied(project: Path) -> None:
    result = plankit_run(project, "--deny-all", "--", *MINIMAL, "hi")
    assert result.returncode == 5
    assert not (project / "minimal.txt").exists()
    assert "[tool] ✗ Write minimal.txt (edit): failed" in result.stdout


def test_a_missing_agent_is_a_one_line_error(project: Path) -> None:
    result = plankit_run(project, "--approve-all", "--", "no-such-agent-xyz", "hi")
    assert result.returncode == 1
    assert "cannot run the agent: 'no-such-agent-xyz' not found" in result.stdout


def test_usage_errors(project: Path) -> None:
    assert plankit_run(project, "--approve-all", "--deny-all", "--", "x", "y").returncode == 2
    assert plankit_run(project, "--", "only-one").returncode == 2


def test_ctrl_c_cancels_the_turn_and_exits_130(project: Path) -> None:
    group = project / "group"
    plan = plan_text(execute(f"{record_group(group)}; touch started; sleep 30; touch late"))
    proc = subprocess.Popen(
        [*PLANKIT, "acp", "run", "--approve-all", "--", *TEDDY, "acp", plan],
        cwd=project,
        env={**ENV, "PLANKIT_HOME": os.environ["PLANKIT_HOME"]},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    wait_until((project / "started").exists, "the command to start")
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=DEADLINE)
    assert proc.returncode == 130, out
    assert "cancelling" in out and "[done] cancelled" in out
    assert "[cancelled] EXECUTE" in out
    wait_for_group_end(group)  # the command was stopped, not waited for:
    assert not (project / "late").exists()  # it never got past its sleep


def test_the_client_refuses_files_outside_its_directory(tmp_path: Path) -> None:
    from acp import RequestError
    from plankit.acp.host import Files

    files = Files(tmp_path / "inside")
    (tmp_path / "inside").mkdir()
    files.write(str(tmp_path / "inside" / "deep" / "f.txt"), "ok\n")
    assert files.read(str(tmp_path / "inside" / "deep" / "f.txt")) == "ok\n"
    with pytest.raises(RequestError):
        files.write(str(tmp_path / "outside.txt"), "no")
    with pytest.raises(RequestError):
        files.read("relative.txt")


# --- the views --------------------------------------------------------------------------


def updates() -> list[dict[str, object]]:
    first = [
        Entry("1", "Design", "completed"),
        Entry("2", "Build", "in_progress"),
        Entry("3", "Ship", "pending"),
    ]
    second = [
        Entry("1", "Design", "completed"),
        Entry("2", "Build", "failed", reason="exit 2"),
        Entry("4", "Fix", "in_progress"),
    ]
    return [plan_update(first, title="Release"), plan_update(second, title="Release")]


def test_plan_state_replaces_the_plan_and_tracks_changes() -> None:
    state = PlanState()
    first, second = updates()
    state.apply(first)
    assert state.progress == (1, 3) and [e.content for e in state.current] == ["Build"]
    state.apply(second)
    assert state.progress == (1, 3)  # a failed entry is not done
    assert state.added == ["4"] and state.removed == ["Ship"]
    assert state.title == "Release"


def test_line_view() -> None:
    out = io.StringIO()
    view = LineView(out)
    for update in updates():
        view.update(update)
    text = out.getvalue()
    assert (
        "[plan] Release 1/3 done\n  ✓ [completed] Design\n ▶▶ [in_progress] Build\n  ○ [pending] Ship"
        in text
    )
    assert "[plan] Release 1/3 done, 1 added, 1 removed" in text
    assert "  ✗ [failed] Build — failed: exit 2" in text


def test_live_view_draws_progress_and_the_current_task() -> None:
    from rich.console import Console

    console = Console(file=io.StringIO(), force_terminal=True, width=80, record=True)
    view = LiveView(console)
    for update in updates():
        view.update(update)
    view.update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "t1",
            "title": "Run tests",
            "kind": "execute",
            "status": "in_progress",
        }
    )
    view.update(
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "working on it"},
        }
    )
    view.close()
    screen = console.export_text()
    assert "Release" in screen
    assert "1/3 done" in screen and "current: Fix" in screen
    assert "✗  Build — failed: exit 2" in screen
    assert "Fix  (new)" in screen
    assert "1 task(s) removed" in screen
    assert "Run tests" in screen and "execute · in_progress" in screen
    assert "working on it" in screen


def test_permission_prompt_reads_a_number_or_a_letter() -> None:
    options = [
        {"optionId": "allow-once", "name": "Allow", "kind": "allow_once"},
        {"optionId": "reject-always", "name": "Always reject EDIT", "kind": "reject_always"},
    ]
    out = io.StringIO()
    assert read_choice(options, out, io.StringIO("9\n2\n")) == "reject-always"
    assert "please answer 1-2" in out.getvalue()
    assert read_choice(options, io.StringIO(), io.StringIO("a\n")) == "allow-once"
    assert read_choice(options, io.StringIO(), io.StringIO("")) is None


def test_acp_commands_start_without_the_sdk() -> None:
    """`plankit acp run --help` and `teddy acp --help` load neither acp nor pydantic."""
    for argv in ([*PLANKIT, "acp", "run", "--help"], [*TEDDY, "acp", "--help"]):
        result = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", argv[2], *argv[3:]],
            capture_output=True,
            text=True,
            env=ENV,
            check=False,
        )
        assert result.returncode == 0, result.stderr[-500:]
        assert "Usage:" in result.stdout
        loaded = {
            line.rsplit("|", 1)[1].strip().split(".")[0]
            for line in result.stderr.splitlines()
            if line.startswith("import time:") and "|" in line
        }
        assert not loaded & {"acp", "pydantic", "rich"}, argv
