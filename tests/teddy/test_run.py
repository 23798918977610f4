"""``teddy run`` through whole multi-turn sessions with the shipped ``teddy-scripted`` model:
each reason to stop, its exit status, and the ``--json`` event stream."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from plankit.teddy.cli import cli
from plankit.teddy.planning import scripted_model
from plankit.teddy.planning.autorun import CONTINUE, EXIT_STATUS
from plankit.teddy.run.approval import ScriptedApprover, ScriptedChat
from tests.teddy.test_session_e2e import plan
from tests.terminal import as_foreground_job
from tests.waiting import wait_until

TEDDY = str(Path(sys.executable).parent / "teddy")


def create(name: str, text: str = "x") -> str:
    return f"### `CREATE`\n- **File Path:** [{name}](/{name})\n```text\n{text}\n```"


def execute(command: str) -> str:
    return f"### `EXECUTE`\n```shell\n{command}\n```"


CONCLUDE = "### `CONCLUDE`\nAll done."
CHAT = "### `CHAT_WITH_USER`\nWhich colour should the button be?"


@pytest.fixture(autouse=True)
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm-home"))
    monkeypatch.setenv("TEDDY_MODEL", "teddy-scripted")
    for name in ("TEDDY_SESSION", "TEDDY_SCRIPTED_RESPONSES", "TEDDY_SCRIPTED_LOG"):
        monkeypatch.delenv(name, raising=False)
    root = tmp_path / "proj"
    root.mkdir()
    monkeypatch.chdir(root)
    assert CliRunner().invoke(cli, ["new", "auto"]).exit_code == 0
    scripted_model.reset()
    yield root
    scripted_model.reset()


def run(*args: str, answers: list[str], input: str | None = None) -> tuple[int, list[dict]]:
    scripted_model.script(answers)
    result = CliRunner().invoke(cli, ["run", "--json", *args], input=input)
    events = [json.loads(line) for line in result.stdout.splitlines()]
    return result.exit_code, events


def names(events: list[dict]) -> list[str]:
    return [e["event"] for e in events]


def test_runs_turn_after_turn_until_conclude(project: Path) -> None:
    answers = [plan(create("a.txt")), plan(create("b.txt")), plan(CONCLUDE)]
    code, events = run("-y", "-m", "Make a and b", answers=answers)
    assert code == EXIT_STATUS["concluded"] == 0
    assert (project / "a.txt").exists() and (project / "b.txt").exists()
    stopped = events[-1]
    assert stopped["event"] == "stopped" and stopped["reason"] == "concluded"
    assert stopped["turns"] == 3 and stopped["usage"]["calls"] == 3
    assert stopped["usage"]["input_tokens"] > 0 and stopped["usage"]["output_tokens"] > 0
    assert names(events)[:5] == [
        "turn_started",
        "plan_written",
        "action_started",
        "action_finished",
        "turn_finished",
    ]
    started = [e for e in events if e["event"] == "turn_started"]
    assert [e["message"] for e in started] == ["Make a and b", CONTINUE, CONTINUE]
    finished = [e for e in events if e["event"] == "action_finished"]
    assert [(e["turn"], e["type"], e["success"]) for e in finished][:2] == [
        ("01", "CREATE", True),
        ("02", "CREATE", True),
    ]


def test_a_question_stops_the_run_and_the_answer_is_the_next_message(project: Path) -> None:
    code, events = run("-y", "-m", "Add a button", answers=[plan(CHAT)])
    assert code == EXIT_STATUS["question"] == 3
    assert events[-1]["reason"] == "question"
    code, events = run(
        "-y", "-m", "Blue", answers=[plan(create("button.txt", "blue")), plan(CONCLUDE)]
    )
    assert code == 0
    assert events[0] == {"event": "turn_started", "turn": "02", "message": "Blue"}


def _library_run(project: Path, answers: list[str], approver, chat):  # type: ignore[no-untyped-def]
    from plankit.teddy.planning.autorun import run_session
    from plankit.teddy.planning.models import ModelPlanner, load_model
    from plankit.teddy.session.config import load_config
    from plankit.teddy.session.layout import find_session

    scripted_model.script(answers)
    return run_session(
        find_session(project, None),
        planner=ModelPlanner(load_model("teddy-scripted"), err=io.StringIO()),
        config=load_config(project),
        approver=approver,
        chat=chat,
        message="Add a button",
    )


def test_a_reply_at_the_terminal_becomes_the_next_message(project: Path) -> None:
    chat = ScriptedChat(["Green"])
    stopped = _library_run(
        project, [plan(CHAT), plan(CONCLUDE)], ScriptedApprover(["approve"] * 2), chat
    )
    assert (stopped.reason, stopped.exit_status) == ("concluded", 0)
    assert chat.messages == ["Which colour should the button be?"]
    second = scripted_model.received()[1]
    assert second.prompt.rstrip().endswith("Green")


def test_quit_at_the_approval_prompt_stops_with_5(project: Path) -> None:
    stopped = _library_run(
        project, [plan(create("a.txt"))], ScriptedApprover(["quit"]), ScriptedChat([])
    )
    assert (stopped.reason, stopped.exit_status) == ("quit", 5)
    assert not (project / "a.txt").exists()


def test_without_a_terminal_and_without_y_nothing_runs(project: Path) -> None:
    scripted_model.script([plan(create("a.txt"))])
    result = CliRunner().invoke(cli, ["run", "-m", "Go"])
    assert result.exit_code == 1
    assert "nobody can approve" in result.stderr
    assert not (project / "a.txt").exists()


def test_a_failed_turn_stops_with_1(project: Path) -> None:
    code, events = run("-y", "-m", "Run it", answers=[plan(execute("exit 3"))])
    assert code == EXIT_STATUS["turn_failed"] == 1
    assert events[-1]["reason"] == "turn_failed"
    failed = [e for e in events if e["event"] == "action_finished"]
    assert failed[0]["success"] is False


def test_an_invalid_plan_is_replanned_then_executed(project: Path) -> None:
    (project / "a.txt").write_text("exists\n")
    answers = [plan(create("a.txt")), plan(create("c.txt")), plan(CONCLUDE)]
    code, events = run("-y", "-m", "Make c", answers=answers)
    assert code == 0
    assert "validation_failed" in names(events)
    [invalid] = [e for e in events if e["event"] == "validation_failed"]
    assert invalid["errors"][0]["code"] == "file-exists"
    assert any(e.get("replan") for e in events if e["event"] == "plan_written")
    assert (project / "c.txt").exists()
    assert (project / "a.txt").read_text() == "exists\n"


def test_max_turns_is_checked_before_each_model_call(project: Path) -> None:
    answers = [plan(create(f"f{i}.txt")) for i in range(5)]
    code, events = run("-y", "-m", "Go", "--max-turns", "2", answers=answers)
    assert code == EXIT_STATUS["max_turns"] == 4
    assert events[-1]["reason"] == "max_turns" and events[-1]["usage"]["calls"] == 2
    assert len(scripted_model.received()) == 2
    assert (project / "f1.txt").exists() and not (project / "f2.txt").exists()


def test_max_cost_uses_the_configured_price(project: Path) -> None:
    (project / ".teddy" / "config.yaml").write_text(
        "prices:\n  teddy-scripted: {input: 1000000, output: 1000000}\n"  # $1 a token
    )
    answers = [plan(create(f"f{i}.txt")) for i in range(5)]
    code, events = run("-y", "-m", "Go", "--max-cost", "1", answers=answers)
    assert code == EXIT_STATUS["max_cost"]
    assert events[-1]["reason"] == "max_cost"
    assert len(scripted_model.received()) == 1  # the first call spent over $1
    assert events[-1]["usage"]["cost_usd"] > 1


def test_max_cost_refuses_a_model_without_a_price(project: Path) -> None:
    result = CliRunner().invoke(cli, ["run", "-y", "-m", "Go", "--max-cost", "1"])
    assert result.exit_code == 1
    assert "the price of model 'teddy-scripted' is unknown" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert scripted_model.received() == []


def test_ctrl_c_stops_with_130_and_the_turn_has_its_report(project: Path, tmp_path: Path) -> None:
    answers = tmp_path / "answers"
    answers.mkdir()
    (answers / "01.md").write_text(plan(execute("touch started; sleep 60")))
    env = {**os.environ, "TEDDY_SCRIPTED_RESPONSES": str(answers)}
    proc = subprocess.Popen(
        [TEDDY, "run", "-y", "-m", "Go", "--json"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
        preexec_fn=as_foreground_job,
    )
    wait_until(lambda: (project / "started").exists(), "the command to start", seconds=120)
    os.killpg(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130
    events = [json.loads(line) for line in out.splitlines()]
    assert events[-1]["event"] == "stopped" and events[-1]["reason"] == "interrupted"
    assert (project / ".teddy").glob("*/01/report.md")
    [report] = list((project / ".teddy").glob("*/01/report.md"))
    assert "interrupted" in report.read_text()


def test_execute_json_streams_action_events(project: Path) -> None:
    [session] = [p for p in (project / ".teddy").iterdir() if p.is_dir()]
    (session / "01" / "plan.md").write_text(plan(create("a.txt") + "\n\n" + execute("true")))
    result = CliRunner().invoke(cli, ["execute", "-y", "--json"])
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert names(events) == [
        "action_started",
        "action_finished",
        "action_started",
        "action_finished",
        "turn_finished",
    ]
    assert events[-1]["status"] == "Completed 🟢"
