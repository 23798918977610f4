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
from plankit.errors import PlankitError, diagnostic_json


@dataclass(frozen=True, slots=True)
class Problem:
    """One validation error: a rule broken in one file of a plan directory."""

    file: str
    """The file (or directory) the problem is in, as a path; empty when there is none."""
    line: int | None
    """1-based line in ``file``, or ``None`` when the problem concerns the whole file."""
    rule: str
    """The rule's stable name, e.g. ``depends-cycle`` (listed in ``docs/agentflow.md``)."""
    message: str
    """What was expected, what was found, and how to fix it."""

    def sort_key(self) -> tuple[str, int, str, str]:
        """Order of reports: by file, then line (whole-file problems first), then rule."""
        return (self.file, self.line or 0, self.rule, self.message)

    def format(self) -> str:
        """``FILE:LINE: RULE message`` (``FILE: RULE message`` without a line)."""
        if not self.file:
            return f"{self.rule} {self.message}"
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.rule} {self.message}"

    def to_json(self) -> dict[str, object]:
        """The JSON form every plankit command shares (:func:`plankit.errors.diagnostic_json`):
        ``{"code": RULE, "message", "line", "file"}``, ``line`` and ``file`` may be null."""
        return diagnostic_json(self.rule, self.message, self.line, self.file)


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
        self.problems: tuple[Problem, ...] = tuple(sorted(problems, key=Problem.sort_key))
        count = len(self.problems)
        first = self.problems[0].format() if count else "invalid plan directory"
        more = f" (and {count - 1} more)" if count > 1 else ""
        super().__init__(first + more)
