"""What the board meets where it expects a file: a named pipe (FIFO), a socket, a
directory, a file far too large.  None of them may hang a request or drop a plan from
the list without saying why; requests after them keep working."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from plankit.board.app import create_app
from tests.board.conftest import make_project
from tests.waiting import wait_until

DEADLINE = 30.0
"""Seconds a request may take before the board counts as hung (one takes milliseconds)."""


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("special") / "proj")


@pytest.fixture
def project(template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "proj"
    shutil.copytree(template, copy, symlinks=True)
    return copy


def _session(project: Path) -> Path:
    [session] = (project / ".teddy").glob("*-board")
    return session


PLACEMENTS: dict[str, tuple[Callable[[Path], Path], str]] = {
    # where the special file goes, and the plan whose page must say why it is not read
    "turn plan.md": (lambda p: _session(p) / "01" / "plan.md", "teddy"),
    "turn report.md": (lambda p: _session(p) / "01" / "report.md", "teddy"),
    "turn meta.yaml": (lambda p: _session(p) / "01" / "meta.yaml", "teddy"),
    "turn message.md": (lambda p: _session(p) / "02" / "message.md", "teddy"),
    "memos.yaml": (lambda p: p / ".teddy" / "memos.yaml", "teddy"),
    "agentflow plan.md": (lambda p: p / "plans" / "auth" / "plan.md", "agentflow"),
    "agentflow task file": (
        lambda p: p / "plans" / "auth" / "tasks" / "02-implement-service.md",
        "agentflow",
    ),
    "state.json": (lambda p: p / "plans" / "auth" / "state.json", "agentflow"),
    "PLAN.md": (lambda p: p / "PLAN.md", "checklist"),
    "ACP transcript": (lambda p: p / ".plankit" / "acp" / "run-1.jsonl", "acp"),
}


def _fifo(path: Path) -> None:
    if path.exists():
        path.unlink()
    os.mkfifo(path)


def _release(path: Path) -> None:
    """Let a reader stuck on the FIFO at ``path`` go (it reads an end of file)."""
    with contextlib.suppress(OSError):
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def _answers(api: TestClient, urls: list[str], path: Path, ok: int = 200) -> list[Any]:
    """Each URL's JSON answer, each within :data:`DEADLINE` (a hung board fails the
    test instead of hanging it), with the status ``ok`` (0: any)."""
    found: list[Any] = []
    failure: list[BaseException] = []

    def ask() -> None:
        try:
            for url in urls:
                response = api.get(url)
                assert ok in (0, response.status_code), (url, response.text)
                found.append(response.json())
        except BaseException as exc:  # reported by the waiting thread
            failure.append(exc)

    worker = threading.Thread(target=ask, daemon=True)
    worker.start()
    try:
        wait_until(
            lambda: not worker.is_alive(), f"the board to answer {urls} past {path}", DEADLINE
        )
    finally:
        _release(path)
    if failure:
        raise failure[0]
    return found


def _plan_id(listing: dict[str, Any], kind: str) -> str:
    return next(p["id"] for p in listing["plans"] if p["kind"] == kind)


@pytest.mark.parametrize("where", sorted(PLACEMENTS))
def test_a_fifo_where_a_file_is_read_never_hangs_the_board(project: Path, where: str) -> None:
    place, kind = PLACEMENTS[where]
    path = place(project)
    api = TestClient(create_app(project, watch=False), base_url="http://127.0.0.1")
    before = api.get("/api/plans").json()["plans"]
    ids = {p["kind"]: p["id"] for p in before}
    original = path.read_bytes() if path.exists() else None
    _fifo(path)
    listing, page = _answers(api, ["/api/plans", f"/api/plans/{ids[kind]}"], path)
    assert _plan_id(listing, kind) == ids[kind]  # still listed
    assert "not a regular file" in json.dumps(page, ensure_ascii=False), page
    # the version history of the plan (its texts) never waits on the FIFO either
    _answers(api, [f"/api/plans/{ids[kind]}/diff?from=0&to=0"], path, ok=0)
    path.unlink()  # the file back as it was: the board shows it as before
    if original is not None:
        path.write_bytes(original)
    [listing, page] = _answers(api, ["/api/plans", f"/api/plans/{ids[kind]}"], path)
    assert [(p["id"], p["status"]) for p in listing["plans"]] == [
        (p["id"], p["status"]) for p in before
    ]
    assert "not a regular file" not in json.dumps(page)


def test_a_fifo_found_by_a_fresh_board_is_listed_with_its_reason(project: Path) -> None:
    _fifo(project / "PLAN.md")
    _fifo(_session(project) / "02" / "plan.md")
    api = TestClient(create_app(project, watch=False), base_url="http://127.0.0.1")
    [listing] = _answers(api, ["/api/plans"], project / "PLAN.md")
    checklist = next(p for p in listing["plans"] if p["id"] == "checklist:PLAN.md")
    assert checklist["status"].startswith("not shown: PLAN.md is a named pipe (FIFO)")
    teddy = next(p for p in listing["plans"] if p["kind"] == "teddy")
    assert "named pipe" in teddy["status"]


@pytest.fixture
def unix_socket(tmp_path: Path) -> Iterator[Callable[[Path], None]]:
    made: list[socket.socket] = []

    def make(path: Path) -> None:
        # bound under a short name, then moved into place: a socket's path is limited to
        # about 107 bytes, which pytest's temporary directories can exceed
        path.unlink()
        short = Path(tempfile.mkdtemp(prefix="sock"))  # where pytest makes tmp_path too
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(short / "s"))
        server.listen(1)
        made.append(server)
        os.rename(short / "s", path)
        short.rmdir()

    yield make
    for server in made:
        server.close()


def test_a_socket_or_a_directory_in_place_of_a_file_is_said(
    project: Path, unix_socket: Callable[[Path], None]
) -> None:
    session = _session(project)
    unix_socket(session / "01" / "report.md")
    (session / "01" / "meta.yaml").unlink()
    (session / "01" / "meta.yaml").mkdir()
    api = TestClient(create_app(project, watch=False), base_url="http://127.0.0.1")
    page = api.get(f"/api/plans/teddy:{session.relative_to(project).as_posix()}").json()
    problems = [e["message"] for e in page["turns"][0]["errors"]]
    assert "report.md is a socket, not a regular file; the board reads files only" in problems
    assert "meta.yaml is a directory, not a regular file; the board reads files only" in problems


def test_a_huge_checklist_is_listed_with_why_it_is_not_shown(project: Path) -> None:
    big = project / "big" / "PLAN.md"
    big.parent.mkdir()
    with big.open("wb") as handle:  # 200 MB, mostly a hole: cheap to make
        handle.write(b"# Plan: Huge\n\n### Phase 1: A\n- [ ] 1.1 A\n")
        handle.truncate(200_000_000)
    api = TestClient(create_app(project, watch=False), base_url="http://127.0.0.1")
    found = {p["id"]: p for p in api.get("/api/plans").json()["plans"]}
    assert found["checklist:big/PLAN.md"]["status"] == (
        "not shown: PLAN.md is 200.0 MB, over the board's 2 MB limit "
        "(a plan is never that big: is it the right file?)"
    )
    page = api.get("/api/plans/checklist:big/PLAN.md").json()
    assert (
        page["errors"][0]["code"] == "file-refused" and "200.0 MB" in page["errors"][0]["message"]
    )


def test_a_symlink_swapped_in_after_the_walk_is_not_read(project: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("# Plan: the secret\n\n### Phase 1: A\n- [ ] 1.1 leaked\n")
    session = _session(project)
    api = TestClient(create_app(project, watch=False), base_url="http://127.0.0.1")
    api.get("/api/plans")
    (session / "01" / "plan.md").unlink()
    (session / "01" / "plan.md").symlink_to(secret)
    page = api.get(f"/api/plans/teddy:{session.relative_to(project).as_posix()}")
    assert "the secret" not in page.text and "leaked" not in page.text
    assert "plan.md is a symbolic link" in page.text


def _checklists(root: Path, count: int) -> None:
    for i in range(count):
        folder = root / f"module-{i:02d}"
        folder.mkdir(parents=True)
        (folder / "PLAN.md").write_text(f"# Plan: Module {i}\n\n### Phase 1: A\n- [x] 1.1 A\n")


def test_a_big_tree_is_listed_at_once_and_read_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plankit.board import app as board_app
    from plankit.board.catalog import Catalog

    _checklists(tmp_path, 7)
    catalog = Catalog(tmp_path)
    first = catalog.plans(budget=3)
    assert [p["status"] for p in first].count("reading…") == 4
    assert [p["id"] for p in first] == [f"checklist:module-{i:02d}/PLAN.md" for i in range(7)]
    events = catalog.fill(most=3)
    assert [e["plan"]["title"] for e in events] == ["Module 3", "Module 4", "Module 5"]
    assert [e["plan"]["title"] for e in catalog.fill()] == ["Module 6"]
    assert catalog.fill() == []
    monkeypatch.setattr(board_app, "FIRST_READS", 2)
    with TestClient(
        create_app(tmp_path, watch=False), base_url="http://127.0.0.1"
    ) as api:  # the app's loop runs between requests: the rest is read meanwhile
        statuses = [p["status"] for p in api.get("/api/plans").json()["plans"]]
        assert statuses.count("reading…") == 5
        wait_until(
            lambda: all(p["status"] != "reading…" for p in api.get("/api/plans").json()["plans"]),
            "every plan to be read",
        )
