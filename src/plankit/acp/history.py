"""A TeDDy session's history as ACP updates, and sessions as ``session/list`` entries.

``session/load`` replays a session so that a client resuming it (acpx's named
sessions, Zed's history) shows what happened, turn by turn:

- the user's message (``message.md``, or the plan itself when the prompt gave it) as
  ``user_message_chunk``;
- the plan's Rationale as ``agent_thought_chunk``;
- the plan as a ``plan`` update, each entry's status read from the turn's
  ``report.md`` (an action that succeeded is ``completed``, one that failed
  ``failed``, one skipped, rejected or not reached ``skipped``: the last three stay
  ``pending`` on the wire, see :mod:`.entries`);
- the report's overall status as ``agent_message_chunk``.

Every file is read with a size cap and as UTF-8 with replacement; a turn that cannot
be read is replayed as far as it can be (never an error for the whole session).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from plankit.acp.entries import plan_update, teddy_entries
from plankit.acp.turn import message_update, thought_update, user_update

MAX_FILE = 2_000_000
"""A file of a turn larger than this is not replayed (no plan or report is that big)."""

_STATUS = re.compile(r"^- \*\*Overall Status:\*\* (.+)$", re.MULTILINE)
_ACTION = re.compile(r"^### (\d+)\. `[A-Z_]+`", re.MULTILINE)


def _read(path: Path) -> str | None:
    """The file's text (None when missing, not a regular file, or too large)."""
    import os
    import stat

    try:
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
        )
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE:
            return None
        return handle.read(MAX_FILE + 1).decode("utf-8", errors="replace")


def report_statuses(report: str) -> dict[int, str]:
    """Each action's rich status in a report, by 0-based position."""
    out: dict[int, str] = {}
    found = list(_ACTION.finditer(report))
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(report)
        body = report[match.end() : end]
        if "**Execution:** Success" in body:
            status = "completed"
        elif "**Execution:** Failure" in body:
            status = "failed"
        elif "rejected by the user" in body:
            status = "rejected"
        else:
            status = "skipped"
        out[int(match.group(1)) - 1] = status
    return out


def replay(session: Path) -> Iterator[dict[str, Any]]:
    """The updates that tell the session's history (see the module documentation)."""
    from plankit.errors import PlanError
    from plankit.teddy.format.parse import parse_plan

    turns = sorted(p for p in session.iterdir() if p.is_dir() and p.name.isdigit())
    for turn in turns:
        plan_text = _read(turn / "plan.md")
        message = _read(turn / "message.md")
        if plan_text is None and message is None:
            continue
        yield user_update((message if message is not None else plan_text or "").strip())
        if plan_text is None:
            continue
        try:
            plan = parse_plan(plan_text)
        except (PlanError, RecursionError, ValueError):
            continue
        if plan.rationale.strip():
            yield thought_update(plan.rationale.strip())
        report = _read(turn / "report.md")
        statuses = report_statuses(report) if report is not None else {}
        yield plan_update(teddy_entries(plan, statuses), kind="teddy", title=plan.title)
        if report is not None:
            status = _STATUS.search(report)
            if status is not None:
                where = f".teddy/{session.name}/{turn.name}/report.md"
                yield message_update(f"{status.group(1).strip()}. Report: `{where}`")


def session_info(root: Path, session: Path) -> dict[str, Any]:
    """A ``SessionInfo`` (JSON form) for ``session/list``: id, cwd, the title of its
    latest plan, and when it last changed."""
    import datetime as _dt

    title = None
    latest = session.stat().st_mtime
    for turn in sorted(p for p in session.iterdir() if p.is_dir() and p.name.isdigit()):
        for name in ("plan.md", "report.md"):
            path = turn / name
            if path.is_file():
                latest = max(latest, path.stat().st_mtime)
        text = _read(turn / "plan.md")
        first = text.lstrip().splitlines()[0] if text and text.strip() else ""
        if first.startswith("# "):
            title = first[2:].strip()
    updated = _dt.datetime.fromtimestamp(latest, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    info: dict[str, Any] = {"sessionId": session.name, "cwd": str(root), "updatedAt": updated}
    if title:
        info["title"] = title
    return info
