"""What an agent is told when a task command is refused: the task's state and why it
cannot be acted on, a claim that no longer holds its task, a reference that names no
task.  The whole message is the agent's only guide to its next step."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from plankit.agentflow.control import ControlPlane
from plankit.agentflow.records import ControlError
from tests.waiting import wait_until

from .helpers import task, write_plan


@pytest.fixture
def plane(home: Path) -> Iterator[ControlPlane]:
    made = ControlPlane()
    yield made
    made.close()


def _session(plane: ControlPlane, tasks: dict[str, list[str]]) -> str:
    context = plane.start_session()
    write_plan(
        Path(context.current.plan_dir),
        tasks={f"{i:02d}-{t}.md": task(t, deps) for i, (t, deps) in enumerate(tasks.items())},
    )
    plane.commit(context.session.session_id)
    return context.session.session_id


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
