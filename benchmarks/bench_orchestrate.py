"""Running agents: 200 tasks of a trivial ACP agent with 8 workers (``agentctl worker``'s
library call on one host, SQLite, a git repository).

The agent is a plain-Python ACP agent over stdio (no SDK, so that its start-up is as
small as an agent's can be): it answers ``initialize`` and ``session/new``, writes one
file through the client's ``fs/write_text_file`` and ends its turn.  A committed plan of
200 independent tasks is run by 8 workers in one process; each task gets a git worktree,
the agent, a commit and a merge into the integration branch.  Measured in the same run:

1. **claim → prompt sent** (worktree, records, prompt built; the agent's start-up left
   out) ÷ the agent's own start-up (spawn → ``session/new`` answered), medians;
2. **turn ended → next claim** (commit, merge, done, evidence, worktree removed, agent
   stopped, next claim) ÷ the agent's start-up, medians;
3. **tasks per minute**, reported as the rate an ideal scheduler would reach if the
   agent's start-up were the only cost (8 × 60 s ÷ start-up) ÷ the rate reached.

Targets: ≤ 1, ≤ 3 and ≤ 6 (on two shared cores the 8 agents and git compete for the
same CPUs).  ``--tasks N`` changes the task count.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench import ROOT, Result, log, report, require

TASKS = 200
WORKERS = int(os.environ.get("BENCH_WORKERS", "8"))

_AGENT = r"""
import json, sys
out = sys.stdout
def send(obj):
    out.write(json.dumps(obj) + "\n"); out.flush()
cwd = None
pending = {}
for line in sys.stdin:
    msg = json.loads(line)
    method = msg.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": 1,
              "agentCapabilities": {}}})
    elif method == "session/new":
        cwd = msg["params"]["cwd"]
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"sessionId": "s1"}})
    elif method == "session/prompt":
        pending["prompt"] = msg["id"]
        send({"jsonrpc": "2.0", "id": 900, "method": "fs/write_text_file",
              "params": {"sessionId": "s1", "path": cwd + "/out-" + str(msg["id"]) + "-"
                         + str(abs(hash(cwd))) + ".txt", "content": "done\n"}})
    elif msg.get("id") == 900:
        send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1",
              "update": {"sessionUpdate": "agent_message_chunk",
                         "content": {"type": "text", "text": "wrote it"}}}})
        send({"jsonrpc": "2.0", "id": pending["prompt"], "result": {"stopReason": "end_turn"}})
"""


def _repo(base: Path) -> Path:
    repo = base / "repo"
    repo.mkdir()
    for args in (["init", "-q", "-b", "main"], ["config", "user.name", "B"],
                 ["config", "user.email", "b@example.org"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=repo, check=True)
    (repo / "README.md").write_text("bench\n")
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "start"], cwd=repo, check=True)
    return repo


def run_once(tasks: int) -> dict[str, float]:
    from plankit.agentflow.control import ControlPlane
    from plankit.orchestrate.agents import AgentTable
    from plankit.orchestrate.run import join_session

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        repo = _repo(base)
        agent = base / "agent.py"
        agent.write_text(_AGENT)
        plane = ControlPlane(base / "home")
        context = plane.start_session()
        sid = context.session.session_id
        dirs = [Path(context.current.plan_dir)]
        while len(dirs) * 100 < tasks:  # task files are numbered NN: 100 per thread
            dirs.append(Path(plane.request_thread_dir(sid).plan_dir))
        for n in range(tasks):
            plan_dir = dirs[n // 100]
            (plan_dir / "tasks").mkdir(exist_ok=True)
            (plan_dir / "plan.md").write_text('---\ntitle: "Bench"\n---\n\nSmall tasks.\n')
            name = f"{n % 100:02d}-t{n}.md"
            (plan_dir / "tasks" / name).write_text(f"---\nid: t{n}\n---\n\nDo {n}.\n")
        plane.commit(context.session.session_id)
        table = AgentTable({"default": [sys.executable, str(agent)]})
        started = time.perf_counter()
        result = join_session(
            str(repo), context.session.session_id, table, plane=plane,
            workers=WORKERS, remote=None,
        )  # fmt: skip
        wall = time.perf_counter() - started
        require(result.exit_code == 0, f"the run failed: {result.failed[:3]}")
        require(len(result.tasks) == tasks, "every task reported")
        assert result.run is not None
        timings = result.run.timings
        merged = subprocess.run(
            ["git", "ls-tree", "--name-only", result.branch], cwd=repo, check=True,
            capture_output=True, text=True,
        ).stdout.split()  # fmt: skip
        require(len(merged) == tasks + 1, f"{len(merged) - 1} files merged, not {tasks}")
        plane.close()
        return {
            "wall": wall,
            "startup": statistics.median(timings.agent_startup),
            "claim_to_prompt": statistics.median(timings.claim_to_prompt),
            "done_to_claim": statistics.median(timings.done_to_claim),
        }


def measure(rounds: int = 1, tasks: int = TASKS) -> list[Result]:
    sys.path.insert(0, str(ROOT / "src"))
    os.environ.pop("AGENTFLOW_DATABASE_URL", None)
    log(f"bench_orchestrate: {tasks} tasks, {WORKERS} workers")
    got = run_once(tasks)
    rate = tasks / got["wall"] * 60
    ideal = WORKERS * 60 / got["startup"]
    start_ms = got["startup"] * 1000
    return [
        Result(
            "run: claim → prompt sent ÷ agent start-up",
            got["claim_to_prompt"] / got["startup"],
            1,
            f"{got['claim_to_prompt'] * 1000:.0f} ms vs {start_ms:.0f} ms (medians)",
        ),
        Result(
            "run: turn ended → next claim ÷ agent start-up",
            got["done_to_claim"] / got["startup"],
            3,
            f"{got['done_to_claim'] * 1000:.0f} ms vs {start_ms:.0f} ms (medians)",
        ),
        Result(
            "run: start-up-only rate ÷ tasks per minute",
            ideal / rate,
            6,
            f"{rate:.0f} tasks/min ({tasks} tasks in {got['wall']:.1f} s, {WORKERS} workers)",
        ),
    ]


if __name__ == "__main__":
    argv = sys.argv[1:]
    count = int(argv[argv.index("--tasks") + 1]) if "--tasks" in argv else TASKS
    sys.exit(report(measure(1, count)))
