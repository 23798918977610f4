"""Each kind of plan as the board shows it: a summary for the list, a detail for its page.

A summary is ``{kind, id, path, title, progress: {done, total}, updated, status,
state}``; a detail adds the plan in the shapes the command lines print with ``--json``
(TeDDy: ``teddy parse --json`` per turn; checklists: ``plankit checklist show --json``;
agentflow: ``agentctl plan validate --json``'s plan, with its dependency graph laid
out).  Each kind has its module (:mod:`~plankit.board.teddy_view`,
:mod:`~plankit.board.checklist_view`, :mod:`~plankit.board.agentflow_view`,
:mod:`~plankit.board.acp_view`); this one picks the module by kind.  A plan that cannot
be read gets its errors in the same diagnostic shape, never an exception: the board
shows it broken, not a 500.  :func:`signature` is what a summary depends on on disk
(cheap ``stat`` calls), so a warm list re-reads only what changed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from plankit.board import acp_view, agentflow_view, checklist_view, teddy_view
from plankit.board.agentflow_view import Tracked, graph_layout
from plankit.board.checklist_view import checklist_head, checklist_page
from plankit.board.discover import PlanRef
from plankit.board.files import MAX_TEXT, error, iso, mtime, read_small
from plankit.board.teddy_view import turn_dirs

__all__ = [
    "MAX_TEXT",
    "Tracked",
    "checklist_head",
    "checklist_page",
    "detail",
    "error",
    "graph_layout",
    "iso",
    "mtime",
    "read",
    "read_small",
    "signature",
    "summary",
    "turn_dirs",
]


def _stat(path: str) -> tuple[int, int]:
    try:
        st = os.lstat(path)
    except OSError:
        return (0, 0)
    return (st.st_mtime_ns, st.st_size)


def signature(ref: PlanRef, path: Path) -> tuple[object, ...]:
    """What the plan's summary depends on: changes when the summary may change.

    A few ``stat`` calls on plain strings (this runs for every plan on every list)."""
    where = str(path)
    if ref.kind == "teddy":
        names, latest = teddy_view.signature_paths(path)
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


def summary(ref: PlanRef, path: Path, tracked: Tracked | None = None) -> dict[str, Any] | None:
    """The plan's line in the list (None: not a plan after all, e.g. a workbook without
    a plan cell)."""
    return read(ref, path, text=False, tracked=tracked)[0]


def read(
    ref: PlanRef, path: Path, *, text: bool = True, tracked: Tracked | None = None
) -> tuple[dict[str, Any] | None, str | None]:
    """The plan's summary (see :func:`summary`) and the text its history keeps (None for
    TeDDy sessions, whose history is their turns, on disk).  Reads the plan once and
    only what the list shows: no lint, no validation, only the latest TeDDy turn.
    ``text=False``: the summary alone (the text is None).  ``tracked``: the states of
    an agentflow directory's tasks, from the session that owns it."""
    base = {"kind": ref.kind, "id": ref.id, "path": ref.rel, "status": None}
    if ref.kind == "teddy":
        return base | teddy_view.summary(path), None
    if ref.kind == "checklist":
        head, kept = checklist_view.summary(path, ref.rel)
        return (base | head if head is not None else None), kept
    if ref.kind == "agentflow":
        kept = agentflow_view.text(path) if text else None
        return base | agentflow_view.summary(path, ref.rel, tracked), kept
    acp = acp_view.read(path, ref.rel, detail=True)
    entries = acp.pop("entries")
    acp.pop("errors")
    return base | acp, json.dumps(entries, indent=1, ensure_ascii=False)


def detail(ref: PlanRef, path: Path, tracked: Tracked | None = None) -> dict[str, Any] | None:
    """The plan's page: the summary and everything it shows."""
    base = {"kind": ref.kind, "id": ref.id, "path": ref.rel, "status": None}
    if ref.kind == "checklist":
        info = checklist_view.detail(path, ref.rel)
        return base | info if info is not None else None
    if ref.kind == "acp":
        return base | acp_view.read(path, ref.rel, detail=True)
    head = summary(ref, path, tracked)
    if head is None:
        return None
    if ref.kind == "teddy":
        return head | teddy_view.detail(path, ref.rel)
    return head | agentflow_view.detail(path, ref.rel, tracked)
