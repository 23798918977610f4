"""The control plane's SQL: rows in and out of the tables of :mod:`plankit.agentflow.schema`.

Each function runs its statements on a connection it is given; the caller decides the
transaction (``store.transaction``) that holds them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from plankit.agentflow.paths import ENV_SESSION, new_id
from plankit.agentflow.records import (
    CommitRecord,
    CommittedThread,
    ControlError,
    Session,
    SessionSummary,
    Thread,
)

if TYPE_CHECKING:
    from plankit.agentflow.database import Database

_THREAD_COLUMNS = "thread_id, session_id, kind, plan_dir, created_at, removed_at"
_SESSION_COLUMNS = "session_id, agent_session_id, topic, created_at, ended_at, host"


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _session(row: Sequence[object]) -> Session:
    return Session(
        str(row[0]), _text(row[1]), _text(row[2]), str(row[3]), _text(row[4]), _text(row[5])
    )


def _thread(row: Sequence[object]) -> Thread:
    tid, sid, kind, plan_dir, created, removed = row
    return Thread(
        str(tid), str(sid), kind == "current", str(plan_dir), str(created), _text(removed)
    )


def _shown(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:79] + "…")


def find_session(conn: Database, ref: str | None, home: str) -> Session:
    """The session ``ref`` names (internal or agent id; default ``$AGENTFLOW_SESSION_ID``)."""
    if ref is None:
        ref = os.environ.get(ENV_SESSION) or None
    if ref is None:
        raise ControlError(
            "session-missing",
            f"{ENV_SESSION} is not set; the host starts a session with "
            "`agentctl session start` and exports the variable it prints",
        )
    rows = conn.execute(
        f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE session_id = ? OR agent_session_id = ?",
        (ref, ref),
    ).fetchall()
    if len(rows) > 1:
        ids = " and ".join(sorted(str(row[0]) for row in rows))
        raise ControlError(
            "session-ambiguous",
            f"{_shown(ref)} names two sessions ({ids}): the internal id of one and the agent "
            "session id of the other; use the internal id of the one you mean",
        )
    if rows:
        return _session(rows[0])
    raise ControlError(
        "session-unknown",
        f"no agentflow session {_shown(ref)} under {home}; check {ENV_SESSION} "
        "(and AGENTFLOW_HOME), or list sessions with `agentctl session list`",
    )


def session_of_agent(conn: Database, agent_session_id: str) -> str | None:
    """The internal id of the session started for an agent session id, if any."""
    row = conn.execute(
        "SELECT session_id FROM sessions WHERE agent_session_id = ?", (agent_session_id,)
    ).fetchone()
    return None if row is None else str(row[0])


def is_session_id(conn: Database, ref: str) -> bool:
    """Whether ``ref`` is the internal id of a session."""
    row = conn.execute("SELECT 1 FROM sessions WHERE session_id = ?", (ref,)).fetchone()
    return row is not None


def insert_session(conn: Database, session: Session) -> None:
    """Record a new session."""
    conn.execute(
        "INSERT INTO sessions (session_id, agent_session_id, topic, created_at, updated_at, "
        "host) VALUES (?, ?, ?, ?, ?, ?)",
        (
            session.session_id,
            session.agent_session_id,
            session.topic,
            session.created_at,
            session.created_at,
            session.host,
        ),
    )


def set_topic(conn: Database, session_id: str, topic: str, when: str) -> None:
    """Record a session's topic."""
    conn.execute(
        "UPDATE sessions SET topic = ?, updated_at = ? WHERE session_id = ?",
        (topic, when, session_id),
    )


def active_threads(conn: Database, session_id: str) -> list[Thread]:
    """The session's threads that are not removed, the current one first."""
    rows = conn.execute(
        f"SELECT {_THREAD_COLUMNS} FROM threads WHERE session_id = ? AND removed_at IS NULL "
        "ORDER BY kind = 'additional', seq",
        (session_id,),
    ).fetchall()
    return [_thread(row) for row in rows]


def all_threads(conn: Database, session_id: str) -> list[Thread]:
    """Every thread the session was given, removed ones too, in the order they were made."""
    rows = conn.execute(
        f"SELECT {_THREAD_COLUMNS} FROM threads WHERE session_id = ? ORDER BY seq",
        (session_id,),
    ).fetchall()
    return [_thread(row) for row in rows]


def find_thread(conn: Database, session_id: str, thread_id: str) -> Thread:
    """A thread of the session (removed or not); ``thread-unknown`` otherwise."""
    row = conn.execute(
        f"SELECT {_THREAD_COLUMNS} FROM threads WHERE thread_id = ? AND session_id = ?",
        (thread_id, session_id),
    ).fetchone()
    if row is None:
        raise ControlError(
            "thread-unknown",
            f"no thread {_shown(thread_id)} in this session; `agentctl session context` "
            "lists its threads",
        )
    return _thread(row)


def insert_thread(
    conn: Database, session_id: str, current: bool, plan_dir: str, created: str
) -> Thread:
    """Record a thread allocation; its id, ``thread_<n>``, comes from the AUTOINCREMENT key."""
    seq = conn.execute(
        "INSERT INTO threads (thread_id, session_id, kind, plan_dir, created_at) "
        "VALUES (?, ?, ?, ?, ?) RETURNING seq",
        (
            f"pending-{new_id()}",
            session_id,
            "current" if current else "additional",
            plan_dir,
            created,
        ),
    ).fetchone()[0]
    thread_id = f"thread_{seq}"
    conn.execute("UPDATE threads SET thread_id = ? WHERE seq = ?", (thread_id, seq))
    conn.execute("UPDATE sessions SET updated_at = ? WHERE session_id = ?", (created, session_id))
    return Thread(thread_id, session_id, current, plan_dir, created)


def mark_removed(conn: Database, thread_id: str, when: str) -> None:
    """Record that a thread was removed."""
    conn.execute(
        "UPDATE threads SET removed_at = ? WHERE thread_id = ? AND removed_at IS NULL",
        (when, thread_id),
    )


def session_summaries(conn: Database, session_id: str | None = None) -> list[SessionSummary]:
    """Every session (only ``session_id`` when given), newest first, with its thread and
    commit counts."""
    where, params = ("WHERE s.session_id = ? ", (session_id,)) if session_id else ("", ())
    rows = conn.execute(
        "SELECT s.session_id, s.agent_session_id, s.topic, s.created_at, s.ended_at, s.host, "
        "(SELECT COUNT(*) FROM threads t WHERE t.session_id = s.session_id "
        " AND t.removed_at IS NULL), "
        "(SELECT COUNT(*) FROM commits c WHERE c.session_id = s.session_id), "
        "(SELECT MAX(committed_at) FROM commits c WHERE c.session_id = s.session_id) "
        f"FROM sessions s {where}ORDER BY s.created_at DESC, s.session_id DESC",
        params,
    ).fetchall()
    return [SessionSummary(_session(row), int(row[6]), int(row[7]), _text(row[8])) for row in rows]


def load_commit(conn: Database, session_id: str, number: int | None) -> CommitRecord:
    """Commit ``number`` of a session (the latest when ``None``), from its snapshot."""
    if number is None:
        row = conn.execute(
            "SELECT snapshot FROM commits WHERE session_id = ? ORDER BY number DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        if row is None:
            raise ControlError(
                "commit-none",
                f"session {session_id} has no commit yet; the agent submits its plans with "
                "`agentctl plan commit`",
            )
    else:
        row = conn.execute(
            "SELECT snapshot FROM commits WHERE session_id = ? AND number = ?",
            (session_id, number),
        ).fetchone()
        if row is None:
            last = conn.execute(
                "SELECT MAX(number) FROM commits WHERE session_id = ?", (session_id,)
            ).fetchone()[0]
            have = f"commits 1 to {last}" if last else "no commit yet"
            raise ControlError(
                "commit-unknown", f"session {session_id} has no commit {number} (it has {have})"
            )
    return CommitRecord.from_dict(json.loads(row[0]))


def insert_commit(
    conn: Database,
    session_id: str,
    when: str,
    plans: Sequence[CommittedThread],
    skipped: Sequence[str],
) -> CommitRecord:
    """Record a commit, numbered after the session's last, with its JSON snapshot."""
    number = conn.execute(
        "SELECT COALESCE(MAX(number), 0) + 1 FROM commits WHERE session_id = ?", (session_id,)
    ).fetchone()[0]
    record = CommitRecord(session_id, int(number), when, tuple(plans), tuple(skipped))
    commit_id = conn.execute(
        "INSERT INTO commits (session_id, number, committed_at, snapshot) VALUES (?, ?, ?, ?) "
        "RETURNING commit_id",
        (session_id, number, when, json.dumps(record.to_dict(), ensure_ascii=False)),
    ).fetchone()[0]
    conn.executemany(
        "INSERT INTO commit_threads (commit_id, thread_id, position, task_count) "
        "VALUES (?, ?, ?, ?)",
        [
            (commit_id, item.thread_id, position, len(item.plan.tasks))
            for position, item in enumerate(plans)
        ],
    )
    return record


def end_session(conn: Database, session_id: str, when: str) -> None:
    """Record that a session ended."""
    conn.execute(
        "UPDATE sessions SET ended_at = ?, updated_at = ? WHERE session_id = ?",
        (when, when, session_id),
    )


def ended_sessions(conn: Database, before: str) -> list[tuple[str, list[str]]]:
    """Sessions that ended before ``before``, each with its threads' plan directories."""
    rows = conn.execute(
        "SELECT s.session_id, t.plan_dir FROM sessions s JOIN threads t "
        "ON t.session_id = s.session_id WHERE s.ended_at IS NOT NULL AND s.ended_at < ? "
        "ORDER BY s.session_id, t.seq",
        (before,),
    ).fetchall()
    found: dict[str, list[str]] = {}
    for session_id, plan_dir in rows:
        found.setdefault(str(session_id), []).append(str(plan_dir))
    return list(found.items())


def live_plan_dirs(conn: Database) -> set[str]:
    """Plan directories of threads that are allocated and not removed, in sessions that
    have not ended."""
    rows = conn.execute(
        "SELECT t.plan_dir FROM threads t JOIN sessions s ON s.session_id = t.session_id "
        "WHERE t.removed_at IS NULL AND s.ended_at IS NULL"
    ).fetchall()
    return {str(row[0]) for row in rows}
