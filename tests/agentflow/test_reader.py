"""The control plane as a viewer reads it (plankit.agentflow.reader): opened without
writing anything, refused in one line when it is not this plankit's, and read into the
sessions, timelines, commits and texts a board shows."""

from __future__ import annotations

import errno
import os
import sqlite3
import time
from pathlib import Path

import pytest

from plankit.agentflow import reader
from plankit.agentflow.control import ControlPlane
from plankit.agentflow.pgstore import PostgresDatabase
from plankit.agentflow.records import ControlError
from plankit.agentflow.schema import SCHEMA_VERSION
from plankit.agentflow.store import SqliteDatabase
from tests.pgserver import PostgresServer

from .helpers import task, write_plan


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "agentflow-home"


def _session(plane: ControlPlane, tasks: dict[str, list[str]], title: str = "Auth") -> str:
    context = plane.start_session()
    files = {f"{i:02d}-{tid}.md": task(tid, deps) for i, (tid, deps) in enumerate(tasks.items())}
    write_plan(Path(context.current.plan_dir), title=title, tasks=files)
    plane.commit(context.session.session_id)
    return context.session.session_id


def _files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def _open(home: Path) -> SqliteDatabase:
    db = reader.open_reader(str(home), None)
    assert isinstance(db, SqliteDatabase)
    return db


# --- opening --------------------------------------------------------------------------------


def test_no_home_or_no_database_is_no_reader_and_nothing_is_made(home: Path) -> None:
    assert reader.open_reader(None, None) is None
    assert reader.open_reader(None, "") is None
    assert reader.open_reader(str(home), None) is None
    assert not home.exists()
    home.mkdir()
    (home / "agentflow.db").mkdir()  # not a file
    assert reader.open_reader(str(home), None) is None
    assert _files(home) == ["agentflow.db"]


def test_a_database_removed_just_as_the_board_opens_it_is_not_made_again(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the user deletes (or moves away) the database while the board is opening it: the
    # read-only open must fail, not leave an empty database of its own making behind
    plane = ControlPlane(home)
    _session(plane, {"a": []})
    plane.close()
    quiet_wal = reader._quiet_wal

    def removed_after_the_check(path: str) -> bool:
        quiet = quiet_wal(path)
        assert quiet  # the snapshot open, the one that takes no lock
        os.remove(path)
        return quiet

    monkeypatch.setattr(reader, "_quiet_wal", removed_after_the_check)
    with pytest.raises(ControlError) as info:
        reader.open_reader(str(home), None)
    assert info.value.rule == "state-unusable"
    assert not (home / "agentflow.db").exists()


def test_a_database_no_one_has_open_is_read_as_a_snapshot(home: Path) -> None:
    plane = ControlPlane(home)
    sid = _session(plane, {"a": []})
    plane.close()
    before = _files(home)
    db = _open(home)
    try:
        assert isinstance(db, reader.SnapshotDatabase)
        assert [s.summary.session.session_id for s in reader.sessions(db)] == [sid]
        assert db.usable(False) and not db.usable(True)
        writer = ControlPlane(home)
        writer.set_topic("changed", sid)  # an agent writes, into its -wal file so far
        assert not db.usable(False)
        writer.close()
        assert not db.usable(False)
    finally:
        reader.close(db)
    assert _files(home) == before


def test_a_database_an_agent_has_open_is_read_through_its_log(home: Path) -> None:
    plane = ControlPlane(home)
    sid = _session(plane, {"a": []})  # the plane keeps its connection: -wal exists
    assert (home / "agentflow.db-wal").exists()
    db = _open(home)
    try:
        assert not isinstance(db, reader.SnapshotDatabase)
        # a writer's lock is waited on for 5 s (docs/board.md), not SQLite's 0
        assert db.conn.execute("PRAGMA busy_timeout").fetchone() == (5000,)
        plane.set_topic("seen at once", sid)
        assert reader.sessions(db)[0].summary.session.topic == "seen at once"
        assert db.usable(False) and not db.usable(True)
    finally:
        reader.close(db)
        plane.close()


def test_a_database_whose_first_bytes_cannot_be_read_is_not_taken_for_a_quiet_one(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the look at its header fails (the board out of file descriptors for a moment):
    # nothing then says no agent writes it, so it is read through its log, where an
    # agent's last change still is, not as a snapshot of the file alone
    plane = ControlPlane(home)
    sid = _session(plane, {"a": []})  # the plane keeps its connection: -wal exists
    plane.set_topic("only in the log", sid)
    real_open = open

    def out_of_descriptors(file: str, *args: object, **kwargs: object) -> object:
        if os.fspath(file).endswith("agentflow.db"):
            raise OSError(errno.EMFILE, "Too many open files", file)
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(reader, "open", out_of_descriptors, raising=False)
    db = _open(home)
    try:
        assert not isinstance(db, reader.SnapshotDatabase)
        assert reader.sessions(db)[0].summary.session.topic == "only in the log"
    finally:
        reader.close(db)
        plane.close()


def test_a_database_that_is_not_a_sqlite_one_is_refused_in_one_line(home: Path) -> None:
    home.mkdir()
    (home / "agentflow.db").write_bytes(b"SQLite format 2\0" + b"\2" * 200)
    with pytest.raises(ControlError) as info:
        reader.open_reader(str(home), None)
    assert info.value.rule == "state-unusable"
    assert info.value.message == (
        f"cannot read the agentflow database {home / 'agentflow.db'} (file is not a database)"
    )


def _set_version(home: Path, version: int) -> None:
    with sqlite3.connect(home / "agentflow.db") as conn:
        conn.execute("DELETE FROM schema_version")
        conn.execute("INSERT INTO schema_version (version, applied_at) VALUES (?, 'x')", (version,))
    conn.close()


@pytest.mark.parametrize(("version", "who"), [(SCHEMA_VERSION + 1, "a newer"), (1, "an older")])
def test_a_database_of_another_schema_is_refused_with_the_fix(
    home: Path, version: int, who: str
) -> None:
    plane = ControlPlane(home)
    _session(plane, {"a": []})
    plane.close()
    _set_version(home, version)
    with pytest.raises(ControlError) as info:
        reader.open_reader(str(home), None)
    assert info.value.rule == "schema-mismatch"
    assert info.value.message == (
        f"{home / 'agentflow.db'} has schema version {version}, written by {who} plankit "
        f"(this one reads version {SCHEMA_VERSION}); run an `agentctl` command of the same "
        "plankit on it"
    )


def test_a_database_without_tables_is_of_no_schema(home: Path) -> None:
    home.mkdir()
    sqlite3.connect(home / "agentflow.db").close()
    with pytest.raises(ControlError) as info:
        reader.open_reader(str(home), None)
    assert info.value.rule == "schema-mismatch"
    assert "has schema version 0, written by an older plankit" in info.value.message


def test_a_database_whose_version_cannot_be_read_is_unusable(home: Path) -> None:
    home.mkdir()
    with sqlite3.connect(home / "agentflow.db") as conn:
        conn.execute("CREATE TABLE schema_version (release TEXT)")  # not this one's
    conn.close()
    with pytest.raises(ControlError) as info:
        reader.open_reader(str(home), None)
    assert info.value.rule == "state-unusable"
    assert info.value.message.startswith(
        f"cannot read the agentflow database {home / 'agentflow.db'} ("
    )
    assert info.value.message.endswith("(no such column: version)")


def test_the_database_can_ask_the_time(home: Path) -> None:
    plane = ControlPlane(home)
    _session(plane, {"a": []})
    db = _open(home)
    try:
        before = time.time_ns() // 1_000_000
        (now,) = db.execute("SELECT now_ms()").fetchone()
        assert isinstance(now, int)
        assert before <= now <= time.time_ns() // 1_000_000
    finally:
        reader.close(db)
        plane.close()


def test_a_closed_or_missing_reader_closes_quietly(home: Path) -> None:
    reader.close(None)
    plane = ControlPlane(home)
    _session(plane, {"a": []})
    plane.close()
    db = _open(home)
    reader.close(db)
    assert db.closed
    reader.close(db)  # twice: nothing raised

    class Broken:
        def close(self) -> None:
            raise OSError(104, "Connection reset by peer")

    reader.close(Broken())  # type: ignore[arg-type]


# --- URLs and messages ------------------------------------------------------------------------


def test_the_first_line_of_an_error_is_its_message() -> None:
    assert reader.first_line(ValueError("  one\ntwo\n")) == "one"
    assert reader.first_line(ValueError("")) == "ValueError"
    assert reader.first_line(TimeoutError("\n")) == "TimeoutError"


def test_a_password_is_hidden_from_a_message() -> None:
    params = {"user": "board", "password": "s3cr3t"}
    text = "connection to board:s3cr3t@db failed; s3cr3t"
    assert reader.hide_password(text, params) == "connection to board:***@db failed; ***"
    assert reader.hide_password(text, {"user": "board"}) == text
    assert reader.hide_password(text, {"password": ""}) == text


def test_a_postgresql_url_is_checked_before_anything_connects() -> None:
    assert reader.url_params("postgresql://board:pw@db.example:5433/agentflow") == {
        "user": "board",
        "password": "pw",
        "host": "db.example",
        "port": "5433",
        "dbname": "agentflow",
    }
    reader.check_url("postgresql:///agentflow?host=/run/postgresql")
    with pytest.raises(ControlError) as info:
        reader.check_url("board:s3cr3t@db.example/agentflow")
    assert info.value.rule == "database-url"
    assert "s3cr3t" not in info.value.message
    assert info.value.message == (
        "the agentflow database URL (--agentflow-database, or $AGENTFLOW_DATABASE_URL) is "
        "not a PostgreSQL URL; give one as postgresql://USER:PASSWORD@HOST:PORT/DBNAME"
    )


def test_a_server_that_does_not_answer_is_said_without_the_password(tmp_path: Path) -> None:
    url = f"postgresql://board:s3cr3t@/agentflow?host={tmp_path}/nowhere"
    with pytest.raises(ControlError) as info:
        reader.open_reader(None, url)
    message = info.value.message
    assert info.value.rule == "state-unusable"
    assert message.startswith("cannot connect to the agentflow database ")
    assert message.endswith("; check the URL and that the server is running")
    assert "s3cr3t" not in message and "\n" not in message
    assert "password=***" in message
    assert '/.s.PGSQL.5432" failed: No such file or directory); check' in message


# --- what a viewer reads --------------------------------------------------------------------


def test_the_signature_changes_with_every_change_shown(home: Path) -> None:
    plane = ControlPlane(home)
    sid = _session(plane, {"a": [], "b": ["a"]})
    db = _open(home)
    try:
        seen = [reader.signature(db)]
        assert seen[0] == reader.signature(db)  # nothing happened
        assert seen[0][0] == SCHEMA_VERSION
        claimed = plane.claim(sid, agent="w1").task
        assert claimed is not None
        for change in (
            lambda: None,
            lambda: plane.done(claimed.ref, sid, claim=claimed.claim),
            lambda: plane.set_topic("auth", sid),
            lambda: plane.request_thread_dir(sid),
            lambda: plane.remove_thread("thread_2", sid),
            lambda: plane.commit(sid),
            lambda: plane.end_session(sid),
        ):
            change()
            now = reader.signature(db)
            assert now not in seen
            seen.append(now)
    finally:
        reader.close(db)
        plane.close()


def test_a_database_migrated_under_an_open_reader_is_refused(home: Path) -> None:
    plane = ControlPlane(home)
    _session(plane, {"a": []})
    db = _open(home)
    try:
        with sqlite3.connect(home / "agentflow.db") as conn:
            conn.execute("INSERT INTO schema_version (version, applied_at) VALUES (99, 'later')")
        conn.close()
        with pytest.raises(ControlError) as info:
            reader.signature(db)
        assert info.value.rule == "schema-mismatch"
        assert info.value.message.startswith(
            f"{home / 'agentflow.db'} has schema version 99, written by a newer plankit"
        )
        with sqlite3.connect(home / "agentflow.db") as conn:
            conn.execute("DELETE FROM schema_version")  # emptied by a broken tool
        conn.close()
        with pytest.raises(ControlError) as info:
            reader.signature(db)
        assert "has schema version 0, written by an older plankit" in info.value.message
    finally:
        reader.close(db)
        plane.close()


def test_sessions_count_their_tasks_by_state(home: Path) -> None:
    plane = ControlPlane(home)
    first = _session(plane, {"a": [], "b": [], "c": ["a"]})
    second = _session(plane, {"x": []}, title="Docs")
    bare = plane.start_session().session.session_id
    claimed = plane.claim(first, agent="w1").task
    assert claimed is not None
    plane.done(claimed.ref, first, claim=claimed.claim)
    plane.claim(first, agent="w2")
    db = _open(home)
    try:
        rows = {row.summary.session.session_id: row for row in reader.sessions(db)}
        assert set(rows) == {first, second, bare}
        assert rows[first].states == {"done": 1, "claimed": 1, "ready": 1}
        assert (rows[first].done, rows[first].total) == (1, 3)
        assert rows[second].states == {"ready": 1} and rows[second].total == 1
        assert (rows[bare].states, rows[bare].done, rows[bare].total) == ({}, 0, 0)
        assert rows[bare].last_change_ms is None
        last = rows[first].last_change_ms
        assert last is not None and last >= (rows[second].last_change_ms or 0)
        assert abs(last - time.time() * 1000) < 600_000
        (only,) = reader.sessions(db, second)
        assert only.summary.session.session_id == second and only.states == {"ready": 1}
    finally:
        reader.close(db)
        plane.close()


def test_the_timeline_has_every_thread_and_the_last_commits(home: Path) -> None:
    plane = ControlPlane(home)
    sid = _session(plane, {"a": [], "b": ["a"]})
    extra = plane.request_thread_dir(sid)
    write_plan(Path(extra.plan_dir), title="Docs", tasks={"01-x.md": task("x")})
    for _ in range(3):
        plane.commit(sid)  # commits 2 to 4: two threads, three tasks
    plane.remove_thread(extra.thread_id, sid)
    plane.commit(sid)  # commit 5: one thread, two tasks
    db = _open(home)
    try:
        threads, commits = reader.timeline(db, sid, 2)
        assert [t.thread_id for t in threads] == ["thread_1", extra.thread_id]
        assert threads[1].removed_at is not None
        assert [(c.number, c.threads, c.tasks) for c in commits] == [(4, 2, 3), (5, 1, 2)]
        _, commits = reader.timeline(db, sid, 2, also=1)
        assert [(c.number, c.threads, c.tasks) for c in commits] == [
            (1, 1, 2),
            (4, 2, 3),
            (5, 1, 2),
        ]
        _, commits = reader.timeline(db, sid, 2, also=5)
        assert [c.number for c in commits] == [4, 5]
        assert commits[1].to_dict() == {
            "commit": 5,
            "committed_at": commits[1].committed_at,
            "thread_count": 1,
            "task_count": 2,
        }
        assert commits[1].committed_at >= commits[0].committed_at
    finally:
        reader.close(db)
        plane.close()


def test_a_commit_has_task_states_only_while_it_is_the_latest(home: Path) -> None:
    plane = ControlPlane(home)
    sid = _session(plane, {"a": []})
    db = _open(home)
    try:
        record, states = reader.commit(db, sid, None)
        assert record.number == 1
        assert states is not None and [s.state for s in states] == ["ready"]
        plane.commit(sid)
        record, states = reader.commit(db, sid, 1)
        assert (record.number, states) == (1, None)
        record, states = reader.commit(db, sid, 2)
        assert record.number == 2 and states is not None
    finally:
        reader.close(db)
        plane.close()


def test_commit_texts_are_the_plans_and_tasks_of_the_last_commits(home: Path) -> None:
    plane = ControlPlane(home)
    context = plane.start_session()
    sid = context.session.session_id
    directory = Path(context.current.plan_dir)
    write_plan(directory, title="Auth", tasks={"01-a.md": task("a"), "02-b.md": task("b", ["a"])})
    plane.commit(sid)
    (directory / "tasks" / "03-c.md").write_text(
        "---\nid: c\nagent: codex\ndepends_on: [a, b]\nsubtasks:\n  - one\n  - two\n---\n\n"
        "Ship it\n\nbehind the flag.\n"
    )
    plane.commit(sid)
    plane.commit(sid)
    db = _open(home)
    try:
        texts = reader.commit_texts(db, sid, 2)
        assert [(number, when[:4]) for number, when, _ in texts] == [
            (2, texts[0][1][:4]),
            (3, texts[1][1][:4]),
        ]
        assert texts[0][2] == texts[1][2]
        assert texts[0][2] == (
            "# thread_1 (current): Auth\n"
            "  The narrative.\n"
            "## a\n"
            "  Do it.\n"
            "## b <- a\n"
            "  Do it.\n"
            "## c [codex] <- a, b\n"
            "  - one\n"
            "  - two\n"
            "  Ship it\n"
            "  \n"
            "  behind the flag.\n"
        )
        (first,) = reader.commit_texts(db, sid, 3)[:1]
        assert first[0] == 1 and "## c" not in first[2]
    finally:
        reader.close(db)
        plane.close()


def test_an_additional_thread_is_named_so_in_the_text(home: Path) -> None:
    plane = ControlPlane(home)
    context = plane.start_session()
    sid = context.session.session_id
    extra = plane.request_thread_dir(sid)
    write_plan(Path(extra.plan_dir), title="Docs", tasks={"01-x.md": task("x")})
    record = plane.commit(sid)
    assert reader.render_commit(record) == (
        f"# {extra.thread_id} (additional): Docs\n  The narrative.\n## x\n  Do it.\n"
    )
    plane.close()
    assert os.path.isdir(context.current.plan_dir)


def test_a_database_without_a_write_ahead_log_is_read_in_place(home: Path) -> None:
    plane = ControlPlane(home)
    sid = _session(plane, {"a": []})
    plane.close()
    with sqlite3.connect(home / "agentflow.db") as conn:
        conn.execute("PRAGMA journal_mode = DELETE")  # as an older tool may leave it
    conn.close()
    db = _open(home)
    try:
        assert not isinstance(db, reader.SnapshotDatabase)
        assert [s.summary.session.session_id for s in reader.sessions(db)] == [sid]
    finally:
        reader.close(db)


def test_a_database_on_a_read_only_mount_is_read_as_it_is(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a WAL database copied with its (empty) -wal file onto a mount where SQLite cannot
    # make the -shm file: the read-only open fails, and the file is read as it is
    plane = ControlPlane(home)
    sid = _session(plane, {"a": []})
    plane.close()
    (home / "agentflow.db-wal").write_bytes(b"")
    real = sqlite3.connect

    class NoShm:
        def execute(self, sql: str) -> None:
            raise sqlite3.OperationalError("unable to open database file")

        def close(self) -> None:
            pass

    def connect(database: str, *args: object, **kwargs: object) -> object:
        if database.endswith("?mode=ro"):
            return NoShm()
        return real(database, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sqlite3, "connect", connect)
    db = _open(home)
    monkeypatch.undo()
    try:
        assert isinstance(db, reader.SnapshotDatabase)
        assert [s.summary.session.session_id for s in reader.sessions(db)] == [sid]
        assert not (home / "agentflow.db-shm").exists()  # read as it is: nothing made
    finally:
        reader.close(db)


def test_a_server_that_gives_no_reason_is_said_to_give_no_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import psycopg

    def silent(*args: object, **kwargs: object) -> None:
        raise psycopg.OperationalError("")

    monkeypatch.setattr(psycopg, "connect", silent)
    with pytest.raises(ControlError) as info:
        reader.open_reader(None, "postgresql://board:s3cr3t@db.example/agentflow")
    assert "(no answer); check the URL" in info.value.message
    assert "s3cr3t" not in info.value.message


def test_a_commit_of_a_plan_without_tasks_counts_none(home: Path) -> None:
    plane = ControlPlane(home)
    context = plane.start_session()
    sid = context.session.session_id
    write_plan(Path(context.current.plan_dir), title="Just the narrative")
    record = plane.commit(sid)
    db = _open(home)
    try:
        _, commits = reader.timeline(db, sid, 5)
        assert [(c.number, c.committed_at, c.threads, c.tasks) for c in commits] == [
            (1, record.committed_at, 1, 0)
        ]
    finally:
        reader.close(db)
        plane.close()


def test_the_last_change_of_a_session_is_its_latest_task_change(home: Path) -> None:
    plane = ControlPlane(home)
    sid = _session(plane, {"a": [], "b": [], "c": []})
    claimed = plane.claim(sid, agent="w1").task
    assert claimed is not None
    plane.done(claimed.ref, sid, claim=claimed.claim)
    plane.claim(sid, agent="w2")
    db = _open(home)
    try:
        ((latest,),) = [db.execute("SELECT MAX(changed_at) FROM tasks").fetchone()]
        (row,) = reader.sessions(db)
        assert row.states == {"claimed": 1, "done": 1, "ready": 1}
        assert row.last_change_ms == latest
    finally:
        reader.close(db)
        plane.close()


def test_the_signature_changes_when_a_task_finishes_within_one_clock_tick(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a coarse clock (a virtual machine's, or one ticking every 15 ms): the claim and the
    # report of a quick task get the same time stamp, and the board must still notice
    from plankit.agentflow import store

    monkeypatch.setattr(store, "_now_ms", lambda: 1_767_225_600_000)
    plane = ControlPlane(home)
    sid = _session(plane, {"a": []})
    db = _open(home)
    try:
        claimed = plane.claim(sid, agent="w1").task
        assert claimed is not None
        before = reader.signature(db)
        plane.done(claimed.ref, sid, claim=claimed.claim)
        assert reader.signature(db) != before
    finally:
        reader.close(db)
        plane.close()


def test_a_url_with_a_placeholder_left_in_is_quoted_as_it_is(postgres: PostgresServer) -> None:
    # a URL copied from a template with its user still XXXX (and no password to hide)
    url = postgres.url().replace("user=agentflow", "user=XXXX")
    with pytest.raises(ControlError) as info:
        reader.open_reader(None, url)
    assert info.value.rule == "state-unusable"
    assert 'role "XXXX" does not exist' in info.value.message
    assert "***" not in info.value.message


def test_a_reader_of_postgresql_leaves_no_transaction_open_between_reads(
    home: Path, postgres: PostgresServer
) -> None:
    # a board polls for hours: a transaction left open would hold its locks (a migration
    # would wait behind it) and keep the server from cleaning up old rows
    import psycopg

    url = postgres.new_schema()
    plane = ControlPlane(home, database=url)
    _session(plane, {"a": []})
    plane.close()
    db = reader.open_reader(None, url)
    assert isinstance(db, PostgresDatabase)
    try:
        assert reader.sessions(db)[0].states == {"ready": 1}
        reader.signature(db)
        with psycopg.connect(postgres.url(), autocommit=True) as other:
            state = other.execute(
                "SELECT state FROM pg_stat_activity WHERE pid = %s", (db.conn.info.backend_pid,)
            ).fetchone()
        assert state == ("idle",)
    finally:
        reader.close(db)


def test_a_server_that_never_answers_is_given_up_on(tmp_path: Path) -> None:
    # a server that takes the connection and then hangs (stopped, or a proxy in front of
    # a dead one): the board says so after its connection timeout instead of waiting on
    import socket

    with socket.socket(socket.AF_UNIX) as hung:
        hung.bind(str(tmp_path / ".s.PGSQL.5432"))
        hung.listen(1)  # never accepted, never answered
        # the URL's own timeout (libpq's shortest, 2 s) wins over the board's 10 s
        url = f"postgresql://board@/agentflow?host={tmp_path}&connect_timeout=2"
        with pytest.raises(ControlError) as info:
            reader.open_reader(None, url)
    assert info.value.rule == "state-unusable"
    assert "timeout expired" in info.value.message


@pytest.mark.parametrize(
    ("query", "environment", "seconds"),
    [("", None, "10"), ("&connect_timeout=3", None, "3"), ("", "4", "4"), ("&connect_timeout=3", "4", "3")],
    ids=["the board's", "the URL's", "PGCONNECT_TIMEOUT", "the URL's over PGCONNECT_TIMEOUT"],
)  # fmt: skip
def test_the_connection_timeout_is_ten_seconds_unless_the_url_or_libpq_s_variable_sets_one(
    home: Path,
    postgres: PostgresServer,
    monkeypatch: pytest.MonkeyPatch,
    query: str,
    environment: str | None,
    seconds: str,
) -> None:
    url = postgres.new_schema()
    plane = ControlPlane(home, database=url)
    _session(plane, {"a": []})
    plane.close()
    if environment is None:
        monkeypatch.delenv("PGCONNECT_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("PGCONNECT_TIMEOUT", environment)
    db = reader.open_reader(None, url + query)
    assert isinstance(db, PostgresDatabase)
    try:
        assert db.conn.info.get_parameters()["connect_timeout"] == seconds
    finally:
        reader.close(db)


# SQLite reads ``file:`` names as URIs only when asked to (its default, and that of many
# builds); Debian's is built to read them so always. The reader must ask for it: a name
# read literally opens no database (or makes one, read-write, under the working folder).
_URIS_OFF = """
import ctypes, os, sys
assert ctypes.CDLL(sys.argv[1]).sqlite3_config(17, ctypes.c_int(0)) == 0  # SQLITE_CONFIG_URI
import sqlite3
here = os.getcwd()
os.chdir(sys.argv[4])
assert sqlite3.connect("file:probe.db?mode=ro", uri=False)  # read literally: made there
os.chdir(here)
from plankit.agentflow import reader
if sys.argv[3] == "no -shm":
    real = sqlite3.connect
    class NoShm:
        def execute(self, sql):
            raise sqlite3.OperationalError("unable to open database file")
        def close(self):
            pass
    sqlite3.connect = lambda name, *a, **k: NoShm() if name.endswith("?mode=ro") else real(name, *a, **k)
db = reader.open_reader(sys.argv[2], None)
sqlite3.connect = real if sys.argv[3] == "no -shm" else sqlite3.connect
print(type(db).__name__, *[s.summary.session.session_id for s in reader.sessions(db)])
reader.close(db)
"""


def _libsqlite3() -> str:
    """The SQLite library this Python's ``sqlite3`` module uses."""
    import _sqlite3  # noqa: F401 -- loads the library

    maps = Path("/proc/self/maps").read_text().split("\n")
    found = {line.split()[-1] for line in maps if "libsqlite3" in line}
    if len(found) != 1:
        pytest.skip("this Python's SQLite is built into its module")
    return found.pop()


@pytest.mark.parametrize("how", ["snapshot", "through its log", "no -shm"])
def test_a_sqlite_that_reads_file_names_literally_still_opens_the_database_read_only(
    home: Path, tmp_path: Path, how: str
) -> None:
    import subprocess
    import sys

    import plankit

    plane = ControlPlane(home)
    sid = _session(plane, {"a": []})
    if how != "through its log":
        plane.close()
    if how == "no -shm":
        (home / "agentflow.db-wal").write_bytes(b"")
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(Path(plankit.__file__).parents[1])}
    try:
        done = subprocess.run(
            [sys.executable, "-c", _URIS_OFF, _libsqlite3(), str(home), how, str(work)],
            env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        db = _open(home)  # and here, where SQLite reads them as URIs whatever it is told
        try:
            seen = [s.summary.session.session_id for s in reader.sessions(db)]
        finally:
            reader.close(db)
    finally:
        plane.close()
    assert done.returncode == 0, done.stderr
    kind = "SqliteDatabase" if how == "through its log" else "SnapshotDatabase"
    assert done.stdout.split() == [kind, *seen] == [kind, sid]
    assert _files(work) == ["file:probe.db?mode=ro"]  # only the probe's: nothing else made
