"""The board's other sources: agentflow sessions from the control plane (SQLite and a
real PostgreSQL server) and checklists in Google Sheets (the shipped fake API)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from plankit.agentflow.control import ControlPlane
from plankit.board.app import create_app
from plankit.board.control import ControlSource
from plankit.board.sheets import SheetsSource
from tests.agentflow.helpers import task, write_plan

PLAN = """# Plan: Sheet work

### Phase 1: Read
- [x] 1.1 List the sheets ✅ 2026-11-20
- [ ] 1.2 Read the totals
"""


def _session(
    plane: ControlPlane, tasks: dict[str, list[str]], title: str = "Auth", agent: str | None = None
) -> str:
    context = plane.start_session(agent)
    directory = Path(context.current.plan_dir)
    files = {f"{i:02d}-{tid}.md": task(tid, deps) for i, (tid, deps) in enumerate(tasks.items())}
    write_plan(directory, title=title, tasks=files)
    plane.commit(context.session.session_id)
    return context.session.session_id


def _files(home: Path) -> dict[str, tuple[int, int]]:
    return {
        p.name: (p.stat().st_mtime_ns, p.stat().st_size)
        for p in home.iterdir()
        if p.is_file() and p.name.startswith("agentflow.db")
    }


def _client(root: Path, *sources: Any) -> TestClient:
    return TestClient(create_app(root, watch=False, sources=sources), base_url="http://127.0.0.1")


# --- agentflow sessions ---------------------------------------------------------------------


def test_a_session_shows_its_threads_commits_and_task_states(
    tmp_path: Path, plane: ControlPlane
) -> None:
    sid = _session(
        plane, {"schema": [], "api": ["schema"], "ui": ["api"], "docs": []}, agent="agent-7"
    )
    plane.set_topic("Ship the login page", sid)
    first = plane.claim(sid, agent="w1")
    assert first.task is not None and first.task.task_id == "schema"
    plane.done(first.task.ref, sid, claim=first.task.claim)
    second = plane.claim(sid, agent="w2")
    assert second.task is not None
    (tmp_path / "proj").mkdir()
    with _client(tmp_path / "proj", ControlSource(plane.home)) as client:
        listed = client.get("/api/plans").json()
        assert listed["sources"] == [
            {"name": "agentflow sessions", "where": plane.home, "error": None}
        ]
        [summary] = listed["plans"]
        assert summary["id"] == f"agentflow:@session/{sid}"
        assert summary["kind"] == "agentflow"
        assert summary["title"] == "Ship the login page"
        assert summary["progress"] == {"done": 1, "total": 4}
        assert summary["status"] == "1 claimed"
        page = client.get(f"/api/plans/{summary['id']}").json()
    assert page["session"]["session_id"] == sid
    assert page["session"]["agent_session_id"] == "agent-7"
    assert [t["thread_id"] for t in page["threads"]] == ["thread_1"]
    assert [(c["commit"], c["task_count"]) for c in page["commits"]] == [(1, 4)]
    assert page["commit"] == 1 and page["tracked"] is True
    [thread] = page["plans"]
    assert thread["plan"]["title"] == "Auth"
    states = {n["id"]: n["native"] for n in thread["graph"]["nodes"]}
    # claims take ready tasks in plan order: api (ready once schema was done) before docs
    assert states == {"schema": "done", "api": "claimed", "ui": "waiting", "docs": "ready"}
    # the board's own words for them, the same for every kind of plan
    words = {n["id"]: n["state"] for n in thread["graph"]["nodes"]}
    assert words == {"schema": "done", "api": "doing", "ui": "waiting", "docs": "todo"}
    assert thread["graph"]["critical_path"] == ["schema", "api", "ui"]
    holders = {t["task_id"]: t["holder"] for t in thread["tasks"]}
    assert holders["api"] == "w2" and holders["docs"] is None


def test_commits_over_time_keep_their_graphs_and_diff(tmp_path: Path, plane: ControlPlane) -> None:
    sid = _session(plane, {"a": [], "b": ["a"]})
    directory = Path(plane.context(sid).current.plan_dir)
    (directory / "tasks" / "02-c.md").write_text(task("c", ["b"]))
    plane.commit(sid)
    (tmp_path / "proj").mkdir()
    plan_id = f"agentflow:@session/{sid}"
    with _client(tmp_path / "proj", ControlSource(plane.home)) as client:
        client.get("/api/plans")
        latest = client.get(f"/api/plans/{plan_id}").json()
        older = client.get(f"/api/plans/{plan_id}", params={"commit": "1"}).json()
        missing = client.get(f"/api/plans/{plan_id}", params={"commit": "9"}).json()
        diff = client.get(f"/api/plans/{plan_id}/diff", params={"from": 0, "to": 1}).json()
    assert [(c["commit"], c["task_count"]) for c in latest["commits"]] == [(1, 2), (2, 3)]
    assert latest["commit"] == 2 and latest["tracked"] is True
    assert [n["id"] for n in latest["plans"][0]["graph"]["nodes"]] == ["a", "b", "c"]
    assert older["commit"] == 1 and older["tracked"] is False
    assert {n["state"] for n in older["plans"][0]["graph"]["nodes"]} == {"untracked"}
    assert [n["id"] for n in older["plans"][0]["graph"]["nodes"]] == ["a", "b"]
    assert missing["errors"][0]["code"] == "commit-unknown"
    assert "has no commit 9 (it has commits 1 to 2)" in missing["errors"][0]["message"]
    assert [v["label"] for v in latest["history"]] == ["commit 1", "commit 2"]
    assert "+## c <- b\n" in diff["diff"]
    lines = diff["diff"].splitlines()
    assert lines[:2] == ["--- commit 1", "+++ commit 2"]
    assert [line for line in lines[2:] if line[:1] in "+-"] == ["+## c <- b", "+  Do it."]


def test_polling_sees_work_and_new_sessions_and_writes_nothing(
    tmp_path: Path, plane: ControlPlane
) -> None:
    sid = _session(plane, {"a": [], "b": ["a"]})
    home = Path(plane.home)
    source = ControlSource(str(home))
    try:
        [added] = source.poll()
        assert added["type"] == "added" and added["plan"]["progress"] == {"done": 0, "total": 2}
        assert source.poll() == []  # nothing changed: no event
        before = _files(home)
        claim = plane.claim(sid)
        assert claim.task is not None
        plane.done(claim.task.ref, sid, claim=claim.task.claim)
        [changed] = source.poll()
        assert changed["type"] == "changed"
        assert changed["plan"]["progress"] == {"done": 1, "total": 2}
        other = _session(plane, {"x": []}, title="Other")
        events = source.poll()
        assert [e["type"] for e in events] == ["added"]
        assert events[0]["plan"]["id"] == f"agentflow:@session/{other}"
        plane.end_session(other)
        [ended] = source.poll()
        assert ended["plan"]["status"] == "ended"
        after = _files(home)
        assert after.keys() == before.keys()
        # the board's reads changed no file: only the control plane's own writes did
        settled = _files(home)
        source.poll()
        source.detail(f"agentflow:@session/{sid}", {})
        source.versions(f"agentflow:@session/{sid}")
        assert _files(home) == settled
    finally:
        source.close()


def test_a_home_without_a_database_shows_nothing_and_creates_nothing(tmp_path: Path) -> None:
    home = tmp_path / "never-made"
    (tmp_path / "proj").mkdir()
    with _client(tmp_path / "proj", ControlSource(str(home))) as client:
        listed = client.get("/api/plans").json()
    assert listed["plans"] == [] and listed["sources"][0]["error"] is None
    assert not home.exists()


def test_a_broken_database_is_said_once_never_a_500(tmp_path: Path) -> None:
    home = tmp_path / "agentflow"
    home.mkdir()
    (home / "agentflow.db").write_bytes(b"this is not a database, only some text" * 50)
    (tmp_path / "proj").mkdir()
    with _client(tmp_path / "proj", ControlSource(str(home))) as client:
        response = client.get("/api/plans")
    assert response.status_code == 200
    [status] = response.json()["sources"]
    assert status["error"].startswith(f"cannot read the agentflow database {home}")
    assert "\n" not in status["error"]
    assert (home / "agentflow.db").read_bytes().startswith(b"this is not a database")


def test_a_database_of_another_schema_is_refused_with_the_fix(
    tmp_path: Path, plane: ControlPlane
) -> None:
    import sqlite3

    _session(plane, {"a": []})
    plane.close()
    with sqlite3.connect(Path(plane.home) / "agentflow.db") as conn:
        conn.execute("INSERT INTO schema_version (version, applied_at) VALUES (99, 'later')")
    source = ControlSource(plane.home)
    assert source.poll() == []
    assert source.error is not None
    assert "schema version 99, written by a newer plankit" in source.error
    assert source.plans() == []


def test_sessions_on_postgresql_are_read_without_writing(tmp_path: Path, postgres: Any) -> None:
    import psycopg

    url = postgres.new_schema()
    plane = ControlPlane(tmp_path / "home", database=url)
    try:
        sid = _session(plane, {"a": [], "b": ["a"]})
        claim = plane.claim(sid, agent="remote")
        assert claim.task is not None
        plane.done(claim.task.ref, sid, claim=claim.task.claim)
    finally:
        plane.close()
    with psycopg.connect(url, autocommit=True) as conn:
        writes = "SELECT n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_user_tables"
        before = sorted(conn.execute(writes).fetchall())
    source = ControlSource(None, url)
    try:
        [added] = source.poll()
        assert added["plan"]["progress"] == {"done": 1, "total": 2}
        page = source.detail(f"agentflow:@session/{sid}", {})
        assert page is not None
        states = {n["id"]: n["native"] for n in page["plans"][0]["graph"]["nodes"]}
        assert states == {"a": "done", "b": "ready"}
        assert "password" not in source.where
    finally:
        source.close()
    with psycopg.connect(url, autocommit=True) as conn:
        assert sorted(conn.execute(writes).fetchall()) == before


def test_the_board_command_shows_the_sessions_of_agentflow_home(
    tmp_path: Path, plane: ControlPlane
) -> None:
    from tests.board.conftest import Board
    from tests.waiting import wait_until

    sid = _session(plane, {"a": []})
    (tmp_path / "proj").mkdir()
    running = Board(tmp_path / "proj", "--agentflow-home", plane.home)
    try:
        import json

        found: list[Any] = []

        def listed() -> bool:
            status, body = running.get("api/plans")
            found[:] = json.loads(body)["plans"] if status == 200 else []
            return bool(found)

        wait_until(listed, "the board to list the session")
        assert [p["id"] for p in found] == [f"agentflow:@session/{sid}"]
    finally:
        running.stop()


# --- Google Sheets ---------------------------------------------------------------------------


SHEET_ID = "1kPlanKitBoardSpreadsheet0123456789"


@pytest.fixture
def fake() -> Any:
    from plankit.checklist.stores.gsheets_fake import FakeSheetsApi

    api = FakeSheetsApi()
    api.add_spreadsheet(SHEET_ID, sheets=("AGENT_BASE",), cells={"AGENT_BASE!C2": PLAN})
    return api


def _sheets(fake: Any) -> SheetsSource:
    from plankit.checklist.stores.gsheets import GoogleSheets

    def store(sid: str) -> GoogleSheets:
        return GoogleSheets(sid, session=fake.session(), sleep=lambda seconds: None)

    return SheetsSource([f"gsheets:{SHEET_ID}"], open_store=store)


def test_a_sheet_checklist_is_listed_and_follows_changes(tmp_path: Path, fake: Any) -> None:
    from plankit.checklist.stores.gsheets import GoogleSheets

    source = _sheets(fake)
    plan_id = f"checklist:gsheets:{SHEET_ID}"
    assert source.plans()[0]["status"] == "reading…"  # nothing read yet: never waits
    [event] = source.poll()
    assert event["type"] == "changed"
    assert event["plan"] | {"updated": None} == {
        "kind": "checklist",
        "id": plan_id,
        "path": f"gsheets:{SHEET_ID}",
        "source": "gsheets",
        "title": "Sheet work",
        "progress": {"done": 1, "total": 2},
        "updated": None,
        "status": None,
        "state": "doing",
    }
    assert source.poll() == []
    other_writer = GoogleSheets(SHEET_ID, session=fake.session())
    other_writer.set_cell("AGENT_BASE!C2", PLAN.replace("- [ ] 1.2", "- [x] 1.2"))
    [event] = source.poll()
    assert event["plan"]["progress"] == {"done": 2, "total": 2}
    assert event["plan"]["status"] == "done"
    (tmp_path / "proj").mkdir()
    with _client(tmp_path / "proj", source) as client:
        page = client.get(f"/api/plans/{plan_id}").json()
        diff = client.get(f"/api/plans/{plan_id}/diff", params={"from": 0, "to": 1}).json()
    assert page["current"] is None and page["plan"]["title"] == "Sheet work"
    assert [v["version"] for v in page["history"]] == [0, 1]
    assert "-- [ ] 1.2 Read the totals\n+- [x] 1.2 Read the totals\n" in diff["diff"]


def test_a_sheet_that_cannot_be_read_shows_the_error(tmp_path: Path, fake: Any) -> None:
    fake.fail_next(403, "The caller does not have permission", times=20)
    source = _sheets(fake)
    source.poll()
    [summary] = source.plans()
    assert summary["status"] == "unreadable"
    page = source.detail(summary["id"], {})
    assert page is not None
    [problem] = page["errors"]
    assert problem["file"] == f"gsheets:{SHEET_ID}"
    assert "share" in problem["message"].lower() and "\n" not in problem["message"]


def test_sheet_specs_are_checked_before_the_board_starts() -> None:
    from plankit.errors import PlankitError

    with pytest.raises(PlankitError, match="give a Google spreadsheet as gsheets:ID"):
        SheetsSource(["PLAN.md"], open_store=lambda sid: None)
    with pytest.raises(PlankitError, match="is not a Google Sheets spreadsheet ID"):
        SheetsSource(["gsheets:x"], open_store=lambda sid: None)
    both = SheetsSource(
        [f"gsheets:{SHEET_ID}", f"gsheets:https://docs.google.com/spreadsheets/d/{SHEET_ID}/edit"],
        open_store=lambda sid: None,
    )
    assert [p["id"] for p in both.plans()] == [f"checklist:gsheets:{SHEET_ID}"]
    with pytest.raises(PlankitError, match="cell reference"):
        SheetsSource([f"gsheets:{SHEET_ID}"], cell="'Plan!C2", open_store=lambda sid: None)


def test_the_board_command_refuses_a_bad_sheet_in_one_line(tmp_path: Path) -> None:
    import subprocess

    from tests.board.conftest import BIN

    out = subprocess.run(
        [BIN / "plankit", "board", str(tmp_path), "--no-open", "--sheet", "notes.md"],
        capture_output=True,
        text=True,
        env={**os.environ, "PLANKIT_STORE": ""},
        timeout=60,
    )
    assert out.returncode == 1
    assert out.stderr.startswith("Error: --sheet 'notes.md': give a Google spreadsheet")
    assert out.stderr.count("\n") == 1 and out.stdout == ""


def test_a_plan_directory_of_a_committed_session_shows_the_sessions_states(
    tmp_path: Path, plane: ControlPlane
) -> None:
    """The directory's tasks are tracked by the control plane, not by a state.json no
    tool writes: its progress and graph are the session's."""
    sid = _session(plane, {"schema": [], "api": ["schema"], "docs": []})
    first = plane.claim(sid, agent="w1")
    assert first.task is not None
    plane.done(first.task.ref, sid, claim=first.task.claim)
    plane.claim(sid, agent="w2")  # api: claimed
    # the board runs on the directory that holds agentflow's home (its plan directories)
    with _client(tmp_path, ControlSource(plane.home)) as client:
        listed = client.get("/api/plans").json()["plans"]
        [directory] = [p for p in listed if p["kind"] == "agentflow" and "source" not in p]
        assert directory["owner_session"] == sid
        assert directory["progress"] == {"done": 1, "total": 3}
        assert directory["status"] == "1 doing"
        page = client.get(f"/api/plans/{directory['id']}").json()
        states = {n["id"]: (n["state"], n["native"]) for n in page["graph"]["nodes"]}
        assert states == {
            "schema": ("done", "done"),
            "api": ("doing", "claimed"),
            "docs": ("todo", "ready"),
        }
        api = plane.claim(sid, agent="w3")  # docs
        assert api.task is not None
        plane.done(api.task.ref, sid, claim=api.task.claim)
        source = ControlSource(plane.home)
        with _client(tmp_path, source) as fresh:
            again = fresh.get(f"/api/plans/{directory['id']}").json()
        assert again["progress"] == {"done": 2, "total": 3}


def test_an_owned_plan_directory_changes_with_its_session(
    tmp_path: Path, plane: ControlPlane
) -> None:
    from plankit.board.catalog import Catalog

    sid = _session(plane, {"schema": [], "api": ["schema"]})
    source = ControlSource(plane.home)
    catalog = Catalog(tmp_path, [source])
    [directory] = [p for p in catalog.plans() if p["kind"] == "agentflow" and "source" not in p]
    assert directory["progress"] == {"done": 0, "total": 2}
    assert catalog.recheck() == []  # nothing changed
    claim = plane.claim(sid, agent="w1")
    assert claim.task is not None
    plane.done(claim.task.ref, sid, claim=claim.task.claim)
    assert source.poll()  # the session changed: the board polls it …
    [event] = catalog.recheck()  # … and the directory it owns is told as changed
    assert event["type"] == "changed" and event["plan"]["id"] == directory["id"]
    assert event["plan"]["progress"] == {"done": 1, "total": 2}
    source.close()
