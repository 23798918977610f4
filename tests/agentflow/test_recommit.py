"""What a new commit keeps of the tasks it tracks, on both stores: how often each task
was claimed, who holds it, when its state last changed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from plankit.agentflow.control import ControlPlane
from plankit.agentflow.database import now
from plankit.agentflow.records import TaskStatus
from tests.waiting import wait_until

from .helpers import task, write, write_plan

Planes = Callable[[], ControlPlane]


def _tasks(plane: ControlPlane, sid: str) -> dict[str, TaskStatus]:
    _, statuses = plane.progress(sid)
    assert statuses is not None
    return {s.task_id: s for s in statuses}


def test_a_new_commit_keeps_how_often_each_task_was_claimed(planes: Planes) -> None:
    plane = planes()
    context = plane.start_session()
    sid = context.session.session_id
    directory = Path(context.current.plan_dir)
    write_plan(
        directory,
        tasks={"01-a.md": task("a"), "02-b.md": task("b"), "03-c.md": task("c")},
    )
    plane.commit(sid)
    a = plane.claim(sid, agent="w1").task
    assert a is not None and a.task_id == "a" and a.claims == 1
    plane.release(a.ref, sid, claim=a.claim)  # given back: ready again, claimed once
    b = plane.claim(sid, agent="w2").task  # a comes first again
    assert b is not None and b.task_id == "a" and b.claims == 2
    c = plane.claim(sid, agent="w3").task
    assert c is not None and c.task_id == "b" and c.claims == 1
    plane.release(b.ref, sid, claim=b.claim)
    # the plan is edited: c now waits for b; a and b are unchanged
    write(directory / "tasks" / "03-c.md", task("c", ["b"]))
    plane.commit(sid)
    tasks = _tasks(plane, sid)
    assert {k: (v.state, v.claims) for k, v in tasks.items()} == {
        "a": ("ready", 2),  # released twice: its count stays
        "b": ("claimed", 1),  # still held by w3
        "c": ("waiting", 0),  # its dependencies changed: a new task
    }
    assert tasks["b"].holder == "w3" and tasks["b"].claim == c.claim
    assert tasks["b"].host == plane.host and tasks["b"].lease_expires_at == c.lease_expires_at
    again = plane.claim(sid, agent="w4").task
    assert again is not None and again.task_id == "a" and again.claims == 3


def test_a_new_commit_keeps_when_an_unchanged_state_last_changed(planes: Planes) -> None:
    plane = planes()
    context = plane.start_session()
    sid = context.session.session_id
    directory = Path(context.current.plan_dir)
    write_plan(directory, tasks={"01-a.md": task("a"), "02-b.md": task("b", ["a"])})
    plane.commit(sid)
    before = _tasks(plane, sid)
    claimed = plane.claim(sid).task
    assert claimed is not None
    plane.done(claimed.ref, sid, claim=claimed.claim)
    done = _tasks(plane, sid)
    assert done["a"].changed_at >= before["a"].changed_at
    # the commit comes a millisecond later at least, so that its time differs
    wait_until(lambda: now() > done["b"].changed_at, "the clock to pass the last change")
    write(directory / "tasks" / "03-c.md", task("c", ["b"]))
    plane.commit(sid)
    after = _tasks(plane, sid)
    # a stays done and b ready: their times are those of the change, not of the commit
    assert after["a"].changed_at == done["a"].changed_at
    assert after["b"].changed_at == done["b"].changed_at
    assert after["c"].state == "waiting" and after["c"].changed_at > done["b"].changed_at


def test_a_claimed_task_carries_its_subtasks_as_committed(planes: Planes) -> None:
    plane = planes()
    context = plane.start_session()
    sid = context.session.session_id
    write_plan(
        Path(context.current.plan_dir),
        tasks={
            "01-schema.md": "---\nid: schema\nsubtasks: [write the migration, run it on staging]\n"
            "---\n\nMigrate the schema.\n"
        },
    )
    plane.commit(sid)
    got = plane.claim(sid, agent="w1").task
    assert got is not None
    assert got.spec["subtasks"] == ["write the migration", "run it on staging"]
