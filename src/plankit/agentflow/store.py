"""The control plane's database: one schema with migrations, on SQLite or PostgreSQL.

SQLite is the embedded default: one file, ``AGENTFLOW_HOME/agentflow.db``, in WAL mode
so readers never wait for a writer.  Every change runs in one ``BEGIN IMMEDIATE``
transaction: the write lock is taken at the start, so concurrent writers queue up
behind the busy timeout instead of failing or interleaving, and a failure rolls
everything back.  PostgreSQL (:mod:`plankit.agentflow.pgstore`) is the shared control
plane for several hosts; the SQL is the same, with ``?`` placeholders.

Both run the same migrations (:data:`MIGRATIONS`); ``schema_version`` records each one
applied, and a database from a newer plankit is refused.  Schema::

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
(``now_ms()``), so that agents on hosts whose clocks differ agree on when a lease ends.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from plankit.agentflow.records import ControlError

BUSY_TIMEOUT = 60.0
"""Seconds a writer waits for another writer before giving up."""

T = TypeVar("T")

# Each migration: its version, what it adds, and its statements.  ``{serial}`` is an
# integer key the database assigns (never reused).
MIGRATIONS: list[tuple[int, str, list[str]]] = [
    (
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
    (
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
    ),
]

SCHEMA_VERSION = MIGRATIONS[-1][0]
"""Version of the newest schema; a database from a newer plankit is refused."""


def now() -> str:
    """The current time, UTC, ISO 8601 with milliseconds (``2026-01-31T12:00:00.000Z``)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Database:
    """A connection to the control plane's database, whichever it is.

    SQL is written once with ``?`` placeholders; ``now_ms()`` is the database's clock
    in milliseconds.  Subclasses adapt it to their driver.
    """

    dialect = ""
    """``sqlite`` or ``postgresql``."""
    where = ""
    """Where the database is, for messages (a path, or a URL without its password)."""
    read_only = False
    """True when opened only for reading."""
    for_update = ""
    """Appended to a SELECT that locks the rows it reads until the transaction ends."""
    skip_locked = ""
    """Appended to a SELECT that locks the rows it reads, skipping rows others hold."""

    def execute(self, sql: str, params: Sequence[object] = ()) -> Any:
        """Run one statement; a cursor with ``fetchone`` and ``fetchall``."""
        raise NotImplementedError

    def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        """Run one statement for each row of parameters."""
        raise NotImplementedError

    def transaction(self) -> contextlib.AbstractContextManager[None]:
        """One write transaction: committed at the end, rolled back on any error."""
        raise NotImplementedError

    def close(self) -> None:
        """Close the connection."""
        raise NotImplementedError

    @property
    def closed(self) -> bool:
        """Whether the connection is closed (and a new one is needed)."""
        return False

    def discard_if_broken(self) -> None:
        """After an error: close the connection if it cannot serve another request."""

    def is_error(self, exc: BaseException) -> bool:
        """Whether ``exc`` is an error of the database driver."""
        raise NotImplementedError

    def is_retryable(self, exc: BaseException) -> bool:
        """Whether the transaction that raised ``exc`` may simply be run again."""
        return False

    def is_unique_violation(self, exc: BaseException) -> bool:
        """Whether ``exc`` is a UNIQUE constraint refusing a row."""
        raise NotImplementedError

    def lock_session(self, session_id: str) -> None:
        """Inside a transaction: serialize with other writers of the same session."""

    def write(self, action: Callable[[Database], T], attempts: int = 8) -> T:
        """Run ``action`` in a transaction, again when the database asks for it (a
        deadlock or serialization failure between concurrent writers)."""
        for attempt in range(attempts):
            try:
                with self.transaction():
                    return action(self)
            except Exception as exc:
                if attempt + 1 < attempts and self.is_retryable(exc):
                    time.sleep(0.002 * (attempt + 1))
                    continue
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    # --- the schema -------------------------------------------------------------

    def version(self) -> int:
        """The schema version of this database (0 when it is new)."""
        raise NotImplementedError

    def ddl(self, statement: str) -> str:
        """A migration statement in this database's dialect."""
        raise NotImplementedError

    def apply_migrations(self, start: int) -> None:
        """Apply every migration after version ``start`` (inside a transaction)."""
        self.execute(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            "version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        for version, _, statements in MIGRATIONS:
            if version <= start:
                continue
            for statement in statements:
                self.execute(self.ddl(statement))
            self.execute(
                "INSERT INTO schema_version (version, applied_at) VALUES (?, ?)", (version, now())
            )
            if version == 2 and start >= 1:
                _track_existing_commits(self)


def _track_existing_commits(db: Database) -> None:
    """Migration 2 on a database with commits: track the latest commit of each session."""
    import json

    from plankit.agentflow import tracking
    from plankit.agentflow.records import CommitRecord

    rows = db.execute(
        "SELECT c.session_id, c.snapshot FROM commits c WHERE c.number = "
        "(SELECT MAX(number) FROM commits d WHERE d.session_id = c.session_id)"
    ).fetchall()
    for session_id, snapshot in rows:
        tracking.sync(db, str(session_id), CommitRecord.from_dict(json.loads(snapshot)))


def newer_schema(where: str, version: int) -> ControlError:
    """The refusal of a database written by a newer plankit."""
    return ControlError(
        "state-unusable",
        f"{where} was written by a newer plankit (schema {version}, this one knows "
        f"{SCHEMA_VERSION}); upgrade plankit",
    )


# --- SQLite ------------------------------------------------------------------------------


class SqliteDatabase(Database):
    """The embedded database, ``AGENTFLOW_HOME/agentflow.db``."""

    dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection, path: str, read_only: bool):
        self.conn = conn
        self.where = path
        self.read_only = read_only

    def execute(self, sql: str, params: Sequence[object] = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, params)

    def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        self.conn.executemany(sql, rows)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        if self.read_only:
            raise read_only_error(os.path.dirname(self.where))
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if "readonly" in str(exc):
                raise read_only_error(os.path.dirname(self.where)) from None
            raise ControlError(
                "busy",
                f"the agentflow database stayed locked for {BUSY_TIMEOUT:.0f} s ({exc}); retry",
            ) from None
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        try:
            self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self.conn.close()

    def is_error(self, exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.Error)

    def is_unique_violation(self, exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.IntegrityError) and "UNIQUE" in str(exc)

    def version(self) -> int:
        found = self.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        ).fetchone()
        if found is not None:
            return int(self.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] or 0)
        return int(self.execute("PRAGMA user_version").fetchone()[0])

    def ddl(self, statement: str) -> str:
        return statement.replace("{serial}", "INTEGER PRIMARY KEY AUTOINCREMENT")


def read_only_error(home: str) -> ControlError:
    """The refusal of a change when the state directory cannot be written."""
    return ControlError(
        "read-only",
        f"{home} is read-only: this command changes the agentflow state and cannot; run it "
        "where AGENTFLOW_HOME is writable (reading commands such as `session list` and "
        "`plan show` work)",
    )


def _unusable(path: str, exc: BaseException) -> ControlError:
    return ControlError(
        "state-unusable",
        f"{path} cannot be used as the agentflow database ({exc}); check AGENTFLOW_HOME, "
        "or restore the file from a backup",
    )


def _writable(path: str) -> bool:
    return os.access(path, os.W_OK)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _plan_dirs(home: str) -> int:
    """How many plan directories ``home/plans`` holds (hidden ones not counted)."""
    try:
        with os.scandir(os.path.join(home, "plans")) as entries:
            return sum(1 for e in entries if not e.name.startswith(".") and e.is_dir())
    except OSError:
        return 0


def connect_sqlite(home: str, *, write: bool = True) -> SqliteDatabase:
    """Open the database under ``home``, creating or migrating it when it may write.

    A reading command on a read-only ``home`` opens the file read-only; a database
    missing next to existing plan directories is reported, never silently recreated.
    """
    path = os.path.join(home, "agentflow.db")
    exists = os.path.exists(path)
    if not exists and _plan_dirs(home):
        raise ControlError(
            "state-missing",
            f"{path} is missing but {os.path.join(home, 'plans')} holds "
            f"{_plan_dirs(home)} plan directories: the sessions that own them would be "
            "lost; restore the database from a backup, or move plans/ aside to start afresh",
        )
    read_only = False
    if os.path.isdir(home) and not (_writable(home) and (not exists or _writable(path))):
        if write or not exists:
            if not exists:
                raise ControlError(
                    "read-only",
                    f"{home} is read-only and holds no agentflow database yet; set "
                    "AGENTFLOW_HOME to a writable directory",
                )
            raise read_only_error(home)
        read_only = True
    if not read_only:
        try:
            os.makedirs(home, mode=0o700, exist_ok=True)
        except OSError as exc:
            raise ControlError(
                "state-unusable",
                f"cannot create the agentflow home {home} ({exc.strerror}); set AGENTFLOW_HOME "
                "to a writable directory",
            ) from None
    try:
        if read_only:
            try:
                conn = sqlite3.connect(
                    f"file:{path}?mode=ro", uri=True, timeout=BUSY_TIMEOUT, isolation_level=None
                )
                conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
            except sqlite3.OperationalError:
                # WAL needs its -shm file, which a read-only directory cannot get: nobody
                # can write there either, so the file is read as it is.
                conn = sqlite3.connect(f"file:{path}?immutable=1", uri=True, isolation_level=None)
        else:
            conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None)
    except sqlite3.Error as exc:
        raise _unusable(path, exc) from None
    db = SqliteDatabase(conn, path, read_only)
    try:
        conn.create_function("now_ms", 0, _now_ms)
        conn.execute("PRAGMA foreign_keys = ON")
        version = db.version()
        if version > SCHEMA_VERSION:
            raise newer_schema(path, version)
        if version < SCHEMA_VERSION:
            if read_only:
                raise ControlError(
                    "read-only",
                    f"{path} has an older schema (version {version}) that must be upgraded "
                    "by a writing command, and its directory is read-only",
                )
            _migrate_sqlite(db, home)
    except ControlError:
        conn.close()
        raise
    except sqlite3.Error as exc:
        conn.close()
        raise _unusable(path, exc) from None
    return db


def _migrate_sqlite(db: SqliteDatabase, home: str) -> None:
    from filelock import FileLock

    # The first process to arrive migrates; the others wait and re-check.
    with FileLock(os.path.join(home, ".init.lock"), timeout=BUSY_TIMEOUT):
        start = db.version()
        if start >= SCHEMA_VERSION:
            return
        if start == 0:
            db.conn.execute("PRAGMA journal_mode = WAL")
        with db.transaction():
            if start == 1 and (
                db.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
                ).fetchone()
                is None
            ):
                # A database of the first release: its version was only PRAGMA user_version.
                db.execute(
                    "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, "
                    "applied_at TEXT NOT NULL)"
                )
                db.execute(
                    "INSERT INTO schema_version (version, applied_at) VALUES (1, ?)", (now(),)
                )
            db.apply_migrations(start)
            # Older plankits read only this: they refuse the newer schema.
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def connect(home: str, *, write: bool = True) -> SqliteDatabase:
    """The SQLite database under ``home`` (see :func:`connect_sqlite`)."""
    return connect_sqlite(home, write=write)


@contextlib.contextmanager
def transaction(db: Database) -> Iterator[Database]:
    """One write transaction on ``db``."""
    with db.transaction():
        yield db
