"""The board's API: every kind of plan, broken plans, paths that must not be served,
the host and token checks, and the command line."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from plankit.board.app import create_app
from plankit.board.catalog import Catalog
from tests.board.conftest import BIN, ROOT, Board
from tests.waiting import wait_until


def client(root: Path, token: str | None = None) -> TestClient:
    return TestClient(create_app(root, token=token, watch=False), base_url="http://127.0.0.1")


def test_lists_all_four_kinds(project: Path) -> None:
    data = client(project).get("/api/plans").json()
    assert data["root"] == str(project.resolve())
    by_kind = {p["kind"]: p for p in data["plans"]}
    assert set(by_kind) == {"teddy", "checklist", "agentflow", "acp"}
    for plan in data["plans"]:
        assert set(plan) >= {"kind", "id", "path", "title", "progress", "updated"}
    assert by_kind["checklist"]["progress"] == {"done": 1, "total": 4}
    assert by_kind["checklist"]["title"] == "Ship the release"
    assert by_kind["teddy"]["progress"] == {"done": 1, "total": 2}
    assert by_kind["agentflow"]["title"] == "Add user authentication"
    assert by_kind["acp"] == by_kind["acp"] | {
        "title": "An ACP run",
        "progress": {"done": 1, "total": 2},
    }


def test_plan_details_in_the_clis_shapes(project: Path) -> None:
    api = client(project)
    ids = {p["kind"]: p["id"] for p in api.get("/api/plans").json()["plans"]}
    teddy = api.get(f"/api/plans/{ids['teddy']}").json()
    first = teddy["turns"][0]
    assert first["status"] == "Completed 🟢" and first["agent"] == "Developer"
    assert first["plan"]["title"] == first["title"]  # teddy parse --json's shape
    assert [a["outcome"] for a in first["actions"]] == ["success", "success"]
    assert teddy["call_stack"] == ["Developer (turn 02)"]
    checklist = api.get(f"/api/plans/{ids['checklist']}").json()
    assert checklist["current"]["step"] == "1.2" and checklist["next"]["step"] == "1.3"
    assert [p["name"] for p in checklist["plan"]["phases"]] == ["Build", "Release"]
    flow = api.get(f"/api/plans/{ids['agentflow']}").json()
    assert flow["plan"]["waves"] == [["create-schema"], ["implement-service"], ["wire-handler"]]
    assert flow["graph"]["critical_path"] == ["create-schema", "implement-service", "wire-handler"]
    acp = api.get(f"/api/plans/{ids['acp']}").json()
    assert [e["status"] for e in acp["entries"]] == ["completed", "in_progress"]


def test_a_malformed_plan_shows_its_errors_never_a_500(project: Path) -> None:
    [session] = (project / ".teddy").glob("*-board")
    (session / "02" / "plan.md").write_text("# Broken\n\nno sections at all\n" + "[" * 5000)
    (project / "broken.plan.md").write_bytes(b"\xff\xfe not utf-8 \x00")
    (project / "plans" / "auth" / "tasks" / "02-implement-service.md").write_text("---\nid: [\n")
    api = client(project)
    for plan in api.get("/api/plans").json()["plans"]:
        response = api.get(f"/api/plans/{plan['id']}")
        assert response.status_code == 200, (plan["id"], response.text)
    teddy = api.get(f"/api/plans/teddy:{session.relative_to(project).as_posix()}").json()
    assert teddy["turns"][1]["errors"] and teddy["turns"][1]["errors"][0]["code"]
    flow = api.get("/api/plans/agentflow:plans/auth").json()
    assert flow["plan"] is None and flow["errors"]
    assert {e["file"] for e in flow["errors"]} == {"plans/auth/tasks/02-implement-service.md"}


@pytest.mark.parametrize(
    "plan_id",
    [
        "checklist:../outside.md",
        "checklist:%2e%2e/outside.md",
        "checklist:/etc/passwd",
        "checklist:link/secret.md",
        "checklist:PLAN.md/../../outside.md",
        "nonsense",
    ],
)
def test_no_path_outside_the_root_is_served(project: Path, plan_id: str) -> None:
    outside = project.parent / "outside.md"
    outside.write_text("# Plan: secret outside\n")
    (project / "link").symlink_to(project.parent, target_is_directory=True)
    (project.parent / "secret.md").write_text("# Plan: secret\n")
    api = client(project)
    assert all("secret" not in p["title"] for p in api.get("/api/plans").json()["plans"])
    for url in (f"/api/plans/{plan_id}", f"/static/../{plan_id}", f"/static/{plan_id}"):
        response = api.get(url)
        assert response.status_code == 404, url
        assert b"secret" not in response.content


def test_requests_for_another_host_are_refused(project: Path) -> None:
    api = client(project)
    assert api.get("/api/plans", headers={"host": "attacker.example"}).status_code == 403
    assert api.get("/", headers={"host": "localhost:8765"}).status_code == 200


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:evil.com",
        "localhost:80:evil.com",
        "127.0.0.1:",
        "127.0.0.1:99999",
        "127.0.0.1:8765.evil.com",
        "[::1]evil.com",
        "[::1]:evil",
        "::1",
        "evil.com:127.0.0.1",
        "127.0.0.1 :8765",
        "",
    ],
)
def test_a_host_that_only_starts_like_the_boards_is_refused(project: Path, host: str) -> None:
    assert client(project).get("/api/plans", headers={"host": host}).status_code == 403


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.1:8765", "LOCALHOST:1", "[::1]:65535"])
def test_the_boards_own_host_with_or_without_a_port_is_served(project: Path, host: str) -> None:
    assert client(project).get("/api/plans", headers={"host": host}).status_code == 200


def test_a_token_is_required_when_set(project: Path) -> None:
    api = client(project, token="s3cret")
    assert api.get("/api/plans").status_code == 403
    assert api.get("/api/plans?token=wrong").status_code == 403
    assert api.get("/api/plans?token=s3cret").status_code == 200
    assert api.get("/api/plans", headers={"x-plankit-token": "s3cret"}).status_code == 200


def test_versions_seen_while_running_and_their_diff(project: Path) -> None:
    catalog = Catalog(project)
    ref = catalog.find("checklist:PLAN.md")
    assert ref is not None
    catalog.summary(ref)
    text = (project / "PLAN.md").read_text().replace("- [/] 1.2", "- [x] 1.2")
    (project / "PLAN.md").write_text(text)
    os.utime(project / "PLAN.md", ns=(1, 2_000_000_000_000_000_000))  # a new signature
    events = catalog.changed([project / "PLAN.md"])
    assert [e["type"] for e in events] == ["changed"]
    assert events[0]["plan"]["progress"] == {"done": 2, "total": 4}
    assert [v["version"] for v in catalog.history(ref)] == [0, 1]
    diff = catalog.diff(ref, 0, 1)
    assert diff is not None and "-- [/] 1.2 Test it" in diff and "+- [x] 1.2 Test it" in diff


def test_new_and_removed_plans_are_events(project: Path) -> None:
    catalog = Catalog(project)
    catalog.plans()
    (project / "docs").mkdir()
    (project / "docs" / "PLAN.md").write_text("# Plan: Docs\n\n### Phase 1: Write\n- [ ] 1.1 A\n")
    events = catalog.changed([project / "docs" / "PLAN.md"])
    assert [(e["type"], e["plan"]["id"]) for e in events] == [("added", "checklist:docs/PLAN.md")]
    (project / "docs" / "PLAN.md").unlink()
    events = catalog.changed([project / "docs" / "PLAN.md"])
    assert events == [{"type": "removed", "id": "checklist:docs/PLAN.md"}]


def test_the_command_prints_its_url_first(project: Path) -> None:
    running = Board(project)
    try:
        assert running.url.startswith("http://127.0.0.1:") and "token" not in running.url
        wait_until(lambda: running.get("api/plans")[0] == 200, "the board to answer")
        status, body = running.get("api/plans")
        assert status == 200
        assert len(json.loads(body)["plans"]) == 4
    finally:
        running.stop()


def test_listening_beyond_loopback_needs_the_printed_token(project: Path) -> None:
    running = Board(project, "--host", "0.0.0.0")
    try:
        assert "?token=" in running.url
        token = running.url.split("?token=")[1]
        wait_until(lambda: running.get("api/plans")[0] in (200, 403), "the board to answer")
        assert running.get("api/plans")[0] == 403
        assert running.get(f"api/plans?token={token}")[0] == 200
    finally:
        running.stop()


def test_a_busy_port_is_a_one_line_error(project: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        result = subprocess.run(
            [BIN / "plankit", "board", str(project), "--port", port, "--no-open"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 1
    assert "cannot listen on 127.0.0.1" in result.stderr
    assert "Traceback" not in result.stderr


def test_every_response_forbids_inline_scripts_and_framing(project: Path) -> None:
    api = client(project)
    for url in ("/", "/static/board.js", "/api/plans", "/api/plans/nonsense"):
        headers = api.get(url).headers
        policy = headers["content-security-policy"]
        assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy, url
        assert "unsafe-inline" not in policy
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "no-referrer"


def test_editing_a_source_file_costs_no_walk(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plankit.board import catalog as module

    walks: list[Path] = []
    real = module.discover
    monkeypatch.setattr(module, "discover", lambda root: walks.append(root) or real(root))
    catalog = Catalog(project)
    catalog.plans()
    assert len(walks) == 1
    (project / "src" / "greetings.py").write_text("def greet():\n    return 'hello'\n")
    (project / "src" / "gone.py").write_text("")
    (project / "src" / "gone.py").unlink()
    assert catalog.changed([project / "src" / "greetings.py", project / "src" / "gone.py"]) == []
    assert len(walks) == 1
    (project / "notes").mkdir()  # a new directory may hold plans: the walk runs again
    assert catalog.changed([project / "notes"]) == []
    assert len(walks) == 2


def test_memos_touch_every_session_beside_them(project: Path) -> None:
    catalog = Catalog(project)
    catalog.plans()
    (project / ".teddy" / "memos.yaml").write_text('- "Ship on Fridays."\n')
    events = catalog.changed([project / ".teddy" / "memos.yaml"])
    assert [(e["type"], e["plan"]["kind"]) for e in events] == [("changed", "teddy")]
    [session] = [e["plan"]["id"] for e in events]
    ref = catalog.find(session)
    assert ref is not None
    detail = catalog.detail(ref)
    assert detail is not None and detail["memos"] == ["Ship on Fridays."]


def test_summaries_read_titles_and_states_as_written(project: Path) -> None:
    plan = project / "plans" / "auth" / "plan.md"
    plan.write_text(plan.read_text().replace('"Add user authentication"', '"Say \\"hi\\": auth"'))
    text = (
        (project / "PLAN.md")
        .read_text()
        .replace("- [ ] 1.3", "- [>] 1.3")
        .replace("- [ ] 2.1 Tag the release", "- [!] 2.1 Tag the release — is 2.0 right?")
    )
    (project / "PLAN.md").write_text(text)
    by_id = {p["id"]: p for p in client(project).get("/api/plans").json()["plans"]}
    assert by_id["agentflow:plans/auth"]["title"] == 'Say "hi": auth'
    assert by_id["checklist:PLAN.md"]["status"] == "1 blocked, 1 to review"


def test_a_sessions_history_is_its_turns(project: Path) -> None:
    [session] = (project / ".teddy").glob("*-board")
    (session / "02" / "plan.md").write_text((ROOT / "examples" / "demo" / "turn-02.md").read_text())
    catalog = Catalog(project)
    ref = catalog.find(f"teddy:{session.relative_to(project).as_posix()}")
    assert ref is not None
    assert [v["label"] for v in catalog.history(ref)] == ["turn 01", "turn 02"]
    diff = catalog.diff(ref, 0, 1)
    assert diff is not None
    assert "-# Read the greetings module before changing it" in diff
    assert "+# Add a greeting word to greet and a farewell helper" in diff


def test_an_acp_run_for_the_board_is_shown(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    (project / "src" / "greetings.py").write_text("def greet():\n    return 'hi'\n")
    (project / "README.md").write_text("# Demo\n")
    (project / "plan.md").write_text((ROOT / "examples" / "demo" / "turn-01.md").read_text())
    agent = [BIN / "teddy", "acp", "/execute plan.md"]
    run = subprocess.run(
        [BIN / "plankit", "acp", "run", "--board", "--approve-all", "--", *agent],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TEDDY_SESSION": ""},
    )
    assert run.returncode == 0, run.stderr
    api = client(project)
    found = {p["kind"]: p for p in api.get("/api/plans").json()["plans"]}
    assert set(found) == {"acp", "teddy"}  # plan.md is a TeDDy plan, not a checklist
    acp = found["acp"]
    assert acp["path"].startswith(".plankit/acp/run-") and acp["path"].endswith(".jsonl")
    assert acp["title"] == "Read the greetings module before changing it"
    assert acp["progress"] == {"done": 2, "total": 2}
    entries = api.get(f"/api/plans/{acp['id']}").json()["entries"]
    assert [e["content"] for e in entries] == [
        "READ src/greetings.py: The module to change.",
        "READ README.md: How the tests are run.",
    ]


AGENT = [BIN / "teddy", "acp", "/execute plan.md"]


def test_an_acp_run_with_a_rejected_action_is_not_complete(tmp_path: Path) -> None:
    """The wire says ``completed`` for every finished entry, a rejected one too: the
    board reads plankit's own status and counts only what was done (``--deny-all``
    rejects both actions)."""
    from tests.teddy.test_session_e2e import plan

    project = tmp_path / "proj"
    project.mkdir()
    (project / "plan.md").write_text(
        plan(
            "### `EXECUTE`\n- **Description:** Say hello.\n```shell\necho hello\n```\n\n"
            "### `CREATE`\n- **File Path:** [notes.md](/notes.md)\n```\nnotes\n```",
            title="Write the notes",
        )
    )
    run = subprocess.run(
        [BIN / "plankit", "acp", "run", "--board", "--deny-all", "--", *AGENT],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TEDDY_SESSION": ""},
    )
    assert "2 rejected" in run.stdout, run.stdout + run.stderr
    api = client(project)
    [acp] = [p for p in api.get("/api/plans").json()["plans"] if p["kind"] == "acp"]
    entries = api.get(f"/api/plans/{acp['id']}").json()["entries"]
    assert [e["_meta"]["plankit"]["status"] for e in entries] == ["rejected", "rejected"]
    assert [e["state"] for e in entries] == ["skipped", "skipped"]
    assert acp["progress"] == {"done": 0, "total": 2}  # not 100%: nothing was done
    assert acp["status"] == "2 skipped" and acp["state"] == "todo"


def test_a_finished_entry_counts_as_done_only_when_it_was_done(tmp_path: Path) -> None:
    """An agent may send a rejected or failed entry as ``completed`` (finished, on the
    wire) with plankit's status in ``_meta``: the board counts it as not done."""
    (tmp_path / ".plankit" / "acp").mkdir(parents=True)
    entries = [
        {"content": f"{word} it", "status": "completed", "_meta": {"plankit": {"status": rich}}}
        for word, rich in [("Read", "completed"), ("Create", "rejected"), ("Run", "failed")]
    ]
    update = {"sessionUpdate": "plan", "entries": entries}
    line = {"message": {"method": "session/update", "params": {"update": update}}}
    (tmp_path / ".plankit" / "acp" / "run.jsonl").write_text(json.dumps(line) + "\n")
    [acp] = client(tmp_path).get("/api/plans").json()["plans"]
    assert acp["progress"] == {"done": 1, "total": 3}
    assert acp["status"] == "1 failed, 1 skipped"


def test_workbooks_with_a_plan_cell_are_checklists(tmp_path: Path) -> None:
    import openpyxl

    project = tmp_path / "proj"
    project.mkdir()

    def checklist(*args: str) -> None:
        command = [BIN / "plankit", "checklist", *args, "--store", "plan.xlsx"]
        done = subprocess.run(command, cwd=project, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr

    checklist("init")
    sheet = openpyxl.Workbook()
    sheet.active["A1"] = "numbers, no plan"
    sheet.save(project / "data.xlsx")
    before = sorted(p.name for p in project.iterdir())
    catalog = Catalog(project)
    [plan] = catalog.plans()
    assert plan["id"] == "checklist:plan.xlsx" and plan["progress"] == {"done": 0, "total": 6}
    checklist("done", "1.1")
    [event] = catalog.changed([project / "plan.xlsx"])
    assert event["type"] == "changed" and event["plan"]["progress"]["done"] == 1
    ref = catalog.find("checklist:plan.xlsx")
    assert ref is not None
    detail = catalog.detail(ref)
    assert detail is not None and detail["plan"]["phases"][0]["tasks"][0]["status"] == "done"
    assert sorted(p.name for p in project.iterdir()) == before  # the board wrote nothing


def test_ctrl_c_ends_open_event_streams_and_the_board(project: Path) -> None:
    import http.client
    import signal

    running = Board(project)
    try:
        wait_until(lambda: running.get("api/plans")[0] == 200, "the board to answer")
        port = int(running.url.rsplit(":", 1)[1].strip("/"))
        stream = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        stream.request("GET", "/api/events")
        response = stream.getresponse()
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.readline() == b'data: {"type": "hello"}\n'
        running.proc.send_signal(signal.SIGINT)
        assert running.proc.wait(timeout=60) == 130
        assert response.read() == b"\n"  # the stream ended: the rest of the hello event
        assert running.proc.stderr is not None
        errors = running.proc.stderr.read()
        assert "Traceback" not in errors and "ERROR" not in errors, errors
    finally:
        running.stop()
