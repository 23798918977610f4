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
  replaced by a symlink is refused, never followed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import stat
from collections.abc import Iterator

from plankit.agentflow.model import PlanDirError, Problem
from plankit.agentflow.paths import ENV_SESSION, home_dir, is_inside, new_id
from plankit.agentflow.records import (
    CommitRecord,
    CommittedThread,
    ControlError,
    RuntimeContext,
    Session,
    SessionSummary,
    Thread,
)
from plankit.agentflow.store import BUSY_TIMEOUT, connect, now, transaction

MAX_TOPIC = 100
"""Longest topic, in characters."""

MAX_AGENT_SESSION_ID = 200
"""Longest agent session id accepted."""


def _session(row: sqlite3.Row | tuple[object, ...]) -> Session:
    sid, agent_sid, topic, created = row[0], row[1], row[2], row[3]
    return Session(
        str(sid),
        None if agent_sid is None else str(agent_sid),
        None if topic is None else str(topic),
        str(created),
    )


def _thread(row: sqlite3.Row | tuple[object, ...]) -> Thread:
    tid, sid, kind, plan_dir, created, removed = row
    return Thread(
        str(tid),
        str(sid),
        kind == "current",
        str(plan_dir),
        str(created),
        None if removed is None else str(removed),
    )


_THREAD_COLUMNS = "thread_id, session_id, kind, plan_dir, created_at, removed_at"
_SESSION_COLUMNS = "session_id, agent_session_id, topic, created_at"


def _one_line(value: str) -> bool:
    return not any(ord(ch) < 32 or 0x7F <= ord(ch) < 0xA0 or ch in "\u2028\u2029" for ch in value)


class ControlPlane:
    """The agentflow control plane rooted at ``home`` (default: ``$AGENTFLOW_HOME``)."""

    def __init__(self, home: str | os.PathLike[str] | None = None):
        self.home = home_dir(home)
        """The state directory, absolute and resolved."""
        self.plans_root = os.path.join(self.home, "plans")
        """Where plan directories are allocated."""

    # --- plumbing -----------------------------------------------------------------

    @contextlib.contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        conn = connect(self.home)
        try:
            yield conn
        except sqlite3.Error as exc:
            raise ControlError(
                "state-unusable", f"the agentflow database failed ({exc}); nothing was changed"
            ) from None
        finally:
            conn.close()

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

    def _find(self, conn: sqlite3.Connection, ref: str | None) -> Session:
        if ref is None:
            ref = os.environ.get(ENV_SESSION) or None
        if ref is None:
            raise ControlError(
                "session-missing",
                f"{ENV_SESSION} is not set; the host starts a session with "
                "`agentctl session start` and exports the variable it prints",
            )
        row = conn.execute(
            f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE session_id = ?", (ref,)
        ).fetchone()
        if row is None:
            row = conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE agent_session_id = ?", (ref,)
            ).fetchone()
        if row is None:
            shown = ref if len(ref) <= 80 else ref[:79] + "…"
            raise ControlError(
                "session-unknown",
                f"no agentflow session {shown!r} under {self.home}; check {ENV_SESSION} "
                "(and AGENTFLOW_HOME), or list sessions with `agentctl session list`",
            )
        return _session(row)

    def _threads(self, conn: sqlite3.Connection, session_id: str) -> list[Thread]:
        """The session's threads that are not removed, the current one first."""
        rows = conn.execute(
            f"SELECT {_THREAD_COLUMNS} FROM threads WHERE session_id = ? AND removed_at IS NULL "
            "ORDER BY kind = 'additional', seq",
            (session_id,),
        ).fetchall()
        return [_thread(row) for row in rows]

    def _insert_thread(
        self, conn: sqlite3.Connection, session_id: str, kind: str, plan_dir: str, created: str
    ) -> Thread:
        cursor = conn.execute(
            "INSERT INTO threads (thread_id, session_id, kind, plan_dir, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (f"pending-{new_id()}", session_id, kind, plan_dir, created),
        )
        thread_id = f"thread_{cursor.lastrowid}"
        conn.execute(
            "UPDATE threads SET thread_id = ? WHERE seq = ?", (thread_id, cursor.lastrowid)
        )
        return Thread(thread_id, session_id, kind == "current", plan_dir, created)

    def _allocate_dir(self, name: str) -> str:
        path = os.path.join(self.plans_root, name)
        try:
            os.makedirs(self.plans_root, mode=0o700, exist_ok=True)
            os.mkdir(path, 0o700)
        except OSError as exc:
            raise ControlError(
                "state-unusable", f"cannot create the plan directory {path} ({exc.strerror})"
            ) from None
        return path

    def _check_dir(self, thread: Thread) -> None:
        """Refuse a plan directory that is not a real directory inside ``plans_root``."""
        path = thread.plan_dir
        if not is_inside(self.plans_root, path):
            raise ControlError(
                "plan-dir-unsafe", f"{path} is outside {self.plans_root}; refusing to touch it"
            )
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return
        if not stat.S_ISDIR(st.st_mode):
            raise ControlError(
                "plan-dir-unsafe",
                f"{path} ({thread.thread_id}) is no longer a directory (a symlink or a file "
                "replaced it); agentflow will not follow it; remove it and run "
                "`agentctl plan dir` to recreate the directory",
            )

    # --- host side ----------------------------------------------------------------

    def start_session(self, agent_session_id: str | None = None) -> RuntimeContext:
        """Create a session and its current thread directory; its runtime context."""
        if agent_session_id is not None:
            if not agent_session_id.strip() or not _one_line(agent_session_id):
                raise ControlError(
                    "session-invalid", "the agent session id must be one non-empty line"
                )
            if len(agent_session_id) > MAX_AGENT_SESSION_ID:
                raise ControlError(
                    "session-invalid",
                    f"the agent session id is {len(agent_session_id)} characters; at most "
                    f"{MAX_AGENT_SESSION_ID}",
                )
        session_id = new_id()
        created = now()
        plan_dir: str | None = None
        with self._db() as conn:
            try:
                with transaction(conn):
                    if agent_session_id is not None:
                        row = conn.execute(
                            "SELECT session_id FROM sessions WHERE agent_session_id = ?",
                            (agent_session_id,),
                        ).fetchone()
                        if row is not None:
                            raise ControlError(
                                "session-exists",
                                f"agent session {agent_session_id!r} already has agentflow "
                                f"session {row[0]}; resume it with `agentctl session context "
                                f"--session {row[0]}`",
                            )
                    conn.execute(
                        "INSERT INTO sessions (session_id, agent_session_id, topic, created_at, "
                        "updated_at) VALUES (?, ?, NULL, ?, ?)",
                        (session_id, agent_session_id, created, created),
                    )
                    current = self._insert_thread(
                        conn,
                        session_id,
                        "current",
                        os.path.join(self.plans_root, session_id),
                        created,
                    )
                    plan_dir = self._allocate_dir(session_id)
            except BaseException:
                if plan_dir is not None:
                    with contextlib.suppress(OSError):
                        os.rmdir(plan_dir)
                raise
        session = Session(session_id, agent_session_id, None, created)
        return RuntimeContext(session, self.home, current, ())

    def context(self, session: str | None = None) -> RuntimeContext:
        """The runtime context of a session (for a resumed agent: its existing directories)."""
        with self._db() as conn:
            found = self._find(conn, session)
            threads = self._threads(conn, found.session_id)
        current = next(thread for thread in threads if thread.current)
        extra = tuple(thread for thread in threads if not thread.current)
        return RuntimeContext(found, self.home, current, extra)

    def sessions(self) -> list[SessionSummary]:
        """Every session, newest first, with its thread and commit counts."""
        with self._db() as conn:
            rows = conn.execute(
                "SELECT s.session_id, s.agent_session_id, s.topic, s.created_at, "
                "(SELECT COUNT(*) FROM threads t WHERE t.session_id = s.session_id "
                " AND t.removed_at IS NULL), "
                "(SELECT COUNT(*) FROM commits c WHERE c.session_id = s.session_id), "
                "(SELECT MAX(committed_at) FROM commits c WHERE c.session_id = s.session_id) "
                "FROM sessions s ORDER BY s.created_at DESC, s.session_id DESC"
            ).fetchall()
        return [SessionSummary(_session(row), int(row[4]), int(row[5]), row[6]) for row in rows]

    def show(self, session: str | None = None, number: int | None = None) -> CommitRecord:
        """A recorded commit of a session: number ``number``, or the latest."""
        with self._db() as conn:
            found = self._find(conn, session)
            if number is None:
                row = conn.execute(
                    "SELECT snapshot FROM commits WHERE session_id = ? ORDER BY number DESC "
                    "LIMIT 1",
                    (found.session_id,),
                ).fetchone()
                if row is None:
                    raise ControlError(
                        "commit-none",
                        f"session {found.session_id} has no commit yet; the agent submits its "
                        "plans with `agentctl plan commit`",
                    )
            else:
                row = conn.execute(
                    "SELECT snapshot FROM commits WHERE session_id = ? AND number = ?",
                    (found.session_id, number),
                ).fetchone()
                if row is None:
                    last = conn.execute(
                        "SELECT MAX(number) FROM commits WHERE session_id = ?",
                        (found.session_id,),
                    ).fetchone()[0]
                    have = f"commits 1 to {last}" if last else "no commit yet"
                    raise ControlError(
                        "commit-unknown",
                        f"session {found.session_id} has no commit {number} (it has {have})",
                    )
        import json

        return CommitRecord.from_dict(json.loads(row[0]))

    # --- agent side ---------------------------------------------------------------

    def plan_dir(self, session: str | None = None) -> Thread:
        """The current thread and its plan directory (recreated if it was deleted)."""
        context = self.context(session)
        thread = context.current
        self._check_dir(thread)
        os.makedirs(thread.plan_dir, mode=0o700, exist_ok=True)
        return thread

    def request_thread_dir(self, session: str | None = None) -> Thread:
        """Allocate an additional thread and its (new, empty) plan directory.

        The allocation is one database transaction (no session lock): a commit running
        at the same time validates the threads that existed when it started.
        """
        with self._db() as conn:
            found = self._find(conn, session)
            name = new_id()
            plan_dir: str | None = None
            try:
                with transaction(conn):
                    thread = self._insert_thread(
                        conn,
                        found.session_id,
                        "additional",
                        os.path.join(self.plans_root, name),
                        now(),
                    )
                    conn.execute(
                        "UPDATE sessions SET updated_at = ? WHERE session_id = ?",
                        (thread.created_at, found.session_id),
                    )
                    plan_dir = self._allocate_dir(name)
            except BaseException:
                if plan_dir is not None:
                    with contextlib.suppress(OSError):
                        os.rmdir(plan_dir)
                raise
        return thread

    def remove_thread(self, thread_id: str, session: str | None = None) -> Thread:
        """Remove an additional thread: its directory is deleted, it leaves the next commit."""
        with self._db() as conn:
            found = self._find(conn, session)
            with self._locked(found.session_id):
                row = conn.execute(
                    f"SELECT {_THREAD_COLUMNS} FROM threads WHERE thread_id = ? AND session_id = ?",
                    (thread_id, found.session_id),
                ).fetchone()
                if row is None:
                    shown = thread_id if len(thread_id) <= 80 else thread_id[:79] + "…"
                    raise ControlError(
                        "thread-unknown",
                        f"no thread {shown!r} in this session; `agentctl session context` "
                        "lists its threads",
                    )
                thread = _thread(row)
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
                self._check_dir(thread)
                trash = os.path.join(self.plans_root, f".removed-{new_id()}")
                moved = False
                removed_at = now()
                try:
                    with transaction(conn):
                        conn.execute(
                            "UPDATE threads SET removed_at = ? WHERE thread_id = ? "
                            "AND removed_at IS NULL",
                            (removed_at, thread_id),
                        )
                        if os.path.lexists(thread.plan_dir):
                            os.rename(thread.plan_dir, trash)
                            moved = True
                except BaseException:
                    if moved:
                        os.rename(trash, thread.plan_dir)
                    raise
                if moved:
                    shutil.rmtree(trash, ignore_errors=True)
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
        with self._db() as conn:
            found = self._find(conn, session)
            threads = self._threads(conn, found.session_id)
        current = next(thread for thread in threads if thread.current)
        with self._locked(found.session_id):
            self._check_dir(current)
            os.makedirs(current.plan_dir, mode=0o700, exist_ok=True)
            removed = 0
            with os.scandir(current.plan_dir) as entries:
                for entry in list(entries):
                    if entry.is_dir(follow_symlinks=False):
                        removed += sum(
                            len(files) for _, _, files in os.walk(entry.path, followlinks=False)
                        )
                        shutil.rmtree(entry.path)
                    else:
                        os.unlink(entry.path)
                        removed += 1
        return current, removed

    def set_topic(self, topic: str, session: str | None = None) -> Session:
        """Set what the session is about (one line, at most :data:`MAX_TOPIC` characters)."""
        text = " ".join(topic.split()) if _one_line(topic.replace("\t", " ")) else None
        if text is None:
            raise ControlError("topic-invalid", "the topic must be one line of text")
        if not text:
            raise ControlError("topic-invalid", "the topic is empty; describe the session briefly")
        if len(text) > MAX_TOPIC:
            raise ControlError(
                "topic-invalid",
                f"the topic is {len(text)} characters; keep it to at most {MAX_TOPIC}",
            )
        with self._db() as conn:
            found = self._find(conn, session)
            with transaction(conn):
                conn.execute(
                    "UPDATE sessions SET topic = ?, updated_at = ? WHERE session_id = ?",
                    (text, now(), found.session_id),
                )
        return Session(found.session_id, found.agent_session_id, text, found.created_at)

    def commit(self, session: str | None = None) -> CommitRecord:
        """Validate every allocated, non-removed thread directory and record a commit.

        Raises :class:`~plankit.agentflow.model.PlanDirError` with the problems of every
        directory at once; nothing is recorded then.
        """
        from plankit.agentflow.commit import check_threads

        with self._db() as conn:
            found = self._find(conn, session)
            with self._locked(found.session_id):
                threads = self._threads(conn, found.session_id)
                for thread in threads:
                    self._check_dir(thread)
                plans, skipped, problems = check_threads(threads)
                if problems:
                    raise PlanDirError(problems)
                return self._record(conn, found, plans, skipped)

    def _record(
        self,
        conn: sqlite3.Connection,
        session: Session,
        plans: list[CommittedThread],
        skipped: list[str],
    ) -> CommitRecord:
        import json

        with transaction(conn):
            number = conn.execute(
                "SELECT COALESCE(MAX(number), 0) + 1 FROM commits WHERE session_id = ?",
                (session.session_id,),
            ).fetchone()[0]
            record = CommitRecord(session.session_id, number, now(), tuple(plans), tuple(skipped))
            cursor = conn.execute(
                "INSERT INTO commits (session_id, number, committed_at, snapshot) "
                "VALUES (?, ?, ?, ?)",
                (
                    session.session_id,
                    number,
                    record.committed_at,
                    json.dumps(record.to_dict(), ensure_ascii=False),
                ),
            )
            conn.executemany(
                "INSERT INTO commit_threads (commit_id, thread_id, position, task_count) "
                "VALUES (?, ?, ?, ?)",
                [
                    (cursor.lastrowid, item.thread_id, position, len(item.plan.tasks))
                    for position, item in enumerate(plans)
                ],
            )
        return record


def problems_of(error: PlanDirError | ControlError) -> list[Problem]:
    """The problems an error carries, as validation problems."""
    if isinstance(error, ControlError):
        return [error.problem()]
    return list(error.problems)
