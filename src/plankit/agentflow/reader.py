"""The control plane read by a viewer (``plankit board``): nothing is ever written.

:func:`open_reader` opens the database without creating, migrating or locking anything:
a missing ``agentflow.db`` is no database (``None``), not one to make; a SQLite file is
opened read-only (``mode=ro``); a PostgreSQL connection runs read-only transactions
only.  A schema other than this plankit's is refused with one line, since its tables may
not be the ones read here.

The functions below read what a board shows: every session with its counts
(:func:`sessions`), one session's threads and commits over time (:func:`timeline`), a
commit with its tracked task states (:func:`commit`), and a cheap :func:`signature` of
the whole database that changes whenever anything shown may have changed (polled to
notice work done by agents on other hosts).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plankit.agentflow import queries, tracking
from plankit.agentflow.database import Database
from plankit.agentflow.records import (
    CommitRecord,
    ControlError,
    SessionSummary,
    TaskStatus,
    Thread,
)
from plankit.agentflow.schema import SCHEMA_VERSION
from plankit.agentflow.store import SqliteDatabase

DB_NAME = "agentflow.db"


def _uri(path: str, query: str) -> str:
    # quoted: a "?", "#" or "%" in a directory's name must not end the path (SQLite would
    # open, and create, another file, read-write)
    return f"{Path(os.path.abspath(path)).as_uri()}?{query}"


def _stamp(path: str) -> tuple[int, ...] | None:
    """The file as it is now: a checkpoint that rewrites it, or a writer that starts (its
    ``-wal`` file appears), changes the stamp."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    wal = os.path.exists(path + "-wal")
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, int(wal))


def _quiet_wal(path: str) -> bool:
    """Whether ``path`` is a WAL database no one has open (no ``-wal`` file): opened in
    ``mode=ro``, SQLite would make its ``-wal`` and ``-shm`` files, and leave them."""
    try:
        with open(path, "rb") as file:
            header = file.read(20)
    except OSError:
        return False
    # bytes 18 and 19: the read and write format, 2 for WAL
    wal_mode = header.startswith(b"SQLite format 3\0") and header[18:20] == b"\x02\x02"
    return wal_mode and not os.path.exists(path + "-wal")


class SnapshotDatabase(SqliteDatabase):
    """A WAL database no one had open, read as the file is (``immutable=1``: no lock,
    no ``-wal`` or ``-shm`` made).  It is usable only while the file is unchanged since
    before it was opened, so a read that overlapped a writer is told by :meth:`usable`
    afterwards and done again."""

    def __init__(self, conn: sqlite3.Connection, path: str, stamp: tuple[int, ...] | None):
        super().__init__(conn, path, True)
        self._stamp = stamp

    def usable(self, write: bool) -> bool:
        return not write and self._stamp is not None and _stamp(self.where) == self._stamp


def _ro_sqlite(path: str) -> SqliteDatabase:
    stamp = _stamp(path)
    quiet = _quiet_wal(path)
    try:
        if quiet:
            conn = _snapshot(path)
        else:
            conn = sqlite3.connect(_uri(path, "mode=ro"), uri=True, timeout=5, isolation_level=None)
            try:
                conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
            except sqlite3.OperationalError:
                # WAL needs its -shm file, which this directory cannot get: nobody can
                # write there either, so the file is read as it is
                conn.close()
                quiet = True
                conn = _snapshot(path)
    except sqlite3.Error as exc:
        raise ControlError(
            "state-unusable", f"cannot read the agentflow database {path} ({first_line(exc)})"
        ) from None
    conn.create_function("now_ms", 0, _now_ms)
    return SnapshotDatabase(conn, path, stamp) if quiet else SqliteDatabase(conn, path, True)


def _snapshot(path: str) -> sqlite3.Connection:
    """The database file read as it is: no lock taken, nothing made beside it."""
    conn = sqlite3.connect(_uri(path, "mode=ro&immutable=1"), uri=True, isolation_level=None)
    conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    return conn


def first_line(exc: BaseException) -> str:
    """The first line of an error's text (errors are said in one line)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _now_ms() -> int:
    import time

    return time.time_ns() // 1_000_000


def open_reader(home: str | None, database: str | None) -> Database | None:
    """A read-only connection to the control plane: the PostgreSQL ``database`` when
    given, else ``home/agentflow.db`` (``None`` when that file does not exist)."""
    if database:
        db: Database = _ro_postgres(database)
    else:
        if home is None:
            return None
        path = os.path.join(home, DB_NAME)
        if not os.path.isfile(path):
            return None
        db = _ro_sqlite(path)
    try:
        version = db.version()
    except Exception as exc:
        db.close()
        if isinstance(exc, ControlError):
            raise
        raise ControlError(
            "state-unusable", f"cannot read the agentflow database {db.where} ({first_line(exc)})"
        ) from None
    if version != SCHEMA_VERSION:
        db.close()
        raise _mismatch(db.where, version)
    return db


def _mismatch(where: str, version: int) -> ControlError:
    newer = "a newer plankit" if version > SCHEMA_VERSION else "an older plankit"
    return ControlError(
        "schema-mismatch",
        f"{where} has schema version {version}, written by {newer} (this one reads "
        f"version {SCHEMA_VERSION}); run an `agentctl` command of the same plankit on it",
    )


def check_url(url: str) -> None:
    """Refuse, in one line naming no password, a ``url`` that is not a PostgreSQL
    connection URL (nothing is connected to)."""
    url_params(url)


def url_params(url: str) -> dict[str, Any]:
    from plankit.agentflow.pgstore import require_psycopg

    require_psycopg()
    from psycopg.conninfo import conninfo_to_dict

    try:
        return dict(conninfo_to_dict(url))
    except Exception:
        # the driver's message quotes the URL, password included: not repeated
        raise ControlError(
            "database-url",
            "the agentflow database URL (--agentflow-database, or $AGENTFLOW_DATABASE_URL) "
            "is not a PostgreSQL URL; give one as postgresql://USER:PASSWORD@HOST:PORT/DBNAME",
        ) from None


def _ro_postgres(url: str) -> Database:
    from plankit.agentflow.pgstore import PostgresDatabase, connect_timeout, safe_url

    params = url_params(url)
    import psycopg

    try:
        conn = psycopg.connect(url, autocommit=True, **connect_timeout(url, 10))
        conn.execute("SET default_transaction_read_only = on")
    except Exception as exc:
        first = hide_password(first_line(exc) if str(exc).strip() else "no answer", params)
        raise ControlError(
            "state-unusable",
            f"cannot connect to the agentflow database {safe_url(url)} ({first}); check the "
            "URL and that the server is running",
        ) from None
    return PostgresDatabase(conn)


def hide_password(text: str, params: dict[str, Any]) -> str:
    """``text`` with the password of a URL's ``params`` (if any) replaced by ``***``."""
    password = str(params.get("password") or "")
    return text.replace(password, "***") if password else text


# --- what a viewer reads --------------------------------------------------------------------


def signature(db: Database) -> tuple[Any, ...]:
    """Changes whenever a session, thread, commit or task state changes; a database
    migrated meanwhile to another schema (a connection outlives the check at its
    opening) is refused as :func:`open_reader` refuses it."""
    row = db.execute(
        "SELECT (SELECT MAX(version) FROM schema_version), "
        "(SELECT COUNT(*) FROM sessions), (SELECT MAX(updated_at) FROM sessions), "
        "(SELECT COUNT(ended_at) FROM sessions), (SELECT COUNT(*) FROM threads), "
        "(SELECT COUNT(removed_at) FROM threads), (SELECT COUNT(*) FROM commits), "
        "(SELECT COUNT(*) FROM tasks), (SELECT MAX(changed_at) FROM tasks), "
        "(SELECT SUM(claims) FROM tasks), "
        "(SELECT COUNT(*) FROM tasks WHERE state IN ('done', 'failed', 'blocked'))"
    ).fetchone()
    if int(row[0] or 0) != SCHEMA_VERSION:
        raise _mismatch(db.where, int(row[0] or 0))
    return tuple(row)


@dataclass(frozen=True, slots=True)
class SessionCounts:
    """A session with its counts and the states of its tracked tasks."""

    summary: SessionSummary
    states: dict[str, int]
    """Tracked tasks (of the latest commit) per state."""
    last_change_ms: int | None
    """When a tracked task last changed (ms since the epoch), if any did."""

    @property
    def done(self) -> int:
        return self.states.get("done", 0)

    @property
    def total(self) -> int:
        return sum(self.states.values())


def sessions(db: Database, session_id: str | None = None) -> list[SessionCounts]:
    """Every session (only ``session_id`` when given), newest first, with its counts and
    tracked task states."""
    found = queries.session_summaries(db, session_id)
    states: dict[str, dict[str, int]] = {}
    last: dict[str, int] = {}
    where, params = ("WHERE session_id = ? ", (session_id,)) if session_id else ("", ())
    for sid, state, count, changed in db.execute(
        "SELECT session_id, state, COUNT(*), MAX(changed_at) FROM tasks "
        f"{where}GROUP BY session_id, state",
        params,
    ).fetchall():
        states.setdefault(str(sid), {})[str(state)] = int(count)
        if changed is not None:
            last[str(sid)] = max(last.get(str(sid), 0), int(changed))
    return [
        SessionCounts(s, states.get(s.session.session_id, {}), last.get(s.session.session_id))
        for s in found
    ]


@dataclass(frozen=True, slots=True)
class CommitLine:
    """One commit on a session's timeline."""

    number: int
    committed_at: str
    threads: int
    tasks: int

    def to_dict(self) -> dict[str, object]:
        return {
            "commit": self.number,
            "committed_at": self.committed_at,
            "thread_count": self.threads,
            "task_count": self.tasks,
        }


def timeline(
    db: Database, session_id: str, last: int, also: int | None = None
) -> tuple[list[Thread], list[CommitLine]]:
    """The session's threads (removed ones too, in the order they were made) and its
    last ``last`` commits, oldest first, with commit ``also`` when it is older."""
    threads = queries.all_threads(db, session_id)
    lines = "SELECT c.number, c.committed_at, COUNT(t.thread_id), SUM(t.task_count) " + (
        "FROM commits c LEFT JOIN commit_threads t ON t.commit_id = c.commit_id "
        "WHERE c.session_id = ? {} GROUP BY c.commit_id, c.number, c.committed_at "
    )
    rows = db.execute(
        lines.format("") + "ORDER BY c.number DESC LIMIT ?", (session_id, last)
    ).fetchall()
    if also is not None and all(int(row[0]) != also for row in rows):
        rows += db.execute(lines.format("AND c.number = ?"), (session_id, also)).fetchall()
    commits = sorted(
        (
            CommitLine(int(number), str(when), int(count), int(tasks or 0))
            for number, when, count, tasks in rows
        ),
        key=lambda line: line.number,
    )
    return threads, commits


def commit(
    db: Database, session_id: str, number: int | None
) -> tuple[CommitRecord, list[TaskStatus] | None]:
    """Commit ``number`` (the latest when None) and, when it is the tracked one, the
    state of each of its tasks."""
    record = queries.load_commit(db, session_id, number)
    if tracking.tracked_commit(db, session_id) != record.number:
        return record, None
    return record, tracking.statuses(db, session_id)


def commit_texts(db: Database, session_id: str, last: int) -> list[tuple[int, str, str]]:
    """The session's last ``last`` commits as ``(number, committed_at, text)``: each
    committed plan and its tasks, one text to compare between commits."""
    rows = db.execute(
        "SELECT number FROM commits WHERE session_id = ? ORDER BY number DESC LIMIT ?",
        (session_id, last),
    ).fetchall()
    out = []
    for (number,) in reversed(rows):
        record = queries.load_commit(db, session_id, int(number))
        out.append((record.number, record.committed_at, render_commit(record)))
    return out


def render_commit(record: CommitRecord) -> str:
    """A commit as text: each thread's plan, then its tasks with their dependencies."""
    lines: list[str] = []
    for thread in record.threads:
        kind = "current" if thread.current else "additional"
        lines.append(f"# {thread.thread_id} ({kind}): {thread.plan.title}")
        lines += [f"  {line}" for line in thread.plan.body.strip().splitlines()]
        for task in thread.plan.tasks:
            deps = f" <- {', '.join(task.depends_on)}" if task.depends_on else ""
            agent = f" [{task.agent}]" if task.agent else ""
            lines.append(f"## {task.id}{agent}{deps}")
            lines += [f"  - {sub}" for sub in task.subtasks]
            lines += [f"  {line}" for line in task.body.strip().splitlines()]
    return "\n".join(lines) + "\n"


def close(db: Database | None) -> None:
    """Close ``db`` (errors ignored: the connection is being dropped)."""
    if db is not None:
        with contextlib.suppress(Exception):
            db.close()
