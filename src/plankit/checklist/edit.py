"""Changing a plan's Markdown one line at a time.

:func:`update_task_status` rewrites the line of one task and leaves every other byte
of the text as it was (CRLF stays CRLF, a missing final newline stays missing).
:func:`add_note` inserts one line at the end of the Notes section.
"""

from __future__ import annotations

import datetime as _dt
import re

from plankit.checklist import locate, scan
from plankit.checklist.errors import AmbiguousStepError
from plankit.checklist.lines import NOTE_SEP_RE, TASK_LINE_RE
from plankit.checklist.model import CHAR_STATUS, TaskStatus, coerce_status
from plankit.checklist.plan import split_content
from plankit.errors import InputError
from plankit.markdown.encoding import repair_double_encoding


def clean_annotation(text: str | None) -> str | None:
    """A blocked reason or review note made fit for one line: whitespace runs become one
    space and an em dash becomes an en dash (an em dash starts the note)."""
    if text is None:
        return None
    cleaned = " ".join(repair_double_encoding(text).split()).replace("—", "–")
    return cleaned or None


def _task_line(text: str, found: locate.Entry, line: int, step: str) -> tuple[int, int]:
    """Offsets of the task line ``line`` (numbered ``step``), its line ending excluded."""
    start = found.line_start(line)
    end = locate.line_end(text, start)
    m = TASK_LINE_RE.fullmatch(text, start, end)
    if m is None or m.group(4) != step:  # pragma: no cover - a cache entry that lies
        locate.clear()
        raise RuntimeError(f"plankit: line {line} is not task {step}; please report this")
    return start, end


def rewrite_task_line(
    line_text: str,
    status: TaskStatus,
    annotation: str | None,
    today: _dt.date,
) -> str:
    """The task line ``line_text`` with a new status (and annotation); always written
    with ``✅`` and ``—``."""
    m = TASK_LINE_RE.fullmatch(line_text)
    if m is None:  # pragma: no cover - callers pass task lines
        raise ValueError(f"not a task line: {line_text!r}")
    indent, bullet, char, step, sep, content = m.groups()
    old = CHAR_STATUS.get(char, TaskStatus.TODO)
    title, date, _ = split_content(content, old)
    out = f"{indent}{bullet} [{status.char}] {step}{sep}{title}"
    if status is TaskStatus.DONE:
        keep = date if old is TaskStatus.DONE and date else today.isoformat()
        out += f" ✅ {keep}"
    elif status in (TaskStatus.BLOCKED, TaskStatus.REVIEW):
        note = clean_annotation(annotation)
        if not note and NOTE_SEP_RE.search(title):
            # without a note, the title's own " — " would read as the note's start
            note = "(no reason given)" if status is TaskStatus.BLOCKED else "(no note given)"
        if note:
            out += f" — {note}"
    return out


def set_status(
    markdown: str,
    step: str,
    status: TaskStatus | str,
    annotation: str | None = None,
    *,
    today: _dt.date | None = None,
) -> tuple[str, str | None]:
    """:func:`update_task_status`, also returning the task's new line (None when
    ``step`` is unknown)."""
    wanted = coerce_status(status)
    step = step.strip()
    found = locate.cached(markdown)
    if found is None:
        # a text never seen: find the line without parsing the plan when that is sure
        quick = scan.task_line_start(markdown, step)
        if quick is None:
            return markdown, None
        if quick is not scan.UNSURE:
            start = quick
            end = locate.line_end(markdown, start)
            new_line = _new_line(markdown[start:end], wanted, annotation, today)
            if new_line == markdown[start:end]:
                return markdown, new_line
            return markdown[:start] + new_line + markdown[end:], new_line
        found = locate.entry(markdown)
    line = found.structure.targets.get(step)
    if line is None:
        return markdown, None
    if step in found.structure.ambiguous:
        raise AmbiguousStepError(step, found.structure.step_lines(step))
    start, end = _task_line(markdown, found, line, step)
    old_line = markdown[start:end]
    new_line = _new_line(old_line, wanted, annotation, today)
    if new_line == old_line:
        return markdown, new_line
    updated = markdown[:start] + new_line + markdown[end:]
    locate.remember(updated, found.derive(line, len(new_line) - len(old_line)))
    return updated, new_line


def _new_line(
    old_line: str, status: TaskStatus, annotation: str | None, today: _dt.date | None
) -> str:
    return rewrite_task_line(
        repair_double_encoding(old_line), status, annotation, today or _dt.date.today()
    )


def update_task_status(
    markdown: str,
    step: str,
    status: TaskStatus | str,
    annotation: str | None = None,
    *,
    today: _dt.date | None = None,
) -> str:
    """Set the status of task ``step``; return the new Markdown.

    Only the task's line changes.  ``done`` adds ``✅ <today>`` (a task already done
    keeps its date); ``blocked`` and ``review`` add `` — annotation``; any other status
    drops the old note.  An unknown ``step`` returns ``markdown`` unchanged (the
    :class:`~plankit.checklist.manager.PlanManager` methods raise instead).
    """
    return set_status(markdown, step, status, annotation, today=today)[0]


def _line_ending(text: str) -> str:
    m = re.search(r"\r\n|\r|\n", text)
    return m.group(0) if m is not None else "\n"


def add_note(markdown: str, note: str) -> str:
    """Add ``- note`` as the last line of the Notes section (a Notes section is added at
    the end when there is none); every other byte is kept."""
    text = " ".join(note.split())
    if not text:
        raise InputError("the note is empty; give the text to add", code="empty-note")
    nl = _line_ending(markdown)
    found = locate.analyze(markdown)
    if found.notes_span is None:
        base = markdown
        if base and not base.endswith(("\n", "\r")):
            base += nl
        gap = nl if base and not base.endswith(nl + nl) else ""
        return f"{base}{gap}## Notes{nl}{nl}- {text}{nl}"
    heading, last = found.notes_span
    _, end = locate.line_bounds(markdown, last)
    at_eof = end == len(markdown)
    if not at_eof:
        end += 2 if markdown.startswith("\r\n", end) else 1
    blank = nl if last == heading else ""
    if at_eof:
        return f"{markdown}{nl}{blank}- {text}"
    return f"{markdown[:end]}{blank}- {text}{nl}{markdown[end:]}"
