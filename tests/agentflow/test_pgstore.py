"""The PostgreSQL store against a real server: migrations from each earlier schema, a
newer schema refused, connections that fail or break, passwords kept out of messages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from plankit.agentflow.control import ControlPlane
from plankit.agentflow.pgstore import PostgresDatabase, connect_postgres, safe_url
from plankit.agentflow.records import ControlError
from plankit.agentflow.schema import SCHEMA_VERSION
from tests.pgserver import PostgresServer

from .helpers import copy_example, task, write_plan


@pytest.fixture
def url(postgres: PostgresServer) -> str:
    return postgres.new_schema()


@pytest.fixture
def plane(home: Path, url: str) -> Iterator[ControlPlane]:
    made = ControlPlane(home, database=url)
    yield made
    made.close()


def _sql(url: str, *statements: str) -> list[tuple[object, ...]]:
    """Run ``statements`` on a connection of its own (another program); the last one's rows."""
    rows: list[tuple[object, ...]] = []
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in statements:
            cursor = conn.execute(statement)
            rows = cursor.fetchall() if cursor.description else []
    return rows


def test_a_new_database_gets_every_migration_and_the_functions(url: str) -> None:
    db = connect_postgres(url)
    try:
        assert db.version() == SCHEMA_VERSION
        assert db.where.startswith("PostgreSQL database 'agentflow' at ")
        assert db.dialect == "postgresql" and not db.closed
    finally:
        db.close()
    assert db.closed
    assert [r[0] for r in _sql(url, "SELECT version FROM schema_version ORDER BY 1")] == [1, 2, 3]
    names = _sql(
        url,
        "SELECT proname FROM pg_proc WHERE proname LIKE 'agentflow_%' "
        "AND pronamespace = current_schema()::regnamespace ORDER BY 1",
    )
    assert [r[0] for r in names] == ["agentflow_claim", "agentflow_done"]
    # the sequences of the {serial} keys: an identity column
    assert _sql(url, "SELECT pg_get_serial_sequence('threads', 'seq') IS NOT NULL") == [(True,)]


def test_a_database_of_the_second_schema_gets_its_functions(
    plane: ControlPlane, url: str, home: Path
) -> None:
    context = plane.start_session("agent-1")
    copy_example(Path(context.current.plan_dir))
    plane.commit(context.session.session_id)
    plane.close()
    _sql(
        url,
        "DROP FUNCTION agentflow_claim",
        "DROP FUNCTION agentflow_done",
        "DELETE FROM schema_version WHERE version = 3",
    )
    again = ControlPlane(home, database=url)
    got = again.claim("agent-1", agent="w1").task
    assert got is not None and got.claims == 1
    assert again.done(got.ref, "agent-1", claim=got.claim).state == "done"
    assert [r[0] for r in _sql(url, "SELECT version FROM schema_version ORDER BY 1")] == [1, 2, 3]
    again.close()


def test_a_database_of_the_first_schema_tracks_its_latest_commits(
    plane: ControlPlane, url: str, home: Path
) -> None:
    context = plane.start_session("agent-1")
    write_plan(Path(context.current.plan_dir), tasks={"01-a.md": task("a")})
    plane.commit(context.session.session_id)
    write_plan(
        Path(context.current.plan_dir), tasks={"01-a.md": task("a"), "02-b.md": task("b", ["a"])}
    )
    plane.commit(context.session.session_id)
    plane.close()
    _sql(
        url,
        "DROP FUNCTION agentflow_claim",
        "DROP FUNCTION agentflow_done",
        "DROP TABLE task_deps",
        "DROP TABLE tasks",
        "ALTER TABLE sessions DROP COLUMN ended_at",
        "ALTER TABLE sessions DROP COLUMN host",
        "DELETE FROM schema_version WHERE version > 1",
    )
    again = ControlPlane(home, database=url)
    _, statuses = again.progress("agent-1")
    assert statuses is not None
    assert [(s.task_id, s.state, s.spec["commit"]) for s in statuses] == [
        ("a", "ready", 2),
        ("b", "waiting", 2),
    ]
    again.close()


def test_a_database_of_a_newer_plankit_is_refused(url: str) -> None:
    connect_postgres(url).close()
    _sql(url, "INSERT INTO schema_version (version, applied_at) VALUES (4, 'later')")
    with pytest.raises(ControlError) as info:
        connect_postgres(url)
    assert info.value.rule == "state-unusable"
    assert info.value.message.startswith("PostgreSQL database 'agentflow' at ")
    assert info.value.message.endswith(
        " was written by a newer plankit (schema 4, this one knows 3); upgrade plankit"
    )
    with pytest.raises(ControlError):
        connect_postgres(url + "&application_name=refused-plankit")
    left = _sql(
        url, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'refused-plankit'"
    )
    assert left == [(0,)]  # the refused connection was closed


def test_a_schema_whose_tables_clash_with_a_migration_is_a_one_line_error(url: str) -> None:
    connect_postgres(url).close()
    # another application's tasks table, in a schema at version 1
    _sql(
        url,
        "DROP FUNCTION agentflow_claim",
        "DROP FUNCTION agentflow_done",
        "DROP TABLE task_deps",
        "DROP TABLE tasks",
        "ALTER TABLE sessions DROP COLUMN ended_at",
        "ALTER TABLE sessions DROP COLUMN host",
        "DELETE FROM schema_version WHERE version > 1",
        "CREATE TABLE tasks (id SERIAL PRIMARY KEY, title TEXT)",
    )
    with pytest.raises(ControlError) as info:
        connect_postgres(url)
    assert info.value.rule == "state-unusable"
    assert info.value.message.startswith(
        "the agentflow database PostgreSQL database 'agentflow' at "
    )
    assert " cannot be used (" in info.value.message and '"tasks" already exists' in str(
        info.value.message
    )
    assert _sql(url, "SELECT MAX(version) FROM schema_version") == [(1,)]  # rolled back


def _kill(url: str, name: str) -> None:
    """End, from the server, the connections whose application_name is ``name`` (as an
    administrator or a restarting server would)."""
    ended = _sql(
        url,
        f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '{name}'",
    )
    assert ended == [(True,)]


def test_a_connection_killed_by_the_server_is_replaced(home: Path, url: str) -> None:
    plane = ControlPlane(home, database=url + "&application_name=plane-under-test")
    sid = plane.start_session().session.session_id
    _kill(url, "plane-under-test")
    with pytest.raises(ControlError) as info:
        plane.context(sid)
    assert info.value.rule == "state-unusable" and "nothing was changed" in info.value.message
    assert plane.context(sid).session.session_id == sid  # a new connection
    plane.close()


def test_an_error_inside_a_transaction_rolls_it_back(url: str) -> None:
    db = connect_postgres(url)
    try:
        with pytest.raises(ControlError), db.transaction():  # noqa: PT012
            db.execute("INSERT INTO schema_version VALUES (99, 'x')")
            raise ControlError("task-state", "refused halfway")
        assert db.version() == SCHEMA_VERSION
        db.executemany("INSERT INTO schema_version VALUES (?, ?)", [(7, "a"), (8, "b")])
        assert db.version() == 8
    finally:
        db.close()


def test_two_sessions_for_one_agent_id_are_refused(plane: ControlPlane) -> None:
    plane.start_session("agent-1")
    with pytest.raises(ControlError) as info:
        plane.start_session("agent-1")
    assert info.value.rule == "session-exists"


def test_a_broken_connection_is_closed_and_a_sound_one_kept(url: str) -> None:
    db = connect_postgres(url + "&application_name=broken-under-test")
    assert isinstance(db, PostgresDatabase)
    db.discard_if_broken()
    assert not db.closed
    _kill(url, "broken-under-test")
    with pytest.raises(psycopg.OperationalError):
        db.execute("SELECT 1")
    assert db.is_error(psycopg.OperationalError("x")) and not db.is_error(ValueError("x"))
    db.discard_if_broken()
    assert db.closed


def test_messages_never_show_the_password() -> None:
    shown = safe_url("postgresql://agentflow:s3cret@db.example:5433/agentflow")
    assert "s3cret" not in shown and "password=***" in shown
    assert "host=db.example" in shown and "port=5433" in shown
    plain = safe_url("host=db.example dbname=agentflow")
    assert sorted(plain.split()) == ["dbname=agentflow", "host=db.example"]
    assert safe_url("postgresql://[not a url") == "the database URL"


def test_a_plane_keeps_its_connection_between_requests(home: Path, url: str) -> None:
    named = url + "&application_name=kept-plankit"
    plane = ControlPlane(home, database=named)
    query = "SELECT pid FROM pg_stat_activity WHERE application_name = 'kept-plankit'"
    sid = plane.start_session().session.session_id
    first = _sql(url, query)
    assert len(first) == 1
    plane.context(sid)
    plane.sessions()
    assert _sql(url, query) == first  # the same server process: never reconnected
    plane.close()


def test_a_server_that_is_not_there_is_named_with_the_driver_s_first_line(
    tmp_path: Path,
) -> None:
    url = f"postgresql://agentflow:s3cret@/agentflow?host={tmp_path}/nowhere"
    with pytest.raises(psycopg.OperationalError) as direct:
        psycopg.connect(url, connect_timeout=5)
    first = str(direct.value).strip().splitlines()[0]
    with pytest.raises(ControlError) as info:
        connect_postgres(url)
    assert info.value.rule == "state-unusable"
    assert info.value.message == (
        f"cannot connect to the agentflow database {safe_url(url)} ({first}); check "
        "AGENTFLOW_DATABASE_URL (or --database) and that the server is running"
    )
    assert "s3cret" not in info.value.message


def test_without_psycopg_the_error_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    from plankit.agentflow.pgstore import require_psycopg

    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if it were not installed
    with pytest.raises(ControlError) as info:
        require_psycopg()
    assert (info.value.rule, info.value.message) == (
        "state-unusable",
        "a PostgreSQL database needs the postgres extra (psycopg 3): "
        "pip install 'plankit[postgres]'",
    )
    assert info.value.__cause__ is None and info.value.__suppress_context__


@pytest.mark.parametrize(
    ("query", "environment", "seconds"),
    [("", None, "30"), ("&connect_timeout=5", None, "5"), ("", "7", "7"), ("&connect_timeout=5", "7", "5")],
    ids=["agentctl's", "the URL's", "PGCONNECT_TIMEOUT", "the URL's over PGCONNECT_TIMEOUT"],
)  # fmt: skip
def test_a_server_that_stops_answering_is_given_up_after_half_a_minute_unless_told_otherwise(
    url: str, monkeypatch: pytest.MonkeyPatch, query: str, environment: str | None, seconds: str
) -> None:
    # libpq's own default is to wait for ever; a URL or PGCONNECT_TIMEOUT that says how
    # long (a slow link to a distant server) is heeded
    if environment is None:
        monkeypatch.delenv("PGCONNECT_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("PGCONNECT_TIMEOUT", environment)
    db = connect_postgres(url + query)
    try:
        assert db.conn.info.get_parameters()["connect_timeout"] == seconds
    finally:
        db.close()


def test_a_connection_refused_without_a_word_says_there_was_no_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise psycopg.OperationalError("")  # the driver has nothing to say

    monkeypatch.setattr(psycopg, "connect", refuse)
    url = "postgresql://agentflow@db.example/agentflow"
    with pytest.raises(ControlError) as info:
        connect_postgres(url)
    assert info.value.message == (
        f"cannot connect to the agentflow database {safe_url(url)} (no answer); check "
        "AGENTFLOW_DATABASE_URL (or --database) and that the server is running"
    )


def test_two_plankits_meeting_a_new_database_migrate_it_once(url: str) -> None:
    import threading

    from plankit.agentflow import pgstore
    from plankit.agentflow.schema import apply_migrations
    from tests.waiting import wait_until

    # the first plankit has taken the migration lock and is migrating
    first = PostgresDatabase(psycopg.connect(url, autocommit=True))
    second: list[PostgresDatabase | BaseException] = []

    def connect_second() -> None:
        try:
            second.append(connect_postgres(url + "&application_name=second-plankit"))
        except BaseException as exc:
            second.append(exc)

    try:
        with first.transaction():
            first.execute("SELECT pg_advisory_xact_lock(?)", (pgstore._MIGRATION_LOCK,))
            thread = threading.Thread(target=connect_second)
            thread.start()
            wait_until(
                lambda: (
                    _sql(
                        url,
                        "SELECT wait_event_type FROM pg_stat_activity "
                        "WHERE application_name = 'second-plankit'",
                    )
                    == [("Lock",)]
                ),
                "the second plankit to wait for the migration lock",
            )
            first.execute(pgstore._NOW_MS)
            apply_migrations(first, 0)
        thread.join()
    finally:
        first.close()
    (db,) = second
    assert isinstance(db, PostgresDatabase), db
    try:
        assert db.version() == SCHEMA_VERSION
    finally:
        db.close()
    assert [r[0] for r in _sql(url, "SELECT version FROM schema_version ORDER BY 1")] == [1, 2, 3]
