"""End to end with a real third-party client: acpx (npm) running ``teddy acp``.

acpx advertises ``fs`` and ``terminal``, so the files are written through its
``fs/write_text_file`` and the command runs in its terminal.  Exit codes: 0 when the
turn ends, 5 when a permission was denied.  Skipped with the reason when node or
acpx is missing (see ``conftest.acpx_command``).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

from tests.acp.kit import ROOT, TEDDY, SchemaCheck, acpx_sockets, create, execute, plan_text
from tests.waiting import wait_until

PLAN = plan_text(
    create("hello.py", 'print("hello from acpx")'),
    execute("python3 hello.py > out.txt"),
    title="Say hello",
)


def acpx_exec(
    acpx: tuple[list[str], dict[str, str]], project: Path, *flags: str
) -> subprocess.CompletedProcess[str]:
    command, env = acpx
    agent = shlex.join([*TEDDY, "acp"])
    env = {**env, "PYTHONPATH": str(ROOT), "PLANKIT_HOME": os.environ["PLANKIT_HOME"]}
    return subprocess.run(
        [*command, "--agent", agent, "--cwd", str(project), *flags, "exec", PLAN],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def plan_blocks(stdout: str) -> list[list[str]]:
    """The ``[plan]`` blocks acpx printed, each as its entry lines."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in stdout.splitlines():
        if line.strip() == "[plan]":
            current = []
            blocks.append(current)
        elif current is not None and line.startswith("  - ["):
            current.append(line.strip())
        else:
            current = None
    return blocks


def test_approve_all(acpx: tuple[list[str], dict[str, str]], project: Path) -> None:
    result = acpx_exec(acpx, project, "--approve-all")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (project / "hello.py").read_text() == 'print("hello from acpx")\n'
    assert (project / "out.txt").read_text() == "hello from acpx\n"
    blocks = plan_blocks(result.stdout)
    assert blocks[0] == [
        "- [pending] CREATE hello.py: Make it.",
        "- [pending] EXECUTE python3 hello.py > out.txt: Run it.",
    ]
    assert blocks[-1] == [
        "- [completed] CREATE hello.py: Make it.",
        "- [completed] EXECUTE python3 hello.py > out.txt: Run it.",
    ]
    assert "- [in_progress] EXECUTE python3 hello.py > out.txt: Run it." in [
        line for block in blocks for line in block
    ]
    assert "Completed 🟢: 2 of 2 actions completed" in result.stdout
    reports = list(project.glob(".teddy/*/01/report.md"))
    assert len(reports) == 1 and "Completed 🟢" in reports[0].read_text()


def test_deny_all(acpx: tuple[list[str], dict[str, str]], project: Path) -> None:
    result = acpx_exec(acpx, project, "--deny-all")
    assert result.returncode == 5, result.stdout + result.stderr
    assert not (project / "hello.py").exists()
    assert not (project / "out.txt").exists()
    # rejected actions did not run: acpx must not show the plan as done
    assert plan_blocks(result.stdout)[-1] == [
        "- [pending] CREATE hello.py: Make it.",
        "- [pending] EXECUTE python3 hello.py > out.txt: Run it.",
    ]
    reports = list(project.glob(".teddy/*/01/report.md"))
    assert "Skipped 🟡 (rejected by the user)" in reports[0].read_text()


def test_acpx_json_transcript_is_valid_v1(
    acpx: tuple[list[str], dict[str, str]], project: Path, check: SchemaCheck
) -> None:
    result = acpx_exec(acpx, project, "--approve-all", "--format", "json")
    assert result.returncode == 0, result.stderr
    messages = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    rpc = [m for m in messages if m.get("jsonrpc") == "2.0"]
    assert any(m.get("method") == "session/update" for m in rpc)
    for message in rpc:
        if "method" in message:
            check.check(message)


def test_a_named_session_is_resumed_with_session_load(
    acpx: tuple[list[str], dict[str, str]], project: Path, tmp_path: Path
) -> None:
    command, env = acpx
    env = {**env, "PYTHONPATH": str(ROOT), "PLANKIT_HOME": os.environ["PLANKIT_HOME"]}
    agent = shlex.join([*TEDDY, "acp"])
    base = [*command, "--agent", agent, "--cwd", str(project), "--ttl", "1", "--approve-all"]
    first, second = tmp_path / "first.md", tmp_path / "second.md"
    first.write_text(plan_text(create("one.txt", "one"), title="First turn"))
    second.write_text(plan_text(create("two.txt", "two"), title="Second turn"))

    def acpx_run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*base, *args], env=env, capture_output=True, text=True, timeout=60, check=False
        )

    created = acpx_run("sessions", "new", "--name", "work")
    assert created.returncode == 0, created.stdout + created.stderr
    done = acpx_run("prompt", "-s", "work", "-f", str(first))
    assert done.returncode == 0, done.stdout + done.stderr
    record = next((Path(env["HOME"]) / ".acpx" / "sessions").glob("*.json"))
    assert acpx_sockets(env["HOME"]).is_dir()  # where the fixture's clean-up looks

    def agent_gone() -> bool:  # acpx stops the agent once idle for --ttl seconds
        data = json.loads(record.read_text(encoding="utf-8"))
        exited, prompted = data.get("last_agent_exit_at"), data.get("last_prompt_at")
        return bool(exited and prompted and exited > prompted)

    wait_until(agent_gone, "acpx to stop the idle agent")
    resumed = acpx_run("--format", "json", "prompt", "-s", "work", "-f", str(second))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    methods = [
        json.loads(line).get("method")
        for line in resumed.stdout.splitlines()
        if line.startswith("{")
    ]
    assert "session/load" in methods and "session/new" not in methods
    sessions = list((project / ".teddy").iterdir())
    assert len(sessions) == 1  # both prompts are turns of one TeDDy session
    assert (sessions[0] / "01" / "report.md").is_file()
    assert (sessions[0] / "02" / "report.md").is_file()
    assert (project / "two.txt").read_text() == "two\n"
