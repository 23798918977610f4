"""The agentflow plan directory model: what a loaded, valid directory contains.

A plan directory is one thread's plan::

    plan.md              YAML front matter (title) and the plan narrative
    tasks/NN-slug.md     one task each: front matter (id, depends_on, agent, subtasks)
                         and a Markdown description

Every class here is a frozen value; loading and validation live in
:mod:`plankit.agentflow.plandir` and :mod:`plankit.agentflow.validate`.
"""

from __future__ import annotations

from dataclasses import dataclass

from plankit.agentflow.graph import waves
from plankit.errors import Diagnostic, PlankitError

Problem = Diagnostic
"""One validation error of a plan directory: a :class:`~plankit.errors.Diagnostic`
whose code is the rule broken (its stable name, e.g. ``depends-cycle``, listed in
``docs/agentflow.md``), in ``file`` (a path; ``None`` when there is none), on a
1-based line (0 when it concerns the whole file).  Made by :func:`problem`."""


def problem(file: str, line: int | None, rule: str, message: str) -> Diagnostic:
    """The problem ``rule`` broken in ``file`` (empty: none) on ``line`` (``None``: the
    whole file), ``message`` saying what was expected, what was found, and the fix."""
    return Diagnostic(line or 0, rule, message, file or None)


@dataclass(frozen=True, slots=True)
class Task:
    """One task file, ``tasks/NN-slug.md``."""

    id: str
    """Identifier, kebab-case, unique within the thread's plan."""
    sort_index: int
    """The ``NN`` of the file name; tasks are listed in this order."""
    file: str
    """The file name relative to the plan directory, e.g. ``tasks/01-setup-db.md``."""
    depends_on: tuple[str, ...] = ()
    """Ids of the tasks (of the same plan) that must be done first, in the order written."""
    agent: str | None = None
    """The agent driver assigned to the task, if any."""
    subtasks: tuple[str, ...] = ()
    """Checklist items within the task."""
    body: str = ""
    """The Markdown description (after the front matter), never blank in a valid plan."""

    def to_dict(self) -> dict[str, object]:
        """JSON form, used in commit snapshots and ``--json`` output."""
        return {
            "id": self.id,
            "file": self.file,
            "sort_index": self.sort_index,
            "depends_on": list(self.depends_on),
            "agent": self.agent,
            "subtasks": list(self.subtasks),
            "body": self.body,
        }


@dataclass(frozen=True, slots=True)
class Plan:
    """One valid thread plan directory."""

    path: str
    """The directory, as given (absolute for allocated directories)."""
    title: str
    """Short plan summary from ``plan.md`` (non-empty)."""
    body: str
    """The narrative of ``plan.md``: approach, decisions, constraints, acceptance criteria."""
    tasks: tuple[Task, ...] = ()
    """The tasks, in sort-index order."""

    def task(self, task_id: str) -> Task:
        """The task with id ``task_id`` (``KeyError`` when there is none)."""
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)

    def to_dict(self) -> dict[str, object]:
        """JSON form: path, title, body, tasks, the dependency waves and the ready tasks.

        ``waves`` lists task ids layer by layer (a wave's tasks can run in parallel);
        ``ready`` is the first wave: the tasks that depend on nothing.
        """
        layers = [[task.id for task in wave] for wave in waves(self.tasks)]
        return {
            "path": self.path,
            "title": self.title,
            "body": self.body,
            "tasks": [task.to_dict() for task in self.tasks],
            "waves": layers,
            "ready": layers[0] if layers else [],
        }


class PlanDirError(PlankitError):
    """One or more plan directories are invalid; carries every problem found."""

    def __init__(self, problems: list[Problem]):
        self.problems: tuple[Problem, ...] = tuple(sorted(problems, key=Diagnostic.by_file))
        count = len(self.problems)
        first = self.problems[0].format() if count else "invalid plan directory"
        more = f" (and {count - 1} more)" if count > 1 else ""
        super().__init__(first + more)
