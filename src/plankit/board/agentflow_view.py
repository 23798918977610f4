"""agentflow plan directories on the board (``plan.md`` and ``tasks/NN-slug.md``): the
list's line, the page (``agentctl plan validate``'s plan and problems) and the
dependency graph laid out with its critical path, which the control plane's sessions
(:mod:`plankit.board.control`) share.  Task states are the board's words
(:mod:`plankit.board.states`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from plankit.board.files import FileText, error, file_error, iso, mtime, read_file
from plankit.board.states import board_state


def text(path: Path) -> str:
    """The plan and its task files, one text (what the history of the plan compares)."""
    parts = [read_file(path / "plan.md").text or ""]
    for task in _task_files(path):
        parts.append(f"--- {task.name}\n" + (read_file(task).text or ""))
    return "\n".join(parts)


def _task_files(path: Path) -> list[Path]:
    try:
        return sorted(p for p in (path / "tasks").iterdir() if p.suffix == ".md")
    except OSError:
        return []


def _states(path: Path, found: FileText | None = None) -> dict[str, str]:
    """Task states recorded next to the plan (``state.json``: ``{task id: state}``)."""
    text = (found or read_file(path / "state.json")).text
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _agentflow_title(path: Path) -> str | None:
    """The ``title`` of plan.md's front matter (its YAML only: the tasks are not read)."""
    from plankit.agentflow.frontmatter import FrontMatterError, Map, Scalar, parse, split

    text = read_file(path / "plan.md").text
    if not text:
        return None
    try:
        doc = split(text.replace("\r\n", "\n"))
        node = parse(doc.front_matter, doc.yaml_line) if doc.front_matter is not None else None
    except (FrontMatterError, RecursionError, ValueError):
        return None
    if isinstance(node, Map):
        for key, _line, value in node.items:
            if key == "title" and isinstance(value, Scalar) and value.value:
                return value.value
    return None


Tracked = tuple[str, dict[str, str]]
"""The agentflow session that owns a plan directory and its tasks' states (agentflow's
own words), from the control plane."""


def _board_states(native: dict[str, str]) -> dict[str, str]:
    return {task: board_state("agentflow", state) for task, state in native.items()}


def _status(states: dict[str, str], total: int) -> str | None:
    if total and sum(1 for s in states.values() if s == "done") == total:
        return "done"
    waiting = [
        f"{n} {s}" for s in ("doing", "failed", "blocked") if (n := list(states.values()).count(s))
    ]
    return ", ".join(waiting) or None


def summary(path: Path, rel: str, tracked: Tracked | None = None) -> dict[str, Any]:
    """The list's line: the title, the tasks done out of the task files.  Task states
    come from the session that owns the directory (``tracked``) when one does, else
    from a ``state.json`` beside ``plan.md``."""
    title = _agentflow_title(path)
    states = _board_states(tracked[1] if tracked else _states(path))
    tasks = _task_files(path)
    plan = read_file(path / "plan.md")
    total = len(tasks)
    status = _status(states, total)
    if plan.problem is not None:
        status = f"not shown: plan.md {plan.problem}"
    done = sum(1 for s in states.values() if s == "done")
    out = {
        "title": title or path.name,
        "progress": {"done": done, "total": total},
        "updated": iso(max([mtime(path), mtime(path / "plan.md")] + [mtime(t) for t in tasks])),
        "status": status,
        "state": "done" if total and done == total else "doing" if done else "todo",
    }
    if tracked:
        out["owner_session"] = tracked[0]
    return out


def detail(path: Path, rel: str, tracked: Tracked | None = None) -> dict[str, Any]:
    """The page: the plan as ``agentctl plan validate`` reads it, its problems, and its
    graph with each task's state."""
    from plankit.agentflow.validate import check_dir

    try:
        plan, problems = check_dir(str(path))
    except Exception as exc:  # the board shows a broken plan, never a 500
        return {"errors": [error("unreadable", str(exc), rel)], "plan": None, "graph": None}
    errors = [p.to_json() for p in problems]
    where = str(path)
    for problem in errors:  # files named from the root, as everywhere on the board
        file = problem.get("file")
        if isinstance(file, str) and (file == where or file.startswith(where + os.sep)):
            problem["file"] = rel + file[len(where) :].replace(os.sep, "/")
    state = read_file(path / "state.json")
    if tracked is None:
        errors += file_error(f"{rel}/state.json", state)
    native = tracked[1] if tracked else _states(path, state)
    if plan is None:
        return {"errors": errors, "plan": None, "graph": None}
    data = plan.to_dict()
    data["path"] = rel
    return {"errors": errors, "plan": data, "graph": graph_layout(data, native)}


def graph_layout(plan: dict[str, Any], states: dict[str, str]) -> dict[str, Any]:
    """Nodes in dependency waves (columns), edges, and the critical path (the longest
    chain of dependencies), for the page to draw."""
    tasks = {t["id"]: t for t in plan["tasks"]}
    column = {tid: i for i, wave in enumerate(plan["waves"]) for tid in wave}
    longest: dict[str, tuple[int, str | None]] = {}
    for wave in plan["waves"]:
        for tid in wave:
            best: tuple[int, str | None] = (1, None)
            for dep in tasks[tid]["depends_on"]:
                if dep in longest and longest[dep][0] + 1 > best[0]:
                    best = (longest[dep][0] + 1, dep)
            longest[tid] = best
    critical: list[str] = []
    if longest:
        node: str | None = max(longest, key=lambda t: (longest[t][0], -column.get(t, 0)))
        while node is not None:
            critical.append(node)
            node = longest[node][1]
        critical.reverse()
    nodes = []
    for x, wave in enumerate(plan["waves"]):
        for y, tid in enumerate(wave):
            native = states.get(tid, "pending")
            nodes.append(
                {
                    "id": tid,
                    "x": x,
                    "y": y,
                    "state": board_state("agentflow", native),
                    "native": native,
                }
            )
    edges = [
        {"from": dep, "to": t["id"], "critical": dep in critical and t["id"] in critical}
        for t in plan["tasks"]
        for dep in t["depends_on"]
    ]
    return {"nodes": nodes, "edges": edges, "critical_path": critical}
