"""The SQLite store in-process: its file and lock, transactions that fail at their end,
a database replaced or deleted under an open plane, and the steps of its migrations."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest

from plankit.agentflow import store
from plankit.agentflow.control import ControlPlane
from plankit.agentflow.records import ControlError
from plankit.agentflow.schema import SCHEMA_VERSION

from .helpers import copy_example, task, write_plan


def test_a_new_home_is_private_and_the_database_is_in_wal_mode(tmp_path: Path) -> None:
    home = tmp_path / "home"
    db = store.connect(str(home))
    try:
        with db.transaction():
            db.execute("SELECT 1")
        assert stat.S_IMODE(home.stat().st_mode) == 0o700
        assert stat.S_IMODE((home / ".write.lock").stat().st_mode) == 0o600
        # the lock every plankit takes to migrate: in the home, under this name
        assert (home / ".init.lock").is_file()
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        assert db.version() == SCHEMA_VERSION
        assert not db.closed and db.usable(write=True)
    finally:
        db.close()
    assert db.closed


def test_a_thread_of_a_session_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    db = store.connect(str(tmp_path / "home"))
    try:
        with (
            pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY") as refused,
            db.transaction(),
        ):
            db.execute(
                "INSERT INTO threads (thread_id, session_id, kind, plan_dir, created_at) "
                "VALUES ('thread_1', 'no-such-session', 'current', '/p', 'now')"
            )
        assert db.execute("SELECT COUNT(*) FROM threads").fetchone()[0] == 0
        assert not db.is_unique_violation(refused.value)  # not a row already there
    finally:
        db.close()


def test_a_commit_the_database_refuses_leaves_no_transaction_open(tmp_path: Path) -> None:
    db = store.connect(str(tmp_path / "home"))
    try:
        with pytest.raises(sqlite3.IntegrityError), db.transaction():  # noqa: PT012
            # checked at COMMIT, not at the INSERT
            db.execute("PRAGMA defer_foreign_keys = ON")
            db.execute(
                "INSERT INTO threads (thread_id, session_id, kind, plan_dir, created_at) "
                "VALUES ('thread_1', 'no-such-session', 'current', '/p', 'now')"
            )
        assert not db.conn.in_transaction
        assert db.execute("SELECT COUNT(*) FROM threads").fetchone()[0] == 0
        with db.transaction():  # the next write is not refused
            db.execute("INSERT INTO schema_version VALUES (99, 'x')")
        assert db.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] == 99
    finally:
        db.close()


def test_an_error_inside_a_transaction_rolls_it_back(tmp_path: Path) -> None:
    db = store.connect(str(tmp_path / "home"))
    try:
        with pytest.raises(ControlError), db.transaction():  # noqa: PT012
            db.execute("INSERT INTO schema_version VALUES (99, 'x')")
            raise ControlError("task-state", "refused halfway")
        assert db.version() == SCHEMA_VERSION and not db.conn.in_transaction
    finally:
        db.close()


def test_a_writer_held_up_past_the_busy_timeout_is_told_to_retry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "BUSY_TIMEOUT", 0.2)
    home = tmp_path / "home"
    db = store.connect(str(home))
    other = sqlite3.connect(home / "agentflow.db", isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # another program holds the write lock
        with pytest.raises(ControlError) as info, db.transaction():
            pass
        assert info.value.rule == "busy"
        assert info.value.message.startswith("the agentflow database stayed locked for 0 s (")
        assert info.value.message.endswith("); retry")
        other.execute("ROLLBACK")
        with db.transaction():  # the queue's lock was let go
            pass
    finally:
        other.close()
        db.close()


def test_a_database_deleted_under_an_open_plane_is_reported(home: Path) -> None:
    plane = ControlPlane()
    plane.start_session()
    assert len(plane.sessions()) == 1
    for name in ("agentflow.db", "agentflow.db-wal", "agentflow.db-shm"):
        (home / name).unlink(missing_ok=True)
    with pytest.raises(ControlError) as info:
        plane.sessions()
    assert info.value.rule == "state-missing"
    assert "holds 1 plan directories" in info.value.message
    plane.close()


def test_a_database_restored_under_an_open_plane_is_read_afresh(home: Path) -> None:
    plane = ControlPlane()
    first = plane.start_session().session.session_id
    backup = home.parent / "backup.db"
    with sqlite3.connect(home / "agentflow.db") as conn, sqlite3.connect(backup) as out:
        conn.backup(out)
    plane.start_session()
    assert len(plane.sessions()) == 2
    for name in ("agentflow.db-wal", "agentflow.db-shm"):
        (home / name).unlink(missing_ok=True)
    os.replace(backup, home / "agentflow.db")  # restored from the backup: a new file
    assert [s.session.session_id for s in plane.sessions()] == [first]
    plane.close()


def test_hidden_directories_in_plans_do_not_count_as_plan_directories(home: Path) -> None:
    (home / "plans" / ".removed-x").mkdir(parents=True)
    (home / "plans" / "a-file").write_text("x")
    db = store.connect(str(home))  # nothing to lose: a new database
    db.close()
    (home / "agentflow.db").unlink()
    (home / "plans" / "one").mkdir()
    (home / "plans" / "two").mkdir()
    with pytest.raises(ControlError) as info:
        store.connect(str(home))
    assert info.value.rule == "state-missing"
    assert info.value.message == (
        f"{home / 'agentflow.db'} is missing but {home / 'plans'} holds 2 plan directories: "
        "the sessions that own them would be lost; restore the database from a backup, or "
        "move plans/ aside to start afresh"
    )


def _second_schema(home: Path) -> None:
    """Turn the database under ``home`` into one the second release wrote (schema 2)."""
    with sqlite3.connect(home / "agentflow.db") as conn:
        conn.execute("DELETE FROM schema_version WHERE version = 3")
        conn.execute("PRAGMA user_version = 2")


def test_a_database_of_the_second_schema_gets_only_the_third_step(home: Path) -> None:
    plane = ControlPlane()
    context = plane.start_session("agent-1")
    copy_example(Path(context.current.plan_dir))
    plane.commit(context.session.session_id)
    claimed = plane.claim(context.session.session_id, agent="w1").task
    assert claimed is not None
    plane.close()
    _second_schema(home)
    again = ControlPlane()
    _, statuses = again.progress("agent-1")
    assert statuses is not None
    # not tracked again from the commit: the claim is still there
    assert (statuses[0].state, statuses[0].claims) == ("claimed", 1)
    with sqlite3.connect(home / "agentflow.db") as conn:
        assert [row[0] for row in conn.execute("SELECT version FROM schema_version")] == [1, 2, 3]
        assert conn.execute("PRAGMA user_version").fetchone() == (3,)
    again.close()


def test_a_read_only_copy_of_an_older_database_must_be_upgraded_first(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plane = ControlPlane()
    plane.start_session()
    plane.close()
    _second_schema(home)
    # a home this user cannot write (the tests run as root, who can write anywhere)
    monkeypatch.setattr(store, "_writable", lambda path: False)
    with pytest.raises(ControlError) as info:
        store.connect(str(home), write=False)
    assert info.value.rule == "read-only"
    assert info.value.message == (
        f"{home / 'agentflow.db'} has an older schema (version 2) that must be upgraded by a "
        "writing command, and its directory is read-only"
    )


def _one_plan_committed_then_read_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """A home with one committed plan, whose directory then reads as not writable."""
    plane = ControlPlane()
    context = plane.start_session()
    write_plan(Path(context.current.plan_dir), tasks={"01-a.md": task("a")})
    plane.commit(context.session.session_id)
    plane.close()
    monkeypatch.setattr(store, "_writable", lambda path: False)


def test_a_read_only_home_is_read_and_refuses_changes(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _one_plan_committed_then_read_only(monkeypatch)
    db = store.connect(str(home), write=False)
    try:
        assert db.read_only and db.usable(write=False) and not db.usable(write=True)
        assert db.execute("SELECT COUNT(*) FROM tasks").fetchone()[0] == 1
        with pytest.raises(ControlError) as info, db.transaction():
            pass
        assert info.value.rule == "read-only"
        assert info.value.message == (
            f"{home} is read-only: this command changes the agentflow state and cannot; run "
            "it where AGENTFLOW_HOME is writable (reading commands such as `session list` "
            "and `plan show` work)"
        )
    finally:
        db.close()
    with pytest.raises(ControlError) as info:
        store.connect(str(home))
    assert info.value.rule == "read-only"
    assert info.value.message.startswith(f"{home} is read-only: ")
    shutil.rmtree(home)
    home.mkdir()
    with pytest.raises(ControlError) as info:
        store.connect(str(home), write=False)
    assert (info.value.rule, info.value.message) == (
        "read-only",
        f"{home} is read-only and holds no agentflow database yet; set AGENTFLOW_HOME to a "
        "writable directory",
    )


def test_a_corrupt_database_says_to_restore_it(home: Path) -> None:
    home.mkdir(parents=True)
    (home / "agentflow.db").write_bytes(b"not a database, a note someone saved here\n" * 200)
    with pytest.raises(ControlError) as info:
        store.connect(str(home))
    assert info.value.rule == "state-unusable"
    assert info.value.message == (
        f"{home / 'agentflow.db'} cannot be used as the agentflow database (file is not a "
        "database); check AGENTFLOW_HOME, or restore the file from a backup"
    )


def test_times_the_database_stamps_agree_with_the_wall_clock(home: Path) -> None:
    from datetime import UTC, datetime

    plane = ControlPlane()
    context = plane.start_session()
    write_plan(Path(context.current.plan_dir), tasks={"01-a.md": task("a")})
    plane.commit(context.session.session_id)
    _, statuses = plane.progress(context.session.session_id)
    assert statuses is not None
    stamped = datetime.fromisoformat(statuses[0].changed_at.replace("Z", "+00:00"))
    assert abs((datetime.now(UTC) - stamped).total_seconds()) < 60
    plane.close()


def test_a_finished_write_lets_the_next_writer_in(tmp_path: Path) -> None:
    import fcntl

    home = tmp_path / "home"
    db = store.connect(str(home))
    try:
        with db.transaction():
            db.execute("SELECT 1")
        # another process's writer queues on the same lock file: it is free again
        other = os.open(home / ".write.lock", os.O_RDWR)
        try:
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(other, fcntl.LOCK_UN)
        finally:
            os.close(other)
    finally:
        db.close()


def test_a_home_under_a_file_cannot_be_created(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("a file where a directory was meant\n")
    home = tmp_path / "notes.txt" / "agentflow"
    with pytest.raises(ControlError) as info:
        store.connect(str(home))
    assert (info.value.rule, info.value.message) == (
        "state-unusable",
        f"cannot create the agentflow home {home} (Not a directory); set AGENTFLOW_HOME to a "
        "writable directory",
    )


def test_a_database_of_a_newer_plankit_is_refused_naming_its_file(home: Path) -> None:
    store.connect(str(home)).close()
    with sqlite3.connect(home / "agentflow.db") as conn:
        conn.execute("INSERT INTO schema_version VALUES (4, 'later')")
    with pytest.raises(ControlError) as info:
        store.connect(str(home))
    assert (info.value.rule, info.value.message) == (
        "state-unusable",
        f"{home / 'agentflow.db'} was written by a newer plankit (schema 4, this one knows "
        f"{SCHEMA_VERSION}); upgrade plankit",
    )


def test_a_directory_in_place_of_the_database_file_is_unusable(home: Path) -> None:
    (home / "agentflow.db").mkdir(parents=True)
    with pytest.raises(ControlError) as info:
        store.connect(str(home))
    assert (info.value.rule, info.value.message) == (
        "state-unusable",
        f"{home / 'agentflow.db'} cannot be used as the agentflow database (unable to open "
        "database file); check AGENTFLOW_HOME, or restore the file from a backup",
    )


def test_a_migration_held_up_by_another_plankit_is_told_to_retry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    monkeypatch.setattr(store, "BUSY_TIMEOUT", 0.2)
    home = tmp_path / "home"
    home.mkdir()
    # another plankit took the migration lock and is stuck (stopped in a debugger, say)
    other = os.open(home / ".init.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(other, fcntl.LOCK_EX)
    try:
        with pytest.raises(ControlError) as info:
            store.connect(str(home))
        assert (info.value.rule, info.value.message) == (
            "busy",
            f"another plankit has been migrating {home / 'agentflow.db'} for 0 s; retry",
        )
    finally:
        fcntl.flock(other, fcntl.LOCK_UN)
        os.close(other)
    db = store.connect(str(home))  # the retry migrates
    try:
        assert db.version() == SCHEMA_VERSION
    finally:
        db.close()
    other = os.open(home / ".init.lock", os.O_RDWR)
    try:  # and lets the lock go when done
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(other)


def test_a_database_of_the_first_release_ends_with_the_tables_of_a_new_one(
    tmp_path: Path,
) -> None:
    from plankit.agentflow.schema import MIGRATIONS

    new, old = tmp_path / "new", tmp_path / "old"
    store.connect(str(new)).close()
    old.mkdir()
    # the first release: migration 1's tables, its version only in PRAGMA user_version
    with sqlite3.connect(old / "agentflow.db") as conn:
        conn.execute("PRAGMA journal_mode = WAL")
        for statement in MIGRATIONS[0].statements:
            conn.execute(statement.replace("{serial}", "INTEGER PRIMARY KEY AUTOINCREMENT"))
        conn.execute("PRAGMA user_version = 1")
    store.connect(str(old)).close()
    query = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
    with sqlite3.connect(new / "agentflow.db") as a, sqlite3.connect(old / "agentflow.db") as b:
        assert b.execute(query).fetchall() == a.execute(query).fetchall()
        assert [r[0] for r in b.execute("SELECT version FROM schema_version")] == [1, 2, 3]


def test_times_are_whole_milliseconds_in_the_file(home: Path) -> None:
    # other programs reading the file (the sqlite3 shell, a backup script) see integers,
    # as PostgreSQL's BIGINT columns hold them
    plane = ControlPlane()
    context = plane.start_session()
    write_plan(Path(context.current.plan_dir), tasks={"01-a.md": task("a")})
    plane.commit(context.session.session_id)
    assert plane.claim(context.session.session_id, agent="w1").task is not None
    plane.close()
    with sqlite3.connect(home / "agentflow.db") as conn:
        kinds = conn.execute("SELECT typeof(changed_at), typeof(lease_until) FROM tasks")
        assert kinds.fetchall() == [("integer", "integer")]


def test_recorded_times_are_utc_with_milliseconds(home: Path) -> None:
    import re
    from datetime import UTC, datetime

    plane = ControlPlane()
    created = plane.start_session().session.created_at
    plane.close()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", created), created
    stamped = datetime.fromisoformat(created.replace("Z", "+00:00"))
    assert abs((datetime.now(UTC) - stamped).total_seconds()) < 60


def test_a_reader_of_a_database_it_cannot_write_sees_the_owner_s_changes(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    owner = ControlPlane()
    owner.start_session()
    # the file belongs to another user, who keeps writing it; this one may only read
    monkeypatch.setattr(store, "_writable", lambda path: not path.endswith("agentflow.db"))
    db = store.connect(str(home), write=False)
    try:
        assert db.read_only
        # a writer holding the lock is waited for, as long as a writer waits
        assert db.execute("PRAGMA busy_timeout").fetchone()[0] == store.BUSY_TIMEOUT * 1000
        assert db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 1
        owner.start_session()
        assert db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 2
    finally:
        db.close()
        owner.close()


def test_a_writer_waits_as_long_as_the_busy_timeout_for_another_program(home: Path) -> None:
    # the sqlite3 shell or a backup holding the write lock a while is waited for
    db = store.connect(str(home))
    try:
        assert db.execute("PRAGMA busy_timeout").fetchone()[0] == store.BUSY_TIMEOUT * 1000
    finally:
        db.close()


def test_a_read_only_directory_without_shared_memory_is_read_as_it_is(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _one_plan_committed_then_read_only(monkeypatch)
    opened = sqlite3.connect

    def connect(database: str, *args: object, **kwargs: object) -> sqlite3.Connection:
        # in a directory nobody may write, WAL's -shm file cannot be created
        if "mode=ro" in database:
            raise sqlite3.OperationalError("unable to open database file")
        return opened(database, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sqlite3, "connect", connect)
    db = store.connect(str(home), write=False)
    try:
        assert db.read_only
        assert db.execute("SELECT task_id, state FROM tasks").fetchall() == [("a", "ready")]
        with pytest.raises(ControlError) as info, db.transaction():
            pass
        assert info.value.rule == "read-only"
    finally:
        db.close()
