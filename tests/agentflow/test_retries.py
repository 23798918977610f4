"""Writes the database asks to run again (a deadlock, a serialization failure between
concurrent writers): run again, at most ``WRITE_ATTEMPTS`` times in all, and no other
error run twice.

On PostgreSQL the failures are the server's own: a function raising deadlock_detected
(SQLSTATE 40P01) its first calls, counting them in a sequence (which a rollback does
not undo).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from plankit.agentflow.database import WRITE_ATTEMPTS, Database
from plankit.agentflow.records import ControlError
from plankit.agentflow.store import connect
from tests.pgserver import PostgresServer


@pytest.fixture
def pg(postgres: PostgresServer) -> Iterator[Database]:
    """A PostgreSQL store with ``flaky(n)``: deadlock_detected on its first ``n`` calls."""
    from plankit.agentflow.pgstore import connect_postgres

    db = connect_postgres(postgres.new_schema())
    db.execute("CREATE SEQUENCE calls")
    db.execute(
        "CREATE FUNCTION flaky(failures BIGINT) RETURNS TABLE (call BIGINT) LANGUAGE plpgsql "
        "AS $$ DECLARE n BIGINT := nextval('calls'); BEGIN IF n <= failures THEN "
        "RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END IF; "
        "RETURN QUERY SELECT n; END $$"
    )
    yield db
    db.close()


def _calls(db: Database) -> int:
    return int(db.execute("SELECT last_value FROM calls").fetchone()[0])


def test_a_write_that_deadlocks_twice_is_run_again_and_returns(pg: Database) -> None:
    def action(db: Database) -> int:
        return int(db.execute("SELECT * FROM flaky(2)").fetchone()[0])

    assert pg.write(action) == 3
    assert _calls(pg) == 3


def test_a_write_that_keeps_deadlocking_gives_up_after_the_last_attempt(pg: Database) -> None:
    from psycopg import errors

    with pytest.raises(errors.DeadlockDetected):
        pg.write(lambda db: db.execute("SELECT * FROM flaky(100)").fetchone())
    assert _calls(pg) == WRITE_ATTEMPTS
    with pytest.raises(errors.DeadlockDetected):
        pg.write(lambda db: db.execute("SELECT * FROM flaky(100)").fetchone(), attempts=1)
    assert _calls(pg) == WRITE_ATTEMPTS + 1
    # the connection is still usable: each failed attempt was rolled back
    assert pg.write(lambda db: db.execute("SELECT 1").fetchone()[0]) == 1


def test_a_stored_function_that_deadlocks_is_called_again_up_to_the_bound(pg: Database) -> None:
    from psycopg import errors

    assert pg.call("flaky", (WRITE_ATTEMPTS - 1,)) == [(WRITE_ATTEMPTS,)]
    with pytest.raises(errors.DeadlockDetected):
        pg.call("flaky", (1000,))
    assert _calls(pg) == 2 * WRITE_ATTEMPTS


def test_a_stored_function_failing_otherwise_is_called_once(pg: Database) -> None:
    from psycopg import errors

    pg.execute("CREATE FUNCTION broken() RETURNS TABLE (x INT) LANGUAGE sql AS $$ SELECT 1/0 $$")
    with pytest.raises(errors.DivisionByZero):
        pg.call("broken", ())
    assert pg.call("flaky", (0,)) == [(1,)]  # never called by the failures above


def test_a_write_failing_otherwise_runs_once_and_changes_nothing(pg: Database) -> None:
    runs: list[int] = []

    def action(db: Database) -> None:
        runs.append(1)
        db.execute("SELECT * FROM flaky(0)")
        raise ControlError("task-state", "cannot finish thread_1/a: it is done")

    with pytest.raises(ControlError):
        pg.write(action)
    assert runs == [1] and _calls(pg) == 1


def test_an_uncommitted_write_may_skip_the_disk_wait_only_when_asked(pg: Database) -> None:
    pg.execute("SET synchronous_commit TO on")

    def mode(db: Database) -> str:
        return str(db.execute("SHOW synchronous_commit").fetchone()[0])

    assert pg.write(mode) == "on"
    assert pg.write(mode, durable=False) == "off"
    assert mode(pg) == "on"  # only for that transaction


def test_sqlite_runs_a_failing_write_once(tmp_path: Path) -> None:
    db = connect(str(tmp_path / "home"))
    runs: list[int] = []

    def action(db: Database) -> None:
        runs.append(1)
        db.execute("INSERT INTO schema_version (version, applied_at) VALUES (1, 'again')")

    try:
        with pytest.raises(sqlite3.IntegrityError, match="UNIQUE") as info:
            db.write(action)
        assert db.is_unique_violation(info.value)
        assert runs == [1]
    finally:
        db.close()


def test_each_new_attempt_waits_a_little_longer(
    pg: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    # writers that deadlocked each other spread out instead of meeting again at once
    from plankit.agentflow import database

    pauses: list[float] = []
    monkeypatch.setattr(database.time, "sleep", pauses.append)
    assert pg.write(lambda db: db.execute("SELECT * FROM flaky(3)").fetchone()[0]) == 4
    assert pauses == pytest.approx([0.002, 0.004, 0.006])
