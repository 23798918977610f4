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

PG_ONLY = "-- postgresql only\n"
"""The start of a migration statement that only PostgreSQL runs."""

_STATUS = (
    "thread_id TEXT, task_id TEXT, state TEXT, holder TEXT, holder_host TEXT, claim_id TEXT, "
    "claims INTEGER, lease_until BIGINT, changed_at BIGINT, reason TEXT, spec TEXT, "
    "expired INTEGER"
)
_RETURNING = (
    "t.thread_id, t.task_id, t.state, t.holder, t.holder_host, t.claim_id, t.claims, "
    "t.lease_until, t.changed_at, t.reason, t.spec, 0"
)

# The claim of tracking.claim as one call: the same two picks (an expired claim first,
# then the first ready task in plan order, rows others hold skipped), the same update,
# and the count of tasks with work left; committed without waiting for the disk (a lost
# claim only returns its task early).  With no task, one row of nulls and the count.
_CLAIM_FUNCTION = f"""
CREATE OR REPLACE FUNCTION agentflow_claim(
    p_session TEXT, p_agent TEXT, p_holder TEXT, p_host TEXT, p_lease BIGINT, p_claim TEXT)
RETURNS TABLE ({_STATUS}, remaining BIGINT) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_thread TEXT;
    v_task TEXT;
    v_now BIGINT := now_ms();
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    IF NOT EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = p_session
                   AND s.ended_at IS NOT NULL) THEN
        SELECT t.thread_id, t.task_id INTO v_thread, v_task FROM tasks t
         WHERE t.session_id = p_session AND t.state = 'claimed' AND t.lease_until < v_now
           AND (p_agent IS NULL OR t.agent IS NULL OR t.agent = p_agent)
         ORDER BY t.lease_until LIMIT 1 FOR UPDATE SKIP LOCKED;
        IF v_thread IS NULL THEN
            SELECT t.thread_id, t.task_id INTO v_thread, v_task FROM tasks t
             WHERE t.session_id = p_session AND t.state = 'ready'
               AND (p_agent IS NULL OR t.agent IS NULL OR t.agent = p_agent)
             ORDER BY t.position LIMIT 1 FOR UPDATE SKIP LOCKED;
        END IF;
    END IF;
    IF v_thread IS NOT NULL THEN
        RETURN QUERY UPDATE tasks t SET state = 'claimed', holder = p_holder,
            holder_host = p_host, claim_id = p_claim, claims = t.claims + 1,
            lease_until = v_now + p_lease, changed_at = v_now, reason = NULL
         WHERE t.thread_id = v_thread AND t.task_id = v_task
         RETURNING {_RETURNING}, (SELECT COUNT(*) FROM tasks c WHERE c.session_id = p_session
                   AND c.state IN ('waiting', 'ready', 'claimed'));
    ELSE
        RETURN QUERY SELECT NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::TEXT,
            NULL::TEXT, NULL::INTEGER, NULL::BIGINT, NULL::BIGINT, NULL::TEXT, NULL::TEXT,
            NULL::INTEGER, (SELECT COUNT(*) FROM tasks c WHERE c.session_id = p_session
                            AND c.state IN ('waiting', 'ready', 'claimed'));
    END IF;
END $$"""

# The usual done of tracking.finish as one call: a task claimed by the claim given is
# done and its dependents count down.  Any other case returns no row, and the caller
# takes the general path (which explains a refusal).
_DONE_FUNCTION = f"""
CREATE OR REPLACE FUNCTION agentflow_done(
    p_session TEXT, p_thread TEXT, p_task TEXT, p_claim TEXT)
RETURNS TABLE ({_STATUS}) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_now BIGINT := now_ms();
BEGIN
    RETURN QUERY UPDATE tasks t SET state = 'done', lease_until = NULL, claim_id = NULL,
        changed_at = v_now, reason = NULL
     WHERE t.session_id = p_session AND t.thread_id = p_thread AND t.task_id = p_task
       AND t.state = 'claimed' AND t.claim_id = p_claim
     RETURNING {_RETURNING};
    IF FOUND THEN
        UPDATE tasks t SET pending = t.pending - 1,
            state = CASE WHEN t.state = 'waiting' AND t.pending = 1 THEN 'ready'
                         ELSE t.state END,
            changed_at = v_now
         WHERE t.thread_id = p_thread AND t.task_id IN
            (SELECT d.task_id FROM task_deps d WHERE d.thread_id = p_thread
             AND d.dep_id = p_task);
    END IF;
END $$"""

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
    (
        3,
        "PostgreSQL: a claim and a done in one round trip each (functions)",
        [PG_ONLY + _CLAIM_FUNCTION, PG_ONLY + _DONE_FUNCTION],
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

    def transaction(self, *, durable: bool = True) -> contextlib.AbstractContextManager[None]:
        """One write transaction: committed at the end, rolled back on any error.

        ``durable=False`` lets a database that can commit without waiting for its disk
        (PostgreSQL's ``synchronous_commit``) do so: for changes that a lost commit
        cannot make wrong, only undone (a claim, which a lease ends anyway).
        """
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

    def usable(self, write: bool) -> bool:
        """Whether this open connection may serve another request (``write``: one that
        changes the state)."""
        return True

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

    def call(self, function: str, params: Sequence[object]) -> list[Any] | None:
        """The rows of a stored function called in a transaction of its own (again on a
        deadlock), or ``None`` when this database has none (SQLite)."""
        return None

    def write(
        self, action: Callable[[Database], T], attempts: int = 8, *, durable: bool = True
    ) -> T:
        """Run ``action`` in a transaction, again when the database asks for it (a
        deadlock or serialization failure between concurrent writers)."""
        for attempt in range(attempts):
            try:
                with self.transaction(durable=durable):
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
        self._queue: int | None = None
        self._closed = False
        self._inode = _inode(path)

    @property
    def closed(self) -> bool:
        return self._closed

    def usable(self, write: bool) -> bool:
        # The file must still be the one opened: a database deleted or replaced since is
        # reported by a new connection, never written through the old one.
        return _inode(self.where) == self._inode and not (write and self.read_only)

    def _enter_queue(self) -> None:
        """Wait for the other writers in the kernel (``flock``), woken the moment the
        lock is free: SQLite's own busy handler sleeps up to 100 ms between tries, which
        leaves the database idle while a dozen processes wait to write."""
        import fcntl

        if self._queue is None:
            path = os.path.join(os.path.dirname(self.where), ".write.lock")
            try:
                self._queue = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError:
                return  # BEGIN IMMEDIATE alone still keeps writers apart
        fcntl.flock(self._queue, fcntl.LOCK_EX)

    def _leave_queue(self) -> None:
        import fcntl

        if self._queue is not None:
            fcntl.flock(self._queue, fcntl.LOCK_UN)

    def execute(self, sql: str, params: Sequence[object] = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, params)

    def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        self.conn.executemany(sql, rows)

    @contextlib.contextmanager
    def transaction(self, *, durable: bool = True) -> Iterator[None]:
        if self.read_only:
            raise read_only_error(os.path.dirname(self.where))
        self._enter_queue()
        try:
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
        finally:
            self._leave_queue()

    def close(self) -> None:
        self._closed = True
        self.conn.close()
        if self._queue is not None:
            os.close(self._queue)
            self._queue = None

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
        if statement.startswith(PG_ONLY):
            return "SELECT 1"
        return statement.replace("{serial}", "INTEGER PRIMARY KEY AUTOINCREMENT")


def _inode(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


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
        if not read_only:
            # In WAL mode: a commit is durable when the process dies, not fsynced at
            # each commit (a power failure may lose the last ones; never corrupts).
            conn.execute("PRAGMA synchronous = NORMAL")
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
