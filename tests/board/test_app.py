"""The board's web app over a small project written by hand: the host and token checks,
the static files, the errors of each route, the event stream, the file watcher and the
polling of a source that fails."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from plankit.board import app as board_app
from plankit.board.app import Hub, create_app, loopback_host
from plankit.board.sources import Source
from tests.board.sessions import CREATE, Turn, write_session
from tests.waiting import until, wait_until

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "src" / "plankit" / "board" / "static"
WAIT = 20.0
"""Seconds to wait for what the app does in the background (a poll every 10 ms, a file
event within 100 ms): far beyond what it needs on a busy machine."""
PLAN = "# Plan: Ship the release\n\n### Phase 1: Build\n- [x] 1.1 Write it\n- [ ] 1.2 Test it\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "PLAN.md").write_text(PLAN)
    write_session(root, "20261120-port", [Turn("Write the config", actions=[CREATE])])
    return root


def _api(root: Path, **options: Any) -> TestClient:
    return TestClient(create_app(root, watch=False, **options), base_url="http://127.0.0.1")


@pytest.mark.parametrize(
    ("host", "ours"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("LocalHost:8765", True),
        ("[::1]", True),
        ("[::1]:8765", True),
        ("127.0.0.1:65535", True),
        ("127.0.0.1:00080", True),
        ("127.0.0.1:65536", False),
        ("127.0.0.1:000080", False),
        ("127.0.0.1:8a", False),
        ("127.0.0.1:a80", False),
        ("[::1]:a80", False),
        ("[::1]80", False),
        ("127.0.0.1:\u0668\u0660", False),  # Arabic-Indic digits
        ("127.0.0.1;80", False),
        ("[::1];80", False),
        ("[::2]:80", False),
        ("127.0.0.2", False),
        (":80", False),
    ],
)
def test_only_the_boards_own_host_is_ours(host: str, ours: bool) -> None:
    assert loopback_host(host) is ours


def test_the_page_and_its_two_files_are_served_nothing_else(project: Path) -> None:
    api = _api(project)
    page = api.get("/")
    assert page.status_code == 200 and page.headers["content-type"] == "text/html; charset=utf-8"
    assert b"<html" in page.content.lower()
    script = api.get("/static/board.js")
    assert script.status_code == 200
    assert script.headers["content-type"] == "text/javascript; charset=utf-8"
    assert script.content == (STATIC / "board.js").read_bytes()
    style = api.get("/static/board.css")
    assert style.headers["content-type"] == "text/css; charset=utf-8"
    assert style.content == (STATIC / "board.css").read_bytes()
    for name in ("index.html", "favicon.ico", "app.py"):
        missing = api.get(f"/static/{name}")
        assert (missing.status_code, missing.text) == (404, "not found")
    assert api.get("/", headers={"host": "evil.example"}).status_code == 403
    assert (
        api.get("/static/board.js", headers={"x-frame-options": "x"}).headers["x-frame-options"]
        == "DENY"
    )


def test_a_request_naming_no_host_is_refused(project: Path) -> None:
    # HTTP/1.0 lets a client leave the Host header out; the board cannot tell it is ours
    app = create_app(project, watch=False)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.0",
        "method": "GET",
        "scheme": "http",
        "path": "/api/plans",
        "raw_path": b"/api/plans",
        "query_string": b"",
        "root_path": "",
        "headers": [],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 80),
    }
    asyncio.run(app(scope, receive, send))  # type: ignore[arg-type]
    assert sent[0]["status"] == 403


def test_a_token_set_replaces_the_host_check(project: Path) -> None:
    api = _api(project, token="s3cret")
    refused = api.get("/api/plans", headers={"host": "board.lan:8765"})
    assert refused.status_code == 403
    assert refused.json() == {
        "error": "forbidden: give the board's token (?token=…), as printed at start"
    }
    for url in ("/", "/api/plans", "/api/plans/checklist:PLAN.md", "/api/events"):
        assert api.get(url).status_code == 403, url
    assert api.get("/api/plans/checklist:PLAN.md/diff?from=0&to=0").status_code == 403
    served = api.get("/api/plans?token=s3cret", headers={"host": "board.lan:8765"})
    assert served.status_code == 200
    assert api.get("/api/plans", headers={"x-plankit-token": "s3cret"}).status_code == 200
    assert api.get("/api/plans", headers={"x-plankit-token": "s3cre"}).status_code == 403
    page = api.get("/api/plans/checklist:PLAN.md?token=s3cret")
    assert page.status_code == 200 and page.json()["title"] == "Ship the release"


def test_the_list_has_the_root_the_plans_and_the_sources(project: Path) -> None:
    source = _Failing()
    source.error = "the database is locked"
    data = _api(project, sources=[source]).get("/api/plans").json()
    assert data["root"] == str(project.resolve())
    assert sorted(p["id"] for p in data["plans"]) == [
        "checklist:PLAN.md",
        "teddy:.teddy/20261120-port",
    ]
    assert data["sources"] == [
        {"name": "a failing source", "where": "nowhere", "error": "the database is locked"}
    ]


def test_a_plan_the_board_does_not_have_is_a_404_and_a_bad_diff_a_400(project: Path) -> None:
    api = _api(project)
    api.get("/api/plans")  # the board keeps the versions it saw from here on
    missing = api.get("/api/plans/checklist:gone.plan.md")
    assert missing.status_code == 404 and missing.json() == {"error": "no such plan on this board"}
    for query in ("", "?from=0", "?to=1", "?from=a&to=1", "?from=0&to=x"):
        bad = api.get(f"/api/plans/checklist:PLAN.md/diff{query}")
        assert bad.status_code == 400, query
        assert bad.json() == {"error": "give ?from=N&to=M (version numbers)"}
    none = api.get("/api/plans/checklist:PLAN.md/diff?from=0&to=7")
    assert none.status_code == 404 and none.json() == {"error": "no such plan or version"}
    same = api.get("/api/plans/checklist:PLAN.md/diff?from=0&to=0")
    assert same.status_code == 200 and same.json() == {"from": 0, "to": 0, "diff": ""}


def test_a_plans_page_gets_the_query_without_the_token(project: Path) -> None:
    source = _Failing()
    seen: list[Mapping[str, str]] = []
    source.plan_ids = {"x:1"}

    def detail(plan_id: str, query: Mapping[str, str]) -> dict[str, Any] | None:
        seen.append(dict(query))
        return {"id": plan_id}

    source.detail = detail  # type: ignore[method-assign]
    api = _api(project, sources=[source], token="s3cret")
    assert api.get("/api/plans/x:1?token=s3cret&commit=3").json()["id"] == "x:1"
    assert seen == [{"commit": "3"}]


class _Failing(Source):
    """A source whose first poll fails and whose next ones find a plan."""

    name = "a failing source"
    interval = 0.01

    def __init__(self) -> None:
        super().__init__()
        self.where = "nowhere"
        self.polls = 0
        self.closed = False
        self.plan_ids: set[str] = set()

    def owns(self, plan_id: str) -> bool:
        return plan_id in self.plan_ids

    def poll(self) -> list[dict[str, Any]]:
        self.polls += 1
        if self.polls == 1:
            raise RuntimeError("connection refused")
        summary = {"id": "x:1", "kind": "checklist", "title": "Remote"}
        return self._publish([summary])

    def detail(self, plan_id: str, query: Mapping[str, str]) -> dict[str, Any] | None:
        return None

    def versions(self, plan_id: str) -> list[tuple[str, str, str]]:
        return []

    def close(self) -> None:
        self.closed = True


def test_a_failing_poll_is_said_and_tried_again_and_the_source_closed_at_the_end(
    project: Path,
) -> None:
    source = _Failing()
    app = create_app(project, sources=[source])
    published: list[dict[str, Any]] = []
    app.state.hub.publish = published.append
    with TestClient(app, base_url="http://127.0.0.1"):
        wait_until(lambda: source.polls >= 3, "three polls of the source", WAIT)
        assert source.error == "RuntimeError: connection refused"
        wait_until(lambda: published, "the source's plan to reach the pages", WAIT)
        assert published[0] == {
            "type": "added",
            "plan": {"id": "x:1", "kind": "checklist", "title": "Remote"},
        }
    assert source.closed


def test_a_file_changed_on_disk_reaches_the_pages(project: Path) -> None:
    app = create_app(project)
    published: list[dict[str, Any]] = []
    app.state.hub.publish = published.append
    with TestClient(app, base_url="http://127.0.0.1") as api:
        api.get("/api/plans")
        (project / "PLAN.md").write_text(PLAN.replace("- [ ] 1.2", "- [x] 1.2"))
        wait_until(
            lambda: any(e["type"] == "changed" for e in published), "the change as an event", WAIT
        )
    [event] = [e for e in published if e["type"] == "changed"]
    assert event["plan"]["id"] == "checklist:PLAN.md" and event["plan"]["progress"] == {
        "done": 2,
        "total": 2,
    }


def test_a_big_tree_fills_its_list_in_the_background(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(board_app, "FIRST_READS", 1)
    for name in ("a", "b", "c"):
        (project / f"{name}.plan.md").write_text(PLAN.replace("Ship the release", f"Plan {name}"))
    app = create_app(project, watch=False)
    published: list[dict[str, Any]] = []
    app.state.hub.publish = published.append
    with TestClient(app, base_url="http://127.0.0.1") as api:
        listed = api.get("/api/plans").json()["plans"]
        assert sum(1 for p in listed if p.get("status") == "reading…") == len(listed) - 1
        wait_until(lambda: len(published) >= len(listed) - 1, "every plan read", WAIT)
        assert {e["plan"]["title"] for e in published} >= {"Plan b", "Plan c"}
    assert app.state.catalog.root == project.resolve()


def test_the_rest_of_a_big_tree_is_read_once_and_only_when_left_unread(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fills: list[object] = []

    async def fill(catalog: object, hub: Hub, filling: set[object]) -> None:
        fills.append(catalog)
        await asyncio.Event().wait()  # still reading when the board stops

    monkeypatch.setattr(board_app, "_fill", fill)
    with TestClient(create_app(project, watch=False), base_url="http://127.0.0.1") as api:
        api.get("/api/plans")  # two plans: every one read at once
    assert fills == []
    monkeypatch.setattr(board_app, "FIRST_READS", 1)
    (project / "b.plan.md").write_text(PLAN)
    with TestClient(create_app(project, watch=False), base_url="http://127.0.0.1") as api:
        api.get("/api/plans")
        api.get("/api/plans")  # a reload while the rest is being read
    assert len(fills) == 1


async def _events(
    app: Starlette, hub: Hub, *, publish: list[dict[str, Any]], chunks: int = 0, after: int = 1
) -> tuple[dict[str, Any], bytes]:
    """The event stream's response head and body (at least ``chunks`` writes) while
    ``publish`` is sent, once ``after`` writes came, and the hub closes."""
    started: dict[str, Any] = {}
    body: list[bytes] = []
    gone = asyncio.Event()

    asked: list[bool] = []

    async def receive() -> dict[str, Any]:
        if not asked:
            asked.append(True)
            return {"type": "http.request", "body": b"", "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            started.update(message)
        elif message.get("body"):
            body.append(message["body"])

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/api/events",
        "raw_path": b"/api/events",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1")],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 80),
    }
    task = asyncio.create_task(app(scope, receive, send))  # type: ignore[arg-type]
    await until(lambda: len(body) >= after, "the stream's first lines", WAIT)
    for event in publish:
        hub.publish(event)

    def sent() -> bool:
        data = sum(1 for chunk in body if chunk.startswith(b"data: "))
        return data > len(publish) and len(body) >= chunks

    await until(sent, "the events on the stream", WAIT)
    hub.close()
    await asyncio.wait_for(task, 30)
    gone.set()
    return started, b"".join(body)


def test_the_event_stream_says_hello_then_each_event_until_the_board_stops(project: Path) -> None:
    app = create_app(project, watch=False)
    hub = app.state.hub
    event = {"type": "removed", "id": "checklist:Café.plan.md"}
    head, body = asyncio.run(_events(app, hub, publish=[event]))
    assert (
        body
        == b'data: {"type": "hello"}\n\ndata: '
        + json.dumps(event, ensure_ascii=False).encode()
        + b"\n\n"
    )
    headers = dict(head["headers"])
    assert headers[b"content-type"].startswith(b"text/event-stream")
    assert headers[b"cache-control"] == b"no-store" and headers[b"x-accel-buffering"] == b"no"
    assert hub.queues == set()  # the stream let go of its queue


def test_a_quiet_event_stream_is_kept_alive(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(board_app, "KEEPALIVE", 0.01)
    app = create_app(project, watch=False)
    _head, body = asyncio.run(_events(app, app.state.hub, publish=[], chunks=2))
    assert body.startswith(b'data: {"type": "hello"}\n\n: keep-alive\n\n')


def test_a_stream_opened_after_the_board_stops_ends_at_once() -> None:
    hub = Hub()
    hub.close()

    async def listen() -> list[object]:
        with hub.listen() as queue:
            assert hub.queues == {queue}
            return [await asyncio.wait_for(queue.get(), 30)]

    assert asyncio.run(listen()) == [None]
    assert hub.queues == set()


class _Owner(_Failing):
    """A control plane whose session owns ``plans/auth``; every poll finds it at work."""

    def __init__(self) -> None:
        super().__init__()
        self.states: dict[str, str] = {}

    def poll(self) -> list[dict[str, Any]]:
        self.polls += 1
        return self._publish([{"id": "session:s-1", "kind": "agentflow", "polls": self.polls}])

    def tracked(self, path: str) -> tuple[str, dict[str, str]] | None:
        return ("s-1", dict(self.states)) if path.endswith("plans/auth") else None


def test_a_plan_directory_changes_with_the_session_that_owns_it(project: Path) -> None:
    shutil.copytree(ROOT / "examples" / "agentflow" / "auth", project / "plans" / "auth")
    source = _Owner()
    app = create_app(project, sources=[source])
    published: list[dict[str, Any]] = []
    app.state.hub.publish = published.append
    with TestClient(app, base_url="http://127.0.0.1") as api:
        [flow] = [
            p for p in api.get("/api/plans").json()["plans"] if p["id"] == "agentflow:plans/auth"
        ]
        assert flow["progress"]["done"] == 0 and flow["owner_session"] == "s-1"
        source.states = {"create-schema": "done"}

        def told() -> list[dict[str, Any]]:
            return [
                e for e in list(published) if e.get("plan", {}).get("id") == "agentflow:plans/auth"
            ]

        wait_until(told, "the plan directory's new line", WAIT)
    assert told()[0]["plan"]["progress"] == {"done": 1, "total": 3}
    assert any(e.get("plan", {}).get("id") == "session:s-1" for e in published)


def test_a_plan_deep_in_the_tree_changed_on_disk_reaches_the_pages(project: Path) -> None:
    deep = project / "docs" / "releases" / "v2.plan.md"
    deep.parent.mkdir(parents=True)
    deep.write_text(PLAN)
    app = create_app(project)
    published: list[dict[str, Any]] = []
    app.state.hub.publish = published.append
    with TestClient(app, base_url="http://127.0.0.1") as api:
        api.get("/api/plans")
        deep.write_text(PLAN.replace("- [ ] 1.2", "- [x] 1.2"))
        wait_until(
            lambda: any(e["type"] == "changed" for e in published), "the change as an event", WAIT
        )
    [event] = [e for e in published if e["type"] == "changed"]
    assert event["plan"]["id"] == "checklist:docs/releases/v2.plan.md"
    assert event["plan"]["progress"] == {"done": 2, "total": 2}


def test_a_stream_kept_alive_still_carries_the_next_event(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(board_app, "KEEPALIVE", 0.01)
    app = create_app(project, watch=False)
    event = {"type": "removed", "id": "checklist:PLAN.md"}
    _head, body = asyncio.run(_events(app, app.state.hub, publish=[event], after=2))
    assert body.startswith(b'data: {"type": "hello"}\n\n: keep-alive\n\n')
    assert body.count(b"data: ") == 2
    line = b"data: " + json.dumps(event).encode() + b"\n\n"
    assert body.index(line) > body.index(b": keep-alive\n\n")
