"""PLAN.md checklists on the board (Markdown files, xlsx workbooks, and the Google
Sheets checklists of :mod:`plankit.board.sheets`): the list's line and the page, read
with the checklist's own parser and linter.  Each step's ``state`` is the board's word
for its status (:mod:`plankit.board.states`); progress counts the steps done."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plankit.board.files import FileText, error, file_error, iso, mtime, read_file
from plankit.board.states import board_state


def summary(path: Path, rel: str) -> tuple[dict[str, Any] | None, str | None]:
    """The list's line for a checklist file (parsed, not linted), and its text."""
    return _checklist_summary(path, rel)


def detail(path: Path, rel: str) -> dict[str, Any] | None:
    """The page of a checklist file (None: not a checklist after all)."""
    return _checklist(path, rel)


def _checklist_text(path: Path) -> FileText:
    if path.suffix.lower() == ".xlsx":
        return FileText(_xlsx_plan(path))
    return read_file(path)


def _refused(path: Path, found: FileText) -> dict[str, Any]:
    """The list's line for a checklist the board would not read: listed, with why."""
    return {
        "title": path.name,
        "progress": {"done": 0, "total": 0},
        "updated": iso(mtime(path)),
        "status": f"not shown: {path.name} {found.problem}",
        "state": "todo",
    }


def _checklist_summary(path: Path, rel: str) -> tuple[dict[str, Any] | None, str | None]:
    """The list's line for a checklist file: parsed, not linted."""
    found = _checklist_text(path)
    if found.problem is not None:
        return _refused(path, found), None
    if found.text is None:
        return None, None
    return checklist_head(found.text, path.name, iso(mtime(path))), found.text


def checklist_head(text: str, name: str, updated: str | None) -> dict[str, Any] | None:
    """The list's line for a checklist's text (None: no title and no step, so some
    other Markdown file); ``name`` is its title when it has none."""
    from plankit.checklist.plan import parse_plan
    from plankit.errors import PlankitError

    head: dict[str, Any] = {"title": name, "updated": updated}
    try:
        plan = parse_plan(text)
    except (PlankitError, RecursionError, ValueError):
        return head | {"progress": {"done": 0, "total": 0}, "status": "unreadable"}
    progress = plan.progress
    if not plan.title and not progress.total:
        return None
    return head | {
        "title": plan.title or name,
        "progress": {"done": progress.done, "total": progress.total},
        "status": _checklist_status(
            progress.done, progress.total, progress.blocked, progress.review
        ),
        "state": _state(progress.done, progress.total, progress.blocked),
    }


def _state(done: int, total: int, blocked: int) -> str:
    """A checklist's state: done when every step is, blocked when one is, else doing
    (or todo before any step is done)."""
    if total and done == total:
        return "done"
    if blocked:
        return "blocked"
    return "doing" if done else "todo"


def _checklist_status(done: int, total: int, blocked: int, review: int) -> str | None:
    if total and done == total:
        return "done"
    waiting = [f"{blocked} blocked" if blocked else "", f"{review} to review" if review else ""]
    return ", ".join(w for w in waiting if w) or None


def _checklist(path: Path, rel: str) -> dict[str, Any] | None:
    found = _checklist_text(path)
    if found.problem is not None:
        return _refused(path, found) | {"errors": file_error(rel, found)}
    if found.text is None:
        return None
    return checklist_page(found.text, rel, path.name, iso(mtime(path)))


def checklist_page(text: str, rel: str, name: str, updated: str | None) -> dict[str, Any] | None:
    """A checklist's page from its text: the plan, current and next steps, lint
    warnings, or the error that keeps it from being read (None: not a checklist)."""
    from plankit.checklist.lint import lint_plan
    from plankit.checklist.plan import parse_plan
    from plankit.errors import PlankitError, diagnostics_json

    try:
        plan = parse_plan(text)
    except (PlankitError, RecursionError, ValueError) as exc:
        return {
            "title": name,
            "progress": {"done": 0, "total": 0},
            "updated": updated,
            "status": "unreadable",
            "errors": [error(getattr(exc, "code", "unreadable"), str(exc), rel)],
            "markdown": text,
        }
    progress = plan.progress
    if not plan.title and not progress.total:
        return None
    current = plan.current_task()
    following = plan.next_task()
    data = plan.to_dict(raw=False)
    for phase in data.get("phases", []):
        for task in phase.get("tasks", []):
            task["state"] = board_state("checklist", task.get("status"))
    warnings = diagnostics_json(lint_plan(text), rel)
    return {
        "title": plan.title or name,
        "progress": {"done": progress.done, "total": progress.total},
        "updated": updated,
        "status": _checklist_status(
            progress.done, progress.total, progress.blocked, progress.review
        ),
        "state": _state(progress.done, progress.total, progress.blocked),
        "plan": data,
        "current": current.to_dict() if current else None,
        "next": following.to_dict() if following else None,
        "warnings": warnings,
        "errors": [],
        "markdown": text,
    }


def _xlsx_plan(path: Path) -> str | None:
    """The text of a workbook's plan cell (the default cell), or None when it holds
    none.  Reading takes no lock and writes nothing."""
    try:
        from plankit.checklist.manager import DEFAULT_CELL
        from plankit.checklist.stores import open_store

        text = open_store(str(path)).get_cell(DEFAULT_CELL)
    except Exception:  # a workbook that is not a checklist, or not readable: not listed
        return None
    return text if isinstance(text, str) and text.strip() else None
