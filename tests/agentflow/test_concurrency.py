"""Concurrent allocation: 8 processes × 20 requests on one session, nothing lost or shared."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from plankit.agentflow.control import ControlPlane
from tests.waiting import wait_until

from .test_workflow import agentctl_path

PROCESSES = 8
REQUESTS = 20
SHELL_REQUESTS = 10  # each agentctl run is a new Python process: half as many keeps it quick

# Each worker says it is ready (a file named after the start file and its pid), then
# waits for the start file, so that all of them request at the same moment.
_WORKER = """
import json, os, sys, time
from plankit.agentflow.control import ControlPlane
start = sys.argv[1]
open(f"{{start}}.ready.{{os.getpid()}}", "w").close()
while not os.path.exists(start):
    time.sleep(0.005)
plane = ControlPlane()
for _ in range({requests}):
    thread = plane.request_thread_dir()
    print(json.dumps({{"thread_id": thread.thread_id, "plan_dir": thread.plan_dir}}), flush=True)
"""

_SHELL_WORKER = """
touch "$1.ready.$$"
while [ ! -e "$1" ]; do sleep 0.01; done
i=0
while [ $i -lt {requests} ]; do "$2" plan request-thread-dir || exit 1; i=$((i+1)); done
"""


def _env(home: Path, session_id: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTFLOW_")}
    env.update(AGENTFLOW_HOME=str(home), AGENTFLOW_SESSION_ID=session_id)
    return env


def _check(home: Path, session_id: str, outputs: list[str], requests: int) -> None:
    total = PROCESSES * requests
    allocations = [json.loads(line) for out in outputs for line in out.splitlines()]
    assert len(allocations) == total
    assert len({a["thread_id"] for a in allocations}) == total
    assert len({a["plan_dir"] for a in allocations}) == total
    assert all(Path(a["plan_dir"]).is_dir() for a in allocations)
    recorded = ControlPlane(home).context(session_id).additional
    assert {(t.thread_id, t.plan_dir) for t in recorded} == {
        (a["thread_id"], a["plan_dir"]) for a in allocations
    }
    with sqlite3.connect(home / "agentflow.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        count = conn.execute(
            "SELECT COUNT(*) FROM threads WHERE session_id = ? AND kind = 'additional'",
            (session_id,),
        ).fetchone()
    assert count == (total,)


def _race(commands: list[list[str]], env: dict[str, str], start: Path) -> list[str]:
    workers = [
        subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for cmd in commands
    ]
    wait_until(  # (a worker that died early is reported below, with its error)
        lambda: (
            len(list(start.parent.glob(f"{start.name}.ready.*"))) == len(workers)
            or any(worker.poll() is not None for worker in workers)
        ),
        "every worker to be ready",
    )
    start.touch()
    outputs = []
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
        outputs.append(out)
    return outputs


def test_eight_processes_of_the_library_never_share_a_thread(tmp_path: Path) -> None:
    home = tmp_path / "home"
    session_id = ControlPlane(home).start_session().session.session_id
    start = tmp_path / "go"
    code = _WORKER.format(requests=REQUESTS)
    outputs = _race(
        [[sys.executable, "-c", code, str(start)] for _ in range(PROCESSES)],
        _env(home, session_id),
        start,
    )
    _check(home, session_id, outputs, REQUESTS)


def test_eight_agentctl_loops_never_share_a_thread(tmp_path: Path) -> None:
    home = tmp_path / "home"
    session_id = ControlPlane(home).start_session().session.session_id
    start = tmp_path / "go"
    script = _SHELL_WORKER.format(requests=SHELL_REQUESTS)
    outputs = _race(
        [["sh", "-c", script, "worker", str(start), agentctl_path()] for _ in range(PROCESSES)],
        _env(home, session_id),
        start,
    )
    _check(home, session_id, outputs, SHELL_REQUESTS)


_STARTER = """
import json, os, sys, time
from plankit.agentflow.control import ControlPlane
from plankit.agentflow.records import ControlError
start, worker = sys.argv[1], sys.argv[2]
open(f"{{start}}.ready.{{os.getpid()}}", "w").close()
while not os.path.exists(start):
    time.sleep(0.005)
plane = ControlPlane()
for i in range({requests}):
    for agent_id in (f"agent-{{worker}}-{{i}}", f"shared-{{i}}"):
        try:
            context = plane.start_session(agent_id)
            print(json.dumps({{"agent": agent_id, "session": context.session.session_id}}))
        except ControlError as exc:
            print(json.dumps({{"agent": agent_id, "rule": exc.rule}}))
"""


def test_concurrent_session_starts_read_then_write_without_losing_any(
    tmp_path: Path, store: str
) -> None:
    # start_session reads (is the agent id taken?) then writes: on SQLite only a
    # transaction that takes the write lock first (BEGIN IMMEDIATE) keeps this safe; on
    # PostgreSQL the UNIQUE constraint refuses the second insert, reported as
    # session-exists like the check.
    home = tmp_path / "home"
    start = tmp_path / "go"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTFLOW_")}
    env["AGENTFLOW_HOME"] = str(home)
    if "AGENTFLOW_DATABASE_URL" in os.environ:
        env["AGENTFLOW_DATABASE_URL"] = os.environ["AGENTFLOW_DATABASE_URL"]
    ControlPlane(home).sessions()  # create the database first
    code = _STARTER.format(requests=REQUESTS // 2)
    outputs = _race(
        [[sys.executable, "-c", code, str(start), str(n)] for n in range(PROCESSES)], env, start
    )
    results = [json.loads(line) for out in outputs for line in out.splitlines()]
    own = [r for r in results if r["agent"].startswith("agent-")]
    shared = [r for r in results if r["agent"].startswith("shared-")]
    assert all("session" in r for r in own), [r for r in own if "session" not in r][:3]
    for i in range(REQUESTS // 2):
        group = [r for r in shared if r["agent"] == f"shared-{i}"]
        outcomes = sorted(r.get("rule", "won") for r in group)
        assert outcomes == ["session-exists"] * (PROCESSES - 1) + ["won"]
    listed = ControlPlane(home).sessions()
    assert len(listed) == len(own) + REQUESTS // 2
    assert len({s.session.session_id for s in listed}) == len(listed)
