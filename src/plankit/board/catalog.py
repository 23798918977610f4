"""What the board knows: the plans found under its root, their summaries, and the
versions of each plan seen while it runs.

Summaries are cached with the :func:`~plankit.board.views.signature` they were made
from, so a warm ``/api/plans`` costs a few ``stat`` calls per plan.  The list of plans
is found once and found again when the file watcher reports a change it cannot place
in a known plan (a new session, a new checklist, a deleted directory).  Each plan keeps
its last :data:`MAX_VERSIONS` texts (TeDDy: the plan of each turn; checklists and
agentflow directories: the text each time it changed), for the page's diffs.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plankit.board import views
from plankit.board.discover import PlanRef, discover, locate, parse_id

MAX_VERSIONS = 50
"""Versions kept per plan."""


@dataclass(slots=True)
class _Entry:
    signature: tuple[object, ...]
    summary: dict[str, Any] | None
    versions: list[tuple[str, str, str]] = field(default_factory=list)  # (label, time, text)


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Catalog:
    """The plans under ``root`` (see the module documentation).  Thread-safe."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._refs: list[PlanRef] | None = None
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.RLock()

    # --- the list ----------------------------------------------------------------------

    def refs(self) -> list[PlanRef]:
        """The plans found (found on first use, and again after :meth:`rescan`)."""
        with self._lock:
            if self._refs is None:
                self._refs = discover(self.root)
            return self._refs

    def rescan(self) -> None:
        """Forget the list of plans: it is found again on next use."""
        with self._lock:
            self._refs = None

    def plans(self) -> list[dict[str, Any]]:
        """Every plan's summary, in order."""
        out = []
        for ref in self.refs():
            found = self.summary(ref)
            if found is not None:
                out.append(found)
        return out

    def summary(self, ref: PlanRef) -> dict[str, Any] | None:
        """One plan's summary, re-read only when its files changed."""
        path = locate(self.root, ref)
        if path is None:
            return None
        sig = views.signature(ref, path)
        with self._lock:
            entry = self._entries.get(ref.id)
            if entry is not None and entry.signature == sig:
                return entry.summary
        try:
            made = views.summary(ref, path)
        except Exception as exc:  # a plan that cannot be read is listed broken
            made = {
                "kind": ref.kind,
                "id": ref.id,
                "path": ref.rel,
                "title": ref.rel,
                "progress": {"done": 0, "total": 0},
                "updated": None,
                "status": f"unreadable: {exc}",
            }
        with self._lock:
            entry = self._entries.setdefault(ref.id, _Entry(sig, made))
            entry.signature, entry.summary = sig, made
            self._remember(ref, path, entry)
        return made

    def _remember(self, ref: PlanRef, path: Path, entry: _Entry) -> None:
        """Keep a new version of the plan's text when it changed."""
        if ref.kind == "teddy" and not entry.versions:
            entry.versions = _turn_versions(path)
            return
        try:
            text = views.text_of(ref, path)
        except Exception:
            return
        if entry.versions and entry.versions[-1][2] == text:
            return
        label = f"seen {_now()}"
        if ref.kind == "teddy":
            turns = views.turn_dirs(path)
            label = f"turn {turns[-1].name}" if turns else label
        entry.versions.append((label, _now(), text))
        del entry.versions[:-MAX_VERSIONS]

    # --- one plan ----------------------------------------------------------------------

    def find(self, plan_id: str) -> PlanRef | None:
        """The plan ``plan_id`` names, when it is one the board found."""
        ref = parse_id(plan_id)
        if ref is None or ref not in self.refs():
            return None
        return ref

    def detail(self, ref: PlanRef) -> dict[str, Any] | None:
        """The plan's page (None when it is gone)."""
        path = locate(self.root, ref)
        if path is None:
            return None
        self.summary(ref)
        try:
            data = views.detail(ref, path)
        except Exception as exc:  # never a 500 for a plan: its errors are shown
            data = {"kind": ref.kind, "id": ref.id, "path": ref.rel, "title": ref.rel}
            data["errors"] = [
                {"code": "unreadable", "message": str(exc), "line": None, "file": ref.rel}
            ]
        if data is not None:
            data["history"] = self.history(ref)
        return data

    def history(self, ref: PlanRef) -> list[dict[str, Any]]:
        """The versions kept: their number, label, time and size."""
        with self._lock:
            entry = self._entries.get(ref.id)
            versions = list(entry.versions) if entry else []
        return [
            {"version": i, "label": label, "time": time, "size": len(text)}
            for i, (label, time, text) in enumerate(versions)
        ]

    def diff(self, ref: PlanRef, old: int, new: int) -> str | None:
        """A unified diff between two kept versions (None when one does not exist)."""
        with self._lock:
            entry = self._entries.get(ref.id)
            versions = list(entry.versions) if entry else []
        if not (0 <= old < len(versions) and 0 <= new < len(versions)):
            return None
        a, b = versions[old], versions[new]
        return "".join(
            difflib.unified_diff(
                a[2].splitlines(keepends=True),
                b[2].splitlines(keepends=True),
                fromfile=a[0],
                tofile=b[0],
            )
        )

    # --- changes on disk -----------------------------------------------------------------

    def changed(self, paths: Iterable[Path]) -> list[dict[str, Any]]:
        """The events for files that changed: a plan changed, appeared or went away."""
        before = {ref.id: ref for ref in self.refs()}
        touched: set[str] = set()
        unplaced = False
        for path in paths:
            try:
                rel = path.resolve().relative_to(self.root).as_posix()
            except ValueError:
                continue
            owners = [r for r in before.values() if rel == r.rel or rel.startswith(r.rel + "/")]
            if owners:
                touched.update(r.id for r in owners)
            if not owners or not path.exists():
                unplaced = True
        events: list[dict[str, Any]] = []
        if unplaced:
            self.rescan()
            after = {ref.id: ref for ref in self.refs()}
            for plan_id in before.keys() - after.keys():
                with self._lock:
                    self._entries.pop(plan_id, None)
                events.append({"type": "removed", "id": plan_id})
            for plan_id in after.keys() - before.keys():
                made = self.summary(after[plan_id])
                if made is not None:
                    events.append({"type": "added", "plan": made})
            touched &= after.keys()
        for plan_id in sorted(touched):
            made = self.summary(before[plan_id])
            if made is not None:
                events.append({"type": "changed", "plan": made})
        return events


def _turn_versions(session: Path) -> list[tuple[str, str, str]]:
    """A TeDDy session's history: the plan of every turn."""
    out = []
    for turn in views.turn_dirs(session)[-MAX_VERSIONS:]:
        text = views.read_small(turn / "plan.md")
        if text is not None:
            stamp = views.iso(views.mtime(turn / "plan.md"))
            out.append((f"turn {turn.name}", stamp, text))
    return out
