"""Plain-text views for ``agentctl``: commit summaries, plans in waves, session lists.

Text goes to a terminal or an agent's tool output, so it is plain, aligned and short;
``--json`` gives the same data as objects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plankit.agentflow.graph import waves

if TYPE_CHECKING:
    from plankit.agentflow.model import Plan, Problem
    from plankit.agentflow.records import CommitRecord, SessionSummary


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


def commit_text(
    record: CommitRecord, *, heading: str = "Committed plan", ready: bool = False
) -> str:
    """The summary printed by ``plan commit`` and ``plan show``."""
    out = [
        f"{heading} #{record.number} of session {record.session_id} "
        f"({record.committed_at}): {_plural(len(record.threads), 'thread')}, "
        f"{_plural(record.task_count, 'task')}"
    ]
    for thread in record.threads:
        kind = " (current)" if thread.current else ""
        out.append("")
        count = _plural(len(thread.plan.tasks), "task")
        out.append(f"{thread.thread_id}{kind}: {thread.plan.title} — {count}")
        out.append(f"  {thread.plan.path}")
        out += plan_lines(thread.plan, ready=ready)
    if record.skipped:
        out.append("")
        out.append(f"Not committed (empty directory): {', '.join(record.skipped)}")
    return "\n".join(out)


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
    header = ("SESSION", "AGENT SESSION", "THREADS", "COMMITS", "CREATED", "TOPIC")
    table = [header] + [
        (
            row.session.session_id,
            row.session.agent_session_id or "-",
            str(row.threads),
            str(row.commits),
            row.session.created_at,
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
