"""The spec's command workflow end to end, with the real ``agentctl`` console script."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import copy_example, task, write, write_plan


def agentctl_path() -> str:
    path = shutil.which("agentctl", path=str(Path(sys.executable).parent))
    if path is None:
        pytest.fail("agentctl is not installed next to this Python; run pip install -e .")
    return path


class Shell:
    """Runs agentctl as a separate process with the agent's environment."""

    def __init__(self, home: Path):
        self.exe = agentctl_path()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTFLOW_")}
        self.env["AGENTFLOW_HOME"] = str(home)

    def __call__(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [self.exe, *args], env=self.env, capture_output=True, text=True, timeout=60
        )
        assert "Traceback" not in result.stderr, result.stderr
        if ok:
            assert result.returncode == 0, result.stderr
        return result

    def json(self, *args: str) -> dict[str, object]:
        data = json.loads(self(*args).stdout)
        assert isinstance(data, dict)
        return data


def _db(home: Path) -> list[str]:
    with sqlite3.connect(home / "agentflow.db") as conn:
        return list(conn.iterdump())


def test_the_whole_workflow(tmp_path: Path) -> None:
    home = tmp_path / "home"
    sh = Shell(home)

    # Host: start the session and hand the context to the agent.
    started = sh.json("session", "start", "--agent-session-id", "claude-session-1", "--json")
    sh.env.update({str(k): str(v) for k, v in dict(started["env"]).items()})  # type: ignore[call-overload]
    current = Path(str(started["plan_dir"]))
    assert current.is_dir() and current.parent == home.resolve() / "plans"
    assert sh("plan", "dir").stdout.strip() == str(current)
    sh("set-topic", "Add user authentication")

    # Single thread: write the plan where CURRENT_PLAN_DIR says, commit.
    copy_example(current)
    first = sh("plan", "commit")
    assert "Committed plan #1" in first.stdout and "1 thread, 3 tasks" in first.stdout

    # Two extra threads, one commit for all three.
    one = sh.json("plan", "request-thread-dir")
    two = sh.json("plan", "request-thread-dir")
    assert len({one["thread_id"], two["thread_id"], started["thread_id"]}) == 3
    write_plan(
        Path(str(one["plan_dir"])), title="Frontend", tasks={"01-login-page.md": task("login-page")}
    )
    write_plan(
        Path(str(two["plan_dir"])),
        title="Docs",
        tasks={"01-api-docs.md": task("api-docs"), "02-guide.md": task("guide", ["api-docs"])},
    )
    second = sh.json("plan", "commit", "--json")
    assert (second["commit"], second["thread_count"], second["task_count"]) == (2, 3, 6)

    # A resumed agent gets the extra directories in its context.
    context = sh("session", "context").stdout
    assert f"plan_dir: {one['plan_dir']}" in context and f"plan_dir: {two['plan_dir']}" in context

    # Removal before commit: the removed thread is not committed.
    three = sh.json("plan", "request-thread-dir")
    write(Path(str(three["plan_dir"])) / "plan.md", "half-written, invalid")
    sh("plan", "remove-thread", "--thread-id", str(three["thread_id"]))
    assert not Path(str(three["plan_dir"])).exists()
    third = sh.json("plan", "commit", "--json")
    assert [t["thread_id"] for t in third["threads"]] == [  # type: ignore[union-attr]
        started["thread_id"],
        one["thread_id"],
        two["thread_id"],
    ]

    # Removing the current thread or an unknown one: non-zero, nothing changed.
    before = (_db(home), sorted(str(p) for p in home.rglob("*") if "locks" not in p.parts))
    bad = sh("plan", "remove-thread", "--thread-id", str(started["thread_id"]), ok=False)
    assert bad.returncode == 1 and "cannot be removed" in bad.stderr
    bad = sh("plan", "remove-thread", "--thread-id", "thread_12345", ok=False)
    assert bad.returncode == 1 and "no thread 'thread_12345'" in bad.stderr
    bad = sh("plan", "remove-thread", "--thread-id", str(three["thread_id"]), ok=False)
    assert bad.returncode == 1 and "already removed" in bad.stderr
    assert (_db(home), sorted(str(p) for p in home.rglob("*") if "locks" not in p.parts)) == before

    # clear-current: the current thread's files go, its directory stays; the commit
    # then holds the other threads.
    cleared = sh.json("plan", "clear-current", "--json")
    assert cleared["files_removed"] == 4 and [p.name for p in current.iterdir()] == ["tasks"]
    assert not any((current / "tasks").iterdir())
    fourth = sh.json("plan", "commit", "--json")
    assert fourth["thread_count"] == 2 and fourth["skipped"] == [started["thread_id"]]

    # Commit failure, fix, commit.
    write_plan(
        current,
        title="Auth again",
        tasks={"01-a.md": task("a", ["b"]), "02-b.md": task("b", ["a"])},
    )
    write(Path(str(one["plan_dir"])) / "tasks" / "02-Bad Name.md", task("x"))
    failed = sh("plan", "commit", ok=False)
    assert failed.returncode == 1
    assert "depends-cycle dependency cycle: a → b → a" in failed.stderr
    assert "filename '02-Bad Name.md'" in failed.stderr
    assert "2 problems in 2 files" in failed.stderr
    errors = json.loads(sh("plan", "commit", "--json", ok=False).stdout)["errors"]
    assert {e["code"] for e in errors} == {"depends-cycle", "filename"}
    write(current / "tasks" / "02-b.md", task("b"))
    (Path(str(one["plan_dir"])) / "tasks" / "02-Bad Name.md").rename(
        Path(str(one["plan_dir"])) / "tasks" / "02-bad-name.md"
    )
    fixed = sh("plan", "commit")
    assert "Committed plan #5" in fixed.stdout and "3 threads, 6 tasks" in fixed.stdout
    assert "wave 1: b\n  wave 2: a" in fixed.stdout

    # Host: what was committed, and the session list.
    shown = sh.json("plan", "show", "--json")
    assert shown["commit"] == 5
    assert sh.json("plan", "show", "--commit", "1", "--json")["task_count"] == 3
    sessions = sh.json("session", "list", "--json")["sessions"]
    assert [(s["agent_session_id"], s["commits"], s["topic"]) for s in sessions] == [  # type: ignore[union-attr]
        ("claude-session-1", 5, "Add user authentication")
    ]
    prompt = sh("prompt", "overseer").stdout
    assert prompt.startswith("You are the Flowgentic overseer agent")
    assert f"thread_id: {one['thread_id']}" in prompt
