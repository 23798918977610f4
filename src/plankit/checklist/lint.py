"""What a plan's reader cannot see: the findings of ``plankit checklist lint``.

The parser is strict on purpose (it reads what the spec's regular expressions read),
so a plan written a little differently loses steps without a word: ``## Phase 1:``
is not a phase, ``1. [ ] 1.4`` and ``- [ ]  1.8`` are not tasks.  :func:`lint_plan`
says so, line by line, and why:

- ``duplicate-step``: two tasks share a step number (updates by step refuse it);
- ``duplicate-phase``: two phases share a number;
- ``phase-heading-level``: ``## Phase 1: …`` or ``#### Phase 1: …`` (phases are level 3);
- ``phase-heading-format``: a heading that starts with "Phase" but has no number, no
  colon or no name (``### Phase two: …``);
- ``task-not-read``: a line that looks like a task but is not read, with the reason
  (a numbered list, two spaces after the checkbox, no step number, a block quote …);
- ``outside-phase``: a task line that is not under a ``### Phase N:`` heading;
- ``step-phase-mismatch``: step ``2.1`` listed under Phase 1;
- ``numbering-gap``: a step or phase number skipped, or out of order;
- ``no-tasks``: the plan has no task at all (and how many lines looked like one).

Task-like lines inside fenced code blocks are reported only when the plan has no task
at all (a fence is the usual way to show an example).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from plankit.checklist.lines import PHASE_TEXT_RE, SECTIONS
from plankit.checklist.locate import analyze
from plankit.checklist.structure import Structure
from plankit.errors import Diagnostic
from plankit.markdown.tree import (
    Block,
    Fence,
    Heading,
    ListBlock,
    OtherBlock,
    parse_document,
)

__all__ = ["finding_text", "lint_plan"]

_TASK_LIKE_RE = re.compile(
    r"(?P<indent>(?:[ \t]*>)*[ \t]*)(?P<marker>[-*+]|\d{1,9}[.)])?(?P<gap1>[ \t]*)"
    r"\[(?P<box>[^\]]?)\](?P<gap2>[ \t]*)(?P<step>\d+(?:\.\d+)*\.?)?(?P<gap3>[ \t]*)(?P<title>.*)"
)
"""A line that looks like a task, however badly written (use with ``fullmatch``)."""
_NUMBERED_RE = re.compile(r"[ \t]*[-*+][ \t]+(?P<step>\d+\.\d+(?:\.\d+)?)[ \t]+\S.*")
"""``- 1.2 Title``: a numbered step without a checkbox."""
_PHASE_WORD_RE = re.compile(r"phase\b", re.IGNORECASE)
_KIND_NAMES = {
    "code_block": "an indented code block (4 spaces or a tab before it)",
    "html_block": "an HTML block",
    "blockquote": "a block quote (a line starting with `>`)",
}


@dataclass(frozen=True, slots=True)
class _Context:
    """Where a top-level block is: in a phase, a section, after another heading."""

    kind: str
    """``phase``, ``section``, ``heading``, ``closed`` (after a heading that looks like
    a phase heading but is not one) or ``start`` (before any heading)."""
    line: int = 0
    """The heading that set the context."""
    label: str = ""
    """The phase number, the section name or the heading's text."""


def finding_text(finding: Diagnostic) -> str:
    """One finding as ``line 5: duplicate-step …`` (without a line when it has none)."""
    where = f"line {finding.line}: " if finding.line > 0 else ""
    return f"{where}{finding.code} {finding.message}"


def lint_plan(markdown: str) -> list[Diagnostic]:
    """Every finding about ``markdown`` (see the module docstring), sorted by line; []
    for a plan the reader sees completely.  Lines are 1-based lines of the text."""
    found = analyze(markdown)
    text = markdown[1:] if markdown.startswith("\ufeff") else markdown
    doc = parse_document(text)
    lines = doc.source.split("\n")
    out: list[Diagnostic] = []
    read = {line for phase in found.phases for line, _ in phase.tasks}
    contexts = _contexts(doc.blocks, out)
    containers = _Containers(doc.blocks)
    in_fences: list[int] = []
    looked = 0
    for index, line_text in enumerate(lines):
        line = index + 1
        if line in read:
            continue
        m = _TASK_LIKE_RE.fullmatch(line_text)
        numbered = None if m is not None else _NUMBERED_RE.fullmatch(line_text)
        if m is None and numbered is None:
            continue
        kind = containers.kind(line)
        if kind == "fence":
            in_fences.append(line)
            continue
        context = _context_of(contexts, line)
        if numbered is not None:
            if context.kind == "phase" and kind is None:
                looked += 1
                out.append(
                    _not_read(
                        line,
                        f"step {numbered.group('step')} has no checkbox; write "
                        f"`- [ ] {numbered.group('step')} …`",
                    )
                )
            continue
        assert m is not None
        finding = _finding(m, line, kind, context, line in containers.items)
        if finding is not None:
            looked += 1
            out.append(finding)
    out += _numbering(found)
    if not found.phases or not any(phase.tasks for phase in found.phases):
        out.append(_no_tasks(found, looked, in_fences))
    return sorted(out)


def _not_read(line: int, why: str) -> Diagnostic:
    return Diagnostic(line, "task-not-read", f"this line looks like a task but is not read: {why}")


def _finding(
    m: re.Match[str], line: int, kind: str | None, context: _Context, is_item: bool
) -> Diagnostic | None:
    """The finding for a task-like line that is not read, or None when the line is
    fine where it is (a plain checkbox item in Notes, say)."""
    step = (m.group("step") or "").rstrip(".")
    if kind is not None:
        return _not_read(line, f"it is inside {_KIND_NAMES.get(kind, kind)}")
    if context.kind == "section":
        if not step:
            return None  # a checklist in Notes or Questions is not a plan step
        return Diagnostic(
            line,
            "outside-phase",
            f"step {step} is in the {context.label} section (line {context.line}), so it "
            "is not read; steps belong under a `### Phase N: Name` heading",
        )
    why = _shape(m)
    if why is not None:
        return _not_read(line, why)
    if not is_item:
        return _not_read(
            line,
            "it continues the paragraph or list item above it instead of starting a list "
            "item (check its indentation, or put a blank line above it)",
        )
    if context.kind == "closed":
        return Diagnostic(
            line,
            "outside-phase",
            f"step {step} is under the heading on line {context.line}, which is not read "
            "as a phase heading (see that line)",
        )
    if context.kind in ("start", "heading"):
        where = (
            "before the first phase heading"
            if context.kind == "start"
            else f"under the heading {context.label!r} (line {context.line})"
        )
        return Diagnostic(
            line,
            "outside-phase",
            f"step {step} is {where}, not under a `### Phase N: Name` heading, so it is not read",
        )
    return _not_read(line, "the Markdown around it is not read as a list of tasks")


def _shape(m: re.Match[str]) -> str | None:
    """What is wrong with the way a task-like line is written, or None."""
    marker = m.group("marker")
    step = m.group("step") or ""
    example = f"- [ ] {step.rstrip('.') or '1.1'} …"
    if marker is None:
        return f"there is no `-` bullet before the checkbox; write `{example}`"
    if marker[0].isdigit():
        return (
            f"it is a numbered list item (`{marker}`); only `-`, `*` and `+` bullets are "
            f"read as tasks: write `{example}`"
        )
    if m.group("gap1") != " ":
        return f"write exactly one space between `{marker}` and `[`: `{example}`"
    if m.group("box") == "":
        return f"the checkbox is empty (`[]`); write `[ ]`: `{example}`"
    if not step:
        return "there is no step number after the checkbox; write `- [ ] 1.2 Title`"
    gap2 = m.group("gap2")
    if gap2 != " ":
        what = (
            "no space" if not gap2 else f"{len(gap2)} spaces" if gap2.strip(" ") == "" else "a tab"
        )
        return f"{what} between `]` and the step; write exactly one space: `{example}`"
    if step.endswith("."):
        return f"write the step without a final `.`: `- [ ] {step[:-1]} …`"
    parts = step.split(".")
    if len(parts) == 1:
        return f"step {step!r} needs a phase and a step number, like `{step}.1`"
    if len(parts) > 3:
        return f"step {step} has {len(parts)} levels; at most three are read (1.2.3)"
    if not m.group("title").strip():
        return f"step {step} has no title after the number"
    if not m.group("gap3"):
        return f"write a space between the step number and the title: `- [ ] {step} …`"
    return None


# --- where each line is ------------------------------------------------------------------


class _Containers:
    """For each line: the block that keeps it from being read (a fence, indented code,
    HTML, a block quote), and which lines start list items."""

    def __init__(self, blocks: Sequence[Block]) -> None:
        self.spans: list[tuple[int, int, str]] = []
        self.items: set[int] = set()
        self._collect(blocks)
        self.spans.sort()
        self.starts = [s for s, _, _ in self.spans]

    def _collect(self, blocks: Iterable[Block]) -> None:
        for block in blocks:
            if isinstance(block, Fence):
                self.spans.append((block.start, block.end, "fence"))
            elif isinstance(block, OtherBlock):
                if block.kind in _KIND_NAMES:
                    self.spans.append((block.start, block.end, block.kind))
                    if block.kind == "blockquote":
                        continue  # everything inside a quote is in the quote
                self._collect(block.children)
            elif isinstance(block, ListBlock):
                for item in block.items:
                    self.items.add(item.start)
                    self._collect(item.children)

    def kind(self, line: int) -> str | None:
        """The outermost container holding ``line`` that hides tasks, or None."""
        i = bisect.bisect_right(self.starts, line)
        best: tuple[int, int, str] | None = None
        for start, end, kind in self.spans[:i]:
            if start <= line <= end and (best is None or start < best[0]):
                best = (start, end, kind)
        return best[2] if best is not None else None


def _contexts(blocks: Sequence[Block], out: list[Diagnostic]) -> list[tuple[int, _Context]]:
    """(first line, context) of each top-level block, as the structure reader sees it;
    findings about headings that look like phase headings are added to ``out``."""
    context = _Context("start")
    result: list[tuple[int, _Context]] = []
    for block in blocks:
        if isinstance(block, Heading):
            context = _heading(block, context, out)
        result.append((block.start, context))
    return result


def _heading(block: Heading, context: _Context, out: list[Diagnostic]) -> _Context:
    text = block.text
    phase = PHASE_TEXT_RE.fullmatch(text)
    looks_like_phase = _PHASE_WORD_RE.match(text) is not None
    if looks_like_phase and block.level != 3:
        hashes = "#" * block.level
        out.append(
            Diagnostic(
                block.start,
                "phase-heading-level",
                f"'{hashes} {text}' is a level-{block.level} heading; a phase is a level-3 "
                f"heading, `### {text}`, so its steps are not read as this phase's",
            )
        )
    elif looks_like_phase and phase is None:
        out.append(Diagnostic(block.start, "phase-heading-format", _phase_format(text)))
    if block.level <= 2:
        lower = text.lower()
        if block.level == 2:
            for name in SECTIONS:
                if lower.startswith(name):
                    return _Context("section", block.start, name.capitalize())
        return _Context("heading" if block.level == 2 else "start", block.start, text)
    if block.level == 3:
        if phase is not None:
            return _Context("phase", block.start, phase.group(1))
        if text[:6].lower() == "phase " and context.kind != "section":
            return _Context("closed", block.start, text)
    return context


def _phase_format(text: str) -> str:
    m = re.match(r"(?i)phase\s*(\S*)\s*(:?)\s*(.*)", text)
    assert m is not None
    number, colon, name = m.groups()
    if not number.rstrip(":").isdigit():
        fix = "### Phase 2: Name"
        return (
            f"'### {text}' is not read as a phase: it needs a number in digits "
            f"(`{fix}`), so the steps under it are not read"
        )
    if not colon and not number.endswith(":"):
        return (
            f"'### {text}' is not read as a phase: write a colon after the number "
            f"(`### Phase {number.rstrip(':')}: {name or 'Name'}`)"
        )
    return f"'### {text}' is not read as a phase: it needs a name after the colon"


def _context_of(contexts: list[tuple[int, _Context]], line: int) -> _Context:
    i = bisect.bisect_right([start for start, _ in contexts], line) - 1
    return contexts[i][1] if i >= 0 else _Context("start")


# --- numbers -----------------------------------------------------------------------------


def _numbering(found: Structure) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    seen: dict[str, int] = {}
    for phase in found.phases:
        for line, step in phase.tasks:
            if step in seen:
                out.append(
                    Diagnostic(
                        line,
                        "duplicate-step",
                        f"step {step} is also on line {seen[step]}; give each step its own "
                        "number (updates by step refuse a number used twice)",
                    )
                )
            else:
                seen[step] = line
    phase_lines = [phase.line for phase in found.phases]
    out += _sequence(
        [(n, line) for n, line in zip([p.number for p in found.phases], phase_lines, strict=True)],
        lambda n: f"Phase {n}",
        "phases",
        duplicate_code="duplicate-phase",
    )
    for phase, heading in zip(found.phases, phase_lines, strict=True):
        groups: dict[tuple[str, ...], list[tuple[int, int]]] = {}
        for line, step in phase.tasks:
            parts = tuple(step.split("."))
            if int(parts[0]) != phase.number:
                out.append(
                    Diagnostic(
                        line,
                        "step-phase-mismatch",
                        f"step {step} is listed under Phase {phase.number} (line {heading}); "
                        f"its steps are numbered {phase.number}.1, {phase.number}.2 …",
                    )
                )
                continue
            groups.setdefault(parts[:-1], []).append((int(parts[-1]), line))
        for parent, items in groups.items():
            prefix = ".".join(parent)
            out += _sequence(
                items,
                lambda n, prefix=prefix: f"{prefix}.{n}",
                f"the steps of Phase {phase.number}"
                if len(parent) == 1
                else f"the sub-steps of {prefix}",
                duplicate_code=None,
            )
    return out


def _sequence(
    items: list[tuple[int, int]],
    name: object,
    what: str,
    *,
    duplicate_code: str | None,
) -> list[Diagnostic]:
    """Findings for numbers that should run 1, 2, 3 … in document order."""
    label = name if callable(name) else str
    out: list[Diagnostic] = []
    expected = 1
    seen: dict[int, int] = {}
    for number, line in items:
        if number in seen:
            if duplicate_code is not None:
                out.append(
                    Diagnostic(
                        line,
                        duplicate_code,
                        f"{label(number)} is also on line {seen[number]}; give each its own number",
                    )
                )
            continue
        seen[number] = line
        if number > expected:
            missing = (
                label(expected)
                if number == expected + 1
                else (f"{label(expected)} to {label(number - 1)}")
            )
            first = expected == 1 and len(seen) == 1
            gap = (
                f"{what} start at {label(number)} (no {missing})"
                if first
                else f"{label(number)} follows {label(expected - 1)} (no {missing})"
            )
            out.append(Diagnostic(line, "numbering-gap", gap))
        elif number < expected:
            out.append(
                Diagnostic(
                    line,
                    "numbering-gap",
                    f"{label(number)} comes after {label(expected - 1)}; number {what} in order",
                )
            )
            continue
        expected = number + 1
    return out


def _no_tasks(found: Structure, looked: int, in_fences: list[int]) -> Diagnostic:
    if looked or in_fences:
        parts = []
        if looked:
            parts.append(
                f"{looked} line that looks like a task"
                if looked == 1
                else f"{looked} lines that look like tasks"
            )
        if in_fences:
            lines = ", ".join(str(n) for n in in_fences[:5]) + (", …" if len(in_fences) > 5 else "")
            parts.append(
                f"{len(in_fences)} inside fenced code blocks (line{'s' * (len(in_fences) > 1)} "
                f"{lines}); take the plan out of the ``` fence"
            )
        return Diagnostic(
            0,
            "no-tasks",
            "the plan has no task that can be read, but "
            + " and ".join(parts)
            + " (see the other findings); until they are fixed, an agent sees nothing left "
            "to do",
        )
    if not found.phases:
        why = "no `### Phase N: Name` heading and no task line"
    else:
        why = "phases but no task line (`- [ ] 1.1 Title`) under them"
    return Diagnostic(0, "no-tasks", f"the plan has {why}")
