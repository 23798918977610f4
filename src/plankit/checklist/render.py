"""Writing plans: a new plan from phases, the starter plan, the recovery plan, and the
plain-text view that ``plankit checklist show`` prints."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plankit.checklist.model import Phase, PhaseInput, Plan, PlanTask, Progress, TaskStatus
from plankit.errors import InputError

PLAN_MARKER = "PLAN.md Contents"
"""What the cell above the plan holds once the plan system is set up."""

STARTER_PLAN = """\
# Plan: Getting Started with Sheet Agent

Goal: Learn the basic tools and workflows for working with spreadsheets

## Analysis

- Spreadsheet: [Your spreadsheet name]
- Key sheets: [List sheets you want to work with]
- Target ranges:
  - Read: [Ranges to read from]
  - Write: [Ranges to write to]
- Current state: Workspace initialized, ready for first task

## Questions for User

- What spreadsheet would you like to work with?
- What is your goal for this session?

### Phase 1: Orientation
- [ ] 1.1 List available sheets in the spreadsheet
- [ ] 1.2 Read headers from main data sheet to understand structure
- [ ] 1.3 Identify key columns and data types

### Phase 2: First Task
- [ ] 2.1 Define a specific goal with the user
- [ ] 2.2 Create a detailed plan for that goal
- [ ] 2.3 Execute the plan step by step

## Notes

This is a starter plan written by init_plan. Replace it with create_plan once the
user's goal is clear.

How to work with it:
1. get_plan shows the current plan
2. get_next_task gives the next step to do
3. start_task(step) before working on a step
4. complete_task(step) when it is finished
5. block_task(step, reason) when it cannot go on
6. review_task(step, note) when a person must check or decide
"""
"""The plan ``init_plan`` writes into an empty cell."""


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (line breaks included) made one space."""
    return " ".join(text.split())


def fallback_plan(error: str) -> str:
    """The plan ``init_plan`` returns (and does not write) when the store fails."""
    return f"""\
# Plan: Initialization Error

Goal: Recover from initialization error

## Analysis

- Error: {one_line(error) or "unknown error"}
- Action needed: Check access to the store (sharing, permissions, path) and try again

### Phase 1: Recovery
- [ ] 1.1 Verify access to the spreadsheet or file
- [ ] 1.2 Retry initialization

## Notes

init_plan hit an error and wrote nothing. Check permissions and try again.
"""


def render_new_plan(title: str, goal: str, phases: Sequence[PhaseInput | dict[str, Any]]) -> str:
    """The Markdown of a new plan: title, goal, the Analysis and Questions templates,
    the phases numbered from 1 with steps ``N.1``, ``N.2`` …, and an empty Notes."""
    title_text = one_line(title)
    goal_text = one_line(goal)
    if not title_text:
        raise InputError("the plan needs a title", code="plan-invalid")
    if not goal_text:
        raise InputError(
            "the plan needs a goal (one sentence saying what success is)", code="plan-invalid"
        )
    if not phases:
        raise InputError("the plan needs at least one phase with steps", code="plan-invalid")
    blocks: list[str] = []
    for number, raw in enumerate(phases, start=1):
        phase = PhaseInput.coerce(raw)
        name = one_line(phase.name)
        if not name:
            raise InputError(f"phase {number} has no name", code="plan-invalid")
        steps = [one_line(s) for s in phase.steps]
        if not steps:
            raise InputError(f"phase {number} ({name!r}) has no steps", code="plan-invalid")
        for index, step in enumerate(steps, start=1):
            if not step:
                raise InputError(
                    f"step {number}.{index} of phase {name!r} is empty", code="plan-invalid"
                )
        lines = [f"### Phase {number}: {name}"]
        lines += [f"- [ ] {number}.{i} {s}" for i, s in enumerate(steps, start=1)]
        blocks.append("\n".join(lines))
    body = "\n\n".join(blocks)
    return f"""\
# Plan: {title_text}

Goal: {goal_text}

## Analysis

- Spreadsheet: [spreadsheet name]
- Key sheets: [sheet names]
- Target ranges:
  - Read: [ranges to read]
  - Write: [ranges to write]
- Current state: [description]

## Questions for User

- [Any clarifying questions]

{body}

## Notes

"""


# --- the terminal view ----------------------------------------------------------------

_BOX = {
    TaskStatus.TODO: "[ ]",
    TaskStatus.DOING: "[/]",
    TaskStatus.DONE: "[x]",
    TaskStatus.BLOCKED: "[>]",
    TaskStatus.REVIEW: "[!]",
}


def progress_text(progress: Progress) -> str:
    """``5/12 done (41%)``, then the counts of the other statuses that are not zero."""
    out = f"{progress.done}/{progress.total} done ({progress.percent}%)"
    rest = [
        f"{count} {name}"
        for name, count in (
            ("doing", progress.doing),
            ("blocked", progress.blocked),
            ("review", progress.review),
            ("todo", progress.todo),
        )
        if count
    ]
    return out + (" · " + " · ".join(rest) if rest else "")


def task_text(task: PlanTask) -> str:
    """One task as ``[x] 1.2 Title ✅ 2026-01-10`` / ``[>] 3.1 Title — reason``."""
    out = f"{_BOX[task.status]} {task.step} {task.title}"
    if task.completed_date and task.status is TaskStatus.DONE:
        out += f" ✅ {task.completed_date}"
    note = task.blocked_reason or task.review_note
    if note:
        out += f" — {note}"
    return out


def _phase_text(phase: Phase) -> list[str]:
    out = [f"Phase {phase.number}: {phase.name}  [{progress_text(phase.progress)}]"]
    for task in phase.tasks:
        depth = task.step.count(".") - 1
        out.append("  " + "  " * depth + task_text(task))
    return out


def format_plan(plan: Plan) -> str:
    """The plan for a terminal: title, goal, each phase with its progress and tasks,
    overall progress, the next task and what waits for review."""
    out = [f"Plan: {plan.title or '(untitled)'}"]
    if plan.goal:
        out.append(f"Goal: {plan.goal}")
    for phase in plan.phases:
        out.append("")
        out += _phase_text(phase)
    out.append("")
    out.append(f"Overall: {progress_text(plan.progress)}")
    nxt = plan.next_task()
    if nxt is not None:
        out.append(f"Next: {nxt.step} {nxt.title}")
    reviews = plan.review_tasks()
    if reviews:
        out.append("Waiting for review: " + ", ".join(t.step for t in reviews))
    questions = plan.open_questions()
    if questions:
        out.append("")
        out.append("Questions for the user:")
        out += [f"  - {q}" for q in questions]
    return "\n".join(out)
