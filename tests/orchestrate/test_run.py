"""``agentctl run`` on one host: a planner and task agents over ACP, real git worktrees,
the work merged into ``agentflow/<session>`` while the user's tree stays as it was."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.orchestrate.conftest import TOY, Project, git, snapshot


def _run(project: Project, plan: Path, *extra: str, mode: str = "write",
         planner_extra: str = "") -> tuple[subprocess.CompletedProcess[str], dict]:  # fmt: skip
    done = project.agentctl(
        "run", "the goal: write the files", "--json",
        "--planner", f"{TOY} --plan {plan} {planner_extra}",
        "--agent", f"default={TOY} --mode {mode}", *extra,
    )  # fmt: skip
    assert done.stdout, done.stderr
    return done, json.loads(done.stdout)


def test_tasks_merge_in_dependency_order_and_the_user_tree_is_untouched(
    project: Project,
) -> None:
    plan = project.plan(
        "Three files",
        [
            {"id": "first", "body": "Write first."},
            {"id": "second", "body": "Write second."},
            {"id": "last", "depends_on": ["first", "second"], "body": "Write last."},
        ],
    )
    log = project.tmp / "planner.json"
    before = snapshot(project.repo)
    done, report = _run(project, plan, "--workers", "2", planner_extra=f"--log {log}")
    assert done.returncode == 0, done.stderr
    assert snapshot(project.repo) == before
    branch = report["branch"]
    assert branch == f"agentflow/{report['session_id']}"
    tree = git(project.repo, "ls-tree", "--name-only", branch).split()
    assert sorted(tree) == ["README.md", "first.txt", "last.txt", "second.txt"]
    # The last task ran after both of its dependencies, on a tree holding their work.
    last = git(project.repo, "show", f"{branch}:last.txt")
    assert "deps first second" in last and "seen first.txt second.txt" in last
    assert git(project.repo, "worktree", "list").count("\n") == 0  # worktrees removed
    # The planner's first prompt: the overseer prompt, the runtime context exactly as
    # `agentctl session context` prints it, the goal; and the MCP server offered.
    seen = json.loads(log.read_text())
    context = project.agentctl("session", "context", "--session", report["session_id"])
    assert seen["prompt"].startswith("You are the Flowgentic overseer agent")
    assert context.stdout in seen["prompt"]
    assert seen["prompt"].rstrip().endswith("the goal: write the files")
    assert seen["mcp"] == ["agentflow"] and seen["env"] == report["session_id"]
    assert Path(seen["cwd"]) != project.repo
    # The evidence of each task.
    tasks = project.tasks(report["session_id"])
    assert {t["state"] for t in tasks.values()} == {"done"}
    evidence = tasks["last"]["evidence"]
    assert evidence["merge_commit"] == git(project.repo, "rev-parse", branch)
    assert evidence["files_changed"] == ["last.txt"]
    assert evidence["last_message"] == "wrote last.txt for last"
    assert evidence["stop_reason"] == "end_turn"
    calls = [(c["kind"], c["title"], c["exit_status"]) for c in evidence["tool_calls"]]
    assert calls == [("edit", "Write last.txt", "completed"), ("execute", "run ls", 0)]
    assert evidence["plan_updates"][-1][0]["status"] == "completed"
    shown = project.agentctl("plan", "show", "--session", report["session_id"])
    assert "merged as" in shown.stdout and "last message: wrote last.txt" in shown.stdout


def test_a_refusal_fails_its_task_and_blocks_its_dependents(project: Project) -> None:
    plan = project.plan(
        "Refused",
        [
            {"id": "doomed", "body": "Do it.\n\nmode: refuse"},
            {"id": "after", "depends_on": ["doomed"], "body": "Then this."},
            {"id": "alone", "body": "Independent."},
        ],
    )
    done = project.agentctl(
        "run", "goal", "--planner", f"{TOY} --plan {plan}", "--agent", f"default={TOY}"
    )
    assert done.returncode == 1
    assert "doomed failed: the agent stopped with refusal" in done.stderr
    assert "after blocked" in done.stderr
    session = [line for line in done.stderr.splitlines() if line.startswith("session ")]
    tasks = project.tasks(session[0].split()[1])
    assert (tasks["doomed"]["state"], tasks["after"]["state"]) == ("failed", "blocked")
    assert tasks["alone"]["state"] == "done"
    assert "alone.txt" in done.stdout and "doomed.txt" not in done.stdout


def test_crash_conflict_and_unknown_agent_each_fail_with_the_reason(project: Project) -> None:
    plan = project.plan(
        "Trouble",
        [
            {"id": "one", "body": "Shared.\n\nmode: shared"},
            {"id": "two", "depends_on": [], "body": "Shared too.\n\nmode: shared"},
            {"id": "boom", "body": "Crash.\n\nmode: crash"},
            {"id": "who", "agent": "nobody", "body": "An agent not given."},
        ],
    )
    done, report = _run(project, plan, "--workers", "2")
    assert done.returncode == 1
    states = {t["ref"].split("/")[1]: t for t in report["tasks"]}
    conflicted = [t for t in ("one", "two") if states[t]["state"] == "failed"]
    assert len(conflicted) == 1
    assert "merge conflict in shared.txt" in states[conflicted[0]]["reason"]
    assert "exited during its turn" in states["boom"]["reason"]
    assert "agent 'nobody'" in states["who"]["reason"]
    assert git(project.repo, "ls-tree", "--name-only", report["branch"]).split() == [
        "README.md",
        "shared.txt",
    ]
    kept = states[conflicted[0]]["reason"].rsplit("on branch ", 1)[1]
    assert git(project.repo, "show", f"{kept}:shared.txt").startswith(f"task {conflicted[0]}")


def test_a_planner_whose_plan_is_invalid_is_prompted_again(project: Project) -> None:
    plan = project.plan("Fixed", [{"id": "only", "body": "Write it."}])
    done, report = _run(project, plan, planner_extra="--mode bad-plan")
    assert done.returncode == 0, done.stderr
    transcript = Path(project.env["AGENTFLOW_HOME"]).glob("runs/*/*/logs/planner.jsonl")
    assert len(list(transcript)) == 1
    assert [t["state"] for t in report["tasks"]] == ["done"]


def test_a_planner_that_never_commits_a_valid_plan_fails_the_run(project: Project) -> None:
    plan = project.plan("Broken", [{"id": "only", "body": "Write it."}])
    done = project.agentctl(
        "run", "goal", "--planner", f"{TOY} --plan {plan} --mode never",
        "--agent", f"default={TOY}",
    )  # fmt: skip
    assert done.returncode == 1
    assert "did not commit a valid plan in 3 turns" in done.stderr
    assert "01-only.md" in done.stderr and "body" in done.stderr
    assert "agentflow/" not in git(project.repo, "branch", "--list")  # nothing to keep


def test_a_write_outside_the_worktree_is_rejected(project: Project) -> None:
    plan = project.plan("Outside", [{"id": "sneaky", "body": "Try.\n\nmode: outside"}])
    done, report = _run(project, plan)
    assert done.returncode == 0
    evidence = project.tasks(report["session_id"])["sneaky"]["evidence"]
    assert evidence["last_message"] == "permission: no"
    assert evidence["permissions"] == [{"title": "Write /tmp/elsewhere.txt", "choice": "no"}]


def test_without_git_the_run_refuses_in_one_line(project: Project, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    done = project.agentctl("run", "goal", cwd=plain)
    assert done.returncode == 1
    assert "is not in a git repository" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_an_agent_past_its_timeout_is_cancelled_and_its_task_fails(project: Project) -> None:
    plan = project.plan("Slow", [{"id": "slow", "body": "Hang.\n\nmode: hang"}])
    done, report = _run(project, plan, "--timeout", "2s")
    assert done.returncode == 1
    assert report["tasks"][0]["state"] == "failed"
    assert report["tasks"][0]["reason"] == "the turn was timed out after 2 s"
