"""PLAN.md checklists on the board (plankit.board.checklist_view), written by hand:
Markdown files and workbooks, every mix of step states, files that cannot be read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plankit.board.checklist_view import checklist_head, checklist_page, detail, summary

PLAN = """# Plan: Ship the release

### Phase 1: Build
- [x] 1.1 Write the code ✅ 2026-11-20
- [/] 1.2 Test it
- [ ] 1.3 Fix what the tests find

### Phase 2: Release
- [ ] 2.1 Tag the release
"""


@pytest.mark.parametrize(
    ("marks", "progress", "status", "state"),
    [
        (" ,  ,  ,  ", (0, 4), None, "todo"),
        ("x,/, ,  ", (1, 4), None, "doing"),
        ("x,>, ,  ", (1, 4), "1 blocked", "blocked"),
        (" ,>,>,  ", (0, 4), "2 blocked", "blocked"),
        ("x,!, ,  ", (1, 4), "1 to review", "doing"),
        ("x,>,!,  ", (1, 4), "1 blocked, 1 to review", "blocked"),
        ("x,x,x,x", (4, 4), "done", "done"),
    ],
)
def test_progress_status_and_state_follow_the_steps(
    marks: str, progress: tuple[int, int], status: str | None, state: str
) -> None:
    text = PLAN
    for step, mark in zip(("1.1", "1.2", "1.3", "2.1"), marks.split(","), strict=True):
        for old in ("x", "/", " "):
            text = text.replace(f"- [{old}] {step} ", f"- [{mark.strip() or ' '}] {step} ")
    text = text.replace(" ✅ 2026-11-20", "")
    head = checklist_head(text, "PLAN.md", "2026-11-20T09:00:00Z")
    assert head is not None
    assert head["progress"] == {"done": progress[0], "total": progress[1]}
    assert (head["status"], head["state"]) == (status, state)
    page = checklist_page(text, "PLAN.md", "PLAN.md", None)
    assert page is not None and (page["status"], page["state"]) == (status, state)


def test_the_page_has_the_current_and_next_step_and_each_steps_state(tmp_path: Path) -> None:
    (tmp_path / "PLAN.md").write_text(PLAN)
    os.utime(tmp_path / "PLAN.md", (1_764_150_764, 1_764_150_764))
    page = detail(tmp_path / "PLAN.md", "PLAN.md")
    assert page is not None
    assert (page["title"], page["updated"], page["errors"]) == (
        "Ship the release",
        "2025-11-26T09:52:44Z",
        [],
    )
    assert (page["current"]["step"], page["next"]["step"]) == ("1.2", "1.3")
    states = [t["state"] for p in page["plan"]["phases"] for t in p["tasks"]]
    assert states == ["done", "doing", "todo", "todo"]
    assert page["markdown"] == PLAN and page["progress"] == {"done": 1, "total": 4}
    assert "raw" not in page["plan"]  # the text is sent once, as "markdown"
    head, text = summary(tmp_path / "PLAN.md", "PLAN.md")
    assert text == PLAN and head is not None and head["updated"] == "2025-11-26T09:52:44Z"


def test_a_finished_checklist_has_no_current_or_next_step() -> None:
    text = "# Plan: Done\n\n### Phase 1: A\n- [x] 1.1 One\n- [x] 1.2 Two\n"
    page = checklist_page(text, "PLAN.md", "PLAN.md", None)
    assert page is not None and (page["current"], page["next"], page["state"]) == (
        None,
        None,
        "done",
    )


def test_lint_warnings_name_the_file(tmp_path: Path) -> None:
    text = "# Plan: Loose\n\n- [ ] 1.1 A step outside any phase\n- [ ] 1.1 The same number again\n"
    page = checklist_page(text, "docs/PLAN.md", "PLAN.md", None)
    assert page is not None and page["warnings"]
    assert {w["file"] for w in page["warnings"]} == {"docs/PLAN.md"}
    (tmp_path / "PLAN.md").write_text(text)
    page = detail(tmp_path / "PLAN.md", "docs/PLAN.md")
    assert page is not None and page["warnings"]
    assert {w["file"] for w in page["warnings"]} == {"docs/PLAN.md"}


def test_a_markdown_file_with_no_title_and_no_step_is_not_a_checklist(tmp_path: Path) -> None:
    (tmp_path / "notes.plan.md").write_text("Ideas for later, in no order.\n")
    assert summary(tmp_path / "notes.plan.md", "notes.plan.md")[0] is None
    assert detail(tmp_path / "notes.plan.md", "notes.plan.md") is None
    assert summary(tmp_path / "gone.plan.md", "gone.plan.md") == (None, None)
    assert detail(tmp_path / "gone.plan.md", "gone.plan.md") is None


def test_a_plan_with_a_title_and_no_step_yet_is_a_checklist() -> None:
    text = "# Plan: Move the docs site\n\nGoal: one site for every version\n"
    head = checklist_head(text, "PLAN.md", None)
    assert head is not None and (head["title"], head["progress"], head["state"]) == (
        "Move the docs site",
        {"done": 0, "total": 0},
        "todo",
    )
    page = checklist_page(text, "PLAN.md", "PLAN.md", None)
    assert page is not None and (page["current"], page["next"]) == (None, None)
    assert [w["code"] for w in page["warnings"]] == ["no-tasks"]


def test_steps_without_a_title_are_named_after_the_file(tmp_path: Path) -> None:
    text = "### Phase 1: Ship\n- [x] 1.1 Write it\n- [ ] 1.2 Ship it\n"
    head = checklist_head(text, "todo.plan.md", None)
    assert head is not None and head["title"] == "todo.plan.md"
    page = checklist_page(text, "todo.plan.md", "todo.plan.md", None)
    assert page is not None and page["title"] == "todo.plan.md"
    (tmp_path / "todo.plan.md").write_text(text)
    head, _text = summary(tmp_path / "todo.plan.md", "docs/todo.plan.md")
    assert head is not None and head["title"] == "todo.plan.md"
    page = detail(tmp_path / "todo.plan.md", "docs/todo.plan.md")
    assert page is not None and page["title"] == "todo.plan.md"


def test_a_parser_failure_shows_the_text_and_the_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from plankit.checklist import plan
    from plankit.errors import InputError

    def broken(text: str) -> object:
        raise InputError("phase heading out of order", code="bad-phase")

    monkeypatch.setattr(plan, "parse_plan", broken)
    head = checklist_head(PLAN, "PLAN.md", "2026-11-20T09:00:00Z")
    assert head == {
        "title": "PLAN.md",
        "updated": "2026-11-20T09:00:00Z",
        "progress": {"done": 0, "total": 0},
        "status": "unreadable",
    }
    page = checklist_page(PLAN, "docs/PLAN.md", "PLAN.md", "2026-11-20T09:00:00Z")
    assert page == {
        "title": "PLAN.md",
        "progress": {"done": 0, "total": 0},
        "updated": "2026-11-20T09:00:00Z",
        "status": "unreadable",
        "errors": [
            {
                "code": "bad-phase",
                "message": "phase heading out of order",
                "line": None,
                "file": "docs/PLAN.md",
            }
        ],
        "markdown": PLAN,
    }


def test_a_plan_too_deep_for_the_parser_is_unreadable_not_a_500(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from plankit.checklist import plan

    def too_deep(text: str) -> object:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(plan, "parse_plan", too_deep)
    page = checklist_page(PLAN, "PLAN.md", "PLAN.md", None)
    assert page is not None and page["status"] == "unreadable"
    assert [(e["code"], e["message"]) for e in page["errors"]] == [
        ("unreadable", "maximum recursion depth exceeded")
    ]


def test_a_checklist_that_is_a_fifo_is_listed_with_why(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "PLAN.md")
    os.utime(tmp_path / "PLAN.md", (1_764_150_764, 1_764_150_764))
    head, text = summary(tmp_path / "PLAN.md", "docs/PLAN.md")
    why = "is a named pipe (FIFO), not a regular file; the board reads files only"
    assert text is None and head == {
        "title": "PLAN.md",
        "progress": {"done": 0, "total": 0},
        "updated": "2025-11-26T09:52:44Z",
        "status": f"not shown: PLAN.md {why}",
        "state": "todo",
    }
    page = detail(tmp_path / "PLAN.md", "docs/PLAN.md")
    assert page is not None and page["errors"][0]["file"] == "docs/PLAN.md"
    assert page["errors"][0]["message"] == f"PLAN.md {why}"


def test_a_workbook_is_a_checklist_only_with_a_plan_in_its_cell(tmp_path: Path) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "AGENT_BASE"
    sheet["C2"] = PLAN
    book.save(tmp_path / "plan.xlsx")
    head, text = summary(tmp_path / "plan.xlsx", "plan.xlsx")
    assert text == PLAN and head is not None and head["progress"] == {"done": 1, "total": 4}
    sheet["C2"] = "   "
    book.save(tmp_path / "blank.xlsx")
    data = openpyxl.Workbook()
    data.active["A1"] = "numbers, no plan"
    data.save(tmp_path / "data.xlsx")
    (tmp_path / "fake.xlsx").write_text("not a zip file")
    for name in ("blank.xlsx", "data.xlsx", "fake.xlsx"):
        assert summary(tmp_path / name, name) == (None, None), name
        assert detail(tmp_path / name, name) is None
