"""Claiming a task and reporting it done: the SQL, written once for both stores.

A claim picks the first claimable task of a session (an expired claim first, by the
end of its lease; then the first ready task in plan order; never a task assigned to
another agent, never in an ended session) and marks it claimed with a new claim id
and lease.  A done marks a task done and counts down ``pending`` (dependencies not
done) of its dependents, a waiting one becoming ready at zero.

The statements below are the only text of that logic.  They name their parameters
(``:session``, ``:agent`` …): on SQLite :func:`bind` turns them into ``?`` and runs
them one after the other inside the caller's transaction, where the write lock makes
the claim atomic.  On PostgreSQL :func:`plpgsql` turns the same statements into the
bodies of two stored functions (``agentflow_claim``, ``agentflow_done``, created by
migration 3 of :mod:`plankit.agentflow.schema`), so that a claim or a done is one
round trip; their picks lock the row they take with ``FOR UPDATE SKIP LOCKED``, so
concurrent claims take different tasks without waiting for each other.  A database
migrated by an earlier plankit keeps the functions it was given, which do the same;
a change to a statement here must come with a migration that re-creates them.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from plankit.agentflow.records import TaskStatus, iso_ms

if TYPE_CHECKING:
    from plankit.agentflow.database import Database

COLUMNS = (
    "thread_id, task_id, state, holder, holder_host, claim_id, claims, lease_until, "
    "changed_at, reason, spec, CASE WHEN lease_until < now_ms() THEN 1 ELSE 0 END"
)
"""What a statement returns of a task: :func:`status` reads it."""

_STATUS_TYPES = (
    "thread_id TEXT, task_id TEXT, state TEXT, holder TEXT, holder_host TEXT, claim_id TEXT, "
    "claims INTEGER, lease_until BIGINT, changed_at BIGINT, reason TEXT, spec TEXT, "
    "expired INTEGER"
)

_CLAIMABLE = (
    "session_id = :session AND (CAST(:agent AS TEXT) IS NULL OR agent IS NULL OR "
    "agent = :agent) AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = :session "
    "AND s.ended_at IS NOT NULL)"
)

PICK_EXPIRED = (
    "SELECT thread_id, task_id FROM tasks WHERE state = 'claimed' AND lease_until < now_ms() "
    f"AND {_CLAIMABLE} ORDER BY lease_until LIMIT 1"
)
"""The claim whose lease ended longest ago (the row lock is appended)."""

PICK_READY = (
    f"SELECT thread_id, task_id FROM tasks WHERE state = 'ready' AND {_CLAIMABLE} "
    "ORDER BY position LIMIT 1"
)
"""The first ready task in plan order (the row lock is appended)."""

TAKE = (
    "UPDATE tasks SET state = 'claimed', holder = :holder, holder_host = :host, "
    "claim_id = :claim, claims = claims + 1, lease_until = now_ms() + :lease, "
    "changed_at = now_ms(), reason = NULL WHERE thread_id = :thread AND task_id = :task "
    f"RETURNING {COLUMNS}"
)
"""The picked task claimed."""

OPEN_COUNT = (
    "SELECT COUNT(*) FROM tasks WHERE session_id = :session AND state IN "
    "('waiting', 'ready', 'claimed')"
)
"""Tasks with work left: waiting, ready or claimed (not done, failed or blocked)."""

FINISH = (
    "UPDATE tasks SET state = :state, holder = CASE WHEN state = 'claimed' THEN holder "
    "ELSE :holder END, lease_until = NULL, claim_id = NULL, changed_at = now_ms(), "
    "reason = :reason WHERE session_id = :session AND thread_id = :thread AND "
    "task_id = :task AND (CAST(:claim AS TEXT) IS NULL OR (state = 'claimed' AND "
    f"claim_id = :claim)) RETURNING {COLUMNS}"
)
"""A task done or failed (``:claim``, when given, must still hold it); a claimed task
keeps its holder, a ready one is credited to ``:holder``."""

DEPENDENTS_DONE = (
    "UPDATE tasks SET pending = pending - 1, state = CASE WHEN state = 'waiting' AND "
    "pending = 1 THEN 'ready' ELSE state END, changed_at = now_ms() WHERE thread_id = :thread "
    "AND task_id IN (SELECT task_id FROM task_deps WHERE thread_id = :thread AND "
    "dep_id = :task)"
)
"""The dependents of a task that is now done count it down."""

_MARK = re.compile(r"(?<![:\w]):([a-z_]+)\b")


def bind(sql: str, values: Mapping[str, object]) -> tuple[str, list[object]]:
    """``sql`` with ``?`` for each ``:name``, and the values in that order."""
    params: list[object] = []

    def mark(match: re.Match[str]) -> str:
        params.append(values[match[1]])
        return "?"

    return _MARK.sub(mark, sql), params


def plpgsql(sql: str, given: Mapping[str, str] | None = None) -> str:
    """``sql`` inside a PL/pgSQL function: ``:name`` is the argument ``p_name``, or the
    expression ``given`` has for it."""
    given = given or {}
    return _MARK.sub(lambda match: given.get(match[1], f"p_{match[1]}"), sql)


def status(row: Sequence[Any]) -> TaskStatus:
    """A task as :data:`COLUMNS` returned it."""
    thread_id, task_id, state, holder, host, claim, claims, lease, changed, reason, spec, gone = row
    claimed = state == "claimed"
    return TaskStatus(
        thread_id=str(thread_id),
        task_id=str(task_id),
        state=str(state),
        holder=None if holder is None else str(holder),
        host=None if host is None else str(host),
        claim=None if claim is None or not claimed else str(claim),
        claims=int(claims),
        lease_expires_at=iso_ms(int(lease)) if claimed and lease is not None else None,
        lease_expired=claimed and bool(gone),
        reason=None if reason is None else str(reason),
        changed_at=iso_ms(int(changed)) or "",
        spec=json.loads(spec),
    )


def remaining(db: Database, session_id: str) -> int:
    """Tasks with work left: waiting, ready or claimed (not done, failed or blocked)."""
    return int(db.execute(*bind(OPEN_COUNT, {"session": session_id})).fetchone()[0])


def claim(
    db: Database,
    session_id: str,
    *,
    agent: str | None,
    holder: str | None,
    host: str,
    lease_ms: int,
) -> tuple[TaskStatus | None, int]:
    """Claim one claimable task (inside a transaction): the task, or ``None``, and the
    number of tasks with work left.

    With ``agent``, a task assigned to another agent (its ``agent`` field) is not taken.
    """
    values: dict[str, object] = {"session": session_id, "agent": agent}
    row = db.execute(*bind(PICK_EXPIRED + db.skip_locked, values)).fetchone()
    if row is None:
        row = db.execute(*bind(PICK_READY + db.skip_locked, values)).fetchone()
    task = None
    if row is not None:
        values.update(
            holder=holder or agent,
            host=host,
            claim=secrets.token_hex(8),
            lease=lease_ms,
            thread=row[0],
            task=row[1],
        )
        task = status(db.execute(*bind(TAKE, values)).fetchone())
    return task, remaining(db, session_id)


def claim_call(
    db: Database,
    session_id: str,
    *,
    agent: str | None,
    holder: str | None,
    host: str,
    lease_ms: int,
) -> tuple[TaskStatus | None, int] | None:
    """:func:`claim` in one call of the database's own function (PostgreSQL), outside
    any transaction; ``None`` when the database has none."""
    rows = db.call(
        "agentflow_claim",
        (session_id, agent, holder or agent, host, lease_ms, secrets.token_hex(8)),
    )
    if rows is None:
        return None
    row = rows[0]
    return (None if row[0] is None else status(row[:12])), int(row[12])


def done_call(
    db: Database, session_id: str, thread_id: str, task_id: str, claim_id: str
) -> TaskStatus | None:
    """A task claimed by ``claim_id`` done, in one call of the database's function,
    outside any transaction; ``None`` for any other case, or without one."""
    rows = db.call("agentflow_done", (session_id, thread_id, task_id, claim_id))
    return status(rows[0]) if rows else None


# --- the same statements as PostgreSQL functions (migration 3) ------------------------------

_LOCKED = " FOR UPDATE SKIP LOCKED"
_TAKEN = {"thread": "v_thread", "task": "v_task"}


def _pick_into(pick: str) -> str:
    return plpgsql(pick + _LOCKED).replace(" FROM ", " INTO v_thread, v_task FROM ", 1)


CLAIM_FUNCTION = f"""
CREATE OR REPLACE FUNCTION agentflow_claim(
    p_session TEXT, p_agent TEXT, p_holder TEXT, p_host TEXT, p_lease BIGINT, p_claim TEXT)
RETURNS TABLE ({_STATUS_TYPES}, remaining BIGINT) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_thread TEXT;
    v_task TEXT;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    {_pick_into(PICK_EXPIRED)};
    IF v_thread IS NULL THEN
        {_pick_into(PICK_READY)};
    END IF;
    IF v_thread IS NOT NULL THEN
        RETURN QUERY {plpgsql(TAKE, _TAKEN)}, ({plpgsql(OPEN_COUNT)});
    ELSE
        RETURN QUERY SELECT NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::TEXT,
            NULL::TEXT, NULL::INTEGER, NULL::BIGINT, NULL::BIGINT, NULL::TEXT, NULL::TEXT,
            NULL::INTEGER, ({plpgsql(OPEN_COUNT)});
    END IF;
END $$"""
"""The claim as one call; committed without waiting for the disk (a lost claim only
returns its task early).  With no task, one row of nulls and the count."""

DONE_FUNCTION = f"""
CREATE OR REPLACE FUNCTION agentflow_done(
    p_session TEXT, p_thread TEXT, p_task TEXT, p_claim TEXT)
RETURNS TABLE ({_STATUS_TYPES}) LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY {plpgsql(FINISH, {"state": "'done'", "holder": "NULL", "reason": "NULL"})};
    IF FOUND THEN
        {plpgsql(DEPENDENTS_DONE)};
    END IF;
END $$"""
"""The usual done (a task claimed by the claim given) as one call.  Any other case
returns no row, and the caller takes the general path, which explains a refusal."""
