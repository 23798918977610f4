"""The PLAN.md checklist model: frozen dataclasses and the task status enum.

A :class:`Plan` is what ``checklist-plan-md.md`` describes: a ``# Plan:`` title, a
``Goal:`` line, optional Analysis and Questions sections, numbered phases of tasks and
free Notes.  Every model is immutable; the Markdown text (:attr:`Plan.raw`) is the
single source of truth and is changed line by line by
:func:`plankit.checklist.update_task_status`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from plankit.errors import InputError

if TYPE_CHECKING:
    from plankit.checklist.analysis import PlanAnalysis

__all__ = [
    "CHAR_STATUS",
    "STATUS_CHAR",
    "Phase",
    "PhaseInput",
    "Plan",
    "PlanTask",
    "Progress",
    "TaskStatus",
    "coerce_status",
]


def is_placeholder(text: str) -> bool:
    """Whether ``text`` is only a template placeholder, such as the ``[Any clarifying
    questions]`` that ``create`` writes: no real content, never a question to answer."""
    text = text.strip()
    return text.startswith("[") and text.endswith("]") and "]" not in text[:-1]


class TaskStatus(StrEnum):
    """Where a task stands; the values are the plain strings used everywhere."""

    TODO = "todo"
    DOING = "doing"
    DONE = "done"
    BLOCKED = "blocked"
    REVIEW = "review"

    @property
    def char(self) -> str:
        """The character between the brackets: ``' '``, ``/``, ``x``, ``>`` or ``!``."""
        return STATUS_CHAR[self]


STATUS_CHAR: dict[TaskStatus, str] = {
    TaskStatus.TODO: " ",
    TaskStatus.DOING: "/",
    TaskStatus.DONE: "x",
    TaskStatus.BLOCKED: ">",
    TaskStatus.REVIEW: "!",
}
"""The checkbox character written for each status."""

CHAR_STATUS: dict[str, TaskStatus] = {
    " ": TaskStatus.TODO,
    "/": TaskStatus.DOING,
    "x": TaskStatus.DONE,
    "X": TaskStatus.DONE,
    ">": TaskStatus.BLOCKED,
    "!": TaskStatus.REVIEW,
}
"""The status read for each checkbox character; any other character reads as todo."""


def coerce_status(value: TaskStatus | str) -> TaskStatus:
    """``value`` as a :class:`TaskStatus`; plain strings in any case are accepted."""
    if isinstance(value, TaskStatus):
        return value
    try:
        return TaskStatus(str(value).strip().lower())
    except ValueError:
        names = ", ".join(s.value for s in TaskStatus)
        raise InputError(
            f"unknown task status {value!r}; expected one of {names}", code="unknown-status"
        ) from None


@dataclass(frozen=True, slots=True)
class PlanTask:
    """One checkbox line ``- [c] N.N title`` of a phase."""

    line: int
    """1-based line of the task in the plan's Markdown."""
    phase: int
    """Number of the phase the task is listed under (``### Phase N: …``)."""
    step: str
    """The step number as written: ``1.1``, ``2.3``, ``2.1.1``."""
    status: TaskStatus
    """Where the task stands."""
    title: str
    """The task text without its completion date and without its blocked/review note."""
    completed_date: str | None = None
    """``YYYY-MM-DD`` from a ``✅ YYYY-MM-DD`` annotation, if any."""
    blocked_reason: str | None = None
    """The text after the last `` — `` of a blocked task, if any."""
    review_note: str | None = None
    """The text after the last `` — `` of a task waiting for review, if any."""

    def __post_init__(self) -> None:
        if not isinstance(self.status, TaskStatus):  # a plain string given by a caller
            object.__setattr__(self, "status", coerce_status(self.status))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form used by ``--json`` and the MCP tools."""
        return {
            "line": self.line,
            "phase": self.phase,
            "step": self.step,
            "status": self.status.value,
            "title": self.title,
            "completed_date": self.completed_date,
            "blocked_reason": self.blocked_reason,
            "review_note": self.review_note,
        }


@dataclass(frozen=True, slots=True)
class Progress:
    """How many tasks are in each status."""

    todo: int = 0
    """Tasks not started."""
    doing: int = 0
    """Tasks in progress."""
    done: int = 0
    """Tasks completed."""
    blocked: int = 0
    """Tasks waiting on something."""
    review: int = 0
    """Tasks waiting for a person's review."""

    @property
    def total(self) -> int:
        """All tasks."""
        return self.todo + self.doing + self.done + self.blocked + self.review

    @property
    def percent(self) -> int:
        """Share of tasks done, rounded down to a whole percent (0 for no tasks)."""
        return self.done * 100 // self.total if self.total else 0

    @classmethod
    def of(cls, tasks: tuple[PlanTask, ...] | list[PlanTask]) -> Progress:
        """Count ``tasks`` by status."""
        counts = dict.fromkeys(TaskStatus, 0)
        for task in tasks:
            counts[task.status] += 1
        return cls(*(counts[s] for s in TaskStatus))

    def to_dict(self) -> dict[str, int]:
        """The JSON form: the five counts, ``total`` and ``percent``."""
        return {
            "todo": self.todo,
            "doing": self.doing,
            "done": self.done,
            "blocked": self.blocked,
            "review": self.review,
            "total": self.total,
            "percent": self.percent,
        }


@dataclass(frozen=True, slots=True)
class Phase:
    """A ``### Phase N: Name`` heading and the tasks listed under it."""

    number: int
    """``N`` as written in the heading."""
    name: str
    """The text after ``Phase N:``."""
    tasks: tuple[PlanTask, ...]
    """The tasks in document order, indented sub-steps included."""

    @property
    def progress(self) -> Progress:
        """The phase's tasks counted by status."""
        return Progress.of(self.tasks)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "number": self.number,
            "name": self.name,
            "tasks": [t.to_dict() for t in self.tasks],
            "progress": self.progress.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class Plan:
    """A parsed PLAN.md checklist."""

    title: str
    """The text after ``# Plan:`` ('' when there is none)."""
    goal: str
    """The text after ``Goal:`` ('' when there is none)."""
    analysis: str | None
    """The Analysis section's lines, top-level bullets without their ``- ``; None when
    the section is absent or empty."""
    questions: tuple[str, ...] | None
    """The Questions section's bullets; None when the section is absent or has none."""
    phases: tuple[Phase, ...]
    """The phases in document order."""
    notes: str
    """The Notes section's text, trimmed ('' when there is none)."""
    raw: str
    """The Markdown the plan was parsed from, unchanged."""

    @property
    def tasks(self) -> tuple[PlanTask, ...]:
        """Every task of every phase, in document order."""
        return tuple(t for p in self.phases for t in p.tasks)

    @property
    def analysis_fields(self) -> PlanAnalysis | None:
        """:attr:`analysis` read as the spec's ``PlanAnalysis`` (None without one)."""
        from plankit.checklist.analysis import parse_analysis

        return parse_analysis(self.analysis)

    @property
    def progress(self) -> Progress:
        """All tasks counted by status."""
        return Progress.of(self.tasks)

    def task(self, step: str) -> PlanTask | None:
        """The first task numbered ``step``, or None."""
        for phase in self.phases:
            for task in phase.tasks:
                if task.step == step:
                    return task
        return None

    def next_task(self) -> PlanTask | None:
        """The first todo task, phase by phase (blocked and review tasks are skipped)."""
        for phase in self.phases:
            for task in phase.tasks:
                if task.status is TaskStatus.TODO:
                    return task
        return None

    def review_tasks(self) -> list[PlanTask]:
        """Every task waiting for review, in document order."""
        return [t for t in self.tasks if t.status is TaskStatus.REVIEW]

    def open_questions(self) -> list[str]:
        """The questions not answered yet (no `` — Answer: …``), template placeholders
        such as ``[Any clarifying questions]`` left out."""
        out = []
        for question in self.questions or ():
            if is_placeholder(question):
                continue
            if " — answer:" in question.lower():
                continue
            out.append(question)
        return out

    def current_task(self) -> PlanTask | None:
        """The first task in progress (``[/]``), in document order: where an agent that
        resumes picks up; None when no task is in progress."""
        for task in self.tasks:
            if task.status is TaskStatus.DOING:
                return task
        return None

    def to_dict(self, *, raw: bool = True) -> dict[str, Any]:
        """The JSON form used by ``--json`` (``raw`` leaves out the Markdown when False)."""
        fields = self.analysis_fields
        out: dict[str, Any] = {
            "title": self.title,
            "goal": self.goal,
            "analysis": self.analysis,
            "analysis_fields": fields.to_dict() if fields is not None else None,
            "questions": list(self.questions) if self.questions is not None else None,
            "phases": [p.to_dict() for p in self.phases],
            "notes": self.notes,
            "progress": self.progress.to_dict(),
        }
        if raw:
            out["raw"] = self.raw
        return out


@dataclass(frozen=True, slots=True)
class PhaseInput:
    """A phase to create: its name and its steps, in order."""

    name: str
    """The phase name (``Data Collection``)."""
    steps: tuple[str, ...] | list[str]
    """One line of text per step; numbered ``N.1``, ``N.2`` … when written (a list is
    stored as a tuple)."""

    def __post_init__(self) -> None:
        if not isinstance(self.steps, tuple):  # a list given by a caller
            object.__setattr__(self, "steps", tuple(self.steps))

    @classmethod
    def coerce(cls, value: PhaseInput | dict[str, Any]) -> PhaseInput:
        """A :class:`PhaseInput` from itself or from ``{"name": …, "steps": […]}``."""
        if isinstance(value, PhaseInput):
            return value
        if not isinstance(value, dict):
            raise InputError(
                f"a phase must be {{'name': …, 'steps': […]}}, not {type(value).__name__}",
                code="phase-invalid",
            )
        name = value.get("name")
        steps = value.get("steps")
        if not isinstance(name, str):
            raise InputError("a phase needs a 'name' (a string)", code="phase-invalid")
        if isinstance(steps, str) or not isinstance(steps, list | tuple):
            raise InputError(
                f"phase {name!r} needs 'steps' (a list of strings)", code="phase-invalid"
            )
        if not all(isinstance(s, str) for s in steps):
            raise InputError(f"phase {name!r}: every step must be a string", code="phase-invalid")
        return cls(name, tuple(steps))
