"""agentctl through click's CliRunner: every command, text and --json, and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from plankit.agentflow.cli import cli, main
from plankit.agentflow.prompts import OVERSEER_PROMPT

from .helpers import DATA, SPEC_EXAMPLE, copy_example, task, write_plan


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def start(*extra: str) -> dict[str, object]:
    result = run("session", "start", "--json", *extra)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert isinstance(data, dict)
    return data


@pytest.fixture
def session(home: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    data = start()
    monkeypatch.setenv("AGENTFLOW_SESSION_ID", str(data["session_id"]))
    return data


def test_session_start_prints_the_runtime_context(home: Path) -> None:
    result = run("session", "start", "--agent-session-id", "claude-7")
    assert result.exit_code == 0
    text = result.stdout
    assert "CURRENT_PLAN_DIR: " + str(home.resolve() / "plans") in text
    assert "ADDITIONAL_PLAN_DIRS: []" in text
    assert "export AGENTFLOW_SESSION_ID=" in text
    assert f"export AGENTFLOW_HOME={home.resolve()}" in text


def test_session_start_json_has_session_plan_dir_and_context(home: Path) -> None:
    data = start("--agent-session-id", "claude-7")
    assert data["agent_session_id"] == "claude-7"
    assert Path(str(data["plan_dir"])).is_dir()
    assert f"CURRENT_PLAN_DIR: {data['plan_dir']}" in str(data["context"])
    assert data["env"] == {
        "AGENTFLOW_SESSION_ID": data["session_id"],
        "AGENTFLOW_HOME": str(home.resolve()),
    }
    again = run("session", "start", "--agent-session-id", "claude-7", "--json")
    assert again.exit_code == 1
    assert json.loads(again.stdout)["errors"][0]["code"] == "session-exists"


def test_session_context_lists_additional_directories_on_resume(session: dict[str, object]) -> None:
    extra = json.loads(run("plan", "request-thread-dir").stdout)
    text = run("session", "context").stdout
    assert f"  - thread_id: {extra['thread_id']}\n    plan_dir: {extra['plan_dir']}" in text
    data = json.loads(
        run("session", "context", "--json", "--session", str(session["session_id"])).stdout
    )
    assert data["additional_plan_dirs"] == [extra]


def test_session_list(session: dict[str, object]) -> None:
    run("set-topic", "Auth work")
    text = run("session", "list").stdout
    assert str(session["session_id"]) in text and "Auth work" in text
    rows = json.loads(run("session", "list", "--json").stdout)["sessions"]
    assert [(r["session_id"], r["threads"], r["commits"], r["topic"]) for r in rows] == [
        (session["session_id"], 1, 0, "Auth work")
    ]
    header, line = text.splitlines()
    assert header.split()[-3:] == ["CREATED", "ENDED", "TOPIC"]
    assert line.split()[-3] == "-"  # open: no end
    ended = json.loads(run("session", "end", "--json").stdout)["ended_at"]
    header, line = run("session", "list").stdout.splitlines()
    assert line.split()[-3] == ended and line.endswith("  Auth work")


def test_plan_dir_prints_only_the_path(session: dict[str, object]) -> None:
    result = run("plan", "dir")
    assert result.stdout == f"{session['plan_dir']}\n"
    assert json.loads(run("plan", "dir", "--json").stdout) == {
        "thread_id": session["thread_id"],
        "plan_dir": session["plan_dir"],
    }


def test_request_thread_dir_prints_thread_id_and_plan_dir(session: dict[str, object]) -> None:
    first = json.loads(run("plan", "request-thread-dir").stdout)
    second = json.loads(run("plan", "request-thread-dir", "--json").stdout)
    assert set(first) == {"thread_id", "plan_dir"}
    assert first != second and Path(first["plan_dir"]).is_dir()


def test_remove_thread_needs_a_thread_id(session: dict[str, object]) -> None:
    result = run("plan", "remove-thread")
    assert result.exit_code == 2
    assert "--thread-id" in result.stderr


def test_remove_thread_errors_are_one_line_or_json(session: dict[str, object]) -> None:
    result = run("plan", "remove-thread", "--thread-id", str(session["thread_id"]))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("agentctl: ") and result.stderr.count("\n") == 1
    assert "clear-current" in result.stderr
    result = run("plan", "remove-thread", "--thread-id", "thread_404", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {
        "errors": [
            {
                "code": "thread-unknown",
                "message": "no thread 'thread_404' in this session; `agentctl session context` "
                "lists its threads",
                "line": None,
                "file": None,
            }
        ]
    }


def test_remove_and_clear(session: dict[str, object]) -> None:
    extra = json.loads(run("plan", "request-thread-dir").stdout)
    result = run("plan", "remove-thread", "--thread-id", extra["thread_id"], "--json")
    assert json.loads(result.stdout)["removed"] is True
    assert not Path(extra["plan_dir"]).exists()
    copy_example(Path(str(session["plan_dir"])))
    result = run("plan", "clear-current")
    assert result.stdout == f"cleared {session['plan_dir']} (4 files removed)\n"
    assert json.loads(run("plan", "clear-current", "--json").stdout)["files_removed"] == 0


def test_commit_failure_lists_every_error_and_success_prints_waves(
    session: dict[str, object],
) -> None:
    current = Path(str(session["plan_dir"]))
    write_plan(current, tasks={"01-a.md": task("a", ["nope"]), "02-b.md": task("B")})
    result = run("plan", "commit")
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[0] == (
        f"{current}/tasks/01-a.md:3: depends-unknown depends_on names 'nope', which is not "
        "the id of a task in this plan"
    )
    assert lines[1].startswith(f"{current}/tasks/02-b.md:2: id-format id 'B' is not kebab-case")
    assert lines[-1].startswith("2 problems in 2 files")
    data = json.loads(run("plan", "commit", "--json").stdout)
    assert all(list(e) == ["code", "message", "line", "file"] for e in data["errors"])
    assert sorted(e["code"] for e in data["errors"]) == ["depends-unknown", "id-format"]
    copy_example(current)
    for name in ("01-a.md", "02-b.md"):
        (current / "tasks" / name).unlink()
    result = run("plan", "commit")
    assert result.exit_code == 0, result.output
    assert "Committed plan #1" in result.stdout and "1 thread, 3 tasks" in result.stdout
    assert (
        "wave 1: create-schema\n  wave 2: implement-service [claude-code]\n  wave 3: wire-handler"
        in result.stdout
    )
    data = json.loads(run("plan", "commit", "--json").stdout)
    assert (data["commit"], data["thread_count"], data["task_count"]) == (2, 1, 3)
    assert data["threads"][0]["plan"]["waves"] == [
        ["create-schema"],
        ["implement-service"],
        ["wire-handler"],
    ]


def test_plan_show(session: dict[str, object]) -> None:
    assert run("plan", "show").exit_code == 1
    copy_example(Path(str(session["plan_dir"])))
    run("plan", "commit")
    text = run("plan", "show").stdout
    assert "Commit #1" in text and "ready now: create-schema" in text
    data = json.loads(run("plan", "show", "--commit", "1", "--json").stdout)
    assert data["threads"][0]["plan"]["ready"] == ["create-schema"]
    result = run("plan", "show", "--commit", "2", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["errors"][0]["code"] == "commit-unknown"
    assert run("plan", "show", "--commit", "0").exit_code == 2


def test_plan_validate_needs_no_session(home: Path) -> None:
    ok = run("plan", "validate", str(SPEC_EXAMPLE))
    assert ok.exit_code == 0
    assert ok.stdout == f"{SPEC_EXAMPLE}: valid — 'Add user authentication', 3 tasks in 3 waves\n"
    bad = DATA / "rules" / "depends-cycle"
    result = run("plan", "validate", str(SPEC_EXAMPLE), str(bad))
    assert result.exit_code == 1
    assert result.stderr.startswith(
        f"{bad}/tasks/01-setup-db.md:3: depends-cycle dependency cycle: "
    )
    data = json.loads(run("plan", "validate", "--json", str(bad)).stdout)
    assert data["errors"][0]["line"] == 3
    good = json.loads(run("plan", "validate", "--json", str(SPEC_EXAMPLE)).stdout)
    assert good["valid"] is True and good["plans"][0]["title"] == "Add user authentication"
    assert not home.exists()  # validate touches no state


def test_set_topic(session: dict[str, object]) -> None:
    assert run("set-topic", "Add auth").stdout == "topic: Add auth\n"
    result = run("set-topic", "x" * 101, "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["errors"][0]["code"] == "topic-invalid"
    assert json.loads(run("session", "context", "--json").stdout)["topic"] == "Add auth"


def test_prompt_overseer_is_the_spec_prompt_then_the_context(session: dict[str, object]) -> None:
    text = run("prompt", "overseer").stdout
    assert text.startswith("You are the Flowgentic overseer agent in plan mode.\n")
    assert OVERSEER_PROMPT in text
    assert text.index("12. If validation fails") < text.index(
        f"CURRENT_PLAN_DIR: {session['plan_dir']}"
    )
    data = json.loads(run("prompt", "overseer", "--json").stdout)
    assert data["prompt"] == text


def test_missing_session_is_a_clear_error(home: Path) -> None:
    for args in (["plan", "dir"], ["plan", "commit"], ["set-topic", "x"], ["prompt", "overseer"]):
        result = run(*args)
        assert result.exit_code == 1
        assert result.stderr.startswith("agentctl: AGENTFLOW_SESSION_ID is not set;")
    result = run("plan", "dir", env={"AGENTFLOW_SESSION_ID": "bogus"})
    assert result.exit_code == 1 and "no agentflow session 'bogus'" in result.stderr


def test_home_option_overrides_the_environment(home: Path, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    data = json.loads(run("--home", str(other), "session", "start", "--json").stdout)
    assert str(data["plan_dir"]).startswith(str(other.resolve()))
    assert not home.exists()


def test_main_exit_codes(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["plan", "validate", str(SPEC_EXAMPLE)])
    assert info.value.code == 0
    with pytest.raises(SystemExit) as info:
        main(["plan", "validate", str(DATA / "rules" / "body-empty")])
    assert info.value.code == 1
    with pytest.raises(SystemExit) as info:
        main(["plan", "no-such-command"])
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        main(["plan", "dir"])
    assert info.value.code == 1
    assert "Traceback" not in capsys.readouterr().err
