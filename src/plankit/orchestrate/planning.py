"""The planning step of ``agentctl run``: the planner agent writes and commits the plan.

The planner works in a worktree of the integration branch (a copy of the project as the
user's HEAD has it), so that nothing it or its tools write lands in the user's working
tree.  It is started with the session's environment (``AGENTFLOW_SESSION_ID``,
``AGENTFLOW_HOME``, ``AGENTFLOW_DATABASE_URL`` when a shared database is used) and the
agentflow MCP server; its first prompt is :func:`~.prompts.planner_prompt`.  When its
turn ends without a commit, it is prompted again with what is wrong (the validation
problems of its plan directories), at most :data:`ATTEMPTS` prompts in all.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from plankit.errors import InputError
from plankit.orchestrate.prompts import planner_prompt, retry_prompt
from plankit.orchestrate.session import AgentFailed, AgentSession

if TYPE_CHECKING:
    from plankit.agentflow.records import CommitRecord, RuntimeContext
    from plankit.orchestrate.runner import Run

ATTEMPTS = 3
"""Prompts the planner gets to produce a valid commit."""


class PlanningFailed(InputError):
    """The planner did not commit a valid plan; the message says why."""


def _commit_count(run: Run) -> int:
    from plankit.agentflow.records import ControlError

    try:
        return run.plane.show(run.session_id).number
    except ControlError:
        return 0


def _problems(context: RuntimeContext) -> list[str]:
    from plankit.agentflow.validate import check_dirs

    dirs = [context.current.plan_dir, *(t.plan_dir for t in context.additional)]
    if not any(Path(d, "plan.md").exists() or Path(d, "tasks").exists() for d in dirs):
        return [
            f"no plan was written: write plan.md and tasks/NN-slug.md in "
            f"{context.current.plan_dir} (CURRENT_PLAN_DIR)"
        ]
    _, problems = check_dirs(dirs)
    found = [problem.format() for problem in problems]
    return found or ["the plan is valid but was not committed: run `agentctl plan commit`"]


async def plan(run: Run, goal: str, context: RuntimeContext) -> CommitRecord:
    """Run the planner until the session has a commit; the commit."""
    import asyncio

    workdir = run.planning_worktree()
    before = await asyncio.to_thread(_commit_count, run)
    try:
        try:
            async with AgentSession(
                run.table.commands["planner"],
                workdir,
                env=run.env,
                log=run.logs / "planner.log",
                transcript=run.logs / "planner.jsonl",
                stop=run.stop,
            ) as agent:
                text = planner_prompt(context, goal)
                for attempt in range(1, ATTEMPTS + 1):
                    end = await agent.prompt(text, run.timeout)
                    if run.stop.is_set():
                        raise PlanningFailed("planning was interrupted")
                    if end.stop_reason != "end_turn":
                        raise PlanningFailed(f"the planner failed: {end.problem}")
                    if await asyncio.to_thread(_commit_count, run) > before:
                        return await asyncio.to_thread(run.plane.show, run.session_id)
                    fresh = await asyncio.to_thread(run.plane.context, run.session_id)
                    problems = _problems(fresh)
                    if attempt == ATTEMPTS:
                        raise PlanningFailed(
                            f"the planner did not commit a valid plan in {ATTEMPTS} turns: "
                            + "; ".join(problems[:3])
                        )
                    text = retry_prompt(problems, goal)
        except AgentFailed as exc:
            raise PlanningFailed(f"the planner failed: {exc}") from None
    finally:
        await asyncio.to_thread(run.drop_planning_worktree)
    raise AssertionError("unreachable")  # pragma: no cover
