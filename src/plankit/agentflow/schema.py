"""The control plane's schema: the tables both stores create, and their migrations.

Both stores (:mod:`plankit.agentflow.store` for SQLite, :mod:`plankit.agentflow.pgstore`
for PostgreSQL) run the same migrations (:data:`MIGRATIONS`); ``schema_version``
records each one applied, and a database from a newer plankit is refused.  Schema::

    sessions(session_id PK, agent_session_id UNIQUE, topic, created_at, updated_at,
             ended_at, host)
    threads(seq PK, thread_id UNIQUE, session_id → sessions,
            kind 'current'|'additional', plan_dir UNIQUE, created_at, removed_at)
    commits(commit_id PK, session_id → sessions, number, committed_at, snapshot JSON;
            UNIQUE(session_id, number))
    commit_threads(commit_id → commits, thread_id → threads, position, task_count)
    tasks(thread_id, task_id PK; session_id, position, agent, deps, pending, state,
          holder, holder_host, claim_id, claims, lease_until, changed_at, reason,
          commit_number, spec JSON)
    task_deps(thread_id, task_id, dep_id PK; session_id)
    schema_version(version PK, applied_at)

Times of leases are milliseconds since the epoch from the database's clock
(``now_ms()``).  Migration 3 gives PostgreSQL the claim and the done of
:mod:`plankit.agentflow.claims` as functions (SQLite runs the same statements itself).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import NamedTuple

from plankit.agentflow.claims import CLAIM_FUNCTION, DONE_FUNCTION
from plankit.agentflow.database import Database, now
from plankit.agentflow.records import CommitRecord, ControlError

PG_ONLY = "-- postgresql only\n"
"""The start of a migration statement that only PostgreSQL runs."""

VERSION_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_version ("
    "version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
)
"""The table of the migrations applied, made before the first is looked for."""

RECORD_VERSION = "INSERT INTO schema_version (version, applied_at) VALUES (?, ?)"
"""A migration applied: its version and when."""

LATEST_COMMITS = (
    "SELECT c.session_id, c.snapshot FROM commits c WHERE c.number = "
    "(SELECT MAX(number) FROM commits d WHERE d.session_id = c.session_id)"
)
"""The latest commit of each session: its session and its snapshot."""


def _track_existing_commits(db: Database) -> None:
    """Migration 2's data: track the latest commit of each session (a new database has
    none)."""
    from plankit.agentflow import tracking

    for session_id, snapshot in db.execute(LATEST_COMMITS).fetchall():
        tracking.sync(db, str(session_id), CommitRecord.from_dict(json.loads(snapshot)))


class Migration(NamedTuple):
    """One step of the schema."""

    version: int
    """The version it brings the database to."""
    what: str
    """What it adds, in words."""
    statements: list[str]
    """Its statements; ``{serial}`` is an integer key the database assigns (never
    reused), and one starting with :data:`PG_ONLY` runs only on PostgreSQL."""
    data: Callable[[Database], None] | None = None
    """What it does to the rows already there, after its statements."""


MIGRATIONS: list[Migration] = [
    Migration(
        1,
        "sessions, threads and commits",
        [
            """CREATE TABLE IF NOT EXISTS sessions (
                session_id       TEXT PRIMARY KEY,
                agent_session_id TEXT UNIQUE,
                topic            TEXT,
                created_at       TEXT NOT NULL,
                updated_at       TEXT NOT NULL
            )""",
            """CREATE TABLE IF NOT EXISTS threads (
                seq        {serial},
                thread_id  TEXT NOT NULL UNIQUE,
                session_id TEXT NOT NULL REFERENCES sessions(session_id),
                kind       TEXT NOT NULL CHECK (kind IN ('current', 'additional')),
                plan_dir   TEXT NOT NULL UNIQUE,
                created_at TEXT NOT NULL,
                removed_at TEXT
            )""",
            """CREATE UNIQUE INDEX IF NOT EXISTS threads_one_current ON threads(session_id)
                WHERE kind = 'current'""",
            "CREATE INDEX IF NOT EXISTS threads_by_session ON threads(session_id, seq)",
            """CREATE TABLE IF NOT EXISTS commits (
                commit_id    {serial},
                session_id   TEXT NOT NULL REFERENCES sessions(session_id),
                number       INTEGER NOT NULL,
                committed_at TEXT NOT NULL,
                snapshot     TEXT NOT NULL,
                UNIQUE (session_id, number)
            )""",
            """CREATE TABLE IF NOT EXISTS commit_threads (
                commit_id  BIGINT NOT NULL REFERENCES commits(commit_id),
                thread_id  TEXT NOT NULL REFERENCES threads(thread_id),
                position   INTEGER NOT NULL,
                task_count INTEGER NOT NULL,
                PRIMARY KEY (commit_id, thread_id)
            )""",
        ],
    ),
    Migration(
        2,
        "work tracking: tasks, their dependencies and claims; sessions end",
        [
            "ALTER TABLE sessions ADD COLUMN ended_at TEXT",
            "ALTER TABLE sessions ADD COLUMN host TEXT",
            """CREATE TABLE tasks (
                thread_id     TEXT NOT NULL REFERENCES threads(thread_id),
                task_id       TEXT NOT NULL,
                session_id    TEXT NOT NULL REFERENCES sessions(session_id),
                position      INTEGER NOT NULL,
                agent         TEXT,
                deps          TEXT NOT NULL,
                pending       INTEGER NOT NULL,
                state         TEXT NOT NULL CHECK (state IN
                              ('waiting', 'ready', 'claimed', 'done', 'failed', 'blocked')),
                holder        TEXT,
                holder_host   TEXT,
                claim_id      TEXT,
                claims        INTEGER NOT NULL DEFAULT 0,
                lease_until   BIGINT,
                changed_at    BIGINT NOT NULL,
                reason        TEXT,
                commit_number INTEGER NOT NULL,
                spec          TEXT NOT NULL,
                PRIMARY KEY (thread_id, task_id)
            )""",
            "CREATE INDEX tasks_by_state ON tasks(session_id, state, position)",
            """CREATE TABLE task_deps (
                thread_id  TEXT NOT NULL,
                task_id    TEXT NOT NULL,
                dep_id     TEXT NOT NULL,
                session_id TEXT NOT NULL,
                PRIMARY KEY (thread_id, task_id, dep_id)
            )""",
            "CREATE INDEX task_deps_by_dep ON task_deps(thread_id, dep_id)",
            "CREATE INDEX task_deps_by_session ON task_deps(session_id)",
        ],
        _track_existing_commits,
    ),
    Migration(
        3,
        "PostgreSQL: a claim and a done in one round trip each (functions)",
        [PG_ONLY + CLAIM_FUNCTION, PG_ONLY + DONE_FUNCTION],
    ),
]

SCHEMA_VERSION = MIGRATIONS[-1].version
"""Version of the newest schema; a database from a newer plankit is refused."""


def apply_migrations(db: Database, start: int) -> None:
    """Apply every migration after version ``start`` to ``db`` (inside a transaction)."""
    db.execute(VERSION_TABLE)
    for version, _, statements, data in MIGRATIONS:
        if version <= start:
            continue
        for statement in statements:
            db.execute(db.ddl(statement))
        db.execute(RECORD_VERSION, (version, now()))
        if data is not None:
            data(db)


def newer_schema(where: str, version: int) -> ControlError:
    """The refusal of a database written by a newer plankit."""
    return ControlError(
        "state-unusable",
        f"{where} was written by a newer plankit (schema {version}, this one knows "
        f"{SCHEMA_VERSION}); upgrade plankit",
    )
