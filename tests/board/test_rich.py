"""The board over a project as real work leaves it (tests/board/rich.py): failures and
their reasons, a rejected plan, an INVOKE and its CONCLUDE, a concluded session,
symbolic links and a FIFO where plans could be."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from plankit.board.app import create_app
from plankit.board.discover import discover, locate, parse_id
from tests.board.rich import make_rich_project


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_rich_project(tmp_path_factory.mktemp("rich") / "proj")


@pytest.fixture
def project(template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "proj"
    shutil.copytree(template, copy, symlinks=True)
    os.mkfifo(copy / "waiting.plan.md")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "PLAN.md").write_text("# Plan: Secret outside\n\n- [ ] 1.1 x\n")
    return copy


def _api(root: Path) -> TestClient:
    return TestClient(create_app(root, watch=False), base_url="http://127.0.0.1")


def _listed(api: TestClient) -> dict[str, dict[str, Any]]:
    return {p["id"]: p for p in api.get("/api/plans").json()["plans"]}


def _work(project: Path) -> Path:
    [session] = (project / ".teddy").glob("*-work")
    return session


def test_a_concluded_session_is_complete(project: Path) -> None:
    listed = _listed(_api(project))
    work = listed[f"teddy:{_work(project).relative_to(project).as_posix()}"]
    assert work["status"] == "concluded" and work["state"] == "done"
    assert work["progress"] == {"done": 7, "total": 7}
    board = next(p for i, p in listed.items() if i.endswith("-board"))
    assert board["progress"] == {"done": 1, "total": 2}  # its new turn is not done


def test_failed_and_rejected_turns_are_not_done(project: Path) -> None:
    work = _work(project)
    shutil.rmtree(work / "07")
    (work / "06" / "report.md").unlink()  # the session's end not run yet
    summary = _listed(_api(project))[f"teddy:{work.relative_to(project).as_posix()}"]
    # 01 partly failed and 02 failed validation: only 03, 04 and 05 are done
    assert summary["progress"] == {"done": 3, "total": 6}
    assert summary["status"] == "awaiting execution"


def test_each_turn_says_what_failed_and_why(project: Path) -> None:
    work = _work(project)
    page = _api(project).get(f"/api/plans/teddy:{work.relative_to(project).as_posix()}").json()
    turns = {t["turn"]: t for t in page["turns"]}
    assert (turns["01"]["status"], turns["01"]["state"]) == ("Partial 🟡", "failed")
    assert [(a["type"], a["state"]) for a in turns["01"]["actions"]] == [
        ("CREATE", "done"),
        ("EXECUTE", "failed"),
    ]
    assert "port 80 is taken" in turns["01"]["actions"][1]["text"]
    assert turns["02"]["status"] == "Validation Failed 🔴" and turns["02"]["state"] == "failed"
    [reason] = turns["02"]["reasons"]
    assert "config.txt" in reason and "already exists" in reason
    assert (turns["03"]["agent"], turns["03"]["actions"][0]["type"]) == ("Developer", "INVOKE")
    assert (turns["04"]["agent"], turns["04"]["caller"]) == ("Debugger", "03")
    assert turns["04"]["concluded"] is False  # a sub-agent's CONCLUDE returns to its caller
    assert turns["06"]["concluded"] is True
    assert page["call_stack"] == ["Developer (turn 07)"]


def test_the_call_stack_follows_callers_and_ends_on_a_loop(project: Path) -> None:
    work = _work(project)
    rel = work.relative_to(project).as_posix()
    shutil.rmtree(work / "07")
    shutil.rmtree(work / "06")
    shutil.rmtree(work / "05")  # back in the Debugger's turn, called by turn 03
    page = _api(project).get(f"/api/plans/teddy:{rel}").json()
    assert page["call_stack"] == ["Debugger (turn 04)", "Developer (turn 03)"]
    (work / "03" / "meta.yaml").write_text('turn_id: "03"\ncaller_turn_id: "04"\n')
    page = _api(project).get(f"/api/plans/teddy:{rel}").json()  # 04 → 03 → 04 …
    assert page["call_stack"][:2] == ["Debugger (turn 04)", "? (turn 03)"]
    assert len(page["call_stack"]) <= len(page["turns"]) + 1


def test_links_are_never_followed_and_special_files_are_said(project: Path) -> None:
    (project / "linked").symlink_to(project.parent / "outside", target_is_directory=True)
    (project / "linked.plan.md").symlink_to(project.parent / "outside" / "PLAN.md")
    work = _work(project)
    (work / "08").symlink_to(work / "01", target_is_directory=True)  # a turn through a link
    api = _api(project)
    listed = _listed(api)
    assert not any("linked" in i for i in listed)
    assert "Secret outside" not in json.dumps(listed)
    fifo = listed["checklist:waiting.plan.md"]
    assert fifo["status"].startswith("not shown: waiting.plan.md is a named pipe (FIFO)")
    page = api.get(f"/api/plans/teddy:{work.relative_to(project).as_posix()}").json()
    assert [t["turn"] for t in page["turns"]] == ["01", "02", "03", "04", "05", "06", "07"]
    for plan_id in ("checklist:linked/PLAN.md", "checklist:linked.plan.md"):
        assert api.get(f"/api/plans/{plan_id}").status_code == 404
    assert locate(project, parse_id("checklist:linked/PLAN.md")) is None  # type: ignore[arg-type]


def test_what_the_walk_finds_and_skips(project: Path) -> None:
    plan = "# Plan: P\n\n### Phase 1: A\n- [ ] 1.1 A\n"
    for where in ("node_modules/x", ".venv", "src/.git", "docs"):
        (project / where).mkdir(parents=True, exist_ok=True)
        (project / where / "PLAN.md").write_text(plan)
    (project / ".teddy" / "notes").mkdir()  # not a session: no date
    (project / ".teddy" / "2026010-short").mkdir()
    (project / "plans" / "auth" / "tasks" / "PLAN.md").write_text(plan)
    (project / "release.PLAN.md").write_text(plan)
    found = {ref.id for ref in discover(project)}
    assert "checklist:docs/PLAN.md" in found and "checklist:release.PLAN.md" in found
    assert not any(s in i for i in found for s in ("node_modules", ".venv", ".git", "tasks/"))
    assert not any(i.startswith("teddy:.teddy/") and i.count("-") == 0 for i in found)
    assert "teddy:.teddy/notes" not in found and "teddy:.teddy/2026010-short" not in found
    assert sum(1 for i in found if i.startswith("agentflow:")) == 1
