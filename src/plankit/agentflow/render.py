"""Plain-text views for ``agentctl``: commit summaries, plans in waves, session lists.

Text goes to a terminal or an agent's tool output, so it is plain, aligned and short;
``--json`` gives the same data as objects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plankit.agentflow.graph import waves

if TYPE_CHECKING:
    from plankit.agentflow.model import Plan, Problem
    from plankit.agentflow.records import CommitRecord, SessionSummary, TaskStatus


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def plan_lines(plan: Plan, *, indent: str = "  ", ready: bool = False) -> list[str]:
    """A plan's tasks in dependency waves (tasks of one wave can run in parallel)."""
    layers = waves(plan.tasks)
    if not layers:
        return [f"{indent}(no tasks)"]
    out = []
    for number, layer in enumerate(layers, 1):
        names = ", ".join(f"{t.id} [{t.agent}]" if t.agent else t.id for t in layer)
        out.append(f"{indent}wave {number}: {names}")
    if ready:
        out.append(f"{indent}ready now: {', '.join(task.id for task in layers[0])}")
    return out


def _tracked_lines(plan: Plan, mine: dict[str, TaskStatus]) -> list[str]:
    """A tracked plan: each task with its state and holder, wave by wave."""
    layers = waves(plan.tasks)
    if not layers:
        return ["  (no tasks)"]
    out = []
    for number, layer in enumerate(layers, 1):
        out.append(f"  wave {number}")
        for task in layer:
            status = mine.get(task.id)
            state = "?" if status is None else status.state
            name = f"{task.id} [{task.agent}]" if task.agent else task.id
            note = ""
            if status is not None and status.state == "claimed":
                expired = ", lease ended: ready again" if status.lease_expired else ""
                who = f" by {status.holder}" if status.holder else ""
                note = f"  held{who} on {status.host}, until {status.lease_expires_at}{expired}"
            elif status is not None and status.state == "failed":
                note = f"  {status.reason}"
            out.append(f"    {state:<8} {name}{note}")
    ready = [task.id for task in plan.tasks if task.id in mine and mine[task.id].claimable]
    out.append(f"  ready now: {', '.join(ready) if ready else '(none)'}")
    return out


def progress_counts(statuses: list[TaskStatus]) -> dict[str, int]:
    """How many tasks are in each state (an expired claim counts as ready)."""
    from plankit.agentflow.records import TASK_STATES

    counts = dict.fromkeys(TASK_STATES, 0)
    for status in statuses:
        counts["ready" if status.claimable else status.state] += 1
    return counts


def commit_text(
    record: CommitRecord,
    *,
    heading: str = "Committed plan",
    ready: bool = False,
    statuses: list[TaskStatus] | None = None,
) -> str:
    """The summary printed by ``plan commit`` and ``plan show`` (with each task's state
    when the commit is tracked)."""
    out = [
        f"{heading} #{record.number} of session {record.session_id} "
        f"({record.committed_at}): {_plural(len(record.threads), 'thread')}, "
        f"{_plural(record.task_count, 'task')}"
    ]
    if statuses is not None:
        counts = progress_counts(statuses)
        out.append("Progress: " + ", ".join(f"{n} {state}" for state, n in counts.items()))
    for thread in record.threads:
        kind = " (current)" if thread.current else ""
        out.append("")
        count = _plural(len(thread.plan.tasks), "task")
        out.append(f"{thread.thread_id}{kind}: {thread.plan.title} — {count}")
        out.append(f"  {thread.plan.path}")
        if statuses is not None:
            mine = {s.task_id: s for s in statuses if s.thread_id == thread.thread_id}
            out += _tracked_lines(thread.plan, mine)
        else:
            out += plan_lines(thread.plan, ready=ready)
    if record.skipped:
        out.append("")
        out.append(f"Not committed (empty directory): {', '.join(record.skipped)}")
    return "\n".join(out)


def progress_dict(record: CommitRecord, statuses: list[TaskStatus] | None) -> dict[str, object]:
    """``plan show --json``: the commit, and for the tracked (latest) commit each task's
    state, holder and lease, the plans' real ``ready`` lists and the counts by state."""
    data = record.to_dict()
    data["tracked"] = statuses is not None
    if statuses is None:
        return data
    by_ref = {status.ref: status for status in statuses}
    threads = data["threads"]
    assert isinstance(threads, list)
    for thread in threads:
        plan = thread["plan"]
        for task in plan["tasks"]:
            status = by_ref.get(f"{thread['thread_id']}/{task['id']}")
            if status is not None:
                task.update(
                    ref=status.ref,
                    state=status.state,
                    holder=status.holder,
                    host=status.host,
                    lease_expires_at=status.lease_expires_at,
                    lease_expired=status.lease_expired,
                    claims=status.claims,
                    reason=status.reason,
                )
        plan["ready"] = [
            task["id"]
            for task in plan["tasks"]
            if (s := by_ref.get(f"{thread['thread_id']}/{task['id']}")) and s.claimable
        ]
    data["progress"] = progress_counts(statuses)
    return data


def valid_text(plan: Plan) -> str:
    """One valid directory, for ``plan validate``."""
    layers = len(waves(plan.tasks))
    return (
        f"{plan.path}: valid — {plan.title!r}, {_plural(len(plan.tasks), 'task')} "
        f"in {_plural(layers, 'wave')}"
    )


def problems_text(problems: list[Problem]) -> str:
    """Every problem on its own line, then a count."""
    files = {problem.file for problem in problems}
    lines = [problem.format() for problem in problems]
    lines.append(
        f"{_plural(len(problems), 'problem')} in {_plural(len(files), 'file')}; "
        "fix them all, then run the command again"
    )
    return "\n".join(lines)


def sessions_text(rows: list[SessionSummary]) -> str:
    """The table printed by ``session list``."""
    if not rows:
        return "no sessions yet; start one with `agentctl session start`"
    header = ("SESSION", "AGENT SESSION", "THREADS", "COMMITS", "CREATED", "ENDED", "TOPIC")
    table = [header] + [
        (
            row.session.session_id,
            row.session.agent_session_id or "-",
            str(row.threads),
            str(row.commits),
            row.session.created_at,
            row.session.ended_at or "-",
            row.session.topic or "-",
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in table) for i in range(len(header) - 1)]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=False))
        + "  "
        + line[-1]
        for line in table
    )
