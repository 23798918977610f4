"""Two hosts: two clones of one bare repository, a worker process in each, one real
PostgreSQL control plane.  A worker killed with -9 loses its claim when the lease ends,
and the other worker does the task from a fresh worktree."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from tests.agentflow.helpers import task, write_plan
from tests.orchestrate.conftest import TOY, Project, git
from tests.pgserver import PostgresServer
from tests.waiting import DEADLINE, group_alive, wait_until


def test_a_killed_workers_task_is_finished_by_the_other_host(
    project: Project, postgres: PostgresServer, tmp_path: Path
) -> None:
    url = postgres.new_schema()
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    host_a = project.repo
    git(host_a, "remote", "add", "origin", str(origin))
    git(host_a, "push", "-q", "origin", "main")
    subprocess.run(["git", "clone", "-q", str(origin), str(tmp_path / "b")], check=True)
    host_b = tmp_path / "b"
    git(host_b, "config", "user.name", "Dev B")
    git(host_b, "config", "user.email", "b@example.org")
    env_a = {**project.env, "AGENTFLOW_DATABASE_URL": url}
    env_b = {**env_a, "AGENTFLOW_HOME": str(tmp_path / "home-b")}

    started = project.agentctl("--database", url, "session", "start", "--json")
    session = json.loads(started.stdout)["session_id"]
    write_plan(
        Path(json.loads(started.stdout)["plan_dir"]),
        "Across hosts",
        {
            "01-alpha.md": task("alpha"),
            "02-beta.md": task("beta"),
            "03-gamma.md": task("gamma", ["alpha"]),
        },
    )
    assert (
        project.agentctl("--database", url, "plan", "commit", "--session", session).returncode == 0
    )

    marks = tmp_path / "marks"
    marks.mkdir()
    common = ["worker", "--session", session, "--lease", "3s", "--json"]
    first = subprocess.Popen(
        [str(Path(project.env["PATH"].split(os.pathsep)[0]) / "agentctl"), *common,
         "--agent", f"default={TOY} --mode hang --log {marks}"],
        cwd=host_a, env=env_a, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    wait_until((marks / "started-alpha").exists, "the first worker's agent to start alpha")
    second = subprocess.Popen(
        [str(Path(project.env["PATH"].split(os.pathsep)[0]) / "agentctl"), *common,
         "--agent", f"default={TOY}"],
        cwd=host_b, env=env_b, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        project.env = env_a
        wait_until(lambda: project.tasks(session)["beta"]["state"] == "done", "beta to be done")
        first.kill()  # -9: no chance to release its claim
        first.wait(timeout=DEADLINE)
        agent = int((marks / "started-alpha").read_text())
        wait_until(
            lambda: not group_alive(agent), "the killed worker's agent to end with its stdin"
        )

        out, err = second.communicate(timeout=DEADLINE * 2)
    finally:
        for proc in (first, second):
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert second.returncode == 0, err
    report = json.loads(out)
    assert [t["state"] for t in report["tasks"]] == ["done", "done", "done"]
    tip = git(origin, "rev-parse", f"agentflow/{session}")
    assert tip in [t["merge_commit"] for t in report["tasks"]]
    branch = f"agentflow/{session}"
    files = git(origin, "ls-tree", "--name-only", branch).split()
    assert files == ["README.md", "alpha.txt", "beta.txt", "gamma.txt"]
    assert "deps alpha" in git(origin, "show", f"{branch}:gamma.txt")
    alpha = project.tasks(session)["alpha"]
    assert alpha["attempts"] == 2 and alpha["claims"] == 2
    assert alpha["evidence"]["outcome"] == "done"
    # The user's branch on either clone is where it was.
    assert git(host_a, "rev-parse", "main") == git(origin, "rev-parse", "main")
    assert first.returncode == -signal.SIGKILL


def test_run_with_a_remote_pushes_the_integration_branch_there(
    project: Project, tmp_path: Path
) -> None:
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    git(project.repo, "remote", "add", "origin", str(origin))
    git(project.repo, "push", "-q", "origin", "main")
    plan = project.plan("Pushed", [{"id": "one", "body": "One."}, {"id": "two", "body": "Two."}])
    done = project.agentctl(
        "run", "goal", "--json", "--remote", "origin", "--workers", "2",
        "--planner", f"{TOY} --plan {plan}", "--agent", f"default={TOY}",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    files = git(origin, "ls-tree", "--name-only", report["branch"]).split()
    assert files == ["README.md", "one.txt", "two.txt"]
    assert git(origin, "rev-parse", report["branch"]) == report["tip"]
    # Only the remote holds it: the local repository has no such branch.
    assert "agentflow/" not in git(project.repo, "branch", "--list")
