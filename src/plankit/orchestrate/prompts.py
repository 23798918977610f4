"""The prompts a run sends: the planner's first prompt, its retries, and a task's prompt."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from plankit.agentflow.records import RuntimeContext

MAX_SUMMARY = 2000
"""Characters of a dependency's last message quoted in a task's prompt."""


def planner_prompt(context: RuntimeContext, goal: str) -> str:
    """The overseer prompt, the runtime context block exactly as ``agentctl session
    start`` prints it, and the goal."""
    from plankit.agentflow.prompts import overseer_prompt

    return f"{overseer_prompt(context)}\nThe goal:\n\n{goal.strip()}\n"


def retry_prompt(problems: list[str], goal: str) -> str:
    """The planner's next prompt when its turn ended without a valid commit."""
    listed = "\n".join(f"- {p}" for p in problems)
    return (
        "Your turn ended without a committed plan. What is wrong:\n\n"
        f"{listed}\n\nFix every problem in the plan directories, then run "
        f"`agentctl plan commit` again.\n\nThe goal, again:\n\n{goal.strip()}\n"
    )


def task_prompt(
    ref: str,
    spec: dict[str, Any],
    narrative: str,
    dependencies: list[tuple[str, dict[str, Any] | None]],
) -> str:
    """One task's prompt: its id and body, the plan's title and narrative, and what the
    tasks it depends on produced."""
    lines = [
        "You are one of the agents carrying out an agentflow plan. Your working directory "
        "is a git worktree made for this task alone; change files only there. Do not "
        "commit: when you end your turn, your changes are committed and merged for you. "
        "End your turn when the task is done, and say in your last message what you did.",
        "",
        f"# Plan: {spec.get('title', '')}",
        "",
        narrative.strip() or "(no narrative)",
        "",
        f"# Your task: {spec.get('id', ref.partition('/')[2])} ({ref})",
        "",
        str(spec.get("body", "")).strip(),
    ]
    subtasks = spec.get("subtasks") or []
    if subtasks:
        lines += ["", "Subtasks:", *[f"- {item}" for item in subtasks]]
    if dependencies:
        lines += ["", "# Done before it (the tasks it depends on; their work is in your tree)"]
        for dep, record in dependencies:
            if record is None:
                lines.append(f"- {dep}: done (no record)")
                continue
            commit = record.get("merge_commit") or "no changes"
            files = ", ".join(record.get("files_changed") or ()) or "none"
            lines.append(f"- {dep}: merged as {commit}; files: {files}")
            summary = str(record.get("last_message") or "").strip()
            if summary:
                lines.append("  " + summary[:MAX_SUMMARY].replace("\n", "\n  "))
    return "\n".join(lines) + "\n"
