"""The control plane: sessions, thread plan directories and commits.

:class:`ControlPlane` is the one library behind ``agentctl`` and the MCP tools.  The
host starts a session (:meth:`~ControlPlane.start_session`), which allocates the
current thread's plan directory; the agent asks for more directories, removes them,
clears the current one and commits.  State is in SQLite (:mod:`plankit.agentflow.store`)
under ``AGENTFLOW_HOME``; plan directories are under ``AGENTFLOW_HOME/plans``.

Guarantees:

* every database change is one transaction; a failed request changes nothing;
* concurrent requests (threads, processes, agents) never get the same thread id or
  directory and never lose an allocation (``BEGIN IMMEDIATE`` + UNIQUE constraints);
* the file operations of one session (remove, clear, commit) are serialized by a lock
  file, so a commit sees a stable set of directories (a thread allocated while a
  commit runs is simply not part of it);
* nothing is written or deleted outside ``AGENTFLOW_HOME``; a plan directory that was
  replaced by a symlink is refused, never followed;
* the tasks of a session's latest commit are tracked (:mod:`plankit.agentflow.tracking`):
  agents claim them, one each, and report them done or failed.

The database is SQLite under ``AGENTFLOW_HOME``, or the PostgreSQL database named by
``database`` or ``$AGENTFLOW_DATABASE_URL`` (:mod:`plankit.agentflow.pgstore`), shared by
agents on several hosts.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Callable, Iterator
from typing import TypeVar

from plankit.agentflow import dirs, queries, tracking
from plankit.agentflow.checks import (
    check_agent_session_id,
    clean_topic,
    session_exists,
)
from plankit.agentflow.database import Database, now
from plankit.agentflow.model import PlanDirError
from plankit.agentflow.paths import ENV_DATABASE, home_dir, new_id
from plankit.agentflow.records import (
    CommitRecord,
    ControlError,
    RuntimeContext,
    Session,
    SessionSummary,
    TaskStatus,
    Thread,
)
from plankit.agentflow.store import BUSY_TIMEOUT, connect, transaction
from plankit.agentflow.work import WorkMixin

T = TypeVar("T")


class ControlPlane(WorkMixin):
    """The agentflow control plane rooted at ``home`` (default: ``$AGENTFLOW_HOME``).

    ``session`` arguments name a session by its internal id or the agent's session id;
    ``None`` means ``$AGENTFLOW_SESSION_ID``.  Failures raise
    :class:`~plankit.agentflow.records.ControlError` (and ``commit``
    :class:`~plankit.agentflow.model.PlanDirError`) with nothing changed.
    """

    def __init__(self, home: str | os.PathLike[str] | None = None, *, database: str | None = None):
        self.home = home_dir(home)
        """The state directory, absolute and resolved."""
        self.plans_root = os.path.join(self.home, "plans")
        """Where plan directories are allocated."""
        self.database = database or os.environ.get(ENV_DATABASE) or None
        """The PostgreSQL URL of a shared database, or ``None`` for SQLite under home."""
        self.host = socket.gethostname()
        """This host's name, recorded with sessions and claims."""
        self._pool: dict[tuple[int, int], Database] = {}
        self._session_ids: dict[str, str] = {}

    def _connect(self, write: bool) -> Database:
        import threading

        # One connection per process and thread, kept: opening one costs more than a
        # claim (and closing SQLite's last one checkpoints its log).
        key = (os.getpid(), threading.get_ident())
        db = self._pool.get(key)
        if db is not None and not db.closed and db.usable(write):
            return db
        if db is not None:
            with contextlib.suppress(Exception):
                db.close()
        if self.database is None:
            db = connect(self.home, write=write)
        else:
            from plankit.agentflow.pgstore import connect_postgres

            db = connect_postgres(self.database)
        self._pool[key] = db
        return db

    def close(self) -> None:
        """Close the connections kept to a PostgreSQL database."""
        for db in self._pool.values():
            with contextlib.suppress(Exception):
                db.close()
        self._pool.clear()

    @contextlib.contextmanager
    def _db(self, write: bool = True) -> Iterator[Database]:
        db = self._connect(write)
        try:
            yield db
        except Exception as exc:
            if not db.is_error(exc):
                raise
            db.discard_if_broken()
            raise ControlError(
                "state-unusable",
                f"the agentflow database ({db.where}) failed ({exc}); nothing was changed",
            ) from None

    def _read(self, action: Callable[[Database], T]) -> T:
        with self._db(write=False) as db:
            return action(db)

    @contextlib.contextmanager
    def _locked(self, session_id: str) -> Iterator[None]:
        from filelock import FileLock, Timeout

        locks = os.path.join(self.home, "locks")
        os.makedirs(locks, mode=0o700, exist_ok=True)
        lock = FileLock(os.path.join(locks, f"{session_id}.lock"), timeout=BUSY_TIMEOUT)
        try:
            lock.acquire()
        except Timeout:
            raise ControlError(
                "busy",
                f"another agentctl command has held session {session_id} for "
                f"{BUSY_TIMEOUT:.0f} s; retry",
            ) from None
        try:
            yield
        finally:
            lock.release()

    def _local(self, found: Session) -> None:
        """Refuse to touch the plan directories of a session started on another host."""
        if self.database is not None and found.host not in (None, self.host):
            raise ControlError(
                "session-elsewhere",
                f"session {found.session_id} was started on host {found.host!r}, where its plan "
                f"directories are; run plan commands there (this is {self.host!r}); tasks can be "
                "claimed from any host",
            )

    def _find(self, conn: Database, session: str | None, *, live: bool = False) -> Session:
        found = queries.find_session(
            conn, session, self.home if self.database is None else conn.where
        )
        if live and found.ended_at is not None:
            raise ControlError(
                "session-ended",
                f"session {found.session_id} ended at {found.ended_at}; start a new one with "
                "`agentctl session start`",
            )
        return found

    # --- host side ----------------------------------------------------------------

    def start_session(self, agent_session_id: str | None = None) -> RuntimeContext:
        """Create a session and its current thread directory; its runtime context."""
        if agent_session_id is not None:
            check_agent_session_id(agent_session_id)
        session = Session(new_id(), agent_session_id, None, now(), host=self.host)
        plan_dir: str | None = None
        with self._db() as conn:
            try:
                with transaction(conn):
                    taken = (
                        queries.session_of_agent(conn, agent_session_id)
                        if agent_session_id is not None
                        else None
                    )
                    if agent_session_id is not None and queries.is_session_id(
                        conn, agent_session_id
                    ):
                        raise ControlError(
                            "session-ambiguous",
                            f"{agent_session_id!r} is the internal id of another session; an "
                            "agent session id must not name another session",
                        )
                    if taken is not None:
                        raise session_exists(agent_session_id, taken)
                    queries.insert_session(conn, session)
                    path = os.path.join(self.plans_root, session.session_id)
                    current = queries.insert_thread(
                        conn, session.session_id, True, path, session.created_at
                    )
                    plan_dir = dirs.allocate(self.plans_root, session.session_id)
            except BaseException as exc:
                dirs.discard(plan_dir)
                if agent_session_id is not None and conn.is_unique_violation(exc):
                    # Another host started it between our check and our insert.
                    taken = queries.session_of_agent(conn, agent_session_id)
                    if taken is not None:
                        raise session_exists(agent_session_id, taken) from None
                raise
        return RuntimeContext(session, self.home, current, ())

    def context(self, session: str | None = None, *, live: bool = False) -> RuntimeContext:
        """The runtime context of a session (for a resumed agent: its existing directories)."""
        with self._db(write=False) as conn:
            found = self._find(conn, session, live=live)
            threads = queries.active_threads(conn, found.session_id)
        current = next(thread for thread in threads if thread.current)
        extra = tuple(thread for thread in threads if not thread.current)
        return RuntimeContext(found, self.home, current, extra)

    def sessions(self) -> list[SessionSummary]:
        """Every session, newest first, with its thread and commit counts."""
        return self._read(queries.session_summaries)

    def show(self, session: str | None = None, number: int | None = None) -> CommitRecord:
        """A recorded commit of a session: number ``number``, or the latest."""
        return self.progress(session, number)[0]

    def progress(
        self, session: str | None = None, number: int | None = None
    ) -> tuple[CommitRecord, list[TaskStatus] | None]:
        """A recorded commit and, when it is the latest (the one tracked), the state of
        each of its tasks in plan order; ``None`` for an older commit."""
        with self._db(write=False) as conn:
            found = self._find(conn, session)
            record = queries.load_commit(conn, found.session_id, number)
            if tracking.tracked_commit(conn, found.session_id) != record.number:
                return record, None
            return record, tracking.statuses(conn, found.session_id)

    # --- agent side ---------------------------------------------------------------

    def plan_dir(self, session: str | None = None) -> Thread:
        """The current thread and its plan directory (recreated if it was deleted)."""
        context = self.context(session, live=True)
        self._local(context.session)
        thread = context.current
        dirs.check(self.plans_root, thread)
        dirs.ensure(thread.plan_dir)
        return thread

    def request_thread_dir(self, session: str | None = None) -> Thread:
        """Allocate an additional thread and its (new, empty) plan directory.

        The allocation is one database transaction (no session lock): a commit running
        at the same time validates the threads that existed when it started.
        """
        name = new_id()
        plan_dir: str | None = None
        with self._db() as conn:
            found = self._find(conn, session, live=True)
            self._local(found)
            try:
                with transaction(conn):
                    path = os.path.join(self.plans_root, name)
                    thread = queries.insert_thread(conn, found.session_id, False, path, now())
                    plan_dir = dirs.allocate(self.plans_root, name)
            except BaseException:
                dirs.discard(plan_dir)
                raise
        return thread

    def remove_thread(self, thread_id: str, session: str | None = None) -> Thread:
        """Remove an additional thread: its directory is deleted, it leaves the next commit.

        The removal is recorded first, then the directory is deleted: a process killed in
        between leaves the thread removed and its directory to ``agentctl gc``, never a
        thread that is still allocated without its directory.
        """
        with self._db() as conn:
            found = self._find(conn, session, live=True)
            self._local(found)
            with self._locked(found.session_id):
                thread = queries.find_thread(conn, found.session_id, thread_id)
                if thread.current:
                    raise ControlError(
                        "thread-current",
                        f"{thread_id} is the current thread, which cannot be removed; to drop "
                        "its plan, run `agentctl plan clear-current`",
                    )
                if thread.removed_at is not None:
                    raise ControlError(
                        "thread-removed", f"{thread_id} was already removed at {thread.removed_at}"
                    )
                dirs.check(self.plans_root, thread)
                removed_at = now()
                with transaction(conn):
                    queries.mark_removed(conn, thread_id, removed_at)
                with contextlib.suppress(OSError):  # what is left, gc deletes
                    dirs.delete(dirs.move_aside(self.plans_root, thread.plan_dir))
        return Thread(
            thread.thread_id,
            thread.session_id,
            False,
            thread.plan_dir,
            thread.created_at,
            removed_at,
        )

    def clear_current(self, session: str | None = None) -> tuple[Thread, int]:
        """Delete the plan files of the current thread, keeping its directory.

        Returns the thread and the number of files removed.
        """
        context = self.context(session, live=True)
        self._local(context.session)
        current = context.current
        with self._locked(current.session_id):
            dirs.check(self.plans_root, current)
            return current, dirs.clear(current.plan_dir)

    def set_topic(self, topic: str, session: str | None = None) -> Session:
        """Set what the session is about (one line, at most :data:`MAX_TOPIC` characters)."""
        text = clean_topic(topic)
        with self._db() as conn:
            found = self._find(conn, session, live=True)
            with transaction(conn):
                queries.set_topic(conn, found.session_id, text, now())
        return Session(
            found.session_id, found.agent_session_id, text, found.created_at, None, found.host
        )

    def commit(self, session: str | None = None) -> CommitRecord:
        """Validate every allocated, non-removed thread directory and record a commit.

        Raises :class:`~plankit.agentflow.model.PlanDirError` with the problems of every
        directory at once; nothing is recorded then.
        """
        from plankit.agentflow.commit import check_threads

        with self._db() as conn:
            found = self._find(conn, session, live=True)
            self._local(found)
            with self._locked(found.session_id):
                threads = queries.active_threads(conn, found.session_id)
                for thread in threads:
                    dirs.check(self.plans_root, thread)
                plans, skipped, problems = check_threads(threads)
                if problems:
                    raise PlanDirError(problems)

                def record(db: Database) -> CommitRecord:
                    db.lock_session(found.session_id)
                    done = queries.insert_commit(db, found.session_id, now(), plans, skipped)
                    tracking.sync(db, found.session_id, done)
                    return done

                return conn.write(record)

    # --- the end of a session -------------------------------------------------------

    def end_session(self, session: str | None = None) -> Session:
        """End a session: no more directories, commits or claims; its tasks in progress
        may still be reported.  Ending an ended session changes nothing."""
        with self._db() as conn:
            found = self._find(conn, session)
            if found.ended_at is not None:
                return found
            when = now()
            with transaction(conn):
                queries.end_session(conn, found.session_id, when)
        return Session(
            found.session_id, found.agent_session_id, found.topic, found.created_at, when,
            found.host,
        )  # fmt: skip

    def gc(self, older_than_days: float, *, dry_run: bool = False) -> tuple[list[str], list[str]]:
        """Delete the plan directories of sessions ended more than ``older_than_days``
        days ago, of removed threads, and what interrupted removals left; the sessions
        collected and the directories deleted (or that would be, with ``dry_run``).

        The database keeps every session and commit; only directories go.
        """
        from datetime import UTC, datetime, timedelta

        cutoff = datetime.now(UTC) - timedelta(days=older_than_days)
        before = cutoff.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        with self._db() as conn:
            ended = queries.ended_sessions(conn, before)
            live = queries.live_plan_dirs(conn)
            removed = [
                str(row[0])
                for row in conn.execute(
                    "SELECT plan_dir FROM threads WHERE removed_at IS NOT NULL"
                ).fetchall()
            ]
        paths = [p for _, plan_dirs in ended for p in plan_dirs] + removed
        paths = [p for p in paths if p not in live and os.path.lexists(p)]
        if dry_run:
            with contextlib.suppress(OSError), os.scandir(self.plans_root) as entries:
                paths += [e.path for e in entries if e.name.startswith(".removed-")]
            return [sid for sid, _ in ended], paths
        return [sid for sid, _ in ended], dirs.collect(self.plans_root, paths)
