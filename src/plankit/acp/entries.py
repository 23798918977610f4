"""Any plan → the entries of a stable (v1) ACP ``plan`` update.

A v1 ``plan`` update carries the whole list every time, and each entry has only
``content``, ``priority`` (``high``, ``medium``, ``low``) and ``status``
(``pending``, ``in_progress``, ``completed``); a v1 reader drops an entry with any
other value.  So each :class:`Entry` keeps a richer status and a stable id, and puts
them in the entry's ``_meta``::

    {"content": "2.2 Identify variance", "priority": "high", "status": "in_progress",
     "_meta": {"plankit": {"id": "2.2", "status": "review", "kind": "checklist",
                           "reason": "check the threshold",
                           "note": "waiting for review: check the threshold"}}}

An entry's ``content`` never changes while its status does (clients that key entries
by content would otherwise see them removed and re-added); what is happening to it
lives in ``_meta`` (``status``, ``reason``, and ``note``, the one-line summary).

The mapping is pure (no ACP library is imported) and documented in ``docs/acp.md``:

- TeDDy actions: one entry per action, the status from execution; CREATE, EDIT and
  EXECUTE are ``high`` (they change the project), PRUNE ``low``, the rest ``medium``.
- PLAN.md checklists: one entry per task; the current phase (the first with an
  unfinished task) is ``high``, later phases ``medium``, finished phases ``low``.
- agentflow plans: one entry per task; tasks on a critical path (a longest
  dependency chain) are ``high``, tasks nothing depends on and off that path ``low``,
  the rest ``medium``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from plankit.errors import InputError

if TYPE_CHECKING:
    from plankit.agentflow.model import Plan as FlowPlan
    from plankit.agentflow.model import Task as FlowTask
    from plankit.agentflow.records import CommitRecord
    from plankit.checklist.model import Plan as ChecklistPlan
    from plankit.teddy.format.model import Action
    from plankit.teddy.format.model import Plan as TeddyPlan
    from plankit.teddy.run.report import ActionResult

Priority: TypeAlias = Literal["high", "medium", "low"]
WireStatus: TypeAlias = Literal["pending", "in_progress", "completed"]

META_KEY = "plankit"
"""The key under ``_meta`` that holds plankit's fields."""

STATUSES: dict[str, WireStatus] = {
    "pending": "pending",
    "blocked": "pending",
    "awaiting_permission": "in_progress",
    "in_progress": "in_progress",
    "review": "in_progress",
    "completed": "completed",
    "failed": "pending",
    "skipped": "pending",
    "rejected": "pending",
    "cancelled": "pending",
}
"""Every rich status and the v1 status sent for it.

Only a task that was done is ``completed``.  Failed, skipped, rejected and cancelled
entries did not get done, so they stay ``pending`` on the wire, and a v1 client never
shows a cancelled or rejected plan as finished; the reason is in ``_meta``.  A blocked
task has not started (``pending``); a task waiting for review or for permission is
the one being worked on (``in_progress``)."""

_LABELS: dict[str, str] = {
    "blocked": "blocked",
    "awaiting_permission": "waiting for permission",
    "review": "waiting for review",
    "failed": "failed",
    "skipped": "skipped",
    "rejected": "rejected",
    "cancelled": "cancelled",
}
"""What the note says for a status that the v1 status alone does not tell."""

PRIORITIES: tuple[Priority, ...] = ("high", "medium", "low")


@dataclass(frozen=True, slots=True)
class Entry:
    """One plan entry with its identity and its rich status."""

    id: str
    """Stable identity within the plan: ``3`` (TeDDy action), ``2.3`` (checklist step),
    ``create-schema`` (agentflow task), ``thread/task`` (a commit's task)."""
    content: str
    """What the task is, as people read it: the same whatever the status."""
    status: str
    """The rich status, one of :data:`STATUSES`."""
    priority: Priority = "medium"
    """``high``, ``medium`` or ``low``."""
    reason: str | None = None
    """Why the status (a failure, a skip reason, a blocked note …), when known."""
    kind: str = ""
    """The plan kind: ``teddy``, ``checklist`` or ``agentflow``."""
    extra: tuple[tuple[str, Any], ...] = ()
    """More ``_meta.plankit`` fields (JSON values), in order."""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            known = ", ".join(STATUSES)
            raise InputError(
                f"unknown plan entry status {self.status!r}; expected one of {known}",
                code="unknown-status",
            )
        if self.priority not in PRIORITIES:
            raise InputError(
                f"unknown plan entry priority {self.priority!r}; expected high, medium or low",
                code="unknown-priority",
            )

    @property
    def wire_status(self) -> WireStatus:
        """The v1 status."""
        return STATUSES[self.status]

    @property
    def note(self) -> str | None:
        """What the v1 status does not tell, in one line (``failed: exit 1``), or None."""
        label = _LABELS.get(self.status)
        if label is None:
            return None
        if not self.reason:
            return label
        reason = _one_line(self.reason)
        if reason.startswith(label):  # "rejected by the user" says it already
            return reason
        return f"{label}: {reason}"

    @property
    def display(self) -> str:
        """The content with its note, as a client shows it (``… — failed: exit 1``)."""
        note = self.note
        return self.content if note is None else f"{self.content} — {note}"

    def meta(self) -> dict[str, Any]:
        """The ``_meta.plankit`` object: id, status, kind, reason, note and the extra
        fields."""
        out: dict[str, Any] = {"id": self.id, "status": self.status}
        if self.kind:
            out["kind"] = self.kind
        if self.reason:
            out["reason"] = self.reason
        note = self.note
        if note is not None:
            out["note"] = note
        out.update(self.extra)
        return out

    def to_wire(self) -> dict[str, Any]:
        """The v1 ``PlanEntry`` JSON object."""
        return {
            "content": self.content,
            "priority": self.priority,
            "status": self.wire_status,
            "_meta": {META_KEY: self.meta()},
        }


def plan_update(entries: Iterable[Entry], **meta: Any) -> dict[str, Any]:
    """The ``session/update`` payload ``{"sessionUpdate": "plan", "entries": […]}``.

    Keyword arguments go to the plan's ``_meta.plankit`` (e.g. ``title=``, ``kind=``).
    """
    update: dict[str, Any] = {
        "sessionUpdate": "plan",
        "entries": [entry.to_wire() for entry in entries],
    }
    if meta:
        update["_meta"] = {META_KEY: meta}
    return update


def entry_of(wire: Mapping[str, Any]) -> tuple[str | None, str]:
    """Read back a wire entry's id and rich status (from ``_meta``, else the v1 status).

    For clients: any agent's entries work; plankit's carry the richer fields.
    """
    meta = wire.get("_meta")
    ours = meta.get(META_KEY) if isinstance(meta, dict) else None
    status = str(wire.get("status", "pending"))
    if isinstance(ours, dict):
        rich = ours.get("status")
        ident = ours.get("id")
        return (
            str(ident) if ident is not None else None,
            rich if isinstance(rich, str) and rich in STATUSES else status,
        )
    return None, status


def _one_line(text: str, width: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


# --- TeDDy ---------------------------------------------------------------------------


def _teddy_priority(action: Action) -> Priority:
    from plankit.teddy.format.model import ActionType

    if action.type in (ActionType.CREATE, ActionType.EDIT, ActionType.EXECUTE):
        return "high"
    if action.type is ActionType.PRUNE:
        return "low"
    return "medium"


def action_title(action: Action) -> str:
    """``EDIT src/app.py``, ``EXECUTE pytest -q``, ``CHAT_WITH_USER`` …"""
    from plankit.teddy.format.model import ChatWithUser, Conclude
    from plankit.teddy.run.report import action_target

    target = action_target(action)
    if not target and isinstance(action, ChatWithUser | Conclude) and action.message:
        target = _one_line(action.message, 60)
    return f"{action.type} {target}" if target else str(action.type)


def result_status(result: ActionResult) -> tuple[str, str | None]:
    """The rich status and reason of an executed (or skipped) action."""
    if result.success is True:
        return "completed", None
    if result.success is False:
        return "failed", result.notes[0] if result.notes else None
    return "skipped", result.skip_reason


def teddy_entries(
    plan: TeddyPlan,
    statuses: Mapping[int, str] | Sequence[str] = (),
    reasons: Mapping[int, str | None] | Sequence[str | None] = (),
) -> list[Entry]:
    """One entry per action of a TeDDy plan, ids ``1``, ``2`` … in plan order.

    ``statuses`` and ``reasons`` give each action's rich status and its reason by
    0-based position (a list or a mapping); actions not given are ``pending``.
    """
    status_of = dict(enumerate(statuses)) if isinstance(statuses, Sequence) else statuses
    reason_of = dict(enumerate(reasons)) if isinstance(reasons, Sequence) else reasons
    out: list[Entry] = []
    for index, action in enumerate(plan.actions):
        content = action_title(action)
        if action.description:
            content += f": {_one_line(action.description)}"
        out.append(
            Entry(
                id=str(index + 1),
                content=content,
                status=status_of.get(index, "pending"),
                priority=_teddy_priority(action),
                reason=reason_of.get(index),
                kind="teddy",
                extra=(("action", str(action.type)),),
            )
        )
    return out


def report_entries(plan: TeddyPlan, results: Sequence[ActionResult]) -> list[Entry]:
    """The entries of an executed plan, from its report's results (in plan order)."""
    pairs = [result_status(result) for result in results]
    return teddy_entries(plan, [s for s, _ in pairs], [r for _, r in pairs])


# --- PLAN.md checklists ----------------------------------------------------------------

_CHECKLIST_STATUS = {
    "todo": "pending",
    "doing": "in_progress",
    "done": "completed",
    "blocked": "blocked",
    "review": "review",
}


def checklist_entries(plan: ChecklistPlan) -> list[Entry]:
    """One entry per task of a PLAN.md checklist, ids the step numbers (``2.3``)."""
    from plankit.checklist.model import TaskStatus

    current_at = next(
        (
            i
            for i, phase in enumerate(plan.phases)
            if any(t.status is not TaskStatus.DONE for t in phase.tasks)
        ),
        len(plan.phases),
    )
    out: list[Entry] = []
    for position, phase in enumerate(plan.phases):
        priority: Priority = (
            "high" if position == current_at else "medium" if position > current_at else "low"
        )
        for task in phase.tasks:
            reason = task.blocked_reason or task.review_note
            extra: list[tuple[str, Any]] = [("phase", phase.number), ("line", task.line)]
            if task.completed_date:
                extra.append(("completed_date", task.completed_date))
            out.append(
                Entry(
                    id=task.step,
                    content=f"{task.step} {task.title}",
                    status=_CHECKLIST_STATUS[task.status.value],
                    priority=priority,
                    reason=reason,
                    kind="checklist",
                    extra=tuple(extra),
                )
            )
    return out


# --- agentflow ---------------------------------------------------------------------------


def critical_path(tasks: Sequence[FlowTask]) -> set[str]:
    """The ids of the tasks on a longest dependency chain (zero slack, unit durations).

    Dependencies on unknown ids are ignored; tasks on a cycle are never critical.
    """
    from plankit.agentflow.graph import waves

    layers = waves(tasks)
    order = [task for layer in layers for task in layer]
    depth: dict[str, int] = {}
    for task in order:  # longest chain ending at the task
        deps = [depth[d] for d in task.depends_on if d in depth]
        depth[task.id] = 1 + max(deps, default=0)
    height: dict[str, int] = dict.fromkeys(depth, 1)
    for task in reversed(order):  # longest chain starting at the task
        for dep in task.depends_on:
            if dep in height:
                height[dep] = max(height[dep], height[task.id] + 1)
    longest = max(depth.values(), default=0)
    return {tid for tid in depth if depth[tid] + height[tid] - 1 == longest}


def _first_line(body: str) -> str:
    """The first line of text of a task body (a heading only when there is nothing else)."""
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    for line in lines:
        if not line.startswith("#"):
            return _one_line(line)
    return _one_line(lines[0].lstrip("#").strip()) if lines else ""


def agentflow_entries(
    plan: FlowPlan,
    statuses: Mapping[str, str] | None = None,
    *,
    prefix: str = "",
) -> list[Entry]:
    """One entry per task of an agentflow plan, ids the task ids, in sort order.

    ``statuses`` maps task ids to rich statuses (a plan directory records none: every
    task is ``pending`` unless given).  ``prefix`` is put before every id
    (``thread-2/`` for the tasks of a commit's additional thread).
    """
    from plankit.agentflow.graph import waves

    statuses = statuses or {}
    unknown = sorted(set(statuses) - {t.id for t in plan.tasks})
    if unknown:
        raise InputError(
            f"status given for unknown task(s) {', '.join(unknown)} of plan '{plan.title}'",
            code="unknown-task",
        )
    critical = critical_path(plan.tasks)
    needed = {dep for task in plan.tasks for dep in task.depends_on}
    wave_of = {task.id: n for n, layer in enumerate(waves(plan.tasks), 1) for task in layer}
    out: list[Entry] = []
    for task in plan.tasks:
        priority: Priority = (
            "high" if task.id in critical else "medium" if task.id in needed else "low"
        )
        summary = _first_line(task.body)
        extra: list[tuple[str, Any]] = [("depends_on", list(task.depends_on))]
        if task.id in wave_of:
            extra.append(("wave", wave_of[task.id]))
        if task.agent:
            extra.append(("agent", task.agent))
        out.append(
            Entry(
                id=prefix + task.id,
                content=f"{task.id}: {summary}" if summary else task.id,
                status=statuses.get(task.id, "pending"),
                priority=priority,
                kind="agentflow",
                extra=tuple(extra),
            )
        )
    return out


def commit_entries(record: CommitRecord, statuses: Mapping[str, str] | None = None) -> list[Entry]:
    """The entries of every plan of an agentflow commit: the current thread's tasks
    with their own ids, each additional thread's as ``thread_id/task_id``.

    ``statuses`` is keyed by those same ids.
    """
    statuses = statuses or {}
    out: list[Entry] = []
    for thread in record.threads:
        prefix = "" if thread.current else f"{thread.thread_id}/"
        mine = {
            key[len(prefix) :]: value
            for key, value in statuses.items()
            if key.startswith(prefix) and (prefix or "/" not in key)
        }
        out += agentflow_entries(thread.plan, mine, prefix=prefix)
    return out
