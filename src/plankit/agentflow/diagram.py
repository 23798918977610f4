"""A commit's task graph as a diagram: Mermaid (``flowchart``) or Graphviz DOT.

One box per task, grouped by thread, an arrow from each dependency to the task that
waits for it; for the tracked (latest) commit each box shows the task's state and is
coloured by it.  Titles and ids are escaped, so a plan's text cannot break the
diagram's syntax.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plankit.agentflow.records import CommitRecord, TaskStatus

COLOURS = {
    "waiting": ("#eeeeee", "#757575"),
    "ready": ("#bbdefb", "#1565c0"),
    "claimed": ("#fff9c4", "#f9a825"),
    "done": ("#c8e6c9", "#2e7d32"),
    "failed": ("#ffcdd2", "#c62828"),
    "blocked": ("#e1bee7", "#6a1b9a"),
}
"""Fill and border colour of each state."""


def _state(statuses: dict[str, TaskStatus], ref: str) -> str | None:
    status = statuses.get(ref)
    if status is None:
        return None
    return "ready" if status.claimable else status.state


def _mermaid_text(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"<>#&' or ord(ch) < 32:
            out.append(f"#{ord(ch)};")
        else:
            out.append(ch)
    return "".join(out)


def mermaid(record: CommitRecord, statuses: list[TaskStatus] | None) -> str:
    """The commit as a Mermaid flowchart."""
    states = {status.ref: status for status in statuses or ()}
    lines = ["flowchart TD"]
    names: dict[str, str] = {}
    edges: list[str] = []
    used: set[str] = set()
    for t_index, thread in enumerate(record.threads):
        title = _mermaid_text(f"{thread.thread_id}: {thread.plan.title}")
        lines.append(f'  subgraph th{t_index}["{title}"]')
        for k_index, task in enumerate(thread.plan.tasks):
            ref = f"{thread.thread_id}/{task.id}"
            node = names[ref] = f"t{t_index}_{k_index}"
            state = _state(states, ref)
            label = task.id if state is None else f"{task.id}<br/>{state}"
            style = f":::{state}" if state is not None else ""
            if state is not None:
                used.add(state)
            lines.append(f'    {node}["{label}"]{style}')
        lines.append("  end")
        for task in thread.plan.tasks:
            for dep in task.depends_on:
                edges.append(
                    f"  {names[f'{thread.thread_id}/{dep}']} --> "
                    f"{names[f'{thread.thread_id}/{task.id}']}"
                )
    lines += edges
    for state in COLOURS:
        if state in used:
            fill, stroke = COLOURS[state]
            lines.append(f"  classDef {state} fill:{fill},stroke:{stroke}")
    return "\n".join(lines) + "\n"


def _dot_text(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return "".join(ch if ord(ch) >= 32 else " " for ch in escaped)


def dot(record: CommitRecord, statuses: list[TaskStatus] | None) -> str:
    """The commit as a Graphviz digraph."""
    states = {status.ref: status for status in statuses or ()}
    lines = [
        "digraph agentflow {",
        "  rankdir=TB;",
        '  node [shape=box, style="rounded,filled", fillcolor="#ffffff"];',
    ]
    edges: list[str] = []
    for t_index, thread in enumerate(record.threads):
        lines.append(f"  subgraph cluster_{t_index} {{")
        lines.append(f'    label="{_dot_text(f"{thread.thread_id}: {thread.plan.title}")}";')
        for task in thread.plan.tasks:
            ref = f"{thread.thread_id}/{task.id}"
            state = _state(states, ref)
            if state is None:
                lines.append(f'    "{ref}" [label="{task.id}"];')
            else:
                fill, stroke = COLOURS[state]
                lines.append(
                    f'    "{ref}" [label="{task.id}\\n{state}", fillcolor="{fill}", '
                    f'color="{stroke}"];'
                )
            edges += [f'  "{thread.thread_id}/{dep}" -> "{ref}";' for dep in task.depends_on]
        lines.append("  }")
    lines += edges
    lines.append("}")
    return "\n".join(lines) + "\n"


def diagram(record: CommitRecord, statuses: list[TaskStatus] | None, fmt: str) -> str:
    """The commit as ``mermaid`` or ``dot`` text."""
    return mermaid(record, statuses) if fmt == "mermaid" else dot(record, statuses)
