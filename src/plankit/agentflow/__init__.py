"""agentflow: plan directories that agents write, validated and committed.

A thread's plan is a directory: ``plan.md`` (front matter ``title`` and a narrative)
and ``tasks/NN-slug.md`` (front matter ``id``, ``depends_on``, ``agent``,
``subtasks`` and a description).  The pieces:

* :func:`check_dir` / :func:`load_plan` — load and validate one directory, reporting
  every problem at once (:class:`Problem`: rule, file, line, message);
* :class:`ControlPlane` — sessions, thread directories and commits in SQLite under
  ``AGENTFLOW_HOME``;
* :func:`waves` — a plan's tasks in dependency layers that can run in parallel;
* ``agentctl`` (:mod:`plankit.agentflow.cli`) and the MCP tools
  (:mod:`plankit.agentflow.mcp_tools`).

Names are imported on first use, so ``import plankit.agentflow`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plankit.lazy import lazy_exports

if TYPE_CHECKING:
    from plankit.agentflow.control import ControlPlane
    from plankit.agentflow.graph import waves
    from plankit.agentflow.model import Plan, PlanDirError, Problem, Task
    from plankit.agentflow.records import (
        CommitRecord,
        CommittedThread,
        ControlError,
        RuntimeContext,
        Session,
        Thread,
    )
    from plankit.agentflow.validate import check_dir, check_dirs, load_plan

_EXPORTS = {
    "ControlPlane": "control",
    "waves": "graph",
    "Plan": "model",
    "PlanDirError": "model",
    "Problem": "model",
    "Task": "model",
    "CommitRecord": "records",
    "CommittedThread": "records",
    "ControlError": "records",
    "RuntimeContext": "records",
    "Session": "records",
    "Thread": "records",
    "check_dir": "validate",
    "check_dirs": "validate",
    "load_plan": "validate",
}

__all__ = [
    "CommitRecord",
    "CommittedThread",
    "ControlError",
    "ControlPlane",
    "Plan",
    "PlanDirError",
    "Problem",
    "RuntimeContext",
    "Session",
    "Task",
    "Thread",
    "check_dir",
    "check_dirs",
    "load_plan",
    "waves",
]


__getattr__ = lazy_exports(__name__, _EXPORTS)
