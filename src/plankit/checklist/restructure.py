"""Changing a plan's structure and keeping its progress: steps and phases added,
removed, renamed and renumbered; questions answered; the goal and the Analysis
rewritten.

Each function takes the plan's Markdown and returns the new Markdown (and what was
made).  Only the lines concerned change: a task line that is renumbered keeps its
checkbox, its title, its date and its note; every other line keeps every byte (line
endings included).  Steps are renumbered as a person would: adding ``1.3`` after
``1.2`` makes the old ``1.3`` ``1.4`` (and its sub-step ``1.3.1`` ``1.4.1``); removing a
step closes the gap.  Text that mentions a step number ("waiting for 2.1") is not
rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from plankit.checklist.analysis import PlanAnalysis, parse_analysis, render_analysis
from plankit.checklist.errors import AmbiguousStepError, UnknownStepError
from plankit.checklist.lines import TASK_LINE_RE
from plankit.checklist.locate import analyze
from plankit.checklist.model import is_placeholder
from plankit.checklist.outline import PlanLines, outline_of
from plankit.checklist.render import one_line
from plankit.checklist.structure import PhaseSlot, Structure
from plankit.errors import InputError

_STEP_RE = re.compile(r"\d+\.\d+(?:\.\d+)?")
_PHASE_HEAD_RE = re.compile(r"([ \t]*#{3}[ \t]+(?:Phase|phase|PHASE)[ \t]+)(\d+)(:[ \t]*)(.*)")
_ANSWER_RE = re.compile(r"[ \t]+—[ \t]+Answer:.*$", re.IGNORECASE)
_GOAL_RE = re.compile(r"(?:\*\*|__)?goal:(?:\*\*|__)?", re.IGNORECASE)


# --- steps -------------------------------------------------------------------------------


def _phase_of(found: Structure, line: int) -> PhaseSlot:
    for phase in found.phases:
        if any(task_line == line for task_line, _ in phase.tasks):
            return phase
    raise AssertionError(line)  # pragma: no cover - callers pass task lines


def _find_step(found: Structure, step: str) -> int:
    """The line of the phase task ``step``; raises for an unknown or ambiguous step."""
    step = step.strip()
    lines = [line for phase in found.phases for line, s in phase.tasks if s == step]
    if not lines:
        raise UnknownStepError(step, found.steps)
    if len(lines) > 1:
        raise AmbiguousStepError(step, lines)
    return lines[0]


def _find_phase(found: Structure, number: int) -> PhaseSlot:
    slots = [phase for phase in found.phases if phase.number == number]
    if not slots:
        known = ", ".join(str(p.number) for p in found.phases) or "none"
        raise InputError(f"no Phase {number} in the plan (phases: {known})", code="unknown-phase")
    if len(slots) > 1:
        lines = " and ".join(str(p.line) for p in slots)
        raise InputError(
            f"Phase {number} is ambiguous: the headings on lines {lines} both have that "
            "number; renumber them first",
            code="ambiguous-phase",
        )
    return slots[0]


def _renumber(
    lines: PlanLines,
    tasks: Sequence[tuple[int, str]],
    change: Callable[[tuple[int, ...]], tuple[int, ...] | None],
) -> None:
    """Give each task line of ``tasks`` the step ``change(parts)`` (None: unchanged)."""
    for line, step in tasks:
        parts = tuple(int(p) for p in step.split("."))
        new = change(parts)
        if new is None or new == parts:
            continue
        content = lines.content(line)
        m = TASK_LINE_RE.fullmatch(content)
        assert m is not None and m.group(4) == step
        lines.set(line, content[: m.start(4)] + ".".join(map(str, new)) + content[m.end(4) :])


def _shift(
    level: int, prefix: tuple[int, ...], start: int, by: int, *, only: int | None = None
) -> Callable[[tuple[int, ...]], tuple[int, ...] | None]:
    """A renumbering: steps under ``prefix`` whose number at ``level`` is ``start`` or
    more (exactly ``only`` when given) move by ``by``, their sub-steps with them."""

    def change(parts: tuple[int, ...]) -> tuple[int, ...] | None:
        if len(parts) <= level or parts[:level] != prefix or parts[level] < start:
            return None
        if only is not None and parts[level] != only:
            return None
        return (*parts[:level], parts[level] + by, *parts[level + 1 :])

    return change


def _clean_step_text(text: str) -> str:
    cleaned = one_line(text)
    if not cleaned:
        raise InputError("the step needs a text (one line saying what to do)", code="plan-invalid")
    return cleaned


def add_step(
    markdown: str,
    text: str,
    *,
    after: str | None = None,
    before: str | None = None,
    phase: int | None = None,
) -> tuple[str, str]:
    """Add a todo step; return the new Markdown and the new step's number.

    Exactly one place: ``after`` a step (the new one is numbered next, at the same
    level), ``before`` a step (the new one takes its number), or at the end of
    ``phase``.  The steps that follow are renumbered.
    """
    if sum(x is not None for x in (after, before, phase)) != 1:
        raise InputError(
            "say where the step goes: after a step, before a step, or at the end of a phase",
            code="bad-position",
        )
    title = _clean_step_text(text)
    found = analyze(markdown)
    lines = PlanLines(markdown)
    outline = outline_of(markdown)
    if phase is not None:
        slot = _find_phase(found, int(phase))
        top = [(ln, s) for ln, s in slot.tasks if s.count(".") == 1]
        numbers = [int(s.split(".")[1]) for _, s in top if int(s.split(".")[0]) == slot.number]
        new_step = f"{slot.number}.{max(numbers, default=0) + 1}"
        if top:
            last_line, _ = top[-1]
            m = TASK_LINE_RE.fullmatch(lines.content(last_line))
            assert m is not None
            indent, bullet = m.group(1), m.group(2)
            at = max(outline.item_end.get(ln, ln) for ln, _ in top) + 1
        else:
            indent, bullet, at = "", "-", slot.line + 1
        lines.insert(at, [f"{indent}{bullet} [ ] {new_step} {title}"])
        return lines.text(), new_step
    anchor = (after if after is not None else before) or ""
    line = _find_step(found, anchor)
    slot = _phase_of(found, line)
    parts = tuple(int(p) for p in anchor.strip().split("."))
    level = len(parts) - 1
    new_parts = (*parts[:level], parts[level] + 1) if after is not None else parts
    m = TASK_LINE_RE.fullmatch(lines.content(line))
    assert m is not None
    indent, bullet = m.group(1), m.group(2)
    at = outline.item_end.get(line, line) + 1 if after is not None else line
    _renumber(lines, slot.tasks, _shift(level, parts[:level], new_parts[level], 1))
    new_step = ".".join(map(str, new_parts))
    lines.insert(at, [f"{indent}{bullet} [ ] {new_step} {title}"])
    return lines.text(), new_step


def remove_step(markdown: str, step: str) -> str:
    """Remove a step (its sub-steps and its indented lines with it) and renumber the
    steps after it."""
    found = analyze(markdown)
    line = _find_step(found, step)
    slot = _phase_of(found, line)
    outline = outline_of(markdown)
    lines = PlanLines(markdown)
    parts = tuple(int(p) for p in step.strip().split("."))
    level = len(parts) - 1
    end = outline.item_end.get(line, line)
    removed = {ln for ln, _ in slot.tasks if line <= ln <= end}
    _renumber(
        lines,
        [(ln, s) for ln, s in slot.tasks if ln not in removed],
        _shift(level, parts[:level], parts[level] + 1, -1),
    )
    lines.delete(line, end)
    return lines.text()


def renumber(markdown: str) -> str:
    """Number the phases 1, 2, 3 … and their steps N.1, N.2 … (sub-steps N.M.1 …) in
    document order: duplicate steps, gaps and steps listed under the wrong phase are
    gone, every status, date and note kept."""
    found = analyze(markdown)
    lines = PlanLines(markdown)
    for number, slot in enumerate(found.phases, start=1):
        m = _PHASE_HEAD_RE.fullmatch(lines.content(slot.line))
        if m is not None and int(m.group(2)) != number:
            lines.set(slot.line, f"{m.group(1)}{number}{m.group(3)}{m.group(4)}")
        counters = [0, 0]
        for line, step in slot.tasks:
            depth = min(step.count("."), 2)  # 1: N.M, 2: N.M.S
            counters[depth - 1] += 1
            if depth == 1:
                counters[1] = 0
            new = (number, *counters[:depth]) if depth == 1 or counters[0] else None
            if new is None:  # a sub-step before any step: make it a step
                counters[0] += 1
                new = (number, counters[0])
            content = lines.content(line)
            hit = TASK_LINE_RE.fullmatch(content)
            assert hit is not None and hit.group(4) == step
            text = ".".join(map(str, new))
            if text != step:
                lines.set(line, content[: hit.start(4)] + text + content[hit.end(4) :])
    return lines.text()


# --- phases ------------------------------------------------------------------------------


def _phase_block(number: int, name: str, steps: Sequence[str]) -> list[str]:
    out = [f"### Phase {number}: {name}"]
    out += [f"- [ ] {number}.{i} {_clean_step_text(s)}" for i, s in enumerate(steps, start=1)]
    return out


def add_phase(
    markdown: str, name: str, steps: Sequence[str] = (), *, after: int | None = None
) -> tuple[str, int]:
    """Add a phase (with todo steps) after phase ``after`` (0: first; None: last);
    the phases after it and their steps are renumbered.  Returns the new Markdown and
    the new phase's number."""
    title = one_line(name)
    if not title:
        raise InputError("the phase needs a name", code="plan-invalid")
    if isinstance(steps, str):
        raise InputError("steps must be a list of lines, not one string", code="plan-invalid")
    found = analyze(markdown)
    lines = PlanLines(markdown)
    outline = outline_of(markdown)
    numbers = [p.number for p in found.phases]
    if after is None:
        number = max(numbers, default=0) + 1
        following: list[PhaseSlot] = []
    else:
        if after != 0:
            _find_phase(found, int(after))
        number = int(after) + 1
        following = [p for p in found.phases if p.number >= number]
    block = _phase_block(number, title, steps)
    for slot in following:
        content = lines.content(slot.line)
        m = _PHASE_HEAD_RE.fullmatch(content)
        if m is not None:
            lines.set(slot.line, f"{m.group(1)}{slot.number + 1}{m.group(3)}{m.group(4)}")
        _renumber(lines, slot.tasks, _shift(0, (), slot.number, 1, only=slot.number))
    if following:
        at = min(p.line for p in following)
        lines.insert(at, [*block, ""])
        return lines.text(), number
    # after the last phase: before the heading that ends it (Notes …), or at the end
    last = max((p.line for p in found.phases), default=0)
    ends = [ln for ln, level, _ in outline.headings if ln > last and level <= 3]
    if ends:
        at = ends[0]
        gap = [] if lines.blank(at - 1) else [""]
        lines.insert(at, [*gap, *block, ""])
    else:
        tail = lines.count
        gap = [] if tail == 0 or lines.blank(tail) else [""]
        lines.insert(tail + 1, [*gap, *block])
    return lines.text(), number


def rename_phase(markdown: str, number: int, name: str) -> str:
    """Give phase ``number`` a new name (its steps and their progress are kept)."""
    title = one_line(name)
    if not title:
        raise InputError("the phase needs a name", code="plan-invalid")
    found = analyze(markdown)
    slot = _find_phase(found, int(number))
    lines = PlanLines(markdown)
    m = _PHASE_HEAD_RE.fullmatch(lines.content(slot.line))
    if m is None:  # pragma: no cover - a phase heading always matches
        raise InputError(f"line {slot.line} is not a phase heading", code="unknown-phase")
    lines.set(slot.line, f"{m.group(1)}{m.group(2)}{m.group(3)}{title}")
    return lines.text()


# --- questions, goal, analysis ----------------------------------------------------------


def answer_question(markdown: str, question: int | str, answer: str) -> tuple[str, str]:
    """Write ``answer`` after the question (`` — Answer: …``; a previous answer is
    replaced).  ``question`` is its 1-based number or the start of its text.  Returns
    the new Markdown and the question as now written."""
    reply = one_line(answer)
    if not reply:
        raise InputError("the answer is empty", code="empty-answer")
    outline = outline_of(markdown)
    lines = PlanLines(markdown)
    found = [
        (item, one_line(" ".join(lines.content(ln) for ln in range(item[0], item[1] + 1))))
        for item in outline.question_items
    ]  # a template placeholder ("[Any clarifying questions]") is not a question
    real = [(item, text) for item, text in found if not is_placeholder(text.lstrip("-*+ "))]
    items, texts = [item for item, _ in real], [text for _, text in real]
    if not items:
        held = f" (only the placeholder {found[0][1].lstrip('-*+ ')})" if found else ""
        raise InputError(
            f"the plan has no questions to answer{held}; write them under Questions for User",
            code="no-question",
        )
    index: int | None = None
    if isinstance(question, int) or str(question).strip().isdigit():
        index = int(question) - 1
        if not 0 <= index < len(items):
            raise InputError(
                f"there is no question {question}; the plan has {len(items)}",
                code="no-question",
            )
    else:
        wanted = one_line(str(question)).lower().lstrip("-*+ ")
        hits = [i for i, t in enumerate(texts) if t.lower().lstrip("-*+ ").startswith(wanted)]
        if len(hits) != 1:
            listing = "; ".join(f"{i + 1}. {t.lstrip('-*+ ')[:60]}" for i, t in enumerate(texts))
            why = "matches no question" if not hits else "matches more than one question"
            raise InputError(f"{question!r} {why}; give its number ({listing})", code="no-question")
        index = hits[0]
    first, last = items[index]
    content = _ANSWER_RE.sub("", lines.content(last).rstrip())
    lines.set(last, f"{content} — Answer: {reply}")
    written = one_line(" ".join(lines.content(ln) for ln in range(first, last + 1)))
    return lines.text(), written.lstrip("-*+ ")


def set_goal(markdown: str, goal: str) -> str:
    """Replace the ``Goal:`` paragraph (or add one under the title)."""
    text = one_line(goal)
    if not text:
        raise InputError(
            "the goal is empty; say in one sentence what success is", code="plan-invalid"
        )
    outline = outline_of(markdown)
    lines = PlanLines(markdown)
    for first, last, body in outline.paragraphs:
        m = _GOAL_RE.match(body)
        if m is not None:
            if last > first:
                lines.delete(first + 1, last)
            lines.set(first, f"{lines.content(first)[: _goal_prefix(lines.content(first))]}{text}")
            return lines.text()
    title = next((ln for ln, level, t in outline.headings if level == 1), None)
    at = (title + 1) if title is not None else 1
    lines.insert(at, ["", f"Goal: {text}"] if title is not None else [f"Goal: {text}", ""])
    return lines.text()


def _goal_prefix(line: str) -> int:
    m = re.match(r"[ \t]*(?:\*\*|__)?goal:(?:\*\*|__)?[ \t]*", line, re.IGNORECASE)
    return m.end() if m is not None else 0


def set_analysis(
    markdown: str,
    *,
    spreadsheet: str | None = None,
    key_sheets: Sequence[str] | None = None,
    read: Sequence[str] | None = None,
    write: Sequence[str] | None = None,
    current_state: str | None = None,
) -> tuple[str, PlanAnalysis]:
    """Set fields of the Analysis section (the others are kept, lines the fields do
    not cover too); the section is added before the first phase when missing.  Returns
    the new Markdown and the fields as now written."""
    for value in (key_sheets, read, write):
        if isinstance(value, str):
            raise InputError(
                "key sheets and ranges are lists of strings, not one string", code="plan-invalid"
            )
    found = analyze(markdown)
    current = parse_analysis(found.analysis) or PlanAnalysis()
    updated = PlanAnalysis(
        spreadsheet=one_line(spreadsheet) if spreadsheet is not None else current.spreadsheet,
        key_sheets=tuple(one_line(s) for s in key_sheets if one_line(s))
        if key_sheets is not None
        else current.key_sheets,
        read=tuple(one_line(r) for r in read if one_line(r)) if read is not None else current.read,
        write=tuple(one_line(w) for w in write if one_line(w))
        if write is not None
        else current.write,
        current_state=(one_line(current_state) or None)
        if current_state is not None
        else current.current_state,
        other=current.other,
    )
    body = render_analysis(updated)
    outline = outline_of(markdown)
    lines = PlanLines(markdown)
    if outline.analysis is not None:
        heading, last = outline.analysis
        if last > heading:
            lines.delete(heading + 1, last)
        lines.insert(heading + 1, ["", *body])
    else:
        firsts = [p.line for p in found.phases]
        questions = [
            ln for ln, lvl, t in outline.headings if lvl == 2 and t.lower().startswith("questions")
        ]
        at = min([*questions, *firsts], default=lines.count + 1)
        lines.insert(at, ["## Analysis", "", *body, ""])
    return lines.text(), updated
