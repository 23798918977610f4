"""Work tracking on both stores: claims, leases, done and failed tasks, new commits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from plankit.agentflow.control import ControlPlane
from plankit.agentflow.records import ControlError
from tests.waiting import wait_until

from .helpers import task, write, write_plan

Planes = Callable[[], ControlPlane]


def _session(plane: ControlPlane, tasks: dict[str, list[str]], title: str = "Plan") -> str:
    """A session whose current thread has ``tasks`` (id: dependencies), committed."""
    context = plane.start_session()
    directory = Path(context.current.plan_dir)
    write_plan(
        directory,
        title=title,
        tasks={f"{i:02d}-{tid}.md": task(tid, deps) for i, (tid, deps) in enumerate(tasks.items())},
    )
    plane.commit(context.session.session_id)
    return context.session.session_id


def _states(plane: ControlPlane, sid: str) -> dict[str, str]:
    _, statuses = plane.progress(sid)
    assert statuses is not None
    return {s.ref: ("ready" if s.claimable else s.state) for s in statuses}


def test_claims_follow_dependencies_and_done_unlocks_dependents(planes: Planes) -> None:
    plane = planes()
    sid = _session(plane, {"a": [], "b": [], "c": ["a", "b"], "d": ["c"]})
    assert _states(plane, sid) == {
        "thread_1/a": "ready",
        "thread_1/b": "ready",
        "thread_1/c": "waiting",
        "thread_1/d": "waiting",
    }
    first = plane.claim(sid, agent="w1")
    second = plane.claim(sid, agent="w2")
    assert first.task is not None and second.task is not None
    assert (first.task.task_id, second.task.task_id) == ("a", "b")
    assert first.task.holder == "w1" and first.task.claim and first.task.claim != second.task.claim
    assert first.remaining == second.remaining == 4
    nothing = plane.claim(sid)
    assert nothing.task is None and nothing.remaining == 4  # c waits for a and b
    plane.done(first.task.ref, sid, claim=first.task.claim)
    assert plane.claim(sid).task is None  # still waits for b
    plane.done(second.task.ref, sid)
    third = plane.claim(sid)
    assert third.task is not None and third.task.task_id == "c" and third.remaining == 2
    assert third.task.spec["depends_on"] == ["a", "b"]
    assert third.task.spec["file"] == "tasks/02-c.md" and third.task.spec["title"] == "Plan"
    plane.done(third.task.ref, sid)
    last = plane.claim(sid)
    assert last.task is not None and last.task.task_id == "d"
    plane.done("d", sid)  # a bare task id, unique in the session
    over = plane.claim(sid)
    assert (over.task, over.remaining) == (None, 0)
    assert set(_states(plane, sid).values()) == {"done"}


def test_the_claim_json_shape(planes: Planes) -> None:
    plane = planes()
    sid = _session(plane, {"a": []})
    data = plane.claim(sid, agent="w1", lease=120).to_dict()
    assert set(data) == {"task", "remaining"} and data["remaining"] == 1
    claimed = data["task"]
    assert isinstance(claimed, dict)
    assert claimed["ref"] == "thread_1/a" and claimed["state"] == "claimed"
    assert {"claim", "holder", "host", "lease_expires_at", "plan_dir", "file", "body"} <= set(
        claimed
    )
    assert json.loads(json.dumps(data)) == data
    assert plane.claim(sid).to_dict() == {"task": None, "remaining": 1}


def test_an_expired_lease_returns_the_task_and_the_old_claim_is_refused(planes: Planes) -> None:
    plane = planes()
    sid = _session(plane, {"a": [], "b": ["a"]})
    first = plane.claim(sid, agent="slow", lease=1)
    assert first.task is not None
    found: list[object] = []
    wait_until(
        lambda: found.append(plane.claim(sid, agent="fast").task) or found[-1] is not None,
        "the lease to end and the task to be claimable again",
    )
    again = found[-1]
    assert again is not None and again.ref == first.task.ref  # type: ignore[attr-defined]
    assert again.claim != first.task.claim and again.claims == 2  # type: ignore[attr-defined]
    with pytest.raises(ControlError) as info:
        plane.done(first.task.ref, sid, claim=first.task.claim)
    assert info.value.rule == "task-not-held"
    assert "fast" in info.value.message
    plane.done(first.task.ref, sid, claim=again.claim)  # type: ignore[attr-defined]
    assert _states(plane, sid)["thread_1/b"] == "ready"


def test_heartbeat_extends_the_lease(planes: Planes) -> None:
    plane = planes()
    sid = _session(plane, {"a": []})
    claimed = plane.claim(sid, lease=60).task
    assert claimed is not None and claimed.lease_expires_at is not None
    longer = plane.heartbeat(claimed.ref, sid, claim=claimed.claim, lease=3600)
    assert longer.lease_expires_at is not None
    assert longer.lease_expires_at > claimed.lease_expires_at
    assert longer.claim == claimed.claim and longer.state == "claimed"
    with pytest.raises(ControlError) as info:
        plane.heartbeat(claimed.ref, sid, claim="someone-else")
    assert info.value.rule == "task-not-held"


def test_a_failure_blocks_dependents_and_release_reopens_it(planes: Planes) -> None:
    plane = planes()
    sid = _session(plane, {"a": [], "b": ["a"], "c": ["b"], "x": []})
    claimed = plane.claim(sid).task
    assert claimed is not None and claimed.task_id == "a"
    with pytest.raises(ControlError) as info:
        plane.fail(claimed.ref, "  ", sid)
    assert info.value.rule == "reason-missing"
    failed = plane.fail(claimed.ref, "the migration\ndoes not apply", sid)
    assert (failed.state, failed.reason) == ("failed", "the migration does not apply")
    assert _states(plane, sid) == {
        "thread_1/a": "failed",
        "thread_1/b": "blocked",
        "thread_1/c": "blocked",
        "thread_1/x": "ready",
    }
    assert plane.claim(sid).remaining == 1  # only x has work left
    for action in (plane.done, plane.release):
        with pytest.raises(ControlError) as info:
            action("thread_1/b", sid)
        assert info.value.rule == "task-state" and "blocked" in info.value.message
    reopened = plane.release("thread_1/a", sid)
    assert reopened.state == "ready" and reopened.reason is None
    assert _states(plane, sid)["thread_1/b"] == "waiting"


def test_release_gives_a_claimed_task_back(planes: Planes) -> None:
    plane = planes()
    sid = _session(plane, {"a": []})
    claimed = plane.claim(sid, agent="w1").task
    assert claimed is not None
    back = plane.release(claimed.ref, sid, claim=claimed.claim)
    assert (back.state, back.holder, back.claim) == ("ready", None, None)
    again = plane.claim(sid, agent="w2").task
    assert again is not None and again.holder == "w2"
    with pytest.raises(ControlError) as info:
        plane.release("thread_1/a", sid, claim=claimed.claim)
    assert info.value.rule == "task-not-held"


def test_a_task_assigned_to_an_agent_is_left_to_it(planes: Planes) -> None:
    plane = planes()
    context = plane.start_session()
    write_plan(
        Path(context.current.plan_dir),
        tasks={
            "01-a.md": "---\nid: a\nagent: codex\n---\n\nX\n",
            "02-b.md": "---\nid: b\n---\n\nY\n",
        },
    )
    sid = context.session.session_id
    plane.commit(sid)
    other = plane.claim(sid, agent="claude-code").task
    assert other is not None and other.task_id == "b"
    mine = plane.claim(sid, agent="codex").task
    assert mine is not None and mine.task_id == "a" and mine.spec["agent"] == "codex"


def test_a_new_commit_keeps_the_state_of_unchanged_tasks(planes: Planes) -> None:
    plane = planes()
    context = plane.start_session()
    sid = context.session.session_id
    directory = Path(context.current.plan_dir)
    write_plan(
        directory,
        tasks={
            "01-a.md": task("a"),
            "02-b.md": task("b"),
            "03-c.md": task("c", ["a"]),
            "04-d.md": task("d", ["b"]),
            "05-e.md": task("e"),
        },
    )
    plane.commit(sid)
    a = plane.claim(sid, agent="w").task
    b = plane.claim(sid, agent="w").task
    e = plane.claim(sid, agent="w").task
    assert a is not None and b is not None and e is not None
    plane.done(a.ref, sid)
    plane.fail(e.ref, "broken", sid)
    # b keeps its claim; c changes its dependencies; d is dropped; f is new
    write(directory / "tasks" / "03-c.md", task("c", ["a", "b"]))
    (directory / "tasks" / "04-d.md").unlink()
    write(directory / "tasks" / "06-f.md", task("f", ["a"]))
    write(directory / "tasks" / "01-a.md", task("a", body="Reworded, same task.\n"))
    plane.commit(sid)
    _, statuses = plane.progress(sid)
    assert statuses is not None
    by_id = {s.task_id: s for s in statuses}
    assert {k: v.state for k, v in by_id.items()} == {
        "a": "done",
        "b": "claimed",
        "c": "waiting",
        "e": "failed",
        "f": "ready",
    }
    assert by_id["b"].claim == b.claim and by_id["b"].holder == "w"
    assert by_id["e"].reason == "broken"
    assert by_id["a"].spec["body"] == "\nReworded, same task.\n" and by_id["a"].spec["commit"] == 2
    plane.done(b.ref, sid, claim=b.claim)
    assert _states(plane, sid)["thread_1/c"] == "ready"


def test_an_older_commit_is_shown_without_states(planes: Planes) -> None:
    plane = planes()
    context = plane.start_session()
    sid = context.session.session_id
    write_plan(Path(context.current.plan_dir), tasks={"01-a.md": task("a")})
    plane.commit(sid)
    plane.commit(sid)
    record, statuses = plane.progress(sid, 1)
    assert record.number == 1 and statuses is None
    assert plane.progress(sid)[1] is not None


def test_task_references(planes: Planes) -> None:
    plane = planes()
    context = plane.start_session()
    sid = context.session.session_id
    write_plan(Path(context.current.plan_dir), tasks={"01-a.md": task("a"), "02-b.md": task("b")})
    extra = plane.request_thread_dir(sid)
    write_plan(Path(extra.plan_dir), tasks={"01-a.md": task("a")})
    plane.commit(sid)
    with pytest.raises(ControlError) as info:
        plane.done("a", sid)
    assert info.value.rule == "task-ambiguous"
    assert f"thread_1/a, {extra.thread_id}/a" in info.value.message
    for ref in ("zzz", "thread_99/a", "../etc", "thread_1/", ""):
        with pytest.raises(ControlError) as info:
            plane.done(ref, sid)
        assert info.value.rule == "task-unknown"
    assert plane.done("b", sid).ref == "thread_1/b"
    assert plane.done(f"{extra.thread_id}/a", sid).state == "done"


def test_claiming_needs_a_commit_and_an_open_session(planes: Planes) -> None:
    plane = planes()
    sid = plane.start_session().session.session_id
    with pytest.raises(ControlError) as info:
        plane.claim(sid)
    assert info.value.rule == "commit-none"
    with pytest.raises(ControlError) as info:
        plane.claim(sid, lease=0.5)
    assert info.value.rule == "lease-invalid"
    ended = plane.end_session(sid)
    assert ended.ended_at is not None
    with pytest.raises(ControlError) as info:
        plane.claim(sid)
    assert info.value.rule == "session-ended"


# --- refusals: what an agent is told when a task command does not apply --------------------
# The whole message is the agent's only guide to its next step.


@pytest.fixture
def plane(home: Path) -> Iterator[ControlPlane]:
    made = ControlPlane()
    yield made
    made.close()


def _refusal(call: object, *args: object, **kwargs: object) -> tuple[str, str]:
    assert callable(call)
    with pytest.raises(ControlError) as info:
        call(*args, **kwargs)
    return info.value.rule, info.value.message


def test_each_state_says_why_the_action_does_not_apply(plane: ControlPlane) -> None:
    sid = _session(plane, {"a": [], "b": ["a"], "c": ["b"], "x": []})
    assert _refusal(plane.heartbeat, "thread_1/a", sid) == (
        "task-state",
        "cannot extend thread_1/a: it is ready (nobody has claimed it); extend applies to "
        "a task that is claimed",
    )
    assert _refusal(plane.release, "thread_1/a", sid) == (
        "task-state",
        "cannot release thread_1/a: it is ready (nobody has claimed it); release applies to "
        "a task that is claimed or failed",
    )
    assert _refusal(plane.done, "thread_1/b", sid) == (
        "task-state",
        "cannot finish thread_1/b: it is waiting (its dependencies are not done yet); finish "
        "applies to a task that is claimed or ready",
    )
    plane.done("thread_1/x", sid)
    assert _refusal(plane.fail, "thread_1/x", "too late", sid) == (
        "task-state",
        "cannot fail thread_1/x: it is done (there is nothing left to do); fail applies to a "
        "task that is claimed or ready",
    )
    plane.fail("thread_1/a", "the schema does not load", sid)
    assert _refusal(plane.heartbeat, "thread_1/a", sid) == (
        "task-state",
        "cannot extend thread_1/a: it is failed (it failed (the schema does not load); "
        "`agentctl task release` reopens it); extend applies to a task that is claimed",
    )
    assert _refusal(plane.release, "thread_1/c", sid) == (
        "task-state",
        "cannot release thread_1/c: it is blocked (a dependency failed; reopen that one with "
        "`agentctl task release`); release applies to a task that is claimed or failed",
    )


def test_a_claim_given_back_no_longer_holds_its_task(plane: ControlPlane) -> None:
    sid = _session(plane, {"a": []})
    got = plane.claim(sid, agent="w1").task
    assert got is not None and got.claim is not None
    plane.release(got.ref, sid, claim=got.claim)
    assert _refusal(plane.heartbeat, got.ref, sid, claim=got.claim) == (
        "task-not-held",
        f"claim {got.claim!r} no longer holds thread_1/a (it is ready); cannot extend it; "
        "claim another task",
    )
    again = plane.claim(sid, agent="w2").task
    assert again is not None
    plane.done(again.ref, sid, claim=again.claim)
    # done, and held by w2 last: the holder is named only while it holds the task
    assert _refusal(plane.fail, got.ref, "x", sid, claim=got.claim) == (
        "task-not-held",
        f"claim {got.claim!r} no longer holds thread_1/a (it is done); cannot fail it; "
        "claim another task",
    )


def test_a_claim_whose_lease_ended_is_told_who_holds_the_task_now(plane: ControlPlane) -> None:
    sid = _session(plane, {"a": []})
    slow = plane.claim(sid, agent="slow", lease=1).task
    assert slow is not None
    found: list[object] = []
    wait_until(
        lambda: found.append(plane.claim(sid, agent="fast").task) or found[-1] is not None,
        "the lease to end and the task to be claimed again",
    )
    assert _refusal(plane.release, slow.ref, sid, claim=slow.claim) == (
        "task-not-held",
        f"claim {slow.claim!r} no longer holds thread_1/a (it is claimed by fast, after the "
        "lease ended); cannot release it; claim another task",
    )


def test_a_reference_that_names_no_task_says_how_to_write_one(plane: ControlPlane) -> None:
    sid = _session(plane, {"setup-db": []})
    assert _refusal(plane.done, "thread_1/Setup_DB", sid) == (
        "task-unknown",
        "'thread_1/Setup_DB' is not a task reference; write <thread_id>/<task_id>, as "
        "`agentctl task claim` prints it (for example thread_1/setup-db)",
    )
    assert _refusal(plane.done, "thread_2/setup-db", sid) == (
        "task-unknown",
        f"no task 'thread_2/setup-db' in the latest commit of session {sid}; "
        "`agentctl plan show` lists its tasks",
    )
    # with the claim an agent holds (done's one-call path first)
    assert _refusal(plane.done, "../setup-db", sid, claim="0123456789abcdef") == (
        "task-unknown",
        "'../setup-db' is not a task reference; write <thread_id>/<task_id>, as "
        "`agentctl task claim` prints it (for example thread_1/setup-db)",
    )
    exactly = "a" * 80
    assert _refusal(plane.done, exactly, sid)[1].startswith(f"no task {exactly!r} in ")
    longer = "b" * 81
    assert _refusal(plane.done, longer, sid)[1].startswith(f"no task {'b' * 79 + '…'!r} in ")


def test_a_task_id_in_two_threads_asks_for_the_thread(plane: ControlPlane) -> None:
    context = plane.start_session()
    sid = context.session.session_id
    write_plan(Path(context.current.plan_dir), tasks={"01-a.md": task("deploy")})
    extra = plane.request_thread_dir(sid)
    write_plan(Path(extra.plan_dir), tasks={"01-a.md": task("deploy")})
    plane.commit(sid)
    assert _refusal(plane.release, "deploy", sid) == (
        "task-ambiguous",
        f"several threads have a task 'deploy'; name one of: thread_1/deploy, "
        f"{extra.thread_id}/deploy",
    )


# --- concurrency: processes claiming and finishing the same plan --------------------------

# Each worker appends to one log (O_APPEND: whole lines): "claimed X" after its claim
# returns, "done X" before it reports X done.  A dependency's "done" line is written
# before it is done, which is before its dependent can be claimed, which is before
# the dependent's "claimed" line: so in the log every dependency's "done" line must
# come before its dependent's "claimed" line.
_WORKER = """
import os, sys, time
from plankit.agentflow.control import ControlPlane
start, name, sid, log = sys.argv[1:5]
out = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
open(f"{start}.ready.{os.getpid()}", "w").close()
while not os.path.exists(start):
    time.sleep(0.005)
plane = ControlPlane()
while True:
    got = plane.claim(sid, agent=name)
    if got.task is None:
        if got.remaining == 0:
            break
        time.sleep(0.005)
        continue
    os.write(out, f"claimed {got.task.ref} {name}\\n".encode())
    os.write(out, f"done {got.task.ref} {name}\\n".encode())
    plane.done(got.task.ref, sid, claim=got.task.claim)
"""


def check_log(lines: list[str], deps: dict[str, list[str]]) -> None:
    """No task claimed twice or lost, none claimed before its dependencies were done."""
    finished: set[str] = set()
    claimed: list[str] = []
    for line in lines:
        kind, ref, _ = line.split()
        if kind == "claimed":
            early = [d for d in deps[ref] if d not in finished]
            assert not early, f"{ref} claimed before {early} were done"
            claimed.append(ref)
        else:
            finished.add(ref)
    assert len(claimed) == len(set(claimed)), "a task was claimed twice"
    assert set(claimed) == set(deps), "a task was never claimed"


def test_concurrent_workers_claim_each_task_once_and_in_order(
    planes: Planes, tmp_path: Path
) -> None:
    plane = planes()
    context = plane.start_session()
    sid = context.session.session_id
    extra = plane.request_thread_dir(sid)
    deps: dict[str, list[str]] = {}
    for n, thread in enumerate([context.current, extra]):
        target = Path(thread.plan_dir)
        write(target / "plan.md", f'---\ntitle: "Part {n}"\n---\n\nX\n')
        for i in range(60):
            mine = sorted({f"t{j}" for j in (i // 2, i // 3, i - 1) if 0 <= j < i})
            write(target / "tasks" / f"{i:02d}-t{i}.md", task(f"t{i}", mine))
            deps[f"{thread.thread_id}/t{i}"] = [f"{thread.thread_id}/{d}" for d in mine]
    plane.commit(sid)
    start, log = tmp_path / "go", tmp_path / "log"
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(start), f"w{n}", sid, str(log)],
            env=os.environ.copy(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(6)
    ]
    wait_until(
        lambda: (
            len(list(tmp_path.glob("go.ready.*"))) == len(workers)
            or any(w.poll() is not None for w in workers)
        ),
        "every worker to be ready",
    )
    start.touch()
    for worker in workers:
        _, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err
    check_log(log.read_text().splitlines(), deps)
    assert set(_states(plane, sid).values()) == {"done"}


def test_the_log_check_catches_what_it_is_for() -> None:
    deps = {"t/a": [], "t/b": ["t/a"]}
    check_log(["claimed t/a w", "done t/a w", "claimed t/b w", "done t/b w"], deps)
    for bad in (
        ["claimed t/a w", "claimed t/b w", "done t/a w"],
        ["claimed t/a w", "done t/a w", "claimed t/a w", "claimed t/b w"],
        ["claimed t/a w", "done t/a w"],
    ):
        with pytest.raises(AssertionError):
            check_log(bad, deps)


# --- several hosts on one PostgreSQL database ------------------------------------------


def test_hosts_share_a_postgresql_database(
    postgres: object, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.pgserver import PostgresServer

    assert isinstance(postgres, PostgresServer)
    url = postgres.new_schema()
    planner = ControlPlane(home, database=url)
    sid = _session(planner, {"a": [], "b": ["a"]})
    # another host: its own AGENTFLOW_HOME, the same database
    worker = ControlPlane(tmp_path / "other-home", database=url)
    worker.host = "host-b"
    got = worker.claim(sid, agent="w-b").task
    assert got is not None and got.host == "host-b"
    assert planner.progress(sid)[1][0].holder == "w-b"  # type: ignore[index]
    worker.done(got.ref, sid, claim=got.claim)
    with pytest.raises(ControlError) as info:
        worker.commit(sid)
    assert info.value.rule == "session-elsewhere"
    assert "was started on host" in info.value.message
    # agentctl on the other host, through --database and through the environment
    from click.testing import CliRunner

    from plankit.agentflow.cli import cli

    monkeypatch.setenv("AGENTFLOW_HOME", str(tmp_path / "third-home"))
    result = CliRunner().invoke(
        cli, ["--database", url, "task", "claim", "--session", sid, "--json"]
    )
    assert json.loads(result.stdout)["task"]["ref"] == "thread_1/b"
    monkeypatch.setenv("AGENTFLOW_DATABASE_URL", url)
    result = CliRunner().invoke(cli, ["plan", "show", "--session", sid, "--json"])
    assert json.loads(result.stdout)["progress"]["claimed"] == 1
    assert not (tmp_path / "third-home" / "agentflow.db").exists()
    planner.close()
    worker.close()


def test_an_unreachable_database_is_a_one_line_error(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from plankit.agentflow.cli import cli

    url = f"postgresql://agentflow:secret@/agentflow?host={tmp_path}/nowhere"
    result = CliRunner().invoke(cli, ["--database", url, "session", "list"])
    assert result.exit_code == 1
    assert result.stderr.startswith("agentctl: cannot connect to the agentflow database ")
    assert "secret" not in result.stderr and result.stderr.count("\n") == 1
    assert "AGENTFLOW_DATABASE_URL" in result.stderr
