"""The claim and done statements, written once: their parameters bound for SQLite, and
the same text turned into PostgreSQL function bodies (migration 3)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from plankit.agentflow import claims
from plankit.agentflow.claims import PICK_READY, bind, plpgsql
from plankit.agentflow.control import ControlPlane
from plankit.agentflow.records import TaskStatus
from tests.waiting import wait_until

from .helpers import task, write_plan


def test_bind_puts_a_question_mark_for_each_name_and_the_values_in_order() -> None:
    sql, params = bind(
        "UPDATE tasks SET holder = :holder WHERE thread_id = :thread AND task_id = :task "
        "AND (CAST(:claim AS TEXT) IS NULL OR claim_id = :claim)",
        {"thread": "thread_1", "task": "setup-db", "holder": "w1", "claim": "c0ffee"},
    )
    assert sql == (
        "UPDATE tasks SET holder = ? WHERE thread_id = ? AND task_id = ? "
        "AND (CAST(? AS TEXT) IS NULL OR claim_id = ?)"
    )
    assert params == ["w1", "thread_1", "setup-db", "c0ffee", "c0ffee"]


def test_a_type_cast_is_not_a_parameter() -> None:
    assert bind("SELECT NULL::TEXT, :session", {"session": "s1"}) == (
        "SELECT NULL::TEXT, ?",
        ["s1"],
    )
    assert plpgsql("SELECT NULL::TEXT, :session") == "SELECT NULL::TEXT, p_session"


def test_a_function_body_reads_each_name_from_its_argument_or_the_expression_given() -> None:
    body = plpgsql(
        "UPDATE tasks SET state = :state WHERE thread_id = :thread AND task_id = :task "
        "AND claim_id = :claim",
        {"state": "'done'", "thread": "v_thread"},
    )
    assert body == (
        "UPDATE tasks SET state = 'done' WHERE thread_id = v_thread AND task_id = p_task "
        "AND claim_id = p_claim"
    )


def test_the_claim_function_picks_into_its_variables_and_locks_the_row() -> None:
    picked = claims._pick_into(PICK_READY)
    assert picked.startswith(
        "SELECT thread_id, task_id INTO v_thread, v_task FROM tasks WHERE state = 'ready' "
        "AND session_id = p_session AND (CAST(p_agent AS TEXT) IS NULL OR "
    )
    # only the first FROM gets the INTO: the one of the ended-session check stays
    assert picked.count(" INTO ") == 1 and " FROM sessions s " in picked
    assert picked.endswith(" ORDER BY position LIMIT 1 FOR UPDATE SKIP LOCKED")
    assert picked in claims.CLAIM_FUNCTION


def test_a_claim_records_whom_it_is_for_and_the_host_it_came_from(
    planes: Callable[[], ControlPlane],
) -> None:
    plane = planes()
    context = plane.start_session()
    sid = context.session.session_id
    write_plan(Path(context.current.plan_dir), tasks={"01-a.md": task("a"), "02-b.md": task("b")})
    plane.commit(sid)
    plane.host = "build-host-7"
    # an orchestrator claims for the agent it runs: recorded for that agent
    for_alice = plane.claim(sid, agent="codex", holder="alice").task
    assert for_alice is not None
    assert (for_alice.holder, for_alice.host) == ("alice", "build-host-7")
    own = plane.claim(sid, agent="codex").task
    assert own is not None and (own.holder, own.host) == ("codex", "build-host-7")
    _, statuses = plane.progress(sid)
    assert statuses is not None
    assert [(s.holder, s.host) for s in statuses] == [
        ("alice", "build-host-7"),
        ("codex", "build-host-7"),
    ]


def test_a_task_shows_a_claim_and_a_lease_only_while_claimed(
    planes: Callable[[], ControlPlane],
) -> None:
    plane = planes()
    context = plane.start_session()
    sid = context.session.session_id
    write_plan(Path(context.current.plan_dir), tasks={"01-a.md": task("a")})
    plane.commit(sid)

    def shown() -> tuple[object, ...]:
        _, statuses = plane.progress(sid)
        assert statuses is not None
        s = statuses[0]
        return (s.state, s.holder, s.host, s.claim, s.lease_expired, s.lease_expires_at is None)

    assert shown() == ("ready", None, None, None, False, True)
    got = plane.claim(sid, agent="w1", lease=3600).task
    assert got is not None
    assert shown() == ("claimed", "w1", plane.host, got.claim, False, False)
    plane.done(got.ref, sid, claim=got.claim)
    assert shown() == ("done", "w1", plane.host, None, False, True)


def test_a_claim_whose_lease_ended_shows_as_expired_and_claimable(
    planes: Callable[[], ControlPlane],
) -> None:
    plane = planes()
    context = plane.start_session()
    sid = context.session.session_id
    write_plan(Path(context.current.plan_dir), tasks={"01-a.md": task("a")})
    plane.commit(sid)
    got = plane.claim(sid, agent="slow", lease=1).task
    assert got is not None and not got.lease_expired and not got.claimable

    def first() -> TaskStatus:
        _, statuses = plane.progress(sid)
        assert statuses is not None
        return statuses[0]

    wait_until(lambda: first().lease_expired, "the lease to end")
    ended = first()
    assert (ended.state, ended.holder, ended.claimable) == ("claimed", "slow", True)
