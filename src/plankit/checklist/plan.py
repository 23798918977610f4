"""PLAN.md text → :class:`~plankit.checklist.model.Plan`.

Which lines are tasks of which phase comes from the Markdown structure
(:mod:`plankit.checklist.structure`, cached by :mod:`plankit.checklist.locate`); each
task's status, title and annotations are then read from its own line.
"""

from __future__ import annotations

import re

from plankit.checklist.lines import NOTE_SEP_RE, PHASE_LINE_RE, TASK_LINE_RE
from plankit.checklist.locate import analyze
from plankit.checklist.model import CHAR_STATUS, Phase, Plan, PlanTask, TaskStatus
from plankit.markdown.encoding import repair_double_encoding

__all__ = [
    "NOTE_SEP_RE",
    "PHASE_LINE_RE",
    "TASK_LINE_RE",
    "parse_plan",
    "split_content",
    "task_from_line",
]

_DATE_RE = re.compile(r"[ \t]*✅[ \t]*(\d{4}-\d{2}-\d{2})")


# --- reading one task line -------------------------------------------------------------


def split_content(content: str, status: TaskStatus) -> tuple[str, str | None, str | None]:
    """A task's text after the step → (title, completion date, blocked/review note).

    The date is any ``✅ YYYY-MM-DD``.  A note exists only for blocked and review tasks
    and is the text after the *last* `` — ``, so a title may contain an em dash.
    """
    text = repair_double_encoding(content).strip()
    date: str | None = None
    if "✅" in text:
        found = _DATE_RE.search(text)
        if found is not None:
            date = found.group(1)
            text = _DATE_RE.sub("", text).strip()
    note: str | None = None
    if status in (TaskStatus.BLOCKED, TaskStatus.REVIEW) and "—" in text:
        last = None
        for last in NOTE_SEP_RE.finditer(text):  # noqa: B007 - the last match is wanted
            pass
        if last is not None:
            note = text[last.end() :].strip() or None
            text = text[: last.start()].rstrip()
    return text, date, note


def task_from_line(line_text: str, line: int, phase: int) -> PlanTask | None:
    """The task on one line of Markdown, or None when the line is not a task line."""
    m = TASK_LINE_RE.fullmatch(line_text.rstrip("\r\n"))
    if m is None:
        return None
    status = CHAR_STATUS.get(m.group(3), TaskStatus.TODO)
    title, date, note = split_content(m.group(6), status)
    return PlanTask(
        line=line,
        phase=phase,
        step=m.group(4),
        status=status,
        title=title,
        completed_date=date,
        blocked_reason=note if status is TaskStatus.BLOCKED else None,
        review_note=note if status is TaskStatus.REVIEW else None,
    )


def parse_plan(markdown: str) -> Plan:
    """Parse a PLAN.md checklist; never raises (text that is not a plan gives an empty
    plan: no title, no phases)."""
    found = analyze(markdown)
    lines: list[str] = []
    if found.phases:
        from plankit.checklist.structure import split_lines

        lines = split_lines(markdown.removeprefix("\ufeff"))
    phases: list[Phase] = []
    for slot in found.phases:
        tasks: list[PlanTask] = []
        for line, _step in slot.tasks:
            task = task_from_line(lines[line - 1], line, slot.number)
            if task is not None:
                tasks.append(task)
        phases.append(Phase(slot.number, slot.name, tuple(tasks)))
    return Plan(
        title=found.title,
        goal=found.goal,
        analysis=found.analysis,
        questions=found.questions,
        phases=tuple(phases),
        notes=found.notes,
        raw=markdown,
    )
