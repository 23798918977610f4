"""What ``agentctl plan commit`` checks: every allocated thread directory, together.

Each directory is validated on its own (ids and dependencies are scoped to one thread)
and the problems of all of them are returned together.  An empty directory is not a
plan: the current thread's directory may be empty (after ``clear-current``) when
another thread has a plan, and is then left out of the commit; an empty additional
directory is an error (plan it, or remove the thread); a commit with no plan at all is
an error.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from plankit.agentflow.model import Problem, problem
from plankit.agentflow.plandir import load_dir
from plankit.agentflow.records import CommittedThread, Thread
from plankit.agentflow.validate import check_loaded


def check_threads(
    threads: Sequence[Thread],
) -> tuple[list[CommittedThread], list[str], list[Problem]]:
    """Validate the threads' directories: committed plans, skipped thread ids, problems."""
    loads = [(thread, load_dir(thread.plan_dir)) for thread in threads]
    blank = {thread.thread_id for thread, loaded in loads if loaded.empty or not loaded.exists}
    planned = len(loads) - len(blank)
    plans: list[CommittedThread] = []
    skipped: list[str] = []
    problems: list[Problem] = []
    for thread, loaded in loads:
        where = os.path.join(thread.plan_dir, "plan.md")
        if thread.thread_id in blank:
            if thread.current and planned:
                skipped.append(thread.thread_id)
            elif thread.current:
                problems.append(
                    problem(
                        where,
                        None,
                        "plan-missing",
                        "nothing to commit: the current plan directory is empty; write plan.md "
                        "(title and narrative) and tasks/NN-slug.md files in it",
                    )
                )
            else:
                problems.append(
                    problem(
                        where,
                        None,
                        "plan-missing",
                        f"the plan directory of {thread.thread_id} is empty; write plan.md and "
                        "tasks/ in it, or drop the thread with `agentctl plan remove-thread "
                        f"--thread-id {thread.thread_id}`",
                    )
                )
            continue
        plan, found = check_loaded(loaded)
        problems += found
        if plan is not None:
            plans.append(CommittedThread(thread.thread_id, thread.current, plan))
    return plans, skipped, sorted(problems, key=Problem.by_file)
