"""The control plane on SQLite, the embedded default: ``AGENTFLOW_HOME/agentflow.db``.

One file in WAL mode, so readers never wait for a writer.  Every change runs in one
``BEGIN IMMEDIATE`` transaction: the write lock is taken at the start, so concurrent
writers queue up behind the busy timeout instead of failing or interleaving, and a
failure rolls everything back.  PostgreSQL (:mod:`plankit.agentflow.pgstore`) is the
shared control plane for several hosts; both implement
:class:`~plankit.agentflow.database.Database` and run the migrations of
:mod:`plankit.agentflow.schema`.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Iterator, Sequence

from plankit.agentflow.database import Database, now
from plankit.agentflow.records import ControlError
from plankit.agentflow.schema import (
    PG_ONLY,
    RECORD_VERSION,
    SCHEMA_VERSION,
    VERSION_TABLE,
    apply_migrations,
    newer_schema,
)

_VERSION_TABLE_FOUND = (
    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
)
"""A row when the database has the table of applied migrations (the first release had
only ``PRAGMA user_version``)."""

__all__ = ["BUSY_TIMEOUT", "Database", "SqliteDatabase", "connect", "now", "transaction"]

BUSY_TIMEOUT = 60.0
"""Seconds a writer waits for another writer before giving up."""


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
        if self.execute(_VERSION_TABLE_FOUND).fetchone() is not None:
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
    from filelock import FileLock, Timeout

    # The first process to arrive migrates; the others wait and re-check.
    lock = FileLock(os.path.join(home, ".init.lock"), timeout=BUSY_TIMEOUT)
    try:
        lock.acquire()
    except Timeout:
        raise ControlError(
            "busy",
            f"another plankit has been migrating {db.where} for {BUSY_TIMEOUT:.0f} s; retry",
        ) from None
    try:
        start = db.version()
        if start >= SCHEMA_VERSION:
            return
        if start == 0:
            db.conn.execute("PRAGMA journal_mode = WAL")
        with db.transaction():
            if start == 1 and db.execute(_VERSION_TABLE_FOUND).fetchone() is None:
                # A database of the first release: its version was only PRAGMA user_version.
                db.execute(VERSION_TABLE)
                db.execute(RECORD_VERSION, (1, now()))
            apply_migrations(db, start)
            # Older plankits read only this: they refuse the newer schema.
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    finally:
        lock.release()


def connect(home: str, *, write: bool = True) -> SqliteDatabase:
    """The SQLite database under ``home`` (see :func:`connect_sqlite`)."""
    return connect_sqlite(home, write=write)


@contextlib.contextmanager
def transaction(db: Database) -> Iterator[Database]:
    """One write transaction on ``db``."""
    with db.transaction():
        yield db
