"""The checklist operations as MCP tools (official ``mcp`` SDK, ``MCPServer``).

:func:`register_checklist_tools` adds the tools named in :data:`TOOL_NAMES` to a
server: the spec's eight methods, any status, notes, the step in progress, and the
structural edits that keep progress.  Each tool is one
:class:`~plankit.checklist.manager.PlanManager` call; a plankit error (unknown step,
no plan, a locked workbook …) comes back as a tool error whose text says what to do.

The tools are registered through :func:`plankit.mcp.tools.add_tool`: arguments
checked before the tool runs, every failure in the servers' one error shape (a plankit
error keeps its code, its message worded for an agent: tools named, not commands), the
descriptions taken from :mod:`plankit.mcp.catalog`.  Statuses are an enum in the schema.

Results are short text or compact JSON: ``get_plan`` gives the progress of each phase,
the current and next steps, what waits for review, open questions and lint warnings,
and the Markdown only when asked (``full``).

This module imports pydantic and the MCP SDK; only ``plankit mcp`` imports it.
"""

import json
import re
from collections.abc import Callable, Collection
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from plankit.checklist.manager import PlanManager
from plankit.checklist.model import Phase, Plan, PlanTask
from plankit.checklist.render import progress_text, task_text
from plankit.errors import Diagnostic, PlankitError, diagnostics_of
from plankit.mcp.catalog import CHECKLIST
from plankit.mcp.tools import ToolFailure, add_tool, problem

T = TypeVar("T")

Step = Annotated[str, Field(description="Step number as written in the plan, e.g. 1.2 or 2.1.1")]
Reason = Annotated[str, Field(description="What the step waits for; name the sheet/range")]
Note = Annotated[str, Field(description="What a person should check or decide")]
StatusName = Literal["todo", "doing", "done", "blocked", "review"]
Status = Annotated[StatusName, Field(description="The new status")]
PhaseNumber = Annotated[int, Field(description="Phase number, e.g. 2", ge=1)]


class PhaseSpec(BaseModel):
    """One phase of a new plan."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Phase name, e.g. Data Collection")
    steps: list[str] = Field(
        description="One line per step, e.g. 'Read Orders!A2:F500 (id, date, total)'",
        min_length=1,
    )


TOOL_NAMES = tuple(tool.name for tool in CHECKLIST)
"""Every checklist tool, in the catalogue's order (core first)."""

_FOR_AGENTS = (
    (re.compile(r" \(`plankit checklist init` / `create`\)"), ""),
    (
        re.compile(r"say so: `plankit checklist create --force`, .*? in Python"),
        "call create_plan with replace=true",
    ),
    (re.compile(r"`plankit checklist lint` lists every"), "get_plan lists every"),
    (re.compile(r"`plankit checklist (\w+)`"), r"the \1 command"),
)


def for_agents(error: PlankitError) -> list[Diagnostic]:
    """A plankit error as the diagnostics an agent gets: its messages name the tools
    to call, not the ``plankit checklist`` commands a person would run."""
    out = []
    for found in diagnostics_of(error):
        message = found.message
        for pattern, replacement in _FOR_AGENTS:
            message = pattern.sub(replacement, message)
        out.append(Diagnostic(found.line, found.code, message, found.file))
    return out


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def task_json(task: PlanTask | None) -> str:
    """A task as compact JSON (fields that are empty left out), or ``null``."""
    if task is None:
        return "null"
    data = {k: v for k, v in task.to_dict().items() if v is not None}
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def plan_text(plan: Plan, *, full: bool = False) -> str:
    """The plan for an agent: progress overall and per phase, the step in progress, the
    next one, steps waiting for review or blocked, open questions, lint warnings; then
    the Markdown when ``full`` (else a line saying how to get it)."""
    from plankit.checklist.lint import finding_text, lint_plan

    out = [f"Progress: {progress_text(plan.progress)}", f"Plan: {plan.title or '(untitled)'}"]
    if plan.goal:
        out.append(f"Goal: {plan.goal}")
    for phase in plan.phases:
        out.append(f"Phase {phase.number} {phase.name}: {progress_text(phase.progress)}")
    current = plan.current_task()
    if current is not None:
        out.append(f"Current: {current.step} {current.title}")
    nxt = plan.next_task()
    out.append(f"Next: {nxt.step} {nxt.title}" if nxt else "Next: none (no todo step left)")
    for label, tasks in (
        ("Waiting for review", plan.review_tasks()),
        ("Blocked", [t for t in plan.tasks if t.status.value == "blocked"]),
    ):
        if tasks:
            out.append(f"{label}: " + "; ".join(task_text(t)[4:] for t in tasks))
    questions = plan.open_questions()
    if questions:
        out.append("Open questions: " + " | ".join(f"{i}. {q}" for i, q in enumerate(questions, 1)))
    findings = lint_plan(plan.raw)
    if findings:
        out.append(f"Warnings ({len(findings)}): the plan has lines the reader cannot use")
        out += [f"- {finding_text(f)}" for f in findings]
    if full:
        return "\n".join(out) + "\n\n" + plan.raw
    out.append("(get_plan with full=true returns the Markdown, analysis and notes included.)")
    return "\n".join(out)


def _phase_text(phase: Phase) -> str:
    steps = "; ".join(f"{t.step} {t.title}" for t in phase.tasks) or "no steps"
    return f"Phase {phase.number}: {phase.name} ({steps})"


# --- the tools ---------------------------------------------------------------------------


def register_checklist_tools(
    server: MCPServer[Any],
    manager_factory: Callable[[], PlanManager],
    names: Collection[str] | None = None,
) -> list[str]:
    """Add the checklist tools to ``server`` (only those in ``names`` when given);
    ``manager_factory`` gives the manager each call works on.  Returns the names of
    the tools added."""

    def run(action: Callable[[PlanManager], T]) -> T:
        try:
            return action(manager_factory())
        except PlankitError as exc:
            raise ToolFailure(for_agents(exc)) from None

    def where() -> str:
        return manager_factory().where

    def init_plan() -> str:
        plan = run(lambda m: m.init_plan())
        return plan_text(plan, full=True)  # the shape to follow, or the error met

    def get_plan(
        full: Annotated[
            bool,
            Field(description="true for the plan's Markdown too (analysis, notes, every step)"),
        ] = False,
    ) -> str:
        plan = run(lambda m: m.get_plan())
        if plan is None:
            return (
                f"No plan in {where()} yet; call init_plan for the starter plan, or "
                "create_plan once the goal is clear."
            )
        return plan_text(plan, full=full)

    def get_next_task() -> str:
        plan = run(lambda m: m.get_plan())
        task = plan.next_task() if plan is not None else None
        if task is None and plan is not None:
            from plankit.checklist.lint import finding_text, lint_plan

            findings = lint_plan(plan.raw)
            if findings:  # "nothing left" would be wrong: some steps are not read
                why = "no todo step was read, but the plan has problems: "
                raise ToolFailure(
                    [
                        problem(
                            "plan-unreadable",
                            why + "; ".join(finding_text(f) for f in findings[:5]),
                        )
                    ]
                )
        return task_json(task)

    def get_current_task() -> str:
        return task_json(run(lambda m: m.current_task()))

    def get_review_tasks() -> str:
        tasks = run(lambda m: m.get_review_tasks())
        return "[" + ",".join(task_json(t) for t in tasks) + "]"

    def create_plan(
        title: Annotated[str, Field(description="Short plan title")],
        goal: Annotated[str, Field(description="One sentence: what success looks like")],
        phases: Annotated[list[PhaseSpec], Field(description="Phases in order", min_length=1)],
        replace: Annotated[
            bool,
            Field(
                description="true to replace a plan that is already there; the starter "
                "plan from init_plan is replaced without it"
            ),
        ] = False,
    ) -> str:
        specs = [{"name": p.name, "steps": p.steps} for p in phases]
        plan = run(lambda m: m.create_plan(title, goal, specs, replace=replace))
        nxt = plan.next_task()
        first = f" First step: {nxt.step} {nxt.title}" if nxt else ""
        return (
            f"Created plan {plan.title!r}: {_count(len(plan.phases), 'phase')}, "
            f"{_count(len(plan.tasks), 'step')}.{first}"
        )

    def start_task(step: Step) -> str:
        return task_json(run(lambda m: m.start_task(step)))

    def complete_task(step: Step) -> str:
        return task_json(run(lambda m: m.complete_task(step)))

    def block_task(step: Step, reason: Reason) -> str:
        return task_json(run(lambda m: m.block_task(step, reason)))

    def review_task(step: Step, note: Note) -> str:
        return task_json(run(lambda m: m.review_task(step, note)))

    def set_task_status(
        step: Step,
        status: Status,
        note: Annotated[
            str | None, Field(description="Reason (blocked) or note (review); needed for those")
        ] = None,
    ) -> str:
        return task_json(run(lambda m: m.set_task_status(step, status, note)))

    def append_note(
        text: Annotated[str, Field(description="One line: a decision, finding or link")],
    ) -> str:
        run(lambda m: m.append_note(text))
        return "Note added."

    def add_step(
        text: Annotated[str, Field(description="What to do, one line, with sheet/range")],
        after: Annotated[
            str | None, Field(description="Insert after this step, e.g. 1.2 (new: 1.3)")
        ] = None,
        before: Annotated[
            str | None, Field(description="Insert before this step, taking its number")
        ] = None,
        phase: Annotated[
            int | None, Field(description="Add at the end of this phase number", ge=1)
        ] = None,
    ) -> str:
        return task_json(run(lambda m: m.add_step(text, after=after, before=before, phase=phase)))

    def remove_step(step: Step) -> str:
        task = run(lambda m: m.remove_step(step))
        return f"Removed {task.step} {task.title}; the steps after it were renumbered."

    def add_phase(
        name: Annotated[str, Field(description="Phase name, e.g. Validation")],
        steps: Annotated[list[str] | None, Field(description="One line per step, in order")] = None,
        after: Annotated[
            int | None,
            Field(description="Insert after this phase number (0: first); default: last", ge=0),
        ] = None,
    ) -> str:
        return "Added " + _phase_text(run(lambda m: m.add_phase(name, steps or [], after=after)))

    def rename_phase(
        number: PhaseNumber, name: Annotated[str, Field(description="The new name")]
    ) -> str:
        return "Renamed: " + _phase_text(run(lambda m: m.rename_phase(number, name)))

    def renumber_steps() -> str:
        plan = run(lambda m: m.renumber())
        return plan_text(plan)

    def answer_question(
        question: Annotated[
            int | str,
            Field(description="The question's number (1, 2 …) or the start of its text"),
        ],
        answer: Annotated[str, Field(description="The answer, one line")],
    ) -> str:
        return run(lambda m: m.answer_question(question, answer))

    def set_goal(goal: Annotated[str, Field(description="One sentence: what success is")]) -> str:
        return "Goal: " + run(lambda m: m.set_goal(goal))

    def set_analysis(
        spreadsheet: Annotated[str | None, Field(description="Spreadsheet name or ID")] = None,
        key_sheets: Annotated[
            list[str] | None, Field(description="Sheets that matter (replaces the list)")
        ] = None,
        read: Annotated[
            list[str] | None,
            Field(description="Ranges read, e.g. 'Orders!A2:F500 (id, total)' (replaces)"),
        ] = None,
        write: Annotated[
            list[str] | None, Field(description="Ranges written (replaces the list)")
        ] = None,
        current_state: Annotated[str | None, Field(description="What data exists now")] = None,
    ) -> str:
        fields = run(
            lambda m: m.set_analysis(
                spreadsheet=spreadsheet,
                key_sheets=key_sheets,
                read=read,
                write=write,
                current_state=current_state,
            )
        )
        return json.dumps(fields.to_dict(), ensure_ascii=False, separators=(",", ":"))

    read_only = ToolAnnotations(read_only_hint=True)
    write = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)
    edit = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)
    destructive = ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=False
    )
    tools: list[tuple[Callable[..., str], ToolAnnotations]] = [
        (get_plan, read_only),
        (
            create_plan,
            ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True),
        ),
        (get_next_task, read_only),
        (start_task, write),
        (complete_task, write),
        (set_task_status, write),
        (add_step, edit),
        (append_note, edit),
        (init_plan, write),
        (get_current_task, read_only),
        (get_review_tasks, read_only),
        (block_task, write),
        (review_task, write),
        (remove_step, destructive),
        (add_phase, edit),
        (rename_phase, write),
        (renumber_steps, write),
        (answer_question, write),
        (set_goal, write),
        (set_analysis, write),
    ]
    assert [fn.__name__ for fn, _ in tools] == list(TOOL_NAMES)
    return [
        add_tool(server, fn, annotations)
        for fn, annotations in tools
        if names is None or fn.__name__ in names
    ]
