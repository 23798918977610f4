"""Benchmark: ``plankit board`` on a large project.

A generated project holds 100 TeDDy sessions of 20 turns (each turn a plan, a report
and a meta.yaml, the last turn awaiting execution), 50 PLAN.md checklists and 20
agentflow plan directories of 100 tasks (with a ``state.json`` of task states), beside
500 source files; agentflow's control plane (SQLite, in a home of its own) holds 20
sessions whose commit has 100 tasks, some claimed and done.  ``plankit board --port 0
--no-open --agentflow-home HOME`` runs over it as a subprocess, as a user starts it:

* ``/api/plans`` cold: the first request to a board just started (discovery, every
  summary, the imports the first summary needs), a new board each round, ÷ 1 s
  (target: at most 1);
* ``/api/plans`` warm: the same request again on a board that has answered it
  (summaries are cached against each plan's file signature), the median of 10
  requests, ÷ 50 ms (target: at most 1), and warm ÷ cold (target: at most 0.05, the
  ratio of the two targets);
* from a change to the event reaching a client of ``/api/events``: a step of a
  checklist marked done, a task state of an agentflow plan changed, a report written
  in a TeDDy session, a task of a control-plane session claimed or released by an
  agent (seen by polling, not by watching files), in turn; the 95th percentile ÷ 1 s
  (target: at most 1).

* the first list of a tree of 10,000 checklist files (``PLAN.md`` in 10,000
  directories): ``Catalog.plans`` as the board's first ``/api/plans`` calls it (a new
  catalog each round: the walk, and the plans it reads before listing the rest as
  being read) ÷ ``os.walk`` of the same tree listing its files, interleaved rounds
  (target: at most 5).

The files' pages are in the cache when timing starts (the generator has just written
them, and a first board has read them): "cold" is a board that has read nothing yet,
not a disk that has.  ``--rounds N`` sets the rounds (default 5; the latency takes
``12 × N`` changes).  Prints the figures and the ratios; exits 0.
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from _bench import Result, interleaved, log, report, require, rounds_from_argv
from bench_agentflow import generate as generate_agentflow
from plankit.agentflow.control import ControlPlane
from plans import generate_plan

BIN = Path(sys.executable).parent
SESSIONS, TURNS, CHECKLISTS, FLOWS, TASKS, SOURCES = 100, 20, 50, 20, 100, 500
CONTROL = 20
"""Sessions of the control plane, each with a commit of TASKS tasks."""
PLANS = SESSIONS + CHECKLISTS + FLOWS + CONTROL
SHAPE = (
    f"{SESSIONS}×{TURNS} turns, {CHECKLISTS} checklists, {FLOWS}×{TASKS} tasks, "
    f"{CONTROL}×{TASKS} tasks in the control plane"
)
WAIT = 60.0
"""Seconds before the benchmark gives up on a board that does not answer."""


def _report(title: str, turn: int, rng: random.Random) -> str:
    actions = []
    for n in range(1, rng.randint(3, 8)):
        kind = rng.choice(["CREATE", "EDIT", "READ", "EXECUTE"])
        outcome = "Failure 🔴" if rng.random() < 0.05 else "Success 🟢"
        actions.append(
            f"### {n}. `{kind}` src/mod_{turn}_{n}.py\n- **Status:** Approved ✅\n"
            f"- **Execution:** {outcome}\n- **Duration:** {rng.randint(1, 900)} ms\n\n"
        )
    return (
        f"# Execution Report: {title}\n- **Overall Status:** Completed 🟢\n"
        f"- **Actions:** {len(actions)} total\n\n## 4. Action Log\n\n" + "".join(actions)
    )


def _checklist(i: int, rng: random.Random) -> str:
    lines = [f"# Plan: Workstream {i}", "", f"Goal: deliver part {i} of the release", ""]
    marks = ["[x]", "[x]", "[/]", "[ ]", "[ ]", "[>]", "[!]"]
    for phase in range(1, 6):
        lines.append(f"### Phase {phase}: Stage {phase}")
        for step in range(1, 9):
            mark = rng.choice(marks)
            note = " — waiting for a review" if mark in ("[>]", "[!]") else ""
            lines.append(f"- {mark} {phase}.{step} Update Sheet{phase}!A{step}:F{step * 40}{note}")
        lines.append("")
    return "\n".join(lines)


def generate(root: Path, seed: int = 11) -> None:
    """The project (see the module documentation)."""
    rng = random.Random(seed)
    plan_texts = [generate_plan(6_000, actions=6, seed=s, invoke=False) for s in range(40)]
    for s in range(SESSIONS):
        session = root / ".teddy" / f"20260101-session-{s:03d}"
        for t in range(1, TURNS + 1):
            turn = session / f"{t:02d}"
            turn.mkdir(parents=True)
            text = plan_texts[(s * TURNS + t) % len(plan_texts)]
            (turn / "plan.md").write_text(text, encoding="utf-8")
            (turn / "meta.yaml").write_text(
                f'turn_id: "{t:02d}"\nagent: "Developer"\nmodel: "gpt-bench"\n'
                f"input_tokens: {rng.randint(1_000, 90_000)}\noutput_tokens: 1200\n",
                encoding="utf-8",
            )
            if t < TURNS:
                title = text.splitlines()[0].lstrip("# ")
                (turn / "report.md").write_text(_report(title, t, rng), encoding="utf-8")
    for i in range(CHECKLISTS):
        where = root / "work" / f"stream-{i:02d}"
        where.mkdir(parents=True)
        name = "PLAN.md" if i % 2 else f"stream-{i:02d}.plan.md"
        (where / name).write_text(_checklist(i, rng), encoding="utf-8")
    for f in range(FLOWS):
        flow = root / "plans" / f"flow-{f:02d}"
        generate_agentflow(flow, TASKS, seed=f)
        states = {f"task-{k}": rng.choice(["done", "claimed", "pending"]) for k in range(TASKS)}
        (flow / "state.json").write_text(json.dumps(states), encoding="utf-8")
    for n in range(SOURCES):
        src = root / "src" / f"pkg{n % 25:02d}"
        src.mkdir(parents=True, exist_ok=True)
        (src / f"mod_{n}.py").write_text(f"VALUE = {n}\n" * 40, encoding="utf-8")


def generate_control(home: Path) -> list[str]:
    """The control plane's sessions (see the module documentation); their ids."""
    plane = ControlPlane(home)
    ids = []
    try:
        for n in range(CONTROL):
            context = plane.start_session()
            sid = context.session.session_id
            made = home.parent / f"session-{n:02d}"  # the plan dir is made with its tasks/
            generate_agentflow(made, TASKS, seed=100 + n)
            shutil.copytree(made, context.current.plan_dir, dirs_exist_ok=True)
            plane.set_topic(f"Workstream {n}", sid)
            plane.commit(sid)
            for _ in range(n % 4):
                claim = plane.claim(sid, agent="bench")
                if claim.task is not None:
                    plane.done(claim.task.ref, sid, claim=claim.task.claim)
            ids.append(sid)
    finally:
        plane.close()
    return ids


class Board:
    """``plankit board`` over the project, in a subprocess."""

    def __init__(self, root: Path) -> None:
        home = root.parent / "agentflow"
        env = {k: v for k, v in os.environ.items() if k != "AGENTFLOW_DATABASE_URL"}
        self.proc = subprocess.Popen(
            [
                BIN / "plankit",
                "board",
                str(root),
                "--port",
                "0",
                "--no-open",
                *("--agentflow-home", str(home)),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        assert self.proc.stdout is not None
        url = self.proc.stdout.readline().strip()
        require(url.startswith("http://127.0.0.1:"), f"the board printed {url!r}")
        self.port = int(url.rsplit(":", 1)[1].strip("/"))
        deadline = time.monotonic() + WAIT
        while self.status("/static/board.css") != 200:  # serving, no plan read yet
            require(time.monotonic() < deadline, "the board never answered")
            time.sleep(0.02)

    def status(self, path: str) -> int:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT)
            connection.request("GET", path)
            response = connection.getresponse()
            response.read()
            connection.close()
            return response.status
        except OSError:
            return 0

    def timed_get(self, connection: http.client.HTTPConnection, path: str) -> tuple[float, bytes]:
        started = time.perf_counter()
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        elapsed = time.perf_counter() - started
        require(response.status == 200, f"GET {path}: {response.status}")
        return elapsed, body

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def list_times(root: Path, rounds: int) -> tuple[list[float], list[float]]:
    """Cold and warm times of ``/api/plans``, a new board each round."""
    cold: list[float] = []
    warm: list[float] = []
    for _ in range(rounds):
        board = Board(root)
        try:
            connection = http.client.HTTPConnection("127.0.0.1", board.port, timeout=WAIT)
            elapsed, body = board.timed_get(connection, "/api/plans")
            found = json.loads(body)["plans"]
            require(len(found) == PLANS, f"{len(found)} plans listed, not {PLANS}")
            cold.append(elapsed)
            for _ in range(10):
                warm.append(board.timed_get(connection, "/api/plans")[0])
            connection.close()
        finally:
            board.stop()
    return cold, warm


class Listener:
    """A client of ``/api/events``: every event with the time it arrived."""

    def __init__(self, port: int) -> None:
        self.events: queue.Queue[tuple[float, dict[str, object]]] = queue.Queue()
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
        self.connection.request("GET", "/api/events")
        self.response = self.connection.getresponse()
        require(self.response.status == 200, "the event stream refused")
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for raw in self.response:
                line = raw.decode("utf-8").rstrip("\n")
                if line.startswith("data: "):
                    self.events.put((time.perf_counter(), json.loads(line[6:])))
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            return  # the stream was closed (http.client drops its file: AttributeError)

    def wait_for(self, plan_id: str, since: float) -> float:
        """Seconds from ``since`` to the first event about ``plan_id``."""
        deadline = time.monotonic() + WAIT
        while True:
            left = deadline - time.monotonic()
            require(left > 0, f"no event for {plan_id}")
            arrived, event = self.events.get(timeout=left)
            plan = event.get("plan")
            if isinstance(plan, dict) and plan.get("id") == plan_id:
                return arrived - since

    def close(self) -> None:
        self.connection.close()


def _variants(
    root: Path, plane: ControlPlane, sid: str
) -> list[tuple[str, str, Callable[[int], None]]]:
    """(kind, plan id, change) of the changes the latency rounds make, in turn: files
    rewritten with the other of two texts, so every write is a change, and a task of a
    control-plane session claimed, then released."""
    checklist = root / "work" / "stream-07" / "PLAN.md"
    text = checklist.read_text(encoding="utf-8")
    first = next(line for line in text.splitlines() if " 1.1 " in line)
    flipped = first.replace(first[2:5], "[ ]" if first[2:5] == "[x]" else "[x]")
    states_file = root / "plans" / "flow-03" / "state.json"
    states = json.loads(states_file.read_text(encoding="utf-8"))
    other = dict(states, **{"task-0": "claimed" if states["task-0"] == "done" else "done"})
    report_file = root / ".teddy" / "20260101-session-042" / "20" / "report.md"
    rng = random.Random(5)
    reports = (_report("The last turn", 20, rng), _report("The last turn", 20, rng))
    held: list[str] = []

    def rewrite(path: Path, texts: tuple[str, str]) -> Callable[[int], None]:
        return lambda n: path.write_text(texts[n % 2], encoding="utf-8")

    def work(n: int) -> None:
        if held:
            plane.release(held.pop(), sid)
        else:
            claim = plane.claim(sid, agent="bench")
            require(claim.task is not None, "no task left to claim")
            assert claim.task is not None
            held.append(claim.task.ref)

    return [
        ("checklist", "checklist:work/stream-07/PLAN.md",
         rewrite(checklist, (text, text.replace(first, flipped, 1)))),
        ("agentflow", "agentflow:plans/flow-03",
         rewrite(states_file, (json.dumps(states), json.dumps(other)))),
        ("teddy", "teddy:.teddy/20260101-session-042",
         rewrite(report_file, reports)),
        ("session", f"agentflow:@session/{sid}", work),
    ]  # fmt: skip


def latencies(root: Path, count: int, sid: str) -> dict[str, list[float]]:
    """Change-to-event latencies by kind, over ``count`` changes."""
    board = Board(root)
    by_kind: dict[str, list[float]] = {"checklist": [], "agentflow": [], "teddy": [], "session": []}
    plane = ControlPlane(root.parent / "agentflow")
    try:
        board.timed_get(http.client.HTTPConnection("127.0.0.1", board.port), "/api/plans")
        listener = Listener(board.port)
        hello = listener.events.get(timeout=WAIT)[1]
        require(hello.get("type") == "hello", f"the stream began with {hello}")
        variants = _variants(root, plane, sid)
        for n in range(count):
            kind, plan_id, change = variants[n % len(variants)]
            started = time.perf_counter()
            change(n // len(variants) + 1)
            by_kind[kind].append(listener.wait_for(plan_id, started))
        listener.close()
    finally:
        plane.close()
        board.stop()
    return by_kind


MANY = 10_000
"""Checklist files of the big tree."""


def generate_many(root: Path) -> None:
    """``MANY`` directories, each with a small PLAN.md."""
    for i in range(MANY):
        folder = root / f"pkg{i // 100:03d}" / f"mod{i % 100:02d}"
        folder.mkdir(parents=True)
        (folder / "PLAN.md").write_text(
            f"# Plan: Module {i}\n\nGoal: ship module {i}\n\n### Phase 1: Build\n"
            "- [x] 1.1 Write it\n- [/] 1.2 Test it\n- [ ] 1.3 Ship it\n"
        )


def first_list(root: Path, rounds: int) -> tuple[float, float]:
    """Median seconds of a new catalog's first list, and of a plain walk, of ``root``."""
    from plankit.board.catalog import FIRST_READS, Catalog

    def board() -> None:
        found = Catalog(root).plans(FIRST_READS)
        require(len(found) == MANY, f"{len(found)} plans listed, not {MANY}")

    def walk() -> None:
        files = sum(len(names) for _, _, names in os.walk(root))
        require(files == MANY, f"{files} files walked, not {MANY}")

    board()  # the imports, not timed
    times = interleaved({"board": board, "walk": walk}, rounds)
    return times["board"], times["walk"]


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[-1]


def measure(rounds: int = 5) -> list[Result]:
    """The cold and warm list, and the change-to-event latency."""
    root = Path(tempfile.mkdtemp(prefix="bench-board-"))
    try:
        log(f"board: generating a project of {SHAPE} …")
        generate(root / "project")
        sessions = generate_control(root / "agentflow")
        project = root / "project"
        list_times(project, 1)  # the page cache and the interpreter's files, not timed
        log(f"board: /api/plans cold and warm, {rounds} rounds …")
        cold, warm = list_times(project, rounds)
        log(f"board: change to event, {12 * rounds} changes …")
        lat = latencies(project, 12 * rounds, sessions[3])
        log(f"board: first list of {MANY} checklists ÷ a walk, {2 * rounds} rounds …")
        generate_many(root / "many")
        big, walked = first_list(root / "many", 2 * rounds)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    cold_s, warm_s = statistics.median(cold), statistics.median(warm)
    every = [v for values in lat.values() for v in values]
    print(f"board on {PLANS} plans ({SHAPE})")
    print(f"  /api/plans cold: {cold_s * 1e3:7.1f} ms   (median of {len(cold)}; target <= 1 s)")
    print(f"  /api/plans warm: {warm_s * 1e3:7.1f} ms   (median of {len(warm)}; target <= 50 ms)")
    for kind, values in lat.items():
        print(
            f"  change to event, {kind:9}: median {statistics.median(values) * 1e3:6.1f} ms, "
            f"max {max(values) * 1e3:6.1f} ms ({len(values)} changes)"
        )
    print(f"  change to event, all: p95 {p95(every) * 1e3:6.1f} ms (target <= 1 s)")
    print(f"  first list of {MANY} checklists: {big * 1e3:7.1f} ms, a walk {walked * 1e3:.1f} ms")
    return [
        Result("board /api/plans cold ÷ 1 s", cold_s, 1.0, f"{cold_s * 1e3:.0f} ms, {PLANS} plans"),
        Result("board /api/plans warm ÷ 50 ms", warm_s / 0.05, 1.0, f"{warm_s * 1e3:.1f} ms"),
        Result(
            "board /api/plans warm ÷ cold",
            warm_s / cold_s,
            0.05,
            f"{warm_s * 1e3:.1f} ms ÷ {cold_s * 1e3:.0f} ms",
        ),
        Result(
            f"board first list of {MANY:,} plan files ÷ os.walk",
            big / walked,
            5.0,
            f"{big * 1e3:.0f} ms ÷ {walked * 1e3:.0f} ms",
        ),
        Result(
            "board change on disk to event, p95 ÷ 1 s",
            p95(every),
            1.0,
            f"{p95(every) * 1e3:.0f} ms over {len(every)} changes",
        ),
    ]


if __name__ == "__main__":
    sys.exit(report(measure(rounds_from_argv(5))))
