"""The state directory under stress: kill -9 during remove-thread, a read-only home, a
deleted database, a home with a newline, ambiguous session references, tasks/."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from plankit.agentflow.control import ControlPlane
from plankit.agentflow.records import ControlError
from tests.waiting import DEADLINE, wait_until

from .helpers import copy_example, task, write_plan
from .test_workflow import Shell, agentctl_path


def _session_with_threads(home: Path, count: int) -> tuple[str, list[tuple[str, str]]]:
    plane = ControlPlane(home)
    context = plane.start_session()
    sid = context.session.session_id
    copy_example(Path(context.current.plan_dir))
    threads = []
    for n in range(count):
        thread = plane.request_thread_dir(sid)
        write_plan(Path(thread.plan_dir), title=f"Extra {n}", tasks={"01-a.md": task("a")})
        threads.append((thread.thread_id, thread.plan_dir))
    return sid, threads


def _consistent(home: Path, sid: str) -> None:
    """Every allocated thread has its whole directory; after gc nothing else is left;
    the next commit works."""
    plane = ControlPlane(home)
    context = plane.context(sid)
    for thread in (context.current, *context.additional):
        directory = Path(thread.plan_dir)
        assert (directory / "plan.md").is_file(), f"{thread.thread_id} lost its directory"
        assert list((directory / "tasks").iterdir()), f"{thread.thread_id} lost its tasks"
    plane.gc(0)
    expected = {Path(t.plan_dir).name for t in (context.current, *context.additional)}
    assert {p.name for p in (home / "plans").iterdir()} == expected
    plane.commit(sid)


# The child removes a thread and dies by SIGKILL at one point of the removal.
_CRASH = """
import os, signal, sys
from plankit.agentflow import control, dirs, queries
from plankit.agentflow.control import ControlPlane
home, sid, thread_id, point = sys.argv[1:5]
def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
if point == "in-transaction":
    real = queries.mark_removed
    def mark(*args):
        real(*args)
        die()
    queries.mark_removed = mark
elif point == "after-commit":
    dirs.move_aside = die
elif point == "while-deleting":
    real_delete = dirs.delete
    def delete(trash):
        os.unlink(os.path.join(trash, "plan.md"))
        die()
    dirs.delete = delete
ControlPlane(home).remove_thread(thread_id, sid)
"""


@pytest.mark.parametrize("point", ["in-transaction", "after-commit", "while-deleting"])
def test_remove_thread_killed_at_any_point_leaves_a_consistent_state(
    tmp_path: Path, point: str
) -> None:
    home = tmp_path / "home"
    sid, threads = _session_with_threads(home, 1)
    result = subprocess.run(
        [sys.executable, "-c", _CRASH, str(home), sid, threads[0][0], point],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == -signal.SIGKILL, result.stderr
    _consistent(home, sid)


def test_remove_thread_killed_at_random_moments(tmp_path: Path) -> None:
    home = tmp_path / "home"
    sid, threads = _session_with_threads(home, 8)
    sh = Shell(home)
    rng = random.Random(15)
    for thread_id, _ in threads:
        process = subprocess.Popen(
            [sh.exe, "plan", "remove-thread", "--thread-id", thread_id, "--session", sid],
            env=sh.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            process.wait(timeout=rng.uniform(0.05, 0.6))
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=DEADLINE)
        _consistent(home, sid)


def test_allocated_directories_have_tasks_for_the_documented_printf(tmp_path: Path) -> None:
    sh = Shell(tmp_path / "home")
    started = sh.json("session", "start", "--json")
    sh.env["AGENTFLOW_SESSION_ID"] = str(started["session_id"])
    extra = sh.json("plan", "request-thread-dir")
    for directory in (str(started["plan_dir"]), str(extra["plan_dir"])):
        assert sorted(os.listdir(directory)) == ["tasks"]
        script = (
            'printf -- "---\\ntitle: A\\n---\\nX\\n" > "$1/plan.md" && '
            'printf -- "---\\nid: a\\n---\\nDo it.\\n" > "$1/tasks/01-a.md"'
        )
        subprocess.run(["sh", "-c", script, "sh", directory], check=True, timeout=DEADLINE)
    assert "2 threads, 2 tasks" in sh("plan", "commit").stdout
    # a directory with only its empty tasks/ is still "empty": nothing to commit there
    sh("plan", "clear-current")
    assert sh.json("plan", "commit", "--json")["skipped"] == [started["thread_id"]]


# --- a read-only home --------------------------------------------------------------------


def _read_only(
    home: Path, args: list[str], env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """Run agentctl with ``home`` read-only: a read-only bind mount as root (whom file
    modes do not stop), the directories' write bits removed otherwise."""
    command = [agentctl_path(), *args]
    if os.geteuid() == 0:
        if shutil.which("unshare") is None:
            pytest.skip("running as root without unshare: cannot make a read-only home")
        mount = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1" && shift && exec "$@"'
        command = ["unshare", "-m", "sh", "-c", mount, "sh", str(home), *command]
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    paths = [home, *home.rglob("*")]
    modes = {p: p.stat().st_mode for p in paths if not p.is_symlink()}
    try:
        for p, mode in modes.items():
            p.chmod(mode & ~0o222)
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    finally:
        for p, mode in modes.items():
            p.chmod(mode)


def test_reading_commands_work_on_a_read_only_home_and_writes_say_so(tmp_path: Path) -> None:
    home = tmp_path / "home"
    sh = Shell(home)
    started = sh.json("session", "start", "--json")
    sh.env["AGENTFLOW_SESSION_ID"] = str(started["session_id"])
    copy_example(Path(str(started["plan_dir"])))
    sh("plan", "commit")
    probe = _read_only(home, ["session", "list"], sh.env)
    if "Operation not permitted" in probe.stderr or "unshare" in probe.stderr:
        pytest.skip(f"cannot make a read-only mount here: {probe.stderr.strip()}")
    for args in (
        ["session", "list", "--json"],
        ["session", "context"],
        ["plan", "show", "--json"],
        ["plan", "graph"],
        ["prompt", "overseer"],
    ):
        result = _read_only(home, args, sh.env)
        assert result.returncode == 0, (args, result.stderr)
        assert "Traceback" not in result.stderr
    shown = json.loads(_read_only(home, ["plan", "show", "--json"], sh.env).stdout)
    assert shown["progress"]["ready"] == 1
    for args in (
        ["session", "start"],
        ["plan", "commit"],
        ["task", "claim"],
        ["set-topic", "x"],
        ["plan", "request-thread-dir"],
    ):
        result = _read_only(home, args, sh.env)
        assert result.returncode == 1, (args, result.stdout)
        assert "read-only" in result.stderr and "Traceback" not in result.stderr, result.stderr
        assert result.stderr.count("\n") == 1, result.stderr


# --- the database ------------------------------------------------------------------------


def test_a_deleted_database_next_to_plan_directories_is_reported(tmp_path: Path) -> None:
    home = tmp_path / "home"
    sh = Shell(home)
    sh("session", "start")
    (home / "agentflow.db").unlink()
    for args in (["session", "list"], ["session", "start"]):
        result = sh(*args, ok=False)
        assert result.returncode == 1
        assert "agentflow.db is missing but" in result.stderr
        assert "restore the database from a backup" in result.stderr
    assert not (home / "agentflow.db").exists()  # never silently recreated
    result = sh("session", "list", "--json", ok=False)
    assert json.loads(result.stdout)["errors"][0]["code"] == "state-missing"


@pytest.mark.parametrize("tail", ["x\nexport EVIL=1", "a\rb", "tab\there"])
def test_a_home_with_a_control_character_is_refused(tmp_path: Path, tail: str) -> None:
    bad = f"{tmp_path}/{tail}"
    with pytest.raises(ControlError) as info:
        ControlPlane(bad)
    assert info.value.rule == "home-invalid"
    sh = Shell(tmp_path / "home")
    sh.env["AGENTFLOW_HOME"] = bad
    for args in (["session", "start"], ["session", "list"], ["mcp"]):
        result = sh(*args, ok=False)
        assert result.returncode == 1
        assert "contains a newline or another control character" in result.stderr
    result = sh("session", "start", "--json", ok=False)
    assert json.loads(result.stdout)["errors"][0]["code"] == "home-invalid"
    # nothing made at the name before the control character, nor anywhere beside home
    assert [p.name for p in tmp_path.iterdir() if p.name != "home"] == []


def test_session_references_are_never_ambiguous(home: Path) -> None:
    plane = ControlPlane()
    first = plane.start_session("agent-1").session.session_id
    with pytest.raises(ControlError) as info:
        plane.start_session(first)  # another session's internal id as an agent id
    assert info.value.rule == "session-ambiguous"
    # a database where one reference names two sessions (written by an older plankit)
    second = plane.start_session("agent-2").session.session_id
    with sqlite3.connect(home / "agentflow.db") as conn:
        conn.execute(
            "UPDATE sessions SET agent_session_id = ? WHERE session_id = ?", (first, second)
        )
    with pytest.raises(ControlError) as info:
        plane.context(first)
    assert info.value.rule == "session-ambiguous"
    assert first in info.value.message and second in info.value.message
    assert plane.context(second).session.session_id == second


def test_the_mcp_server_refuses_a_bad_home_in_one_line(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [agentctl_path(), "mcp"],
        env={**os.environ, "AGENTFLOW_HOME": "/tmp/a\nb"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = process.communicate(timeout=60)
    wait_until(lambda: process.poll() is not None, "the server to exit")
    assert process.returncode == 1 and out == ""
    assert err.startswith("agentctl: AGENTFLOW_HOME") and "Traceback" not in err
