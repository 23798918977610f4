"""Each kind of plan read the way the list and the page read it (plankit.board.views):
the summary, the text its history keeps, the page, and what on disk the summary
depends on."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from plankit.board import views
from plankit.board.discover import PlanRef
from tests.board.sessions import CREATE, Turn, write_session

ROOT = Path(__file__).resolve().parents[2]
CHECKLIST = """# Plan: Ship the release

### Phase 1: Build
- [x] 1.1 Write the code ✅ 2026-11-20
- [/] 1.2 Test it
- [ ] 1.3 Fix what the tests find
"""
ACP = (
    '{"from": "agent", "message": {"jsonrpc": "2.0", "method": "session/update", "params": '
    '{"sessionId": "s", "update": {"sessionUpdate": "plan", "entries": ['
    '{"content": "Read the code", "status": "completed", "priority": "high"}, '
    '{"content": "Change it", "status": "in_progress", "priority": "medium"}], '
    '"_meta": {"plankit": {"title": "An ACP run"}}}}}}\n'
)


def _agentflow(root: Path) -> Path:
    path = root / "plans" / "auth"
    shutil.copytree(ROOT / "examples" / "agentflow" / "auth", path)
    return path


def test_a_checklists_summary_keeps_its_text_and_its_page_has_the_steps(tmp_path: Path) -> None:
    (tmp_path / "PLAN.md").write_text(CHECKLIST)
    ref = PlanRef("checklist", "PLAN.md")
    summary, text = views.read(ref, tmp_path / "PLAN.md")
    assert text == CHECKLIST
    assert summary is not None
    assert (summary["kind"], summary["id"], summary["path"]) == (
        "checklist",
        "checklist:PLAN.md",
        "PLAN.md",
    )
    assert (summary["title"], summary["progress"], summary["state"]) == (
        "Ship the release",
        {"done": 1, "total": 3},
        "doing",
    )
    assert summary["status"] is None
    assert views.read(ref, tmp_path / "PLAN.md", text=False)[0] == summary
    page = views.detail(ref, tmp_path / "PLAN.md")
    assert page is not None and page["id"] == "checklist:PLAN.md" and page["markdown"] == CHECKLIST
    assert page["current"]["step"] == "1.2"


def test_a_markdown_file_that_is_no_checklist_is_not_a_plan(tmp_path: Path) -> None:
    (tmp_path / "PLAN.md").write_text("Some notes, no title, no steps.\n")
    ref = PlanRef("checklist", "PLAN.md")
    assert views.summary(ref, tmp_path / "PLAN.md") is None
    assert views.read(ref, tmp_path / "PLAN.md")[0] is None
    assert views.detail(ref, tmp_path / "PLAN.md") is None


def test_an_agentflow_directorys_history_text_holds_its_plan_and_tasks(tmp_path: Path) -> None:
    path = _agentflow(tmp_path)
    ref = PlanRef("agentflow", "plans/auth")
    summary, text = views.read(ref, path)
    assert (
        summary is not None
        and summary["id"] == "agentflow:plans/auth"
        and summary["status"] is None
    )
    assert text is not None and "--- 02-implement-service.md" in text
    assert views.read(ref, path, text=False) == (summary, None)
    page = views.detail(ref, path)
    assert (
        page is not None
        and page["id"] == "agentflow:plans/auth"
        and page["title"] == summary["title"]
    )
    assert page.keys() - summary.keys() == {"plan", "graph", "errors"}
    assert page["progress"] == {"done": 0, "total": 3} and page["errors"] == []


def test_an_acp_runs_history_text_is_its_entries(tmp_path: Path) -> None:
    path = tmp_path / ".plankit" / "acp" / "run-1.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(ACP)
    ref = PlanRef("acp", ".plankit/acp/run-1.jsonl")
    summary, text = views.read(ref, path)
    assert summary is not None and "entries" not in summary and "errors" not in summary
    assert (summary["title"], summary["progress"], summary["kind"]) == (
        "An ACP run",
        {"done": 1, "total": 2},
        "acp",
    )
    assert text is not None and [e["content"] for e in json.loads(text)] == [
        "Read the code",
        "Change it",
    ]
    assert text.startswith('[\n {\n  "content"')  # indented by one, as the diff shows it
    page = views.detail(ref, path)
    assert page is not None and page["id"] == ref.id and len(page["entries"]) == 2
    assert page["errors"] == [] and page["status"] is None


def test_a_teddy_sessions_history_is_its_turns_not_a_text(tmp_path: Path) -> None:
    session = write_session(tmp_path, "20261120-port", [Turn("Write", actions=[CREATE])])
    ref = PlanRef("teddy", ".teddy/20261120-port")
    summary, text = views.read(ref, session)
    assert text is None and summary is not None and summary["status"] == "Completed 🟢"
    assert summary["title"] == "Write" and summary["id"] == "teddy:.teddy/20261120-port"
    page = views.detail(ref, session)
    assert page is not None and page["turns"][0]["title"] == "Write" and page["kind"] == "teddy"


def test_an_agentflow_signature_changes_with_its_plan_tasks_and_states(tmp_path: Path) -> None:
    path = _agentflow(tmp_path)
    ref = PlanRef("agentflow", "plans/auth")
    (path / "state.json").write_text('{"create-schema": "doing"}')
    seen = [views.signature(ref, path)]
    for change in ("plan.md", "tasks", "state.json"):
        target = path / change
        if change == "tasks":  # a task file added or removed
            stamp = 1_700_000_000
            os.utime(target, (stamp, stamp))
        else:  # edited in place, as an editor saves it: the folder does not change
            with target.open("a") as edit:
                edit.write("\n")
        seen.append(views.signature(ref, path))
    assert len(set(seen)) == len(seen)
    assert len(seen[0]) == 4


def test_a_checklists_signature_is_its_files_time_and_size(tmp_path: Path) -> None:
    path = tmp_path / "PLAN.md"
    path.write_text(CHECKLIST)
    ref = PlanRef("checklist", "PLAN.md")
    st = os.lstat(path)
    assert views.signature(ref, path) == ((st.st_mtime_ns, st.st_size),)
    path.unlink()
    assert views.signature(ref, path) == ((0, 0),)


def test_a_page_of_a_file_the_board_refuses_names_it_from_the_root(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    os.mkfifo(tmp_path / "docs" / "PLAN.md")
    ref = PlanRef("checklist", "docs/PLAN.md")
    page = views.detail(ref, tmp_path / "docs" / "PLAN.md")
    assert page is not None
    assert (page["kind"], page["id"], page["path"]) == ("checklist", ref.id, "docs/PLAN.md")
    assert [e["file"] for e in page["errors"]] == ["docs/PLAN.md"]
    transcript = tmp_path / ".plankit" / "acp" / "run-1.jsonl"
    transcript.parent.mkdir(parents=True)
    os.mkfifo(transcript)
    acp = PlanRef("acp", ".plankit/acp/run-1.jsonl")
    page = views.detail(acp, transcript)
    assert page is not None and (page["kind"], page["path"]) == ("acp", acp.rel)
    assert [e["file"] for e in page["errors"]] == [acp.rel]


def test_a_pages_fields_are_the_summarys_and_the_plans(tmp_path: Path) -> None:
    (tmp_path / "PLAN.md").write_text(CHECKLIST)
    page = views.detail(PlanRef("checklist", "PLAN.md"), tmp_path / "PLAN.md")
    assert page is not None and set(page) == {
        "kind", "id", "path", "title", "progress", "updated", "status", "state",
        "plan", "current", "next", "warnings", "errors", "markdown",
    }  # fmt: skip
    path = tmp_path / ".plankit" / "acp" / "run-1.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(ACP)
    page = views.detail(PlanRef("acp", ".plankit/acp/run-1.jsonl"), path)
    assert page is not None and set(page) == {
        "kind", "id", "path", "title", "progress", "updated", "status", "state", "entries", "errors",
    }  # fmt: skip


def test_an_owned_agentflow_directorys_page_shows_the_sessions_states(tmp_path: Path) -> None:
    path = _agentflow(tmp_path)
    os.mkfifo(path / "state.json")  # the session's states are read, not this
    (path / "tasks" / "03-wire-handler.md").write_text("---\nid: [\n")
    ref = PlanRef("agentflow", "plans/auth")
    tracked = ("s-1", {"create-schema": "done"})
    page = views.detail(ref, path, tracked)
    assert page is not None and page["owner_session"] == "s-1"
    assert page["progress"] == {"done": 1, "total": 3}
    assert [e["file"] for e in page["errors"]] == ["plans/auth/tasks/03-wire-handler.md"]
    (path / "tasks" / "03-wire-handler.md").write_text(
        "---\nid: wire-handler\ndepends_on: [implement-service]\n---\n\nWire it.\n"
    )
    page = views.detail(ref, path, tracked)
    assert page is not None and page["errors"] == []
    assert [n["state"] for n in page["graph"]["nodes"]] == ["done", "todo", "todo"]


def test_every_summary_has_the_lists_fields_and_no_other(tmp_path: Path) -> None:
    (tmp_path / "PLAN.md").write_text(CHECKLIST)
    acp = tmp_path / ".plankit" / "acp" / "run-1.jsonl"
    acp.parent.mkdir(parents=True)
    acp.write_text(ACP)
    session = write_session(tmp_path, "20261120-port", [Turn("Write", actions=[CREATE])])
    fields = {"kind", "id", "path", "title", "progress", "updated", "status", "state"}
    for ref, path in [
        (PlanRef("checklist", "PLAN.md"), tmp_path / "PLAN.md"),
        (PlanRef("acp", ".plankit/acp/run-1.jsonl"), acp),
        (PlanRef("teddy", ".teddy/20261120-port"), session),
        (PlanRef("agentflow", "plans/auth"), _agentflow(tmp_path)),
    ]:
        found = views.summary(ref, path)
        assert found is not None and set(found) == fields, ref


def test_an_owned_agentflow_directorys_line_has_its_session(tmp_path: Path) -> None:
    path = _agentflow(tmp_path)
    ref = PlanRef("agentflow", "plans/auth")
    found, _text = views.read(ref, path, tracked=("s-1", {"create-schema": "done"}))
    assert found is not None and found["owner_session"] == "s-1"
    assert found["progress"] == {"done": 1, "total": 3}
    assert views.summary(ref, path, ("s-1", {}))["owner_session"] == "s-1"  # type: ignore[index]


def test_an_acp_runs_history_keeps_its_words_as_written(tmp_path: Path) -> None:
    path = tmp_path / ".plankit" / "acp" / "run-1.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(ACP.replace("Read the code", "Écrire le café"), encoding="utf-8")
    _summary, text = views.read(PlanRef("acp", ".plankit/acp/run-1.jsonl"), path)
    assert text is not None and '"content": "Écrire le café"' in text
