"""Every MCP tool plankit serves, named and described once, without the SDK.

The registering modules (:mod:`plankit.checklist.mcp_tools`,
:mod:`plankit.agentflow.mcp_tools`) take each tool's description from here and
refuse to register a tool this catalogue does not name (and the tests check that
every tool named here is registered), so ``plankit mcp --help``, the start-up answer
to ``initialize`` and the tool lists of the README and docs/mcp.md (written by
``tools/mcp_docs.py``) all say what the servers really serve, and none of them has to
import the MCP SDK.

Two sets: ``core``, what an agent needs to do the whole job (make and work through a
checklist; commit an agentflow plan and claim, heartbeat, finish or fail its tasks),
kept under 2,000 tokens of tools/list; and ``all``, the core plus the editing and
housekeeping tools.  ``plankit mcp`` serves ``core`` unless ``--tools all`` is given;
``agentctl mcp`` serves all twelve agentflow tools (they fit the same budget).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

System = Literal["checklist", "agentflow"]
Selection = Literal["core", "all"]
SELECTIONS: tuple[Selection, ...] = ("core", "all")


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """One tool: its name, the system it belongs to, what it does, and its set."""

    name: str
    system: System
    description: str
    core: bool


def _tools(system: System, rows: list[tuple[str, bool, str]]) -> tuple[ToolInfo, ...]:
    return tuple(ToolInfo(name, system, text, core) for name, core, text in rows)


CHECKLIST = _tools(
    "checklist",
    [
        (
            "get_plan",
            True,
            "The plan: progress per phase, current and next step, reviews, questions, "
            "warnings; full=true adds the Markdown.",
        ),
        (
            "create_plan",
            True,
            "Write a new plan: title, goal, phases of one-line steps (numbered for you). "
            "Replaces the starter plan; another only with replace=true.",
        ),
        ("get_next_task", True, "The next todo step as JSON, or null when none is left."),
        ("start_task", True, "Mark a step in progress before working on it."),
        ("complete_task", True, "Mark a step done (dated)."),
        (
            "set_task_status",
            True,
            "Set a step's status: blocked (note: why), review (note: what a person must "
            "check), todo to reopen, doing, done.",
        ),
        (
            "add_step",
            True,
            "Add a todo step after/before a step or at the end of a phase; later steps "
            "renumbered, progress kept.",
        ),
        ("append_note", True, "Add one line to the plan's Notes."),
        (
            "init_plan",
            False,
            "Set up the store and return the plan; an empty store gets a starter plan, "
            "an existing plan is kept.",
        ),
        ("get_current_task", False, "The step in progress as JSON, or null: where to resume."),
        ("get_review_tasks", False, "The steps waiting for a person's review, as JSON."),
        ("block_task", False, "Mark a step blocked, with the reason."),
        ("review_task", False, "Mark a step as needing a person's review, with a note."),
        (
            "remove_step",
            False,
            "Remove a step and its sub-steps; later steps renumbered, progress kept.",
        ),
        (
            "add_phase",
            False,
            "Add a phase of todo steps after a phase (default: last); later phases renumbered.",
        ),
        ("rename_phase", False, "Rename a phase; its steps are kept."),
        (
            "renumber_steps",
            False,
            "Number phases and steps in order, fixing duplicate or skipped numbers; statuses kept.",
        ),
        ("answer_question", False, "Write the user's answer after a question of the plan."),
        ("set_goal", False, "Replace the plan's goal sentence."),
        (
            "set_analysis",
            False,
            "Set Analysis fields (spreadsheet, key sheets, ranges read/written, current "
            "state); the others are kept.",
        ),
    ],
)
"""The checklist tools (:mod:`plankit.checklist.mcp_tools`), core first."""

AGENTFLOW = _tools(
    "agentflow",
    [
        (
            "plan_dir",
            True,
            "The current thread's plan directory {thread_id, plan_dir}: write plan.md "
            "and tasks/NN-slug.md there, then plan_commit.",
        ),
        (
            "plan_commit",
            True,
            "Validate every thread's plan directory and commit them; on failure every "
            "problem is listed: fix all, commit again.",
        ),
        (
            "plan_show",
            True,
            "The latest commit: each task's state and holder, the ready tasks, counts.",
        ),
        (
            "task_claim",
            True,
            "Claim a ready task: {task: {ref, claim, file, …} | null, remaining}. Then "
            "task_done or task_fail with its ref and claim.",
        ),
        ("task_done", True, "Mark a claimed task done."),
        ("task_fail", True, "Mark a claimed task failed, saying why; its dependants are blocked."),
        ("task_heartbeat", True, "Extend a claimed task's lease, on long work."),
        ("set_topic", False, "Say what this session is about (one line, ≤ 100 characters)."),
        (
            "plan_request_thread_dir",
            False,
            "Allocate a plan directory for an additional thread: {thread_id, plan_dir}.",
        ),
        (
            "plan_remove_thread",
            False,
            "Remove an additional thread and its directory (not the current one).",
        ),
        (
            "plan_clear_current",
            False,
            "Delete the current thread's plan files; the directory stays.",
        ),
        ("task_release", False, "Give a claimed task back (ready again), or reopen a failed one."),
    ],
)
"""The agentflow tools (:mod:`plankit.agentflow.mcp_tools`), core first."""

ALL = CHECKLIST + AGENTFLOW
BY_NAME = {tool.name: tool for tool in ALL}


def describe(name: str) -> str:
    """The description of tool ``name`` (a KeyError for a tool not catalogued)."""
    return BY_NAME[name].description


def selected(tools: Selection = "core", *, agentflow: bool = True) -> tuple[ToolInfo, ...]:
    """The tools ``plankit mcp`` serves with ``--tools`` ``tools``."""
    pool = ALL if agentflow else CHECKLIST
    return tuple(tool for tool in pool if tools == "all" or tool.core)


def instructions(tools: Selection = "core", *, agentflow: bool = True) -> str:
    """What ``plankit mcp`` tells clients at ``initialize`` (only tools it serves)."""
    text = (
        "plankit keeps a PLAN.md checklist of phases and numbered steps. Call get_plan "
        "first; if there is no plan, create_plan once the goal is clear. One step at a "
        "time: get_next_task, start_task, do it, complete_task; set_task_status blocked "
        "or review (with a note) when stuck or a person must check."
    )
    if agentflow:
        text += (
            " agentflow plans: write the directory from plan_dir, plan_commit, then "
            "task_claim, task_done or task_fail."
        )
    return text + " Errors say what to do."


AGENTFLOW_INSTRUCTIONS = (
    "Plan directories for this session: write plan.md and tasks/NN-slug.md in the "
    "directory from plan_dir (and in any from plan_request_thread_dir), then call "
    "plan_commit; fix every reported error and commit again. Then task_claim, and "
    "task_done or task_fail with the task's ref and claim."
)
"""What ``agentctl mcp`` tells clients at ``initialize``."""


def listing(tools: tuple[ToolInfo, ...], *, width: int = 0) -> list[str]:
    """One line per tool: ``name — description`` (cut to ``width`` when given)."""
    lines = []
    for tool in tools:
        line = f"{tool.name} — {tool.description}"
        if width and len(line) > width:
            line = line[: width - 1].rstrip() + "…"
        lines.append(line)
    return lines


def help_text() -> str:
    """The body of ``plankit mcp --help``: the tools of each set."""
    core = [t.name for t in selected("core")]
    extra = [t.name for t in ALL if not t.core]
    return (
        "Run plankit's MCP server on standard input/output.\n\n"
        f"Tools served by default (--tools core): {', '.join(core)}.\n\n"
        f"Added by --tools all: {', '.join(extra)}.\n\n"
        "--no-agentflow leaves out the agentflow tools "
        f"({', '.join(t.name for t in AGENTFLOW)}).\n\n"
        "Point an MCP client at: plankit mcp --store PLAN.md"
    )
