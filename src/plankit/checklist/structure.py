"""The structure of a PLAN.md text, read with the Markdown foundation.

:func:`read_structure` parses the text with :func:`plankit.markdown.tree.parse_document`
and walks its top-level blocks: the ``# Plan:`` title, the ``Goal:`` paragraph, the
Analysis, Questions and Notes sections, and the ``### Phase N:`` headings with the
list items under them that are task lines.  A line that looks like a task inside a
fenced block, a block quote, an HTML block, indented code, or the Notes, Analysis or
Questions sections is not a task.

The structure says *which lines* are tasks, not what their checkboxes say: a status
update does not change it (see :mod:`plankit.checklist.locate`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from plankit.checklist.lines import NEWLINE_RE, PHASE_TEXT_RE, SECTIONS, TASK_LINE_RE
from plankit.markdown.encoding import repair_double_encoding
from plankit.markdown.tree import (
    Block,
    Heading,
    ListBlock,
    ListItem,
    Paragraph,
    normalize,
    parse_document,
)

_GOAL_RE = re.compile(r"(?:\*\*|__)?goal:(?:\*\*|__)?[ \t]*", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class PhaseSlot:
    """Where a phase and its tasks are."""

    number: int
    """The phase number."""
    name: str
    """The phase name."""
    tasks: tuple[tuple[int, str], ...]
    """(1-based line, step) of each task, in order."""
    line: int = 0
    """1-based line of the ``### Phase N:`` heading."""


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
    line_starts: tuple[int, ...]
    """Offset of the start of each line in the text the structure was read from."""
    loose: tuple[tuple[int, str], ...] = ()
    """(line, step) of the task lines outside any phase and section."""
    ambiguous: frozenset[str] = frozenset()
    """Steps an update cannot tell apart: more than one phase task has them (or, for a
    step no phase has, more than one task line outside phases)."""

    @property
    def is_plan(self) -> bool:
        """Whether the text is a plan at all: it has a title or a phase."""
        return bool(self.title) or bool(self.phases)

    def step_lines(self, step: str) -> list[int]:
        """The lines of the phase tasks numbered ``step`` (more than one: the step is
        ambiguous); the task lines outside phases when no phase has it."""
        lines = [line for phase in self.phases for line, s in phase.tasks if s == step]
        return lines or [line for line, s in self.loose if s == step]

    @property
    def steps(self) -> list[str]:
        """The steps of the phases' tasks, in document order."""
        return [step for phase in self.phases for _, step in phase.tasks]


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


class _Walk:
    """State of one pass over the top-level blocks."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.title: str | None = None
        self.goal: str | None = None
        self.section: str | None = None
        self.section_heading = 0
        self.section_blocks: list[Block] = []
        self.analysis: list[str] | None = None
        self.questions: list[str] | None = None
        self.notes: str | None = None
        self.notes_span: tuple[int, int] | None = None
        self.phases: list[PhaseSlot] = []
        self.phase: tuple[int, str, list[tuple[int, str]], int] | None = None
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
                last = max([self.section_heading, *(b.end for b in self.section_blocks)])
                self.notes_span = (self.section_heading, last)
            self.section = None
            self.section_blocks = []
        if self.phase is not None:
            number, name, tasks, line = self.phase
            self.phases.append(PhaseSlot(number, name, tuple(tasks), line))
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
                for name in SECTIONS:
                    if lower.startswith(name):
                        self.section = name
                        self.section_heading = block.start
                        break
            return True
        if block.level == 3:
            m = PHASE_TEXT_RE.fullmatch(text)
            if m is not None:
                self.close(block.start)
                name = repair_double_encoding(m.group(2).strip())
                self.phase = (int(m.group(1)), name, [], block.start)
                return True
            if text[:6].lower() == "phase " and self.section is None:
                self.close(block.start)  # a malformed phase heading ends the phase
                return True
        return False

    def block(self, block: Block) -> None:
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

    def result(self, line_starts: tuple[int, ...]) -> Structure:
        self.close(len(self.lines) + 1)
        targets: dict[str, int] = {}
        phase_steps: dict[str, tuple[int, int]] = {}
        for phase in self.phases:
            for line, step in phase.tasks:
                targets.setdefault(step, line)
                phase_steps.setdefault(step, (line, phase.number))
        for line, step in self.loose:
            targets.setdefault(step, line)
        counts = Counter(step for phase in self.phases for _, step in phase.tasks)
        loose = Counter(step for _, step in self.loose if step not in counts)
        ambiguous = frozenset(
            [s for s, n in counts.items() if n > 1] + [s for s, n in loose.items() if n > 1]
        )
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
            line_starts=line_starts,
            loose=tuple(self.loose),
            ambiguous=ambiguous,
        )


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` without their endings (``\\r\\n``, ``\\r`` or ``\\n``)."""
    return normalize(text).split("\n")


def read_structure(text: str) -> Structure:
    """Parse ``text`` with the Markdown foundation and read its plan structure (not
    cached; :func:`plankit.checklist.locate.analyze` is the cached way)."""
    bom = text.startswith("\ufeff")  # a byte-order mark is not part of the first line
    doc = parse_document(text[1:] if bom else text)
    walk = _Walk(doc.source.split("\n"))
    for block in doc.blocks:
        walk.block(block)
    starts = (int(bom), *(m.end() for m in NEWLINE_RE.finditer(text)))
    return walk.result(starts)
