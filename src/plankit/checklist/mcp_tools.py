"""The checklist operations as MCP tools (official ``mcp`` SDK, ``MCPServer``).

:func:`register_checklist_tools` adds ten tools to a server: the spec's eight methods
plus ``append_note`` and ``set_task_status``.  Each tool is one
:class:`~plankit.checklist.manager.PlanManager` call; a plankit error (unknown step,
no plan, a locked workbook …) comes back as a tool error whose text says what to do.
Results are short text or compact JSON, to keep an agent's context small.

This module imports pydantic and the MCP SDK; only ``plankit mcp`` imports it.
"""

import json
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

from plankit.checklist.manager import PlanManager
from plankit.checklist.model import Plan, PlanTask
from plankit.checklist.render import progress_text
from plankit.errors import PlankitError

T = TypeVar("T")

Step = Annotated[str, Field(description="Step number as written in the plan, e.g. 1.2 or 2.1.1")]
Reason = Annotated[str, Field(description="What the step waits for; name the sheet/range")]
Note = Annotated[str, Field(description="What a person should check or decide")]
Status = Annotated[str, Field(description="todo, doing, done, blocked or review")]


class PhaseSpec(BaseModel):
    """One phase of a new plan."""

    name: str = Field(description="Phase name, e.g. Data Collection")
    steps: list[str] = Field(
        description="One line per step, e.g. 'Read Orders!A2:F500 (id, date, total)'",
        min_length=1,
    )


TOOL_NAMES = (
    "init_plan",
    "get_plan",
    "get_next_task",
    "get_review_tasks",
    "create_plan",
    "start_task",
    "complete_task",
    "block_task",
    "review_task",
    "append_note",
    "set_task_status",
)
"""The tools :func:`register_checklist_tools` adds, in order."""


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def task_json(task: PlanTask | None) -> str:
    """A task as compact JSON (fields that are empty left out), or ``null``."""
    if task is None:
        return "null"
    data = {k: v for k, v in task.to_dict().items() if v is not None}
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def plan_text(plan: Plan) -> str:
    """A progress line, the next step, the lint warnings, then the plan's Markdown."""
    from plankit.checklist.lint import finding_text, lint_plan

    head = [f"Progress: {progress_text(plan.progress)}"]
    nxt = plan.next_task()
    head.append(f"Next: {nxt.step} {nxt.title}" if nxt else "Next: none (no todo step left)")
    findings = lint_plan(plan.raw)
    if findings:
        head.append(f"Warnings ({len(findings)}): the plan has lines the reader cannot use")
        head += [f"- {finding_text(f)}" for f in findings]
    return "\n".join(head) + "\n\n" + plan.raw


def register_checklist_tools(
    server: MCPServer[Any], manager_factory: Callable[[], PlanManager]
) -> list[str]:
    """Add the checklist tools to ``server``; ``manager_factory`` gives the manager
    each call works on.  Returns the names of the tools added."""

    def run(action: Callable[[PlanManager], T]) -> T:
        try:
            return action(manager_factory())
        except PlankitError as exc:
            raise ToolError(str(exc)) from None

    def where() -> str:
        return manager_factory().cell

    def init_plan() -> str:
        plan = run(lambda m: m.init_plan())
        return plan_text(plan)

    def get_plan() -> str:
        plan = run(lambda m: m.get_plan())
        if plan is None:
            return (
                f"No plan in {where()} yet. Call init_plan for the starter plan, or "
                "create_plan once the goal is clear."
            )
        return plan_text(plan)

    def get_next_task() -> str:
        return task_json(run(lambda m: m.get_next_task()))

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

    def append_note(
        text: Annotated[str, Field(description="One line: a decision, finding or link")],
    ) -> str:
        run(lambda m: m.append_note(text))
        return "Note added."

    def set_task_status(step: Step, status: Status, note: Reason | None = None) -> str:
        return task_json(run(lambda m: m.set_task_status(step, status, note)))

    read = ToolAnnotations(read_only_hint=True)
    write = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)
    tools: list[tuple[Callable[..., str], str, ToolAnnotations]] = [
        (
            init_plan,
            "Set up the plan store and return the plan. Safe to repeat: an existing plan is "
            "returned unchanged; an empty store gets a starter plan.",
            ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True),
        ),
        (get_plan, "Return the plan: progress, next step, then its Markdown.", read),
        (
            get_next_task,
            "Return the next todo step as JSON (blocked and review steps are skipped), or "
            "null when none is left.",
            read,
        ),
        (get_review_tasks, "Return the steps waiting for a person's review, as JSON.", read),
        (
            create_plan,
            "Write a new plan: title, goal, phases of steps (numbered N.1, N.2 … for you). "
            "Replaces the starter plan; any other plan only with replace=true.",
            ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True),
        ),
        (start_task, "Mark a step in progress [/] before working on it.", write),
        (complete_task, "Mark a step done [x]; today's date is added.", write),
        (block_task, "Mark a step blocked [>] with the reason it cannot go on.", write),
        (review_task, "Mark a step as needing a person's review [!] with a note.", write),
        (
            append_note,
            "Add one line to the plan's Notes.",
            ToolAnnotations(read_only_hint=False, destructive_hint=False),
        ),
        (
            set_task_status,
            "Set any status (todo, doing, done, blocked, review), e.g. to reopen a step.",
            write,
        ),
    ]
    for fn, description, annotations in tools:
        server.add_tool(
            fn,
            name=fn.__name__,
            description=description,
            annotations=annotations,
            structured_output=False,
        )
    return [fn.__name__ for fn, _, _ in tools]
