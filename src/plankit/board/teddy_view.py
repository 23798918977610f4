"""TeDDy sessions on the board (``.teddy/<YYYYMMDD>-<name>/``): the list's line and
the page, read with TeDDy's own readers (``read_report``, ``meta_from_text``,
``memos_from_text``, ``check_plan``) from files the board opened itself
(:mod:`plankit.board.files`).

Progress counts the turns whose report says *Completed* out of all turns: a failed,
partial or skipped turn is not done.  A session whose root agent concluded (a
CONCLUDE that ran, in a turn with no caller) is complete: every turn counts.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from plankit.board.files import FileText, error, file_error, iso, mtime, read_file
from plankit.board.states import board_state, turn_state

HEAD = 4096
"""Bytes read from an earlier turn's report for the list (its status is at the top)."""


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


def title_of(plan_text: str | None) -> str | None:
    """A plan's title: its first ``# `` heading."""
    if not plan_text:
        return None
    for line in plan_text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return None


def _status(report: str | None) -> str | None:
    from plankit.teddy.run.report import read_status

    return read_status(report) if report else None


def _meta(found: FileText, name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A turn's ``meta.yaml`` as TeDDy reads it, or the error that kept it from being
    read (with no metadata)."""
    from plankit.errors import PlankitError
    from plankit.teddy.session.layout import meta_from_text

    if found.text is None:
        return {}, []
    try:
        meta = meta_from_text(found.text, name, name.split("/")[-2])
    except (PlankitError, RecursionError, ValueError) as exc:
        return {}, [error(getattr(exc, "code", "bad-meta"), str(exc), name)]
    return {
        "agent": meta.agent,
        "caller_turn_id": meta.caller_turn_id,
        "parent_turn_id": meta.parent_turn_id,
        "model": meta.model,
        "input_tokens": meta.input_tokens,
        "output_tokens": meta.output_tokens,
    }, []


def _concluded(report: str | None, meta: dict[str, Any] | None) -> bool:
    """Whether this turn ended the session: its root agent's CONCLUDE ran (``meta``
    None: whether a CONCLUDE ran, whoever called the agent)."""
    from plankit.teddy.run.report import read_report

    if not report or (meta is not None and meta.get("caller_turn_id")):
        return False
    found = read_report(report)
    return any(a.type == "CONCLUDE" and a.outcome == "success" for a in found.actions)


def _state(status: str | None, report: str | None) -> str:
    """The board's state of a turn with this status; its report's actions are read only
    for a partial turn (what tells one that failed from one whose actions were only
    skipped), not for every line of the list at every poll."""
    outcomes: list[str] = []
    if report and status and status.startswith("Partial"):
        from plankit.teddy.run.report import read_report

        outcomes = [a.outcome for a in read_report(report).actions]
    return turn_state(status, outcomes)


def summary(session: Path) -> dict[str, Any]:
    """The list's line: the latest plan's title, the turns done, the latest status."""
    names = turn_names(session)
    latest = session / names[-1] if names else session
    title = None
    for name in reversed(names):  # the latest turn with a plan, most often the last one
        title = title_of(read_file(session / name / "plan.md").text)
        if title:
            break
    statuses = [_status(read_file(session / n / "report.md", HEAD, head=True).text) for n in names]
    done = sum(1 for s in statuses if s and s.startswith("Completed"))
    report = read_file(latest / "report.md")
    status = _status(report.text)
    executed = [n for n, s in zip(names, statuses, strict=True) if s]
    full: str | None = None
    if executed and status is None:  # the latest executed turn: did it end the session?
        last = session / executed[-1]
        full = read_file(last / "report.md").text
        concluded = _concluded(full, None) and _concluded(
            full, _meta(read_file(last / "meta.yaml"), f"{executed[-1]}/meta.yaml")[0]
        )  # its meta.yaml (YAML: costly) is read only after a CONCLUDE that ran
    else:
        concluded = False
    if report.problem is not None:
        status = f"not shown: report.md {report.problem}"
    elif concluded:
        status, done = "concluded", len(names)
    elif status is None and (latest / "plan.md").is_file():
        status = "awaiting execution"
    elif status is None and (plan := read_file(latest / "plan.md")).problem is not None:
        status = f"not shown: plan.md {plan.problem}"
    updated = max([mtime(latest)] + [mtime(latest / n) for n in ("plan.md", "report.md")])
    if concluded:
        state = "done"
    elif status is None and executed:  # nothing planned yet: the last run turn tells
        last_status = statuses[names.index(executed[-1])]
        status = f"turn {executed[-1]}: {last_status}"
        state = _state(last_status, full)
    else:
        state = _state(status, report.text)
    return {
        "title": title or session.name,
        "progress": {"done": done, "total": len(names)},
        "updated": iso(updated),
        "status": status,
        "state": state,
    }


def _turn(turn: Path, rel: str) -> dict[str, Any]:
    from plankit.errors import PlanError, diagnostics_json
    from plankit.teddy.format.model import plan_to_dict
    from plankit.teddy.format.parse import check_plan
    from plankit.teddy.run.report import read_report

    where = f"{rel}/{turn.name}"
    files = {n: read_file(turn / n) for n in ("meta.yaml", "plan.md", "report.md", "message.md")}
    errors: list[Any] = []
    for name, found in files.items():
        errors += file_error(f"{where}/{name}", found)
    meta, problems = _meta(files["meta.yaml"], f"{where}/meta.yaml")
    errors += problems
    plan_text, report = files["plan.md"].text, files["report.md"].text
    plan: dict[str, Any] | None = None
    if plan_text is not None:
        try:
            parsed, diagnostics = check_plan(plan_text)
        except (PlanError, RecursionError, ValueError) as exc:  # never a 500
            parsed, diagnostics = None, []
            errors.append(error("unreadable", str(exc), f"{where}/plan.md"))
        if parsed is not None:
            plan = plan_to_dict(parsed)
        errors += diagnostics_json(diagnostics, f"{where}/plan.md")
    read = read_report(report) if report else None
    actions = [
        {
            "type": a.type,
            "target": a.target,
            "outcome": a.outcome,
            "state": board_state("teddy", a.outcome),
            "reason": a.reason,
            "text": a.text,
        }
        for a in (read.actions if read else ())
    ]
    status = (read.status if read else None) or (
        "awaiting execution" if plan_text is not None else "no plan yet"
    )
    return {
        "turn": turn.name,
        "agent": meta.get("agent"),
        "caller": meta.get("caller_turn_id"),
        "parent": meta.get("parent_turn_id"),
        "model": meta.get("model"),
        "input_tokens": meta.get("input_tokens"),
        "output_tokens": meta.get("output_tokens"),
        "message": files["message.md"].text,
        "title": title_of(plan_text),
        "status": status,
        "state": turn_state(status, [str(a["outcome"]) for a in actions]),
        "reasons": list(read.validation_errors) if read else [],
        "concluded": _concluded(report, meta),
        "plan": plan,
        "plan_markdown": plan_text,
        "errors": errors,
        "actions": actions,
        "report": report,
    }


def detail(session: Path, rel: str) -> dict[str, Any]:
    """The page: every turn (its plan, status, actions and why they failed), the call
    stack, the memos."""
    from plankit.errors import PlankitError
    from plankit.teddy.session.memos import memos_from_text

    turns = [_turn(turn, rel) for turn in turn_dirs(session)]
    stack: list[str] = []
    by_name = {t["turn"]: t for t in turns}
    current = turns[-1] if turns else None
    while current is not None and len(stack) <= len(turns):
        stack.append(f"{current['agent'] or '?'} (turn {current['turn']})")
        caller = current.get("caller")
        current = by_name.get(caller) if isinstance(caller, str) else None
    found = read_file(session.parent.parent / ".teddy" / "memos.yaml")
    errors = file_error(".teddy/memos.yaml", found)
    memos: list[str] = []
    if found.text is not None:
        try:
            memos = memos_from_text(found.text, ".teddy/memos.yaml")
        except (PlankitError, RecursionError, ValueError) as exc:
            errors.append(error(getattr(exc, "code", "bad-memos"), str(exc), ".teddy/memos.yaml"))
    pending = turns[-1] if turns and turns[-1]["status"] == "awaiting execution" else None
    return {
        "turns": turns,
        "call_stack": stack,
        "memos": memos,
        "pending": pending,
        "errors": errors,
    }


def signature_paths(session: Path) -> tuple[list[str], str]:
    """The turn names and the latest turn's directory (what a summary depends on)."""
    names = turn_names(session)
    return names, os.path.join(str(session), names[-1]) if names else str(session)
