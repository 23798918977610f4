"""Work tracking: the tasks of a session's latest commit, claimed and finished by agents.

Each task of the latest commit is a row of ``tasks`` with its state:

=========  ====================================================================
waiting    a dependency is not done yet
ready      every dependency is done: an agent may claim it
claimed    an agent holds it until it is done, failed or released, or until its
           lease ends (the task is then ready again, for anyone)
done       finished; its dependents that have nothing else to wait for are ready
failed     finished without success (with a reason); ``release`` reopens it
blocked    a dependency failed (or is blocked)
=========  ====================================================================

A claim picks the first claimable task and marks it claimed; finishing a task counts
down ``pending`` (dependencies not done) of its dependents in the same transaction.
Both are written once, in :mod:`plankit.agentflow.claims`, for SQLite and PostgreSQL.

A new commit replaces the rows; a task whose id and dependencies did not change keeps
its claim, completion or failure, and the waiting, ready and blocked states are worked
out again from the dependencies.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from graphlib import TopologicalSorter
from typing import TYPE_CHECKING

from plankit.agentflow.claims import (
    COLUMNS,
    DEPENDENTS_DONE,
    FINISH,
    bind,
    done_call,
    remaining,
    status,
)
from plankit.agentflow.records import ControlError, TaskStatus

if TYPE_CHECKING:
    from plankit.agentflow.database import Database
    from plankit.agentflow.records import CommitRecord

__all__ = ["remaining"]

HELD = ("claimed", "done", "failed")
"""States a task keeps across commits (the others follow from its dependencies)."""

OPEN = ("waiting", "ready", "claimed")
"""States of tasks that still have work to do (counted as ``remaining``)."""


def derive(
    ids: Sequence[str], deps: Mapping[str, Sequence[str]], held: Mapping[str, str]
) -> dict[str, tuple[str, int]]:
    """The state and pending count of each task of one (acyclic) plan.

    ``held`` gives the tasks whose state is their own (claimed, done, failed); every
    other task is blocked when a dependency failed or is blocked, waiting when one is
    not done, and ready otherwise.
    """
    graph = {
        task_id: [d for d in deps.get(task_id, ()) if d in held or d in deps] for task_id in ids
    }
    result: dict[str, tuple[str, int]] = {}
    for task_id in TopologicalSorter(graph).static_order():
        if task_id not in graph:
            continue
        before = [result[d][0] for d in graph[task_id] if d in result]
        pending = sum(1 for state in before if state != "done")
        state = held.get(task_id)
        if state is None:
            if any(s in ("failed", "blocked") for s in before):
                state = "blocked"
            else:
                state = "waiting" if pending else "ready"
        result[task_id] = (state, pending)
    return result


def sync(db: Database, session_id: str, record: CommitRecord) -> None:
    """Track the tasks of a new commit (inside the commit's transaction)."""
    old = {
        (str(row[0]), str(row[1])): row
        for row in db.execute(
            "SELECT thread_id, task_id, deps, state, holder, holder_host, claim_id, claims, "
            f"lease_until, changed_at, reason FROM tasks WHERE session_id = ?{db.for_update}",
            (session_id,),
        ).fetchall()
    }
    stamp = int(db.execute("SELECT now_ms()").fetchone()[0])
    db.execute("DELETE FROM task_deps WHERE session_id = ?", (session_id,))
    db.execute("DELETE FROM tasks WHERE session_id = ?", (session_id,))
    rows: list[tuple[object, ...]] = []
    edges: list[tuple[object, ...]] = []
    position = 0
    for thread in record.threads:
        tid = thread.thread_id
        tasks = thread.plan.tasks
        keys = {task.id: "\n".join(sorted(task.depends_on)) for task in tasks}
        kept = {
            task.id: old[(tid, task.id)]
            for task in tasks
            if (tid, task.id) in old and old[(tid, task.id)][2] == keys[task.id]
        }
        held = {k: str(row[3]) for k, row in kept.items() if row[3] in HELD}
        states = derive(
            [task.id for task in tasks], {task.id: task.depends_on for task in tasks}, held
        )
        for task in tasks:
            position += 1
            state, pending = states[task.id]
            prev = kept.get(task.id)
            spec = {
                "title": thread.plan.title,
                "plan_dir": thread.plan.path,
                "file": task.file,
                "agent": task.agent,
                "depends_on": list(task.depends_on),
                "subtasks": list(task.subtasks),
                "body": task.body,
                "commit": record.number,
            }
            if prev is not None and state in HELD:
                holder, host, claim, claims, lease, reason = (
                    prev[4],
                    prev[5],
                    prev[6],
                    prev[7],
                    prev[8],
                    prev[10],
                )
            else:
                holder = host = claim = lease = reason = None
                claims = prev[7] if prev is not None else 0
            changed = prev[9] if prev is not None and prev[3] == state else stamp
            rows.append(
                (
                    tid, task.id, session_id, position, task.agent, keys[task.id], pending,
                    state, holder, host, claim, claims, lease, changed, reason, record.number,
                    json.dumps(spec, ensure_ascii=False),
                )
            )  # fmt: skip
            edges += [(tid, task.id, dep, session_id) for dep in task.depends_on]
    db.executemany(
        "INSERT INTO tasks (thread_id, task_id, session_id, position, agent, deps, pending, "
        "state, holder, holder_host, claim_id, claims, lease_until, changed_at, reason, "
        "commit_number, spec) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    if edges:
        db.executemany(
            "INSERT INTO task_deps (thread_id, task_id, dep_id, session_id) VALUES (?, ?, ?, ?)",
            edges,
        )


def _recompute(db: Database, thread_id: str) -> None:
    """Work the derived states of one thread's tasks out again (after a failure or a
    reopening); the rows are locked while it runs."""
    rows = db.execute(
        f"SELECT task_id, state, pending FROM tasks WHERE thread_id = ?{db.for_update}",
        (thread_id,),
    ).fetchall()
    deps: dict[str, list[str]] = {str(row[0]): [] for row in rows}
    for task_id, dep in db.execute(
        "SELECT task_id, dep_id FROM task_deps WHERE thread_id = ?", (thread_id,)
    ).fetchall():
        deps.setdefault(str(task_id), []).append(str(dep))
    held = {str(row[0]): str(row[1]) for row in rows if row[1] in HELD}
    states = derive(list(deps), deps, held)
    changes = [
        (states[str(task_id)][0], states[str(task_id)][1], thread_id, str(task_id))
        for task_id, state, pending in rows
        if states[str(task_id)] != (state, pending)
    ]
    if changes:
        db.executemany(
            "UPDATE tasks SET state = ?, pending = ?, changed_at = now_ms() "
            "WHERE thread_id = ? AND task_id = ?",
            changes,
        )


# --- reading ------------------------------------------------------------------------------


def statuses(db: Database, session_id: str) -> list[TaskStatus]:
    """Every tracked task of the session, in plan order."""
    rows = db.execute(
        f"SELECT {COLUMNS} FROM tasks WHERE session_id = ? ORDER BY position", (session_id,)
    ).fetchall()
    return [status(row) for row in rows]


def tracked_commit(db: Database, session_id: str) -> int | None:
    """The commit whose tasks are tracked (the latest), or ``None`` before any commit."""
    row = db.execute(
        "SELECT MAX(number) FROM commits WHERE session_id = ?", (session_id,)
    ).fetchone()
    return None if row[0] is None else int(row[0])


_REF = re.compile(r"(?:(thread_[0-9]+)/)?([a-z0-9]+(?:-[a-z0-9]+)*)", re.ASCII)


def locate(db: Database, session_id: str, ref: str) -> tuple[str, str]:
    """The ``(thread_id, task_id)`` a reference names: ``<thread_id>/<task_id>``, or a
    bare task id when only one thread of the latest commit has it."""
    match = _REF.fullmatch(ref)
    if match is None:
        raise ControlError(
            "task-unknown",
            f"{_shown(ref)} is not a task reference; write <thread_id>/<task_id>, as "
            "`agentctl task claim` prints it (for example thread_1/setup-db)",
        )
    thread_id, task_id = match.groups()
    if thread_id is not None:
        found = db.execute(
            "SELECT thread_id FROM tasks WHERE session_id = ? AND thread_id = ? AND task_id = ?",
            (session_id, thread_id, task_id),
        ).fetchall()
    else:
        found = db.execute(
            "SELECT thread_id FROM tasks WHERE session_id = ? AND task_id = ?",
            (session_id, task_id),
        ).fetchall()
    if not found:
        raise ControlError(
            "task-unknown",
            f"no task {_shown(ref)} in the latest commit of session {session_id}; "
            "`agentctl plan show` lists its tasks",
        )
    if len(found) > 1:
        refs = ", ".join(sorted(f"{row[0]}/{task_id}" for row in found))
        raise ControlError(
            "task-ambiguous", f"several threads have a task {task_id!r}; name one of: {refs}"
        )
    return str(found[0][0]), task_id


def _shown(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:79] + "…")


# --- changing -----------------------------------------------------------------------------


def done_ref(db: Database, session_id: str, ref: str, claim_id: str) -> TaskStatus | None:
    """The usual done (``<thread_id>/<task_id>`` claimed by ``claim_id``) in one call of
    the database's function, outside any transaction; ``None`` for any other case."""
    match = _REF.fullmatch(ref)
    if match is None or match.group(1) is None:
        return None
    return done_call(db, session_id, match.group(1), match.group(2), claim_id)


def _row(db: Database, session_id: str, ref: str) -> TaskStatus:
    """The task ``ref`` names, its row locked until the transaction ends."""
    match = _REF.fullmatch(ref)
    if match is not None and match.group(1) is not None:  # the usual case: one query
        row = db.execute(
            f"SELECT {COLUMNS} FROM tasks WHERE session_id = ? AND thread_id = ? AND "
            f"task_id = ?{db.for_update}",
            (session_id, match.group(1), match.group(2)),
        ).fetchone()
        if row is not None:
            return status(row)
    thread_id, task_id = locate(db, session_id, ref)
    row = db.execute(
        f"SELECT {COLUMNS} FROM tasks WHERE thread_id = ? AND task_id = ?{db.for_update}",
        (thread_id, task_id),
    ).fetchone()
    return status(row)


def _check_claim(task: TaskStatus, claim_id: str | None, action: str) -> None:
    if claim_id is not None and task.claim != claim_id:
        holder = f" by {task.holder}" if task.holder and task.state == "claimed" else ""
        raise ControlError(
            "task-not-held",
            f"claim {_shown(claim_id)} no longer holds {task.ref} (it is {task.state}{holder}"
            f"{', after the lease ended' if task.state == 'claimed' else ''}); cannot {action} "
            "it; claim another task",
        )


def _wrong_state(task: TaskStatus, action: str, expected: Iterable[str]) -> ControlError:
    hint = {
        "waiting": "its dependencies are not done yet",
        "blocked": "a dependency failed; reopen that one with `agentctl task release`",
        "done": "there is nothing left to do",
        "failed": f"it failed ({task.reason}); `agentctl task release` reopens it",
        "ready": "nobody has claimed it",
        "claimed": f"{task.holder or 'an agent'} holds it",
    }[task.state]
    return ControlError(
        "task-state",
        f"cannot {action} {task.ref}: it is {task.state} ({hint}); {action} applies to a "
        f"task that is {' or '.join(expected)}",
    )


def finish(
    db: Database,
    session_id: str,
    ref: str,
    *,
    claim_id: str | None,
    failed: bool,
    reason: str | None,
    holder: str | None,
) -> TaskStatus:
    """Mark a claimed (or ready) task done or failed (inside a transaction)."""
    action = "fail" if failed else "finish"
    task = _row(db, session_id, ref)
    _check_claim(task, claim_id, action)
    if task.state not in ("claimed", "ready"):
        raise _wrong_state(task, action, ("claimed", "ready"))
    values = {
        "state": "failed" if failed else "done",
        "holder": holder,
        "reason": reason,
        "session": session_id,
        "thread": task.thread_id,
        "task": task.task_id,
        "claim": claim_id,
    }
    updated = db.execute(*bind(FINISH, values)).fetchone()
    if failed:
        _recompute(db, task.thread_id)
    else:
        db.execute(*bind(DEPENDENTS_DONE, values))
    return status(updated)


def heartbeat(
    db: Database, session_id: str, ref: str, *, claim_id: str | None, lease_ms: int
) -> TaskStatus:
    """Extend the lease of a claimed task (inside a transaction)."""
    task = _row(db, session_id, ref)
    _check_claim(task, claim_id, "extend")
    if task.state != "claimed":
        raise _wrong_state(task, "extend", ("claimed",))
    updated = db.execute(
        "UPDATE tasks SET lease_until = now_ms() + ? WHERE thread_id = ? AND task_id = ? "
        f"RETURNING {COLUMNS}",
        (lease_ms, task.thread_id, task.task_id),
    ).fetchone()
    return status(updated)


def release(db: Database, session_id: str, ref: str, *, claim_id: str | None) -> TaskStatus:
    """Give a claimed task back, or reopen a failed one (inside a transaction)."""
    task = _row(db, session_id, ref)
    _check_claim(task, claim_id, "release")
    if task.state not in ("claimed", "failed"):
        raise _wrong_state(task, "release", ("claimed", "failed"))
    db.execute(
        "UPDATE tasks SET state = 'waiting', holder = NULL, holder_host = NULL, claim_id = NULL, "
        "lease_until = NULL, reason = NULL, changed_at = now_ms() "
        "WHERE thread_id = ? AND task_id = ?",
        (task.thread_id, task.task_id),
    )
    _recompute(db, task.thread_id)
    return _row(db, session_id, task.ref)
