"""ACP: ``teddy acp`` start-up and plan updates through a real stdio pipe.

1. **Spawn → initialize answer.** ``teddy acp`` (the console script) is spawned, sent
   ``initialize`` and timed until its answer line arrives, then ``session/new`` until
   its answer (the first request that needs the SDK, which loads in the background
   meanwhile, see :mod:`plankit.acp.stdio`); target ≤ 1.5 s each, reported as the
   time ÷ 1.5 s (≤ 1).  In the same interleaved rounds: ``python -c "import acp"``
   and ``python -c pass``, to say how much is the SDK's own import (``import acp`` −
   bare interpreter).
2. **Plan updates.** An agent subprocess (the SDK's ``AgentSideConnection``, sending
   through the same :func:`plankit.acp.updates.send_update` as ``teddy acp``) answers one
   prompt with N ``plan`` updates of 100 entries; the SDK client here counts them,
   validated into models, until the prompt's answer.  Target ≥ 500 updates/s, reported
   as 500 ÷ the rate (≤ 1).  Baseline in the same rounds: the same updates as plain
   JSON lines through the same kind of pipe, ``json.dumps`` → ``json.loads`` (the
   ratio SDK ÷ bare says what the SDK's models cost).
3. **Mapping a plan.** :func:`plankit.acp.entries.plan_update` of a plan of 100 entries
   (every status, so every kind of content note) ÷ ``json.dumps`` of the update it
   returns, in the same rounds: building an update must cost no more than writing it out
   (target ≤ 1), far inside the 2 ms one update has at 500 updates/s.

``--rounds N`` sets the rounds.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _bench import ROOT, Result, interleaved, log, report, require, rounds_from_argv

UPDATES = 300
ENTRIES = 100

_AGENT = r"""
import asyncio, sys
import acp
from acp.schema import InitializeResponse, NewSessionResponse, PromptResponse
from plankit.acp.entries import Entry, plan_update
from plankit.acp.updates import send_update

N, SIZE = int(sys.argv[1]), int(sys.argv[2])

class Flood:
    def on_connect(self, conn):
        self.conn = conn
    async def initialize(self, protocol_version, **kw):
        return InitializeResponse(protocol_version=1)
    async def new_session(self, cwd, **kw):
        return NewSessionResponse(session_id="bench")
    async def prompt(self, session_id, prompt, **kw):
        for n in range(N):
            at = n % SIZE
            entries = [
                Entry(str(i), f"Task {i}: do the thing number {i}",
                      "completed" if i < at else "in_progress" if i == at else "pending")
                for i in range(SIZE)
            ]
            await send_update(self.conn, session_id, plan_update(entries, kind="bench"))
        return PromptResponse(stop_reason="end_turn")

asyncio.run(acp.run_agent(Flood()))
"""

_RAW = r"""
import json, sys
from plankit.acp.entries import Entry, plan_update
N, SIZE = int(sys.argv[1]), int(sys.argv[2])
sys.stdin.readline()
out = sys.stdout
for n in range(N):
    entries = [
        Entry(str(i), f"Task {i}: do the thing number {i}",
              "completed" if i < n % SIZE else "in_progress" if i == n % SIZE else "pending")
        for i in range(SIZE)
    ]
    message = {"jsonrpc": "2.0", "method": "session/update",
               "params": {"sessionId": "bench", "update": plan_update(entries, kind="bench")}}
    out.write(json.dumps(message, separators=(",", ":")) + "\n")
out.flush()
"""


def _teddy() -> str:
    script = Path(sys.executable).parent / "teddy"
    require(script.exists(), f"no teddy script next to {sys.executable}; pip install -e .")
    return str(script)


_init: list[float] = []
_ready: list[float] = []


def _initialize_once(teddy: str, project: str) -> None:
    """Spawn ``teddy acp``; record the time to its initialize answer and to its
    session/new answer (the SDK loaded)."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [teddy, "acp"],
        cwd=project,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    request = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    proc.stdin.write((json.dumps(request) + "\n").encode())
    proc.stdin.flush()
    answer = json.loads(proc.stdout.readline())
    _init.append(time.perf_counter() - started)
    require(answer.get("result", {}).get("protocolVersion") == 1, f"bad answer {answer}")
    params = {"cwd": project, "mcpServers": []}
    request = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": params}
    proc.stdin.write((json.dumps(request) + "\n").encode())
    proc.stdin.flush()
    answer = json.loads(proc.stdout.readline())
    _ready.append(time.perf_counter() - started)
    require("sessionId" in answer.get("result", {}), f"bad answer {answer}")
    proc.stdin.close()
    proc.wait(timeout=10)


def _run(argv: list[str]) -> None:
    subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def startup(rounds: int) -> list[Result]:
    import statistics
    import tempfile

    teddy = _teddy()
    with tempfile.TemporaryDirectory(prefix="plankit-acp-bench-") as project:
        cases = {
            "teddy acp": lambda: _initialize_once(teddy, project),
            "import acp": lambda: _run([sys.executable, "-c", "import acp"]),
            "python": lambda: _run([sys.executable, "-c", "pass"]),
        }
        for func in cases.values():  # warm up
            func()
        _init.clear()
        _ready.clear()
        log(f"acp start-up: {rounds} rounds …")
        m = interleaved(cases, rounds)
    spawn, ready = statistics.median(_init), statistics.median(_ready)
    sdk, bare = m["import acp"], m["python"]
    return [
        Result(
            "teddy acp: spawn → initialize answer ÷ 1.5 s",
            spawn / 1.5,
            1.0,
            f"{spawn * 1e3:.0f} ms (answered before the SDK is loaded); the bare "
            f"interpreter starts in {bare * 1e3:.0f} ms",
        ),
        Result(
            "teddy acp: spawn → session/new answer ÷ 1.5 s",
            ready / 1.5,
            1.0,
            f"{ready * 1e3:.0f} ms, of which the SDK's import ({sdk * 1e3:.0f} ms − "
            f"{bare * 1e3:.0f} ms) is {(sdk - bare) / ready:.0%}",
        ),
    ]


class _Counter:
    def __init__(self) -> None:
        self.count = 0
        self.all_in = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.count += 1
        if self.count == UPDATES:
            self.all_in.set()

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
        raise RuntimeError("not asked in this benchmark")


async def _flood_sdk() -> int:
    from acp import spawn_agent_process

    counter = _Counter()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    async with spawn_agent_process(
        counter,  # type: ignore[arg-type]
        sys.executable,
        "-c",
        _AGENT,
        str(UPDATES),
        str(ENTRIES),
        env=env,
        transport_kwargs={"stderr": None},
    ) as (conn, _):
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=str(ROOT), mcp_servers=[])
        started = time.perf_counter()
        await conn.prompt(session_id=session.session_id, prompt=[{"type": "text", "text": "go"}])
        await asyncio.wait_for(counter.all_in.wait(), 60)  # every update handled
        elapsed = time.perf_counter() - started
    require(counter.count == UPDATES, f"got {counter.count} of {UPDATES} updates")
    _elapsed.append(elapsed)
    return counter.count


def _flood_raw() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _RAW, str(UPDATES), str(ENTRIES)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"go\n")
    proc.stdin.flush()
    first = proc.stdout.readline()
    started = time.perf_counter()
    count = 1 if first else 0
    json.loads(first)
    for line in proc.stdout:
        json.loads(line)
        count += 1
    elapsed = time.perf_counter() - started
    proc.wait()
    require(count == UPDATES, f"raw: got {count} of {UPDATES}")
    _raw_elapsed.append(elapsed * UPDATES / max(UPDATES - 1, 1))


_elapsed: list[float] = []
_raw_elapsed: list[float] = []


def updates(rounds: int) -> list[Result]:
    import statistics

    _elapsed.clear()
    _raw_elapsed.clear()
    cases = {
        "sdk": lambda: asyncio.run(_flood_sdk()),
        "raw": _flood_raw,
    }
    log(f"acp plan updates: {UPDATES} updates of {ENTRIES} entries, {rounds} rounds …")
    interleaved(cases, rounds)  # the process start-up is outside the timed part
    sdk = statistics.median(_elapsed)
    raw = statistics.median(_raw_elapsed)
    rate = UPDATES / sdk
    return [
        Result(
            f"plan updates of {ENTRIES} entries through stdio: 500/s ÷ rate",
            500 / rate,
            1.0,
            f"{rate:.0f} updates/s end to end (SDK agent → pipe → SDK client)",
        ),
        Result(
            "plan updates: SDK both ends ÷ bare JSON lines",
            sdk / raw,
            10.0,
            f"{sdk * 1e3 / UPDATES:.2f} ms ÷ {raw * 1e3 / UPDATES:.2f} ms per update",
        ),
    ]


def mapping(rounds: int) -> list[Result]:
    from plankit.acp.entries import STATUSES, Entry, plan_update

    statuses = list(STATUSES)
    entries = [
        Entry(str(i), f"Task {i}: do the thing number {i}", statuses[i % len(statuses)])
        for i in range(ENTRIES)
    ]
    update = plan_update(entries, kind="bench")
    require(len(update["entries"]) == ENTRIES, "plan_update lost entries")
    batch = 200

    def build() -> None:
        for _ in range(batch):
            plan_update(entries, kind="bench")

    def write() -> None:
        for _ in range(batch):
            json.dumps(update)

    cases = {"plan_update": build, "json.dumps": write}
    log(f"acp plan mapping: {ENTRIES} entries × {batch}, {rounds} rounds …")
    m = interleaved(cases, rounds)
    per = m["plan_update"] / batch
    return [
        Result(
            f"plan_update of {ENTRIES} entries ÷ json.dumps of the update",
            m["plan_update"] / m["json.dumps"],
            1.0,
            f"{per * 1e3:.3f} ms per plan; one update has 2 ms at 500/s",
        )
    ]


def measure(rounds: int = 15) -> list[Result]:
    return startup(max(10, rounds)) + updates(max(3, rounds // 3)) + mapping(rounds)


if __name__ == "__main__":
    sys.exit(report(measure(rounds_from_argv(15))))
