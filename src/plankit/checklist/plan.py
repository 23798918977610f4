"""PLAN.md text → :class:`~plankit.checklist.model.Plan`, with the Markdown foundation.

The plan's *structure* (title, goal, sections, which lines are tasks of which phase)
comes from :func:`plankit.markdown.tree.parse_document`, so a line that looks like a
task inside a fenced block, inside Notes, Analysis or Questions, or inside a block
quote is not a task.  Each task's status, title and annotations are then read from its
line.

The structure depends only on which lines are headings, paragraphs and list items.
Changing a task's checkbox or annotation does not change it, so the structure of a
plan is kept (in a small cache keyed by the text) and handed on to the text that
:func:`~plankit.checklist.edit.update_task_status` makes from it: a run of status
updates parses the Markdown once.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from plankit.checklist.model import CHAR_STATUS, Phase, Plan, PlanTask, TaskStatus
from plankit.markdown.encoding import repair_double_encoding
from plankit.markdown.tree import Heading, ListBlock, ListItem, Paragraph, normalize, parse_document

TASK_LINE_RE = re.compile(r"([ \t]*)([-*+]) \[(.)\] (\d+\.\d+(?:\.\d+)?)([ \t]+)(.+)")
"""A task line: indentation, bullet, checkbox character, step, separator, content
(use with ``fullmatch``).  Like the spec's ``TASK_REGEX``, with indentation and the
``*``/``+`` bullets allowed."""

PHASE_LINE_RE = re.compile(r"### (?:Phase|phase|PHASE) (\d+): (.+)")
"""A phase heading line, ``### Phase N: Name`` (use with ``fullmatch``)."""

_PHASE_TEXT_RE = re.compile(r"(?:Phase|phase|PHASE) (\d+): (.+)")
_GOAL_RE = re.compile(r"(?:\*\*|__)?goal:(?:\*\*|__)?[ \t]*", re.IGNORECASE)
_DATE_RE = re.compile(r"[ \t]*✅[ \t]*(\d{4}-\d{2}-\d{2})")
NOTE_SEP_RE = re.compile(r"(?:^|[ \t])—[ \t]+")
"""Where a blocked reason or review note starts: an em dash with space after it."""
_NEWLINE_RE = re.compile(r"\r\n|\r|\n")
_SECTIONS = ("analysis", "questions", "notes")


@dataclass(frozen=True, slots=True)
class PhaseSlot:
    """Where a phase and its tasks are."""

    number: int
    """The phase number."""
    name: str
    """The phase name."""
    tasks: tuple[tuple[int, str], ...]
    """(1-based line, step) of each task, in order."""


@dataclass(frozen=True, slots=True)
class Structure:
    """What a plan's Markdown structure says, independent of the tasks' checkboxes."""

    title: str
    """The ``# Plan:`` title."""
    goal: str
    """The ``Goal:`` text."""
    analysis: str | None
    """The Analysis section (see :attr:`Plan.analysis`)."""
    questions: tuple[str, ...] | None
    """The Questions section's bullets."""
    notes: str
    """The Notes section's text."""
    notes_span: tuple[int, int] | None
    """(line of the ``## Notes`` heading, last non-blank line of the section)."""
    phases: tuple[PhaseSlot, ...]
    """The phases and their task lines."""
    targets: dict[str, int]
    """Step → line that a status update changes: the first task of a phase with that
    step, else the first task line outside any phase and section."""
    phase_steps: dict[str, tuple[int, int]]
    """Step → (line, phase number) of the first task of a phase with that step."""

    @property
    def is_plan(self) -> bool:
        """Whether the text is a plan at all: it has a title or a phase."""
        return bool(self.title) or bool(self.phases)

    @property
    def steps(self) -> list[str]:
        """The steps of the phases' tasks, in document order."""
        return [step for phase in self.phases for _, step in phase.tasks]


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


# --- the structure ------------------------------------------------------------------------


def _task_items(blocks: Iterable[object], lines: list[str]) -> Iterable[tuple[int, str]]:
    """(line, step) of every list item of ``blocks`` (nested lists too) that is a task."""
    for block in blocks:
        if not isinstance(block, ListBlock):
            continue
        for item in block.items:
            yield from _item_tasks(item, lines)


def _item_tasks(item: ListItem, lines: list[str]) -> Iterable[tuple[int, str]]:
    m = TASK_LINE_RE.fullmatch(lines[item.start - 1])
    if m is not None:
        yield item.start, m.group(4)
    yield from _task_items(item.children, lines)


def _analysis_text(lines: list[str]) -> str | None:
    out: list[str] = []
    for line in lines:
        if not line.strip():
            continue
        if line.startswith(("- ", "* ", "+ ")):
            line = line[2:]
        out.append(repair_double_encoding(line.rstrip()))
    return "\n".join(out).strip() or None


def _question_texts(blocks: Iterable[object]) -> list[str]:
    out: list[str] = []
    for block in blocks:
        if not isinstance(block, ListBlock):
            continue
        for item in block.items:
            first = item.children[0] if item.children else None
            if isinstance(first, Paragraph) and first.text.strip():
                out.append(repair_double_encoding(" ".join(first.text.split())))
    return out


def analyze(text: str) -> Structure:
    """The structure of ``text`` (cached: a text seen recently is not parsed again)."""
    with _CACHE_LOCK:
        hit = _CACHE.get(text)
        if hit is not None:
            _CACHE.move_to_end(text)
            return hit
    found = _analyze(text)
    remember(text, found)
    return found


def remember(text: str, found: Structure) -> None:
    """Record that ``text`` has the structure ``found`` (used after a status update)."""
    with _CACHE_LOCK:
        _CACHE[text] = found
        _CACHE.move_to_end(text)
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)


_CACHE: OrderedDict[str, Structure] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 8


class _Walk:
    """State of one pass over the top-level blocks."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.title: str | None = None
        self.goal: str | None = None
        self.section: str | None = None
        self.section_heading = 0
        self.section_blocks: list[object] = []
        self.analysis: list[str] | None = None
        self.questions: list[str] | None = None
        self.notes: str | None = None
        self.notes_span: tuple[int, int] | None = None
        self.phases: list[PhaseSlot] = []
        self.phase: tuple[int, str, list[tuple[int, str]]] | None = None
        self.loose: list[tuple[int, str]] = []

    def close(self, before_line: int) -> None:
        """End the open section or phase; ``before_line`` is the line that ends it."""
        if self.section is not None:
            start, end = self.section_heading + 1, before_line - 1
            body = self.lines[start - 1 : end]
            if self.section == "analysis" and self.analysis is None:
                self.analysis = body
            elif self.section == "questions" and self.questions is None:
                self.questions = _question_texts(self.section_blocks)
            elif self.section == "notes" and self.notes is None:
                self.notes = repair_double_encoding("\n".join(body).strip())
                last = max([self.section_heading, *(b.end for b in self.section_blocks)])  # type: ignore[attr-defined]
                self.notes_span = (self.section_heading, last)
            self.section = None
            self.section_blocks = []
        if self.phase is not None:
            number, name, tasks = self.phase
            self.phases.append(PhaseSlot(number, name, tuple(tasks)))
            self.phase = None

    def heading(self, block: Heading) -> bool:
        """Handle a heading that opens or closes something; False to treat it as content."""
        text = block.text
        if block.level <= 2:
            self.close(block.start)
            if block.level == 1:
                if self.title is None and text[:5].lower() == "plan:":
                    self.title = repair_double_encoding(text[5:].strip())
            else:
                lower = text.lower()
                for name in _SECTIONS:
                    if lower.startswith(name):
                        self.section = name
                        self.section_heading = block.start
                        break
            return True
        if block.level == 3:
            m = _PHASE_TEXT_RE.fullmatch(text)
            if m is not None:
                self.close(block.start)
                name = repair_double_encoding(m.group(2).strip())
                self.phase = (int(m.group(1)), name, [])
                return True
            if text[:6].lower() == "phase " and self.section is None:
                self.close(block.start)  # a malformed phase heading ends the phase
                return True
        return False

    def block(self, block: object) -> None:
        if isinstance(block, Heading) and self.heading(block):
            return
        if self.section is not None:
            self.section_blocks.append(block)
            return
        if isinstance(block, Paragraph) and self.goal is None:
            m = _GOAL_RE.match(block.text)
            if m is not None:
                self.goal = repair_double_encoding(" ".join(block.text[m.end() :].split()))
                return
        found = list(_task_items((block,), self.lines))
        if found:
            if self.phase is not None:
                self.phase[2].extend(found)
            else:
                self.loose.extend(found)

    def result(self) -> Structure:
        self.close(len(self.lines) + 1)
        targets: dict[str, int] = {}
        phase_steps: dict[str, tuple[int, int]] = {}
        for phase in self.phases:
            for line, step in phase.tasks:
                targets.setdefault(step, line)
                phase_steps.setdefault(step, (line, phase.number))
        for line, step in self.loose:
            targets.setdefault(step, line)
        return Structure(
            title=self.title or "",
            goal=self.goal or "",
            analysis=_analysis_text(self.analysis) if self.analysis is not None else None,
            questions=tuple(self.questions) if self.questions else None,
            notes=self.notes or "",
            notes_span=self.notes_span,
            phases=tuple(self.phases),
            targets=targets,
            phase_steps=phase_steps,
        )


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` without their endings (``\\r\\n``, ``\\r`` or ``\\n``)."""
    return normalize(text).split("\n")


def _analyze(text: str) -> Structure:
    doc = parse_document(text)
    walk = _Walk(doc.source.split("\n"))
    for block in doc.blocks:
        walk.block(block)
    return walk.result()


def parse_plan(markdown: str) -> Plan:
    """Parse a PLAN.md checklist; never raises (text that is not a plan gives an empty
    plan: no title, no phases)."""
    found = analyze(markdown)
    lines = split_lines(markdown) if found.phases else []
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


def line_bounds(text: str, line: int) -> tuple[int, int]:
    """Start and end offsets of 1-based ``line`` in ``text``, its line ending excluded."""
    if line == 1:
        start = 0
    else:
        count = 1
        start = -1
        for m in _NEWLINE_RE.finditer(text):
            count += 1
            if count == line:
                start = m.end()
                break
        if start < 0:
            raise IndexError(line)
    after = _NEWLINE_RE.search(text, start)
    return start, (after.start() if after is not None else len(text))
