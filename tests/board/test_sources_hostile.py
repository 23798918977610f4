"""The board's control-plane source against what can go wrong: odd directory names,
a database no one has open, odd ``?commit=`` values, a database changed while the
board runs, odd values in it, URLs with passwords, and connections left open."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from plankit.agentflow.control import ControlPlane
from plankit.board.app import create_app
from plankit.board.control import ControlSource
from tests.agentflow.helpers import task, write_plan


def _session(plane: ControlPlane, tasks: dict[str, list[str]], title: str = "Auth") -> str:
    context = plane.start_session(None)
    files = {f"{i:02d}-{tid}.md": task(tid, deps) for i, (tid, deps) in enumerate(tasks.items())}
    write_plan(Path(context.current.plan_dir), title=title, tasks=files)
    plane.commit(context.session.session_id)
    return context.session.session_id


def _tree(directory: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``directory`` with its time and size."""
    return {
        str(p.relative_to(directory)): (p.stat().st_mtime_ns, p.stat().st_size)
        for p in directory.rglob("*")
        if p.is_file()
    }


def _client(root: Path, *sources: Any) -> TestClient:
    root.mkdir(exist_ok=True)
    return TestClient(
        create_app(root, watch=False, sources=sources),
        base_url="http://127.0.0.1",
        raise_server_exceptions=False,
    )


# --- nothing written ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["what?now", "100%41", "left#right"])
def test_a_home_named_with_uri_characters_is_read_and_nothing_is_made(
    tmp_path: Path, name: str
) -> None:
    # "?", "#" and "%" in a path end or change a SQLite URI: unquoted, another file was
    # opened read-write, and made next to the home
    home = tmp_path / name
    plane = ControlPlane(home)
    sid = _session(plane, {"a": []})
    plane.close()
    before = _tree(tmp_path)
    source = ControlSource(str(home))
    try:
        [added] = source.poll()
        assert source.error is None
        assert added["plan"]["id"] == f"agentflow:@session/{sid}"
    finally:
        source.close()
    assert _tree(tmp_path) == before


def test_a_database_no_one_has_open_gets_no_wal_or_shm_file_from_the_board(
    tmp_path: Path, plane: ControlPlane
) -> None:
    sid = _session(plane, {"a": [], "b": ["a"]})
    plane.close()  # the agents are done: agentflow.db alone, without -wal and -shm
    home = Path(plane.home)
    before = _tree(home)
    assert not [name for name in before if name.endswith(("-wal", "-shm"))]
    plan_id = f"agentflow:@session/{sid}"
    with _client(tmp_path / "proj", ControlSource(str(home))) as client:
        assert [p["id"] for p in client.get("/api/plans").json()["plans"]] == [plan_id]
        page = client.get(f"/api/plans/{plan_id}").json()
        assert page["commit"] == 1 and page["errors"] == []
        assert client.get(f"/api/plans/{plan_id}/diff?from=0&to=0").status_code == 200
    assert _tree(home) == before


def test_a_read_that_overlaps_a_writer_is_done_again(tmp_path: Path, plane: ControlPlane) -> None:
    from plankit.agentflow import reader

    _session(plane, {"a": []})
    plane.close()
    source = ControlSource(plane.home)
    calls: list[int] = []

    def read_while_an_agent_writes(db: Any) -> int:
        found = len(reader.sessions(db))
        if not calls:  # an agent commits a second session while the board reads
            writer = ControlPlane(plane.home)
            _session(writer, {"x": []}, title="Other")
            writer.close()
        calls.append(found)
        return found

    try:
        assert source._read(read_while_an_agent_writes) == 2
        assert calls == [1, 2]
    finally:
        source.close()


def test_no_connection_is_left_open_by_the_threads_that_read(
    tmp_path: Path, plane: ControlPlane
) -> None:
    sid = _session(plane, {"a": []})
    plane.close()
    db = os.path.realpath(Path(plane.home) / "agentflow.db")
    fds = Path("/proc/self/fd")
    if not fds.is_dir():
        pytest.skip("needs /proc/self/fd")

    def open_files() -> int:
        found = 0
        for fd in list(fds.iterdir()):
            try:
                found += os.readlink(fd).startswith(db)
            except OSError:
                continue
        return found

    source = ControlSource(plane.home)
    barrier = threading.Barrier(3)

    def read() -> None:
        barrier.wait(timeout=60)  # three threads, each with its own reads
        source.poll()
        source.detail(f"agentflow:@session/{sid}", {})

    with ThreadPoolExecutor(3) as pool:
        for done in [pool.submit(read) for _ in range(3)]:
            done.result(timeout=120)
        source.close()
        assert open_files() == 0  # the threads are still alive, like a server's


# --- odd requests and odd data -----------------------------------------------------------


@pytest.mark.parametrize("asked", ["²", "٣", "9" * 5000, "9" * 40, "-1", "1.5", " 1"])
def test_any_commit_value_is_a_page_never_a_500(
    tmp_path: Path, plane: ControlPlane, asked: str
) -> None:
    sid = _session(plane, {"a": []})
    plan_id = f"agentflow:@session/{sid}"
    with _client(tmp_path / "proj", ControlSource(plane.home)) as client:
        client.get("/api/plans")
        response = client.get(f"/api/plans/{plan_id}", params={"commit": asked})
        listed = client.get("/api/plans").json()
    assert response.status_code == 200
    page = response.json()
    assert page["commit"] == 1  # the latest is shown
    [problem] = page["errors"]
    assert problem["code"] == "commit-unknown"
    assert "is not a commit number" in problem["message"] and len(problem["message"]) < 300
    assert listed["sources"][0]["error"] is None


def test_odd_values_in_the_database_are_said_above_the_list_never_a_500(
    tmp_path: Path, plane: ControlPlane
) -> None:
    _session(plane, {"a": []})
    plane.close()
    with sqlite3.connect(Path(plane.home) / "agentflow.db") as conn:
        conn.execute("UPDATE tasks SET changed_at = 9000000000000000000")  # year 285 million
    conn.close()
    with _client(tmp_path / "proj", ControlSource(plane.home)) as client:
        response = client.get("/api/plans")
    assert response.status_code == 200
    [status] = response.json()["sources"]
    assert status["error"] is not None and "\n" not in status["error"]


def test_a_database_migrated_while_the_board_runs_is_refused(
    tmp_path: Path, plane: ControlPlane
) -> None:
    _session(plane, {"a": []})
    source = ControlSource(plane.home)
    try:
        assert len(source.poll()) == 1 and source.error is None
        with sqlite3.connect(Path(plane.home) / "agentflow.db") as conn:
            conn.execute("INSERT INTO schema_version (version, applied_at) VALUES (99, 'later')")
        conn.close()
        source.poll()
        assert source.error is not None
        assert "schema version 99, written by a newer plankit" in source.error
    finally:
        source.close()


def test_a_thread_added_or_removed_tells_the_open_page(plane: ControlPlane) -> None:
    sid = _session(plane, {"a": []})
    source = ControlSource(plane.home)
    try:
        source.poll()
        thread = plane.request_thread_dir(sid)
        [event] = source.poll()
        assert event["type"] == "changed"
        assert event["plan"]["id"] == f"agentflow:@session/{sid}"
        page = source.detail(event["plan"]["id"], {})
        assert page is not None and len(page["threads"]) == 2
        plane.remove_thread(thread.thread_id, sid)
        assert [e["type"] for e in source.poll()] == ["changed"]
        assert source.poll() == []
    finally:
        source.close()


# --- passwords -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url", ["agent:s3cretpw@db.example/agentflow", "mysql://agent:s3cretpw@db.example/agentflow"]
)
def test_a_malformed_database_url_is_refused_without_its_password(url: str) -> None:
    from plankit.agentflow.records import ControlError

    with pytest.raises(ControlError) as caught:
        ControlSource(None, url)
    assert "s3cretpw" not in str(caught.value)
    assert "not a PostgreSQL URL" in str(caught.value)


def test_the_board_command_refuses_a_malformed_database_url_in_one_line(tmp_path: Path) -> None:
    from tests.board.conftest import BIN

    url = "agent:s3cretpw@db.example/agentflow"
    out = subprocess.run(
        [
            BIN / "plankit",
            "board",
            str(tmp_path),
            "--no-open",
            "--port",
            "0",
            "--agentflow-database",
            url,
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PLANKIT_STORE": ""},
        timeout=60,
    )
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith("Error: the agentflow database URL (--agentflow-database")
    assert "is not a PostgreSQL URL; give one as postgresql://" in out.stderr
    assert out.stderr.count("\n") == 1 and "s3cretpw" not in out.stderr


def test_a_server_that_refuses_is_said_without_the_password(tmp_path: Path) -> None:
    source = ControlSource(None, "postgresql://agent:s3cretpw@127.0.0.1:1/agentflow")
    with _client(tmp_path / "proj", source) as client:
        listed = client.get("/api/plans").json()
    [status] = listed["sources"]
    assert status["error"] is not None and "cannot connect" in status["error"]
    assert "s3cretpw" not in repr(listed)


# --- PostgreSQL ------------------------------------------------------------------------------


def test_postgresql_connections_of_every_thread_are_closed(tmp_path: Path, postgres: Any) -> None:
    import psycopg

    name = f"board_{os.getpid()}_{threading.get_ident()}"
    url = postgres.new_schema() + f"&application_name={name}"
    plane = ControlPlane(tmp_path / "home", database=url)
    try:
        sid = _session(plane, {"a": []})
    finally:
        plane.close()

    def connections() -> int:
        with psycopg.connect(postgres.url(), autocommit=True) as conn:
            row = conn.execute(
                "SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = %s", (name,)
            ).fetchone()
        return int(row[0]) if row else 0

    source = ControlSource(None, url)
    barrier = threading.Barrier(3)

    def read() -> None:
        barrier.wait(timeout=60)
        source.poll()
        source.detail(f"agentflow:@session/{sid}", {})

    with ThreadPoolExecutor(3) as pool:
        for done in [pool.submit(read) for _ in range(3)]:
            done.result(timeout=120)
        assert connections() == 3
        source.close()
        from tests.waiting import wait_until

        wait_until(lambda: connections() == 0, "the board's connections to close")


# --- Google Sheets ---------------------------------------------------------------------------


SHEET_ID = "1kPlanKitBoardSpreadsheet0123456789"
SHEET_PLAN = """# Plan: Sheet work

### Phase 1: Read
- [x] 1.1 List the sheets ✅ 2026-11-20
- [ ] 1.2 Read the totals
"""


def test_a_sheet_edit_the_list_does_not_show_still_tells_the_open_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from plankit.board import sheets
    from plankit.board.sheets import SheetsSource
    from plankit.checklist.stores.gsheets import GoogleSheets
    from plankit.checklist.stores.gsheets_fake import FakeSheetsApi

    fake = FakeSheetsApi()
    fake.add_spreadsheet(SHEET_ID, sheets=("AGENT_BASE",), cells={"AGENT_BASE!C2": SHEET_PLAN})

    def store(sid: str) -> GoogleSheets:
        return GoogleSheets(sid, session=fake.session(), sleep=lambda seconds: None)

    # Both polls in the same second (times have one-second resolution), whatever the
    # real clock does between them: the list the page gets is the same, so only the
    # source's word that the sheet changed can tell the page.
    monkeypatch.setattr(sheets, "_now", lambda: "2026-11-26T10:00:00Z")
    source = SheetsSource([f"gsheets:{SHEET_ID}"], open_store=store)
    [first] = source.poll()
    writer = GoogleSheets(SHEET_ID, session=fake.session())
    edited = SHEET_PLAN.replace("Read the totals", "Read the totals of <b>March</b>")
    writer.set_cell("AGENT_BASE!C2", edited)
    [event] = source.poll()  # same title, progress and status: the step's text changed
    assert event == {"type": "changed", "plan": first["plan"]}
    page = source.detail(first["plan"]["id"], {})
    assert page is not None and "<b>March</b>" in page["markdown"]
    assert source.poll() == []


# --- the page --------------------------------------------------------------------------------


def _many_commits(plane: ControlPlane, count: int) -> str:
    """A session with ``count`` commits (copies of its first, a second apart)."""
    import datetime as dt
    import json

    sid = _session(plane, {"a": [], "b": ["a"]})
    plane.close()
    with sqlite3.connect(Path(plane.home) / "agentflow.db") as conn:
        snapshot, threads = conn.execute("SELECT snapshot, commit_id FROM commits").fetchone()
        data = json.loads(snapshot)
        [(thread_id, position, tasks)] = conn.execute(
            "SELECT thread_id, position, task_count FROM commit_threads WHERE commit_id = ?",
            (threads,),
        ).fetchall()
        start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
        for number in range(2, count + 1):
            when = (start + dt.timedelta(seconds=number)).isoformat().replace("+00:00", "Z")
            data |= {"commit": number, "committed_at": when}
            made = conn.execute(
                "INSERT INTO commits (session_id, number, committed_at, snapshot) "
                "VALUES (?, ?, ?, ?)",
                (sid, number, when, json.dumps(data)),
            ).lastrowid
            conn.execute(
                "INSERT INTO commit_threads (commit_id, thread_id, position, task_count) "
                "VALUES (?, ?, ?, ?)",
                (made, thread_id, position, tasks + number % 3),
            )
    conn.close()
    return sid


@contextlib.contextmanager
def _open_page(url: str, plan_id: str) -> Iterator[tuple[Any, list[str]]]:
    """The board's page at ``url`` in headless Chromium, showing ``plan_id``, and the
    script errors it had (skipped without Playwright or Chromium)."""
    import json
    import shutil

    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).is_file():
        pytest.skip("chromium is not installed (apt-get install chromium)")
    from tests.board.test_browser import CHROMIUM_ARGS, WAIT
    from tests.waiting import wait_until

    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium, args=CHROMIUM_ARGS, headless=True
        )
        try:
            page = browser.new_page()
            page.set_default_timeout(WAIT * 3)
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(url)
            page.locator(f".card[data-id={json.dumps(plan_id)}]").click()
            shown = "id => document.getElementById('detail').dataset.id === id"
            wait_until(lambda: errors or page.evaluate(shown, plan_id), "the plan's page", 600)
            yield page, errors
        finally:
            browser.close()


def test_a_session_of_very_many_commits_lists_the_latest(
    tmp_path: Path, plane: ControlPlane
) -> None:
    from plankit.board.control import CHART_COMMITS

    count = CHART_COMMITS * 5
    sid = _many_commits(plane, count)
    plan_id = f"agentflow:@session/{sid}"
    source = ControlSource(plane.home)
    try:
        source.poll()
        page = source.detail(plan_id, {})
        older = source.detail(plan_id, {"commit": "7"})
    finally:
        source.close()
    assert page is not None and older is not None
    assert page["commit_count"] == count and page["commit"] == count
    numbers = [c["commit"] for c in page["commits"]]
    assert numbers == list(range(count - CHART_COMMITS + 1, count + 1))
    assert [c["commit"] for c in older["commits"]] == [7, *numbers]  # the one shown is listed
    assert older["commit"] == 7 and older["tracked"] is False
    assert older["commits"][0]["task_count"] == 2 + 7 % 3


def test_a_diff_of_very_many_lines_is_shown(tmp_path: Path) -> None:
    import json

    from tests.board.conftest import Board
    from tests.waiting import wait_until

    count = 150_000  # lines: past what a spread call (replaceChildren(...spans)) can take
    plan = "# Plan: Big\n\n### Phase 1: A\n- [ ] 1.1 Start\n"
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "PLAN.md").write_text(plan)
    running = Board(tmp_path / "proj")
    plan_id = "checklist:PLAN.md"

    def versions() -> int:
        status, body = running.get(f"api/plans/{plan_id}")
        return len(json.loads(body)["history"]) if status == 200 else 0

    try:
        wait_until(lambda: versions() == 1, "the board to read the plan")
        (tmp_path / "proj" / "PLAN.md").write_text(plan + "\nNotes:\n" + "x\n" * count)
        wait_until(lambda: versions() == 2, "the board to see the plan change")
        with _open_page(running.url, plan_id) as (page, errors):
            added = page.locator("#detail pre.diff span.add")
            wait_until(lambda: errors or added.count() > count, "the diff to be drawn", 600)
            assert errors == []
    finally:
        running.stop()


def test_many_spreadsheets_stay_within_half_the_read_quota() -> None:
    from plankit.board.sheets import POLL, SheetsSource

    ids = [f"1kPlanKitBoardSpreadsheet{n:010d}" for n in range(12)]
    for count in (1, 2, 5, 12):
        source = SheetsSource([f"gsheets:{i}" for i in ids[:count]], open_store=lambda sid: None)
        assert source.interval >= POLL
        assert count * 60 / source.interval <= 30  # the Sheets API allows 60 a minute
    one = SheetsSource([f"gsheets:{ids[0]}"], open_store=lambda sid: None)
    assert one.interval == POLL  # one spreadsheet: as often as before


def test_a_postgresql_database_migrated_while_the_board_runs_is_refused(
    tmp_path: Path, postgres: Any
) -> None:
    import psycopg

    url = postgres.new_schema()
    plane = ControlPlane(tmp_path / "home", database=url)
    try:
        _session(plane, {"a": []})
    finally:
        plane.close()
    source = ControlSource(None, url)
    try:
        assert len(source.poll()) == 1 and source.error is None
        with psycopg.connect(url, autocommit=True) as conn:  # a newer plankit migrates it
            conn.execute("INSERT INTO schema_version (version, applied_at) VALUES (99, 'later')")
        source.poll()
        assert source.error is not None
        assert "schema version 99, written by a newer plankit" in source.error
    finally:
        source.close()


def test_a_session_page_asked_for_before_any_list_is_found(
    tmp_path: Path, plane: ControlPlane
) -> None:
    sid = _session(plane, {"a": []})
    with _client(tmp_path / "proj", ControlSource(plane.home)) as client:
        response = client.get(f"/api/plans/agentflow:@session/{sid}")  # a bookmarked page
        assert response.status_code == 200
        assert response.json()["session"]["session_id"] == sid
        assert client.get("/api/plans/agentflow:@session/nope").status_code == 404
