"""Ctrl-C stops a run: every agent cancelled and gone, claims released, and the
integration branch holding only the tasks that finished."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from tests.orchestrate.conftest import TOY, Project, git, snapshot
from tests.waiting import DEADLINE, group_alive, wait_until


def test_ctrl_c_cancels_the_agents_and_releases_the_claims(project: Project) -> None:
    plan = project.plan(
        "Interrupted",
        [
            {"id": "quick", "body": "Write it."},
            {"id": "stuck", "depends_on": ["quick"], "body": "Hang.\n\nmode: hang"},
            {"id": "also", "depends_on": ["quick"], "body": "Hang too.\n\nmode: hang"},
        ],
    )
    marks = project.tmp / "marks"
    marks.mkdir()
    before = snapshot(project.repo)
    proc = project.start(
        "run", "goal", "--workers", "2", "--lease", "2s", "--planner", f"{TOY} --plan {plan}",
        "--agent", f"default={TOY} --log {marks}",
    )  # fmt: skip
    started = [marks / "started-stuck", marks / "started-also"]
    wait_until(lambda: all(p.exists() for p in started), "both hanging agents to start")
    agents = [int(p.read_text()) for p in started]
    # While the agents work, their leases are renewed (every third of the 2 s lease),
    # and nobody else gets their tasks.
    sessions = json.loads(project.agentctl("session", "list", "--json").stdout)["sessions"]
    session = sessions[0]["session_id"]
    leases: set[str] = set()

    def renewed() -> bool:
        stuck = project.tasks(session)["stuck"]
        assert stuck["state"] == "claimed" and stuck["claims"] == 1
        assert stuck["holder"] == stuck["evidence"]["worker"]  # who runs it, for the board
        leases.add(stuck["lease_expires_at"])
        return len(leases) >= 3

    wait_until(renewed, "the lease of a working agent to be renewed twice")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=DEADLINE)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    for pid in agents:  # each agent led its own process group
        assert not group_alive(pid)
    assert snapshot(project.repo) == before
    assert f"session {session}" in err
    tasks = project.tasks(session)
    assert tasks["quick"]["state"] == "done"
    assert tasks["stuck"]["state"] == "ready" and tasks["also"]["state"] == "ready"
    assert tasks["stuck"]["evidence"]["outcome"] == "released"
    branch = f"agentflow/{session}"
    assert git(project.repo, "ls-tree", "--name-only", branch).split() == ["README.md", "quick.txt"]
    assert git(project.repo, "worktree", "list").count("\n") == 0
    assert not list(Path(project.env["AGENTFLOW_HOME"]).glob("runs/*/*/worktrees/*"))
