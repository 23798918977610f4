"""The control plane's own rules around the requests (plankit.agentflow.control): what
each request returns, sessions that ended, the session lock, database failures, the
connection kept, and garbage collection of plan directories."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import stat
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from filelock import FileLock

from plankit.agentflow import control as control_module
from plankit.agentflow import queries
from plankit.agentflow.control import ControlPlane
from plankit.agentflow.records import ControlError, Session
from tests.pgserver import PostgresServer

from .helpers import copy_example, task, write_plan


@pytest.fixture
def plane(home: Path) -> ControlPlane:
    return ControlPlane()


def _rule(call: object, *args: object) -> ControlError:
    with pytest.raises(ControlError) as info:
        call(*args)  # type: ignore[operator]
    return info.value


def test_a_plane_without_a_database_url_uses_sqlite_under_home(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTFLOW_DATABASE_URL", "")
    plane = ControlPlane()
    assert plane.database is None
    assert plane.plans_root == os.path.join(str(home.resolve()), "plans")
    plane.start_session()
    assert (home / "agentflow.db").is_file()
    monkeypatch.setenv("AGENTFLOW_DATABASE_URL", "postgresql:///agentflow")
    assert ControlPlane().database == "postgresql:///agentflow"
    assert ControlPlane(database="postgresql:///other").database == "postgresql:///other"


def test_one_connection_serves_the_requests_of_a_thread(
    plane: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[bool] = []
    real = control_module.connect

    def counting(home: str, *, write: bool = True) -> object:
        opened.append(write)
        return real(home, write=write)

    monkeypatch.setattr(control_module, "connect", counting)
    sid = plane.start_session().session.session_id
    for _ in range(5):
        plane.context(sid)
        plane.set_topic("auth", sid)
    assert opened == [True]  # a writing connection also reads
    plane.close()
    plane.context(sid)
    assert opened == [True, False]  # closed: a new one, for reading


def test_a_database_replaced_meanwhile_is_reopened_not_written_through(
    plane: ControlPlane, home: Path
) -> None:
    sid = plane.start_session().session.session_id
    db = home / "agentflow.db"
    copy = home / "copy.db"
    copy.write_bytes(db.read_bytes())
    os.replace(copy, db)  # a restore from a backup: another inode
    assert plane.set_topic("after the restore", sid).topic == "after the restore"
    with sqlite3.connect(db) as conn:
        topic = conn.execute("SELECT topic FROM sessions WHERE session_id = ?", (sid,)).fetchone()
    assert topic == ("after the restore",)


def test_a_database_failure_in_a_request_is_one_clear_error(
    plane: ControlPlane, home: Path
) -> None:
    sid = plane.start_session().session.session_id
    with sqlite3.connect(home / "agentflow.db") as conn:
        conn.execute("DROP TABLE commits")  # damaged by hand
    error = _rule(plane.show, sid)
    assert error.rule == "state-unusable"
    assert error.message.startswith(
        f"the agentflow database ({home.resolve() / 'agentflow.db'}) failed ("
    )
    assert error.message.endswith("); nothing was changed")
    assert plane.context(sid).session.session_id == sid  # a request that needs no commit


def test_other_errors_in_a_request_are_not_called_database_failures(
    plane: ControlPlane,
) -> None:
    sid = plane.start_session().session.session_id
    assert _rule(plane.remove_thread, "thread_9", sid).rule == "thread-unknown"


def test_an_unknown_session_names_the_home_it_was_looked_for_in(
    plane: ControlPlane, home: Path
) -> None:
    error = _rule(plane.context, "sess-nope")
    assert error.rule == "session-unknown"
    assert f"under {home.resolve()};" in error.message


def test_the_session_lock_is_a_private_file_under_home(plane: ControlPlane, home: Path) -> None:
    context = plane.start_session()
    plane.clear_current(context.session.session_id)
    locks = home / "locks"
    assert stat.S_IMODE(locks.stat().st_mode) == 0o700
    assert os.listdir(locks) == [f"{context.session.session_id}.lock"]


def test_a_session_held_by_another_command_is_busy_and_unchanged(
    plane: ControlPlane, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(control_module, "BUSY_TIMEOUT", 0.2)
    context = plane.start_session()
    sid = context.session.session_id
    write_plan(Path(context.current.plan_dir), tasks={"01-a.md": task("a")})
    extra = plane.request_thread_dir(sid)
    write_plan(Path(extra.plan_dir), tasks={"01-b.md": task("b")})
    other = FileLock(str(home / "locks" / f"{sid}.lock"))
    with other:  # an agentctl command of another process, in the middle of its work
        for call, args in (
            (plane.remove_thread, (extra.thread_id, sid)),
            (plane.clear_current, (sid,)),
            (plane.commit, (sid,)),
        ):
            error = _rule(call, *args)
            assert error.rule == "busy"
            assert error.message == (
                f"another agentctl command has held session {sid} for 0 s; retry"
            )
    assert Path(extra.plan_dir).is_dir()
    assert (Path(context.current.plan_dir) / "plan.md").is_file()
    assert plane.context(sid).additional == (extra,)
    assert plane.commit(sid).number == 1  # free again


def test_a_renamed_host_still_reaches_its_sqlite_sessions(plane: ControlPlane) -> None:
    # plan directories of an SQLite home are on this machine whatever its name now
    context = plane.start_session()
    sid = context.session.session_id
    copy_example(Path(context.current.plan_dir))
    plane.host = "renamed-laptop"
    assert plane.plan_dir(sid) == context.current
    assert plane.commit(sid).number == 1
    assert plane.request_thread_dir(sid).plan_dir


def test_a_started_session_is_recorded_with_its_host_and_context(
    plane: ControlPlane, home: Path
) -> None:
    context = plane.start_session("claude-42")
    session = context.session
    assert (session.agent_session_id, session.topic, session.ended_at) == ("claude-42", None, None)
    assert session.host == plane.host
    assert context.home == str(home.resolve())
    assert plane.context("claude-42") == context


def test_an_agent_session_started_by_another_host_meanwhile_exists(
    plane: ControlPlane, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = plane.start_session("claude-42").session.session_id
    # the check before the insert saw nothing: the other host's insert came in between
    real = queries.session_of_agent
    calls: list[str] = []

    def not_yet(conn: object, agent_session_id: str) -> str | None:
        calls.append(agent_session_id)
        return None if len(calls) == 1 else real(conn, agent_session_id)  # type: ignore[arg-type]

    monkeypatch.setattr(queries, "session_of_agent", not_yet)
    error = _rule(plane.start_session, "claude-42")
    assert error.rule == "session-exists"
    assert error.message.startswith(
        f"agent session 'claude-42' already has agentflow session {first};"
    )
    assert len(calls) == 2
    assert os.listdir(home / "plans") == [first]  # no directory left for the refused one
    assert [s.session.session_id for s in plane.sessions()] == [first]


def test_a_request_whose_transaction_fails_leaves_no_plan_directory(
    plane: ControlPlane, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = plane.start_session().session.session_id
    made: list[str] = []
    real_allocate = control_module.dirs.allocate
    real_transaction = control_module.transaction

    def allocate(plans_root: str, name: str) -> str:
        made.append(real_allocate(plans_root, name))
        return made[-1]

    @contextlib.contextmanager
    def commit_fails(db: object) -> Iterator[object]:
        with real_transaction(db):  # type: ignore[arg-type]
            yield db
            raise sqlite3.OperationalError("disk I/O error")  # at COMMIT: rolled back

    monkeypatch.setattr(control_module.dirs, "allocate", allocate)
    monkeypatch.setattr(control_module, "transaction", commit_fails)
    for call in (plane.start_session, lambda: plane.request_thread_dir(sid)):
        error = _rule(call)
        assert error.rule == "state-unusable"
        assert "(disk I/O error); nothing was changed" in error.message
    assert len(made) == 2 and not any(os.path.exists(path) for path in made)
    monkeypatch.undo()
    assert len(plane.sessions()) == 1
    assert plane.context(sid).additional == ()


def test_a_deleted_plan_directory_is_made_again(plane: ControlPlane) -> None:
    context = plane.start_session()
    directory = Path(context.current.plan_dir)
    shutil.rmtree(directory)
    assert plane.plan_dir(context.session.session_id) == context.current
    assert directory.is_dir()


def test_a_removed_thread_says_when_and_where(plane: ControlPlane) -> None:
    sid = plane.start_session().session.session_id
    extra = plane.request_thread_dir(sid)
    removed = plane.remove_thread(extra.thread_id, sid)
    assert (removed.thread_id, removed.session_id, removed.current) == (extra.thread_id, sid, False)
    assert (removed.plan_dir, removed.created_at) == (extra.plan_dir, extra.created_at)
    assert removed.removed_at is not None and removed.removed_at >= extra.created_at
    error = _rule(plane.remove_thread, extra.thread_id, sid)
    assert error.message == f"{extra.thread_id} was already removed at {removed.removed_at}"
    assert not os.path.lexists(extra.plan_dir)
    assert [name for name in os.listdir(Path(extra.plan_dir).parent) if "removed" in name] == []


def test_a_topic_set_keeps_the_rest_of_the_session(plane: ControlPlane) -> None:
    session = plane.start_session("claude-42").session
    assert plane.set_topic("Auth and API", "claude-42") == Session(
        session.session_id, "claude-42", "Auth and API", session.created_at, None, plane.host
    )


def test_an_ended_session_takes_no_more_plan_requests(plane: ControlPlane) -> None:
    context = plane.start_session("claude-42")
    sid = context.session.session_id
    plane.set_topic("auth", sid)
    ended = plane.end_session("claude-42")
    assert ended == Session(
        sid, "claude-42", "auth", context.session.created_at, ended.ended_at, plane.host
    )
    assert ended.ended_at is not None and ended.ended_at >= context.session.created_at
    assert plane.end_session(sid) == ended  # ending again changes nothing
    for call in (
        plane.plan_dir,
        plane.request_thread_dir,
        lambda s: plane.remove_thread("thread_2", s),
        plane.clear_current,
        plane.commit,
        lambda s: plane.set_topic("api", s),
    ):
        error = _rule(call, sid)
        assert error.rule == "session-ended"
        assert error.message == (
            f"session {sid} ended at {ended.ended_at}; start a new one with "
            "`agentctl session start`"
        )
    assert plane.context(sid).session == ended  # still readable
    assert Path(context.current.plan_dir).is_dir()


def test_gc_deletes_the_directories_of_old_sessions_and_removed_threads(
    plane: ControlPlane, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = plane.start_session()
    keep = plane.start_session()
    extra = plane.request_thread_dir(keep.session.session_id)
    plane.remove_thread(extra.thread_id, keep.session.session_id)
    os.mkdir(extra.plan_dir)  # a removal killed before it deleted the directory
    plans = home.resolve() / "plans"
    (plans / ".removed-x1").mkdir()  # one moved aside, not deleted
    two_days_ago = datetime.now(UTC) - timedelta(days=2)
    monkeypatch.setattr(
        control_module,
        "now",
        lambda: two_days_ago.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    )
    plane.end_session(old.session.session_id)
    monkeypatch.undo()
    # ended two days ago: too recent for three days, old enough for one
    assert plane.gc(3, dry_run=True) == ([], [extra.plan_dir, str(plans / ".removed-x1")])
    assert plane.gc(1.9, dry_run=True) == (
        [old.session.session_id],
        [old.current.plan_dir, extra.plan_dir, str(plans / ".removed-x1")],
    )
    assert Path(old.current.plan_dir).is_dir() and Path(extra.plan_dir).is_dir()
    ended, deleted = plane.gc(1)
    assert ended == [old.session.session_id]
    assert sorted(deleted) == sorted(
        [old.current.plan_dir, extra.plan_dir, str(plans / ".removed-x1")]
    )
    assert sorted(os.listdir(plans)) == [keep.session.session_id]
    assert plane.gc(1) == ([old.session.session_id], [])  # nothing left to delete


def test_gc_of_a_home_without_plans_deletes_nothing(tmp_path: Path) -> None:
    plane = ControlPlane(tmp_path / "fresh-home")
    assert plane.gc(0, dry_run=True) == ([], [])
    assert plane.gc(0) == ([], [])


def test_the_host_recorded_is_this_machines_name(plane: ControlPlane) -> None:
    import socket

    assert plane.host == socket.gethostname()
    assert plane.start_session().session.host == socket.gethostname()


def test_a_second_session_for_an_agent_says_which_to_resume(plane: ControlPlane) -> None:
    first = plane.start_session("claude-42").session.session_id
    error = _rule(plane.start_session, "claude-42")
    assert error.message == (
        f"agent session 'claude-42' already has agentflow session {first}; resume it with "
        f"`agentctl session context --session {first}`"
    )


def test_another_sessions_internal_id_is_no_agent_session_id(plane: ControlPlane) -> None:
    other = plane.start_session().session.session_id
    error = _rule(plane.start_session, other)
    assert error.rule == "session-ambiguous"
    assert error.message == (
        f"{other!r} is the internal id of another session; an agent session id must not "
        "name another session"
    )
    assert len(plane.sessions()) == 1


def test_the_current_thread_cannot_be_removed_and_says_what_to_do(plane: ControlPlane) -> None:
    context = plane.start_session()
    error = _rule(plane.remove_thread, context.current.thread_id, context.session.session_id)
    assert error.message == (
        f"{context.current.thread_id} is the current thread, which cannot be removed; to "
        "drop its plan, run `agentctl plan clear-current`"
    )


def test_a_refused_request_leaves_the_working_directory_alone(
    plane: ControlPlane, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # agentctl runs in the user's project, which may have an empty tasks/ of its own
    project = tmp_path / "project"
    (project / "tasks").mkdir(parents=True)
    monkeypatch.chdir(project)
    sid = plane.start_session("claude-42").session.session_id
    _rule(plane.start_session, "claude-42")

    def no_thread(*args: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(queries, "insert_thread", no_thread)
    assert _rule(plane.request_thread_dir, sid).rule == "state-unusable"
    assert (project / "tasks").is_dir()


def test_a_directory_that_cannot_be_deleted_is_left_to_gc(
    plane: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = plane.start_session().session.session_id
    extra = plane.request_thread_dir(sid)

    def busy(path: object) -> None:
        raise OSError(16, "Device or resource busy")  # a file held open on a share

    monkeypatch.setattr(control_module.dirs, "delete", busy)
    removed = plane.remove_thread(extra.thread_id, sid)
    assert removed.removed_at is not None
    assert plane.context(sid).additional == ()


def test_a_read_only_home_is_read_but_not_changed(
    plane: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a home on a read-only mount (a backup looked at); root can write anywhere, so the
    # directory is said to be read-only rather than made so
    context = plane.start_session("claude-42")
    sid = context.session.session_id
    copy_example(Path(context.current.plan_dir))
    plane.commit(sid)
    plane.close()
    monkeypatch.setattr("plankit.agentflow.store._writable", lambda path: False)
    reader = ControlPlane()
    assert reader.context(sid).session.session_id == sid
    assert [s.session.session_id for s in reader.sessions()] == [sid]
    assert reader.show(sid).number == 1
    assert reader.progress(sid)[1] is not None
    error = _rule(reader.set_topic, "auth", sid)
    assert error.rule == "read-only"
    assert _rule(reader.end_session, sid).rule == "read-only"
    reader.close()


def test_on_a_shared_database_plan_commands_run_on_the_sessions_host(
    postgres: object, tmp_path: Path
) -> None:
    from tests.pgserver import PostgresServer

    assert isinstance(postgres, PostgresServer)
    url = postgres.new_schema()
    here = ControlPlane(tmp_path / "home-a", database=url)
    there = ControlPlane(tmp_path / "home-b", database=url)
    there.host = "host-b"
    try:
        context = here.start_session()
        sid = context.session.session_id
        copy_example(Path(context.current.plan_dir))
        extra = here.request_thread_dir(sid)
        write_plan(Path(extra.plan_dir), tasks={"01-a.md": task("a")})
        for call, args in (
            (there.plan_dir, (sid,)),
            (there.request_thread_dir, (sid,)),
            (there.remove_thread, (extra.thread_id, sid)),
            (there.clear_current, (sid,)),
            (there.commit, (sid,)),
        ):
            error = _rule(call, *args)
            assert error.rule == "session-elsewhere"
            assert error.message == (
                f"session {sid} was started on host {here.host!r}, where its plan directories "
                "are; run plan commands there (this is 'host-b'); tasks can be claimed from "
                "any host"
            )
        assert here.plan_dir(sid) == context.current
        assert here.commit(sid).number == 1
        assert here.remove_thread(extra.thread_id, sid).removed_at is not None
        assert here.clear_current(sid)[1] > 0
        assert here.request_thread_dir(sid).plan_dir
        unknown = _rule(there.context, "sess-nope")
        assert unknown.rule == "session-unknown"
        assert "PostgreSQL database 'agentflow'" in unknown.message
        assert str(tmp_path) not in unknown.message
    finally:
        here.close()
        there.close()


def test_gc_on_a_machine_whose_clock_is_not_on_utc(
    plane: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the end times are UTC: a session ended an hour ago is not a day old in Sydney,
    # where the local clock is ten hours ahead
    import time

    ended = plane.start_session()
    plane.end_session(ended.session.session_id)
    try:
        with monkeypatch.context() as patch:
            patch.setenv("TZ", "AEST-10")
            time.tzset()
            assert plane.gc(0.25, dry_run=True) == ([], [])
            assert plane.gc(0.25) == ([], [])
    finally:
        time.tzset()
    assert Path(ended.current.plan_dir).is_dir()


def _open_files(folder: Path) -> list[str]:
    """The files under ``folder`` this process holds open (Linux's /proc)."""
    held = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith(f"{folder.resolve()}/"):
                held.append(target)
    return held


def test_a_plane_used_from_two_threads_keeps_a_connection_for_each(
    plane: ControlPlane, home: Path
) -> None:
    # an agent host serving requests on worker threads: SQLite's connections belong to
    # the thread that opened them, so each thread gets its own; the plane is then closed
    # from the main thread (the worker's connection cannot be closed there: it is dropped)
    import threading

    started: list[Session] = []
    worker = threading.Thread(target=lambda: started.append(plane.start_session().session))
    worker.start()
    worker.join()
    assert len(started) == 1
    sid = started[0].session_id
    assert plane.context(sid).session == started[0]  # the main thread's own connection
    other = plane.start_session()
    assert {s.session.session_id for s in plane.sessions()} == {sid, other.session.session_id}
    plane.close()


def test_a_database_restored_from_a_backup_under_an_open_plane(
    plane: ControlPlane, home: Path, tmp_path: Path
) -> None:
    # the plane notices the new file and reconnects; the connection to the old one is
    # closed, not left holding its files
    first = plane.start_session()
    backup = tmp_path / "backup.db"
    with (
        contextlib.closing(sqlite3.connect(home / "agentflow.db")) as source,
        contextlib.closing(sqlite3.connect(backup)) as target,
    ):
        source.backup(target)
    os.replace(backup, home / "agentflow.db")
    assert plane.context(first.session.session_id).session == first.session
    plane.start_session()
    plane.close()
    assert _open_files(home) == []


def test_a_commit_on_postgresql_holds_its_sessions_row_until_it_is_recorded(
    home: Path, postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # two planes with their own homes (their own lock files) sharing one database: the
    # row of the session, locked while a commit is recorded, keeps the other one waiting
    import psycopg

    url = postgres.new_schema()
    plane = ControlPlane(database=url)
    context = plane.start_session()
    sid = context.session.session_id
    write_plan(Path(context.current.plan_dir), title="Auth", tasks={"01-a.md": task("a")})
    held: list[bool] = []
    insert_commit = queries.insert_commit

    def recording(db: object, session_id: str, *args: object) -> object:
        with psycopg.connect(url, autocommit=True) as other:
            try:
                other.execute(
                    "SELECT 1 FROM sessions WHERE session_id = %s FOR UPDATE NOWAIT", (session_id,)
                )
                held.append(False)
            except psycopg.errors.LockNotAvailable:
                held.append(True)
        return insert_commit(db, session_id, *args)

    monkeypatch.setattr(queries, "insert_commit", recording)
    try:
        assert plane.commit(sid).number == 1
    finally:
        plane.close()
    assert held == [True]
