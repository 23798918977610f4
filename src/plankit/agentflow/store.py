"""The control plane's SQLite database: schema, connections and transactions.

One file, ``AGENTFLOW_HOME/agentflow.db``, in WAL mode so readers never wait for a
writer.  Every change runs in one ``BEGIN IMMEDIATE`` transaction: the write lock is
taken at the start, so concurrent writers (several agents, several processes) queue
up behind the busy timeout instead of failing or interleaving, and a failure rolls
everything back.  Thread ids come from an AUTOINCREMENT key and plan directories
carry UNIQUE constraints, so neither can be handed out twice.

Schema (``PRAGMA user_version`` = :data:`SCHEMA_VERSION`)::

    sessions(session_id PK, agent_session_id UNIQUE, topic, created_at, updated_at)
    threads(seq PK AUTOINCREMENT, thread_id UNIQUE, session_id → sessions,
            kind 'current'|'additional', plan_dir UNIQUE, created_at, removed_at)
    commits(commit_id PK AUTOINCREMENT, session_id → sessions, number,
            committed_at, snapshot JSON; UNIQUE(session_id, number))
    commit_threads(commit_id → commits, thread_id → threads, position, task_count)
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from plankit.agentflow.records import ControlError

SCHEMA_VERSION = 1
"""Version of the schema below; a database from a newer plankit is refused."""

BUSY_TIMEOUT = 60.0
"""Seconds a writer waits for another writer before giving up."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    session_id       TEXT PRIMARY KEY,
    agent_session_id TEXT UNIQUE,
    topic            TEXT,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS threads (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id  TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL REFERENCES sessions(session_id),
    kind       TEXT NOT NULL CHECK (kind IN ('current', 'additional')),
    plan_dir   TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    removed_at TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS threads_one_current ON threads(session_id)
    WHERE kind = 'current';
CREATE INDEX IF NOT EXISTS threads_by_session ON threads(session_id, seq);
CREATE TABLE IF NOT EXISTS commits (
    commit_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id   TEXT NOT NULL REFERENCES sessions(session_id),
    number       INTEGER NOT NULL,
    committed_at TEXT NOT NULL,
    snapshot     TEXT NOT NULL,
    UNIQUE (session_id, number)
);
CREATE TABLE IF NOT EXISTS commit_threads (
    commit_id  INTEGER NOT NULL REFERENCES commits(commit_id),
    thread_id  TEXT NOT NULL REFERENCES threads(thread_id),
    position   INTEGER NOT NULL,
    task_count INTEGER NOT NULL,
    PRIMARY KEY (commit_id, thread_id)
);
"""


def now() -> str:
    """The current time, UTC, ISO 8601 with milliseconds (``2026-01-31T12:00:00.000Z``)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _unusable(path: str, exc: BaseException) -> ControlError:
    return ControlError(
        "state-unusable",
        f"{path} cannot be used as the agentflow database ({exc}); check AGENTFLOW_HOME, "
        "or move the file aside to start afresh",
    )


def connect(home: str) -> sqlite3.Connection:
    """Open (creating if needed) the database under ``home``, schema up to date."""
    path = os.path.join(home, "agentflow.db")
    try:
        os.makedirs(home, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise ControlError(
            "state-unusable",
            f"cannot create the agentflow home {home} ({exc.strerror}); set AGENTFLOW_HOME to a "
            "writable directory",
        ) from None
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None)
    except sqlite3.Error as exc:
        raise _unusable(path, exc) from None
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            _create(conn, home)
        elif version > SCHEMA_VERSION:
            raise ControlError(
                "state-unusable",
                f"{path} was written by a newer plankit (schema {version}); upgrade plankit",
            )
    except ControlError:
        conn.close()
        raise
    except sqlite3.Error as exc:
        conn.close()
        raise _unusable(path, exc) from None
    return conn


def _create(conn: sqlite3.Connection, home: str) -> None:
    from filelock import FileLock

    # The first process to arrive creates the schema; the others wait and re-check.
    with FileLock(os.path.join(home, ".init.lock"), timeout=BUSY_TIMEOUT):
        if conn.execute("PRAGMA user_version").fetchone()[0] != 0:
            return
        conn.execute("PRAGMA journal_mode = WAL")
        with transaction(conn):
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction: ``BEGIN IMMEDIATE``, then COMMIT, or ROLLBACK on any error."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        raise ControlError(
            "busy",
            f"the agentflow database stayed locked for {BUSY_TIMEOUT:.0f} s ({exc}); retry",
        ) from None
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    try:
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
