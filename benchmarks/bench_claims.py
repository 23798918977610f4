"""Benchmark: agents claiming and finishing the tasks of one commit, on both stores.

A plan of 10,000 tasks (100 threads of 100 tasks, each task depending on up to three
earlier tasks of its thread) is committed, then 16 worker processes loop: claim a
task, report it done, until no work is left.  On SQLite (the embedded store) and on
PostgreSQL (a server this script starts from Debian's binaries in a temporary
directory, with its default durability settings, listening on a Unix socket only):

* every run is checked from the workers' shared log: no task claimed twice, none lost,
  none claimed before all its dependencies were done (each worker logs "finishing X"
  before it reports X done and "claimed Y" after its claim returns, so a dependency's
  "finishing" line must come before any claim of its dependent);
* claims per second: 10,000 ÷ the time from the start signal until the last worker
  leaves (goal: at least 200/s on PostgreSQL, 50/s on SQLite; the ratio printed is
  200/s ÷ the rate, target 1 on PostgreSQL and 4 on SQLite);
* the same with workers killed (SIGKILL) at random moments and replaced, with a 3 s
  lease: the tasks they held return when the lease ends; a task is claimed again only
  after its holder was killed or its lease ended (a worker that finds its claim taken
  over logs that it lost it); the table reports the tasks claimed early, twice or
  lost (target 0), and the rate, which includes the waits for leases to end.

It also measures validation against reading: ``check_dir`` of a directory of 10,000
task files ÷ opening, reading and decoding the same files (target: at most 5).

``--tasks N`` changes the plan's size (default 10,000), ``--rounds N`` the rounds of
the validation ratio.  Prints the figures and the ratios; exits 0.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from _bench import Result, interleaved, log, report, require, rounds_from_argv
from plankit.agentflow.control import ControlPlane
from plankit.agentflow.validate import check_dir

WORKERS = 16
THREAD_SIZE = 100  # the spec's two-digit sort index: at most 100 tasks per thread
GOAL = 200.0  # claims per second on PostgreSQL

_WORKER = """
import os, sys, time
from plankit.agentflow.control import ControlPlane
from plankit.agentflow.records import ControlError
start, name, sid, log, lease = sys.argv[1:6]
out = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
open(f"{start}.ready.{name}", "w").close()
while not os.path.exists(start):
    time.sleep(0.002)
plane = ControlPlane()
while True:
    got = plane.claim(sid, agent=name, lease=float(lease))
    if got.task is None:
        if got.remaining == 0:
            break
        time.sleep(0.01)
        continue
    ref = got.task.ref
    os.write(out, f"claimed {ref} {name}\\n".encode())
    os.write(out, f"finishing {ref} {name}\\n".encode())
    try:
        plane.done(ref, sid, claim=got.task.claim)
    except ControlError as exc:  # the lease ended first: another worker has it now
        if exc.rule != "task-not-held":
            raise
        os.write(out, f"lost {ref} {name}\\n".encode())
        continue
    os.write(out, f"finished {ref} {name}\\n".encode())
"""


# --- a PostgreSQL server of the benchmark's own --------------------------------------------


def _postgres_bin() -> str | None:
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.access(os.path.join(candidate, "initdb"), os.X_OK):
            return candidate
    found = shutil.which("initdb")
    return os.path.dirname(os.path.realpath(found)) if found else None


@contextlib.contextmanager
def postgres() -> Iterator[str | None]:
    """A running server's URL, or ``None`` when PostgreSQL is not installed."""
    bindir = _postgres_bin()
    if bindir is None:
        yield None
        return
    prefix: list[str] = []
    base = tempfile.mkdtemp(prefix="bench-claims-pg-")
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        user = pwd.getpwnam("postgres")
        prefix = ["runuser", "-u", "postgres", "--"]
        os.chown(base, user.pw_uid, user.pw_gid)
    data = os.path.join(base, "data")

    def run(*args: str) -> None:
        subprocess.run([*prefix, *args], check=True, capture_output=True, timeout=120, cwd=base)

    try:
        run(f"{bindir}/initdb", "-D", data, "-U", "agentflow", "--auth=trust", "-E", "UTF8")
        options = f"-k {base} -c listen_addresses='' -c max_connections=100"
        run(f"{bindir}/pg_ctl", "-D", data, "-o", options, "-l", f"{base}/log", "-w", "start")
        import psycopg

        url = f"postgresql:///agentflow?host={base}&user=agentflow"
        with psycopg.connect(url.replace("/agentflow?", "/postgres?"), autocommit=True) as conn:
            conn.execute("CREATE DATABASE agentflow")
        yield url
    finally:
        with contextlib.suppress(Exception):
            run(f"{bindir}/pg_ctl", "-D", data, "-m", "fast", "-w", "stop")
        shutil.rmtree(base, ignore_errors=True)


# --- the plan and the run --------------------------------------------------------------------


def make_plan(plane: ControlPlane, count: int, seed: int = 15) -> tuple[str, dict[str, list[str]]]:
    """Commit a plan of ``count`` tasks; the session and each task's dependencies."""
    rng = random.Random(seed)
    context = plane.start_session()
    sid = context.session.session_id
    threads = [context.current]
    threads += [plane.request_thread_dir(sid) for _ in range((count - 1) // THREAD_SIZE)]
    deps: dict[str, list[str]] = {}
    for n, thread in enumerate(threads):
        directory = Path(thread.plan_dir)
        (directory / "plan.md").write_text(f'---\ntitle: "Part {n}"\n---\n\nWork.\n')
        size = min(THREAD_SIZE, count - n * THREAD_SIZE)
        for i in range(size):
            mine = sorted({f"t{rng.randrange(i)}" for _ in range(min(i, rng.randint(0, 3)))})
            text = f"---\nid: t{i}\ndepends_on: [{', '.join(mine)}]\n---\n\nDo task {i}.\n"
            (directory / "tasks" / f"{i:02d}-t{i}.md").write_text(text)
            deps[f"{thread.thread_id}/t{i}"] = [f"{thread.thread_id}/{d}" for d in mine]
    plane.commit(sid)
    return sid, deps


def check(
    lines: list[str], deps: dict[str, list[str]], killed: set[str], done: set[str]
) -> dict[str, int]:
    """The verdict of the log and of the database's states (``done``: the tasks done
    there): raises on a double claim, a lost task or a claim too early."""
    finishing: set[str] = set()
    claims: dict[str, list[str]] = {}
    finished: Counter[str] = Counter()
    lost_claims: set[tuple[str, str]] = set()
    early = 0
    for line in lines:
        kind, ref, name = line.split()
        if kind == "claimed":
            early += any(d not in finishing for d in deps[ref])
            claims.setdefault(ref, []).append(name)
        elif kind == "finishing":
            finishing.add(ref)
        elif kind == "lost":
            lost_claims.add((ref, name))
        else:
            finished[ref] += 1
    # A task may be claimed again only after its holder was killed or its lease ended
    # (the holder then learns it lost the claim).
    twice = sum(
        1
        for ref, names in claims.items()
        if any(n not in killed and (ref, n) not in lost_claims for n in names[:-1])
    )
    # lost: not done in the database; without kills, every task has its "finished" line
    lost = len(set(deps) - done) + (0 if killed else len(set(deps) - set(finished)))
    done_twice = sum(1 for n in finished.values() if n > 1)
    again = sum(len(names) - 1 for names in claims.values())
    require(early == 0, f"{early} tasks claimed before their dependencies were done")
    require(twice == 0, f"{twice} tasks claimed twice while their holder was alive")
    require(lost == 0 and done_twice == 0, f"{lost} tasks lost, {done_twice} done twice")
    return {
        "early": early,
        "twice": twice,
        "lost": lost,
        "claimed again": again,
        "lease ended": len(lost_claims),
    }


def run_workers(
    env: dict[str, str], sid: str, root: Path, *, kill: bool, lease: float
) -> tuple[float, list[str], set[str]]:
    """Run the workers to the end; seconds, the log's lines and the killed workers."""
    start, log_path = root / "go", root / "log"
    names = iter(f"w{n}" for n in range(10_000))
    killed: set[str] = set()
    rng = random.Random(7)

    def spawn() -> tuple[str, subprocess.Popen[bytes]]:
        name = next(names)
        args = [sys.executable, "-c", _WORKER, str(start), name, sid, str(log_path), str(lease)]
        return name, subprocess.Popen(args, env=env, stderr=subprocess.PIPE)

    workers = dict(spawn() for _ in range(WORKERS))
    deadline = time.monotonic() + 120
    while len(list(root.glob("go.ready.*"))) < WORKERS:
        require(time.monotonic() < deadline, "the workers did not start")
        time.sleep(0.01)
    started = time.perf_counter()
    start.touch()
    kills = 0
    while any(p.poll() is None for p in workers.values()):
        if kill and kills < 12:
            time.sleep(rng.uniform(0.2, 0.8))
            alive = [n for n, p in workers.items() if p.poll() is None]
            if alive:
                victim = rng.choice(alive)
                workers[victim].send_signal(signal.SIGKILL)
                workers[victim].wait()
                killed.add(victim)
                kills += 1
                name, process = spawn()
                workers[name] = process
        else:
            time.sleep(0.01)
    elapsed = time.perf_counter() - started
    for name, process in workers.items():
        err = process.stderr.read().decode() if process.stderr else ""
        require(name in killed or process.returncode == 0, f"worker {name} failed: {err}")
    return elapsed, log_path.read_text().splitlines(), killed


def claims_on(store: str, url: str | None, count: int) -> list[tuple[str, float, dict[str, int]]]:
    """Both runs (plain, and with workers killed) on one store."""
    results = []
    for kill in (False, True):
        root = Path(tempfile.mkdtemp(prefix="bench-claims-"))
        try:
            env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTFLOW_")}
            env["AGENTFLOW_HOME"] = str(root / "home")
            database = None
            if url is not None:
                import psycopg

                schema = f"s_{os.getpid()}_{int(kill)}"
                with psycopg.connect(url, autocommit=True) as conn:
                    conn.execute(f"CREATE SCHEMA {schema}")
                database = f"{url}&options=-csearch_path%3D{schema}"
                env["AGENTFLOW_DATABASE_URL"] = database
            plane = ControlPlane(root / "home", database=database)
            sid, deps = make_plan(plane, count)
            plane.close()
            label = f"{store}, workers killed" if kill else store
            log(f"claims: {label}: {count:,} tasks, {WORKERS} workers …")
            elapsed, lines, killed = run_workers(
                env, sid, root, kill=kill, lease=3.0 if kill else 300.0
            )
            _, statuses = ControlPlane(root / "home", database=database).progress(sid)
            done = {s.ref for s in statuses or () if s.state == "done"}
            verdict = check(lines, deps, killed, done)
            verdict["killed"] = len(killed)
            # claims the database counted beyond one per task: tasks that came back after
            # their holder died (a holder killed inside its claim never logged it)
            verdict["returned"] = sum(s.claims for s in statuses or ()) - len(deps)
            results.append((label, count / elapsed, verdict))
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return results


def _read_all(directory: Path) -> None:
    """What validation cannot do without: list the directory, open, read and decode."""
    (directory / "plan.md").read_bytes().decode()
    for entry in sorted(os.scandir(directory / "tasks"), key=lambda e: e.name):
        with open(entry.path, "rb") as handle:
            handle.read().decode("utf-8")


def measure(rounds: int = 5, count: int = 10_000) -> list[Result]:
    """The claim rates on both stores, checked, and the validation ratio."""
    from bench_agentflow import generate

    runs = claims_on("SQLite", None, count)
    with postgres() as url:
        if url is None:
            log("claims: PostgreSQL is not installed (apt-get install postgresql); skipped")
        else:
            runs += claims_on("PostgreSQL", url, count)
    root = Path(tempfile.mkdtemp(prefix="bench-claims-validate-"))
    try:
        directory = root / "10k"
        generate(directory, 10_000)
        check_dir(str(directory))
        log(f"claims: validation of 10,000 tasks against reading them, {rounds} rounds …")
        m = interleaved(
            {"validate": lambda: check_dir(str(directory)), "read": lambda: _read_all(directory)},
            rounds,
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"agentflow claims: {count:,} tasks, {WORKERS} worker processes")
    results = []
    for label, rate, verdict in runs:
        print(
            f"  {label:<28} {rate:7.0f} claims/s   claimed before dependencies done: "
            f"{verdict['early']}, claimed twice: {verdict['twice']}, lost: {verdict['lost']}, "
            f"workers killed: {verdict['killed']}, tasks claimed again after their lease "
            f"ended: {verdict['returned']} ({verdict['lease ended']} of live workers)"
        )
        if "killed" in label:
            # the measure is that nothing goes wrong; the rate includes the waits for
            # leases to end
            wrong = verdict["early"] + verdict["twice"] + verdict["lost"]
            results.append(
                Result(
                    f"agentflow claims, {label}: tasks early, twice or lost",
                    wrong,
                    0,
                    f"{verdict['killed']} workers killed, {verdict['returned']} tasks back "
                    f"after their lease, {rate:.0f} claims/s",
                )
            )
        else:
            # the goal is for the shared store; the embedded one is held to a quarter
            target = 1.0 if label == "PostgreSQL" else 4.0
            results.append(
                Result(
                    f"agentflow claims, {label}: {GOAL:.0f}/s ÷ claims/s",
                    GOAL / rate,
                    target,
                    f"{rate:.0f} claims/s; 0 early, 0 twice, 0 lost",
                )
            )
    print(f"  validate 10,000 tasks: {m['validate']:.3f} s, read them: {m['read']:.3f} s")
    results.append(
        Result(
            "agentflow check_dir 10,000 tasks ÷ reading the files",
            m["validate"] / m["read"],
            5.0,
            f"{m['validate'] * 1e3:.0f} ms ÷ {m['read'] * 1e3:.0f} ms",
        )
    )
    return results


if __name__ == "__main__":
    argv = sys.argv[1:]
    tasks = int(argv[argv.index("--tasks") + 1]) if "--tasks" in argv else 10_000
    sys.exit(report(measure(rounds_from_argv(5), tasks)))
