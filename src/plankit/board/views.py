"""Each kind of plan as the board shows it: a summary for the list, a detail for its page.

A summary is ``{kind, id, path, title, progress: {done, total}, updated, status}``; a
detail adds the plan in the shapes the command lines print with ``--json`` (TeDDy:
``teddy parse --json`` per turn; checklists: ``plankit checklist show --json``;
agentflow: ``agentctl plan validate --json``'s plan, with its dependency graph laid
out).  A plan that cannot be read gets its errors in the same diagnostic shape, never an
exception: the board shows it broken, not a 500.  :func:`signature` is what a summary
depends on on disk (cheap ``stat`` calls), so a warm list re-reads only what changed.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from plankit.board.discover import PlanRef
from plankit.board.files import (
    MAX_TEXT,
    FileText,
    error,
    file_error,
    iso,
    mtime,
    read_file,
    read_small,
)

__all__ = ["MAX_TEXT", "detail", "error", "iso", "mtime", "read", "read_small", "summary"]

_STATUS_RE = re.compile(r"^- \*\*Overall Status:\*\* (.+)$", re.MULTILINE)
_ACTION_RE = re.compile(r"^### (\d+)\. `([A-Z_]+)`(?: (.*))?$", re.MULTILINE)


def _stat(path: str) -> tuple[int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (0, 0)
    return (st.st_mtime_ns, st.st_size)


def signature(ref: PlanRef, path: Path) -> tuple[object, ...]:
    """What the plan's summary depends on: changes when the summary may change.

    A few ``stat`` calls on plain strings (this runs for every plan on every list)."""
    where = str(path)
    if ref.kind == "teddy":
        names = turn_names(path)
        latest = os.path.join(where, names[-1]) if names else where
        return (
            _stat(where),
            _stat(latest),
            _stat(os.path.join(latest, "plan.md")),
            _stat(os.path.join(latest, "report.md")),
            len(names),
        )
    if ref.kind == "agentflow":
        return (
            _stat(where),
            _stat(os.path.join(where, "plan.md")),
            _stat(os.path.join(where, "tasks")),
            _stat(os.path.join(where, "state.json")),
        )
    return (_stat(where),)


def summary(ref: PlanRef, path: Path) -> dict[str, Any] | None:
    """The plan's line in the list (None: not a plan after all, e.g. a workbook without
    a plan cell)."""
    return read(ref, path, text=False)[0]


def read(
    ref: PlanRef, path: Path, *, text: bool = True
) -> tuple[dict[str, Any] | None, str | None]:
    """The plan's summary (see :func:`summary`) and the text its history keeps (None for
    TeDDy sessions, whose history is their turns, on disk).  Reads the plan once and
    only what the list shows: no lint, no validation, only the latest TeDDy turn.
    ``text=False``: the summary alone (the text is None)."""
    base = {"kind": ref.kind, "id": ref.id, "path": ref.rel, "status": None}
    if ref.kind == "teddy":
        return base | _teddy_summary(path), None
    if ref.kind == "checklist":
        head, kept = _checklist_summary(path, ref.rel)
        return (base | head if head is not None else None), kept
    if ref.kind == "agentflow":
        kept = _agentflow_text(path) if text else None
        return base | _agentflow_summary(path, ref.rel), kept
    acp = _acp(path, ref.rel, detail=True)
    entries = acp.pop("entries")
    acp.pop("errors")
    return base | acp, json.dumps(entries, indent=1, ensure_ascii=False)


def detail(ref: PlanRef, path: Path) -> dict[str, Any] | None:
    """The plan's page: the summary and everything it shows."""
    base = {"kind": ref.kind, "id": ref.id, "path": ref.rel, "status": None}
    if ref.kind == "checklist":
        info = _checklist(path, ref.rel)
        return base | info if info is not None else None
    if ref.kind == "acp":
        return base | _acp(path, ref.rel, detail=True)
    head = summary(ref, path)
    if head is None:
        return None
    if ref.kind == "teddy":
        return head | _teddy_detail(path, ref.rel)
    return head | _agentflow_detail(path, ref.rel)


def _agentflow_text(path: Path) -> str:
    """The plan and its task files, one text (what the history of the plan compares)."""
    parts = [read_small(path / "plan.md") or ""]
    for task in _task_files(path):
        parts.append(f"--- {task.name}\n" + (read_small(task) or ""))
    return "\n".join(parts)


# --- TeDDy ------------------------------------------------------------------------------


def turn_names(session: Path) -> list[str]:
    """The session's turn directories' names (``01``, ``02`` …), in order."""
    try:
        with os.scandir(session) as entries:
            names = [
                e.name for e in entries if e.name.isdigit() and e.is_dir(follow_symlinks=False)
            ]
    except OSError:
        return []
    return sorted(names, key=int)


def turn_dirs(session: Path) -> list[Path]:
    """The session's turn directories, in order."""
    return [session / name for name in turn_names(session)]


def _title_of(plan_text: str | None) -> str | None:
    if not plan_text:
        return None
    for line in plan_text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return None


def _report_status(report: str | None) -> str | None:
    if not report:
        return None
    m = _STATUS_RE.search(report)
    return m.group(1).strip() if m else None


def _teddy_summary(session: Path) -> dict[str, Any]:
    names = turn_names(session)
    where = str(session)
    done = sum(1 for n in names if os.path.isfile(os.path.join(where, n, "report.md")))
    latest = session / names[-1] if names else session
    title = None
    for name in reversed(names):  # the latest turn with a plan, most often the last one
        title = _title_of(read_small(session / name / "plan.md"))
        if title:
            break
    report = read_file(latest / "report.md")
    status = _report_status(report.text)
    if report.problem is not None:
        status = f"not shown: report.md {report.problem}"
    elif status is None and (latest / "plan.md").is_file():
        status = "awaiting execution"
    elif status is None and (plan := read_file(latest / "plan.md")).problem is not None:
        status = f"not shown: plan.md {plan.problem}"
    updated = max([mtime(latest)] + [mtime(latest / n) for n in ("plan.md", "report.md")])
    return {
        "title": title or session.name,
        "progress": {"done": done, "total": len(names)},
        "updated": iso(updated),
        "status": status,
    }


def _meta(found: FileText) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    text = found.text or ""
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            value = value.strip()
            out[key.strip()] = None if value in ("", "null") else value.strip('"')
    return out


def _report_actions(report: str) -> list[dict[str, Any]]:
    out = []
    matches = list(_ACTION_RE.finditer(report))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(report)
        body = report[m.end() : end]
        if "Execution:** Success" in body:
            outcome = "success"
        elif "Execution:** Failure" in body:
            outcome = "failure"
        else:
            outcome = "skipped"
        out.append(
            {"type": m.group(2), "target": m.group(3), "outcome": outcome, "text": body.strip()}
        )
    return out


def _teddy_detail(session: Path, rel: str) -> dict[str, Any]:
    from plankit.errors import PlanError, diagnostics_json
    from plankit.teddy.format.model import plan_to_dict
    from plankit.teddy.format.parse import check_plan

    turns = []
    for turn in turn_dirs(session):
        files = {
            name: read_file(turn / name)
            for name in ("meta.yaml", "plan.md", "report.md", "message.md")
        }
        meta = _meta(files["meta.yaml"])
        plan_text = files["plan.md"].text
        report = files["report.md"].text
        plan: dict[str, Any] | None = None
        errors: list[Any] = []
        for name, found in files.items():
            errors += file_error(f"{rel}/{turn.name}/{name}", found)
        if plan_text is not None:
            try:
                parsed, problems = check_plan(plan_text)
            except (PlanError, RecursionError, ValueError) as exc:  # never a 500
                parsed, problems = None, []
                errors = [error("unreadable", str(exc), f"{rel}/{turn.name}/plan.md")]
            if parsed is not None:
                plan = plan_to_dict(parsed)
            errors += diagnostics_json(problems, f"{rel}/{turn.name}/plan.md")
        turns.append(
            {
                "turn": turn.name,
                "agent": meta.get("agent"),
                "caller": meta.get("caller_turn_id"),
                "parent": meta.get("parent_turn_id"),
                "model": meta.get("model"),
                "input_tokens": meta.get("input_tokens"),
                "output_tokens": meta.get("output_tokens"),
                "message": files["message.md"].text,
                "title": _title_of(plan_text),
                "status": _report_status(report)
                or ("awaiting execution" if plan_text is not None else "no plan yet"),
                "plan": plan,
                "plan_markdown": plan_text,
                "errors": errors,
                "actions": _report_actions(report) if report else [],
                "report": report,
            }
        )
    stack: list[str] = []
    by_name = {t["turn"]: t for t in turns}
    current = turns[-1] if turns else None
    while current is not None:
        stack.append(f"{current['agent'] or '?'} (turn {current['turn']})")
        caller = current.get("caller")
        current = by_name.get(caller) if isinstance(caller, str) else None
    root = session.parent.parent
    found = read_file(root / ".teddy" / "memos.yaml")
    memos_text = found.text or ""
    memos = [ln[2:].strip().strip('"') for ln in memos_text.splitlines() if ln.startswith("- ")]
    pending = turns[-1] if turns and turns[-1]["status"] == "awaiting execution" else None
    errors = file_error(".teddy/memos.yaml", found)
    return {
        "turns": turns,
        "call_stack": stack,
        "memos": memos,
        "pending": pending,
        "errors": errors,
    }


# --- checklists -------------------------------------------------------------------------


def _checklist_text(path: Path) -> FileText:
    if path.suffix.lower() == ".xlsx":
        return FileText(_xlsx_plan(path))
    return read_file(path)


def _refused(path: Path, found: FileText) -> dict[str, Any]:
    """The list's line for a checklist the board would not read: listed, with why."""
    return {
        "title": path.name,
        "progress": {"done": 0, "total": 0},
        "updated": iso(mtime(path)),
        "status": f"not shown: {path.name} {found.problem}",
    }


def _checklist_summary(path: Path, rel: str) -> tuple[dict[str, Any] | None, str | None]:
    """The list's line for a checklist file: parsed, not linted."""
    found = _checklist_text(path)
    if found.problem is not None:
        return _refused(path, found), None
    if found.text is None:
        return None, None
    return checklist_head(found.text, path.name, iso(mtime(path))), found.text


def checklist_head(text: str, name: str, updated: str | None) -> dict[str, Any] | None:
    """The list's line for a checklist's text (None: no title and no step, so some
    other Markdown file); ``name`` is its title when it has none."""
    from plankit.checklist.plan import parse_plan
    from plankit.errors import PlankitError

    head: dict[str, Any] = {"title": name, "updated": updated}
    try:
        plan = parse_plan(text)
    except (PlankitError, RecursionError, ValueError):
        return head | {"progress": {"done": 0, "total": 0}, "status": "unreadable"}
    progress = plan.progress
    if not plan.title and not progress.total:
        return None
    return head | {
        "title": plan.title or name,
        "progress": {"done": progress.done, "total": progress.total},
        "status": _checklist_status(
            progress.done, progress.total, progress.blocked, progress.review
        ),
    }


def _checklist_status(done: int, total: int, blocked: int, review: int) -> str | None:
    if total and done == total:
        return "done"
    waiting = [f"{blocked} blocked" if blocked else "", f"{review} to review" if review else ""]
    return ", ".join(w for w in waiting if w) or None


def _checklist(path: Path, rel: str) -> dict[str, Any] | None:
    found = _checklist_text(path)
    if found.problem is not None:
        return _refused(path, found) | {"errors": file_error(rel, found)}
    if found.text is None:
        return None
    return checklist_page(found.text, rel, path.name, iso(mtime(path)))


def checklist_page(text: str, rel: str, name: str, updated: str | None) -> dict[str, Any] | None:
    """A checklist's page from its text: the plan, current and next steps, lint
    warnings, or the error that keeps it from being read (None: not a checklist)."""
    from plankit.checklist.lint import lint_plan
    from plankit.checklist.plan import parse_plan
    from plankit.errors import PlankitError, diagnostics_json

    try:
        plan = parse_plan(text)
    except (PlankitError, RecursionError, ValueError) as exc:
        return {
            "title": name,
            "progress": {"done": 0, "total": 0},
            "updated": updated,
            "status": "unreadable",
            "errors": [error(getattr(exc, "code", "unreadable"), str(exc), rel)],
            "markdown": text,
        }
    progress = plan.progress
    if not plan.title and not progress.total:
        return None
    current = plan.current_task()
    following = plan.next_task()
    data = plan.to_dict(raw=False)
    warnings = diagnostics_json(lint_plan(text), rel)
    return {
        "title": plan.title or name,
        "progress": {"done": progress.done, "total": progress.total},
        "updated": updated,
        "status": _checklist_status(
            progress.done, progress.total, progress.blocked, progress.review
        ),
        "plan": data,
        "current": current.to_dict() if current else None,
        "next": following.to_dict() if following else None,
        "warnings": warnings,
        "errors": [],
        "markdown": text,
    }


def _xlsx_plan(path: Path) -> str | None:
    """The text of a workbook's plan cell (the default cell), or None when it holds
    none.  Reading takes no lock and writes nothing."""
    try:
        from plankit.checklist.manager import DEFAULT_CELL
        from plankit.checklist.stores import open_store

        text = open_store(str(path)).get_cell(DEFAULT_CELL)
    except Exception:  # a workbook that is not a checklist, or not readable: not listed
        return None
    return text if isinstance(text, str) and text.strip() else None


# --- agentflow --------------------------------------------------------------------------


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

    text = read_small(path / "plan.md")
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


def _agentflow_summary(path: Path, rel: str) -> dict[str, Any]:
    title = _agentflow_title(path)
    states = _states(path)
    tasks = _task_files(path)
    plan = read_file(path / "plan.md")
    return {
        "title": title or path.name,
        "progress": {
            "done": sum(1 for s in states.values() if s == "done"),
            "total": len(tasks),
        },
        "updated": iso(max([mtime(path), mtime(path / "plan.md")] + [mtime(t) for t in tasks])),
        "status": None if plan.problem is None else f"not shown: plan.md {plan.problem}",
    }


def _agentflow_detail(path: Path, rel: str) -> dict[str, Any]:
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
    errors += file_error(f"{rel}/state.json", state)
    if plan is None:
        return {"errors": errors, "plan": None, "graph": None}
    data = plan.to_dict()
    data["path"] = rel
    return {"errors": errors, "plan": data, "graph": graph_layout(data, _states(path, state))}


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
            nodes.append({"id": tid, "x": x, "y": y, "state": states.get(tid, "pending")})
    edges = [
        {"from": dep, "to": t["id"], "critical": dep in critical and t["id"] in critical}
        for t in plan["tasks"]
        for dep in t["depends_on"]
    ]
    return {"nodes": nodes, "edges": edges, "critical_path": critical}


# --- ACP transcripts ----------------------------------------------------------------------


def _acp(path: Path, rel: str, *, detail: bool) -> dict[str, Any]:
    """The latest plan an ACP agent sent, from a ``plankit acp run --board`` transcript."""
    entries: list[dict[str, Any]] = []
    title = None
    found = read_file(path)
    text = found.text or ""
    for line in text.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        update = _plan_update(message)
        if update is not None:
            entries = [e for e in update.get("entries", []) if isinstance(e, dict)]
            meta = update.get("_meta")
            ours = meta.get("plankit") if isinstance(meta, dict) else None
            if isinstance(ours, dict) and isinstance(ours.get("title"), str):
                title = ours["title"]
    done = sum(1 for e in entries if e.get("status") == "completed")
    out: dict[str, Any] = {
        "title": title or path.stem,
        "progress": {"done": done, "total": len(entries)},
        "updated": iso(mtime(path)),
        "status": None if found.problem is None else f"not shown: {path.name} {found.problem}",
    }
    if detail:
        out["entries"] = entries
        out["errors"] = file_error(rel, found)
    return out


def _plan_update(message: object) -> dict[str, Any] | None:
    if not isinstance(message, dict):
        return None
    body = message.get("message", message)  # a transcript line wraps the JSON-RPC message
    if not isinstance(body, dict) or body.get("method") != "session/update":
        return None
    params = body.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    if isinstance(update, dict) and update.get("sessionUpdate") == "plan":
        return update
    return None
