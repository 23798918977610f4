"""A whole run with TeDDy as both planner and task agent (``teddy acp`` with the offline
scripted model): the planner's shell writes and commits the plan, the tasks' plans
create files, and the files land on the integration branch."""

from __future__ import annotations

import json

from tests.acp.kit import create, execute, plan_text
from tests.orchestrate.conftest import BIN, Project, git, snapshot

PLAN_COMMAND = """\
d="$(agentctl plan dir)" && mkdir -p "$d/tasks" && cat > "$d/plan.md" <<'PLAN'
---
title: "Greetings"
---

Two files, the second after the first.
PLAN
cat > "$d/tasks/01-hello.md" <<'TASK'
---
id: hello
---

Create hello.txt.
TASK
cat > "$d/tasks/02-world.md" <<'TASK'
---
id: world
depends_on: [hello]
---

Create world.txt.
TASK
agentctl plan commit"""


def test_teddy_plans_and_does_the_tasks(project: Project) -> None:
    planner = project.tmp / "planner.json"
    planner.write_text(json.dumps([plan_text(execute(PLAN_COMMAND), title="Plan it")]))
    worker = project.tmp / "worker.json"
    worker.write_text(
        json.dumps(
            [
                plan_text(create("hello.txt", "hello"), title="Hello"),
                plan_text(create("world.txt", "world"), title="World"),
            ]
        )
    )
    teddy = f"{BIN / 'teddy'} acp --model teddy-scripted"
    before = snapshot(project.repo)
    done = project.agentctl(
        "run", "say hello, then world", "--json",
        "--planner", f"env TEDDY_SCRIPTED_RESPONSES={planner} {teddy}",
        "--agent", f"default=env TEDDY_SCRIPTED_RESPONSES={worker} {teddy}",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    report = json.loads(done.stdout)
    assert snapshot(project.repo) == before
    branch = report["branch"]
    assert git(project.repo, "show", f"{branch}:hello.txt") == "hello"
    assert git(project.repo, "show", f"{branch}:world.txt") == "world"
    # TeDDy's own session state stays out of the merged work.
    assert ".teddy" not in git(project.repo, "ls-tree", "--name-only", branch).split()
    evidence = project.tasks(report["session_id"])["world"]["evidence"]
    assert [c["kind"] for c in evidence["tool_calls"]] == ["edit"]
    assert evidence["tool_calls"][0]["status"] == "completed"
    assert "Completed" in evidence["last_message"]
