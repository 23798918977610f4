"""What the board knows: the plans found under its root, their summaries, and the
versions of each plan seen while it runs.

Summaries are cached with the :func:`~plankit.board.views.signature` they were made
from, so a warm ``/api/plans`` costs a few ``stat`` calls per plan.  The list of plans
is found once and found again when the file watcher reports a change it cannot place
in a known plan that may concern plans (a new session, a new checklist, a directory
made or deleted; not a source file edited).  Checklists, agentflow directories and ACP
runs keep their last :data:`MAX_VERSIONS` texts, one each time the board saw it
change, for the page's diffs; a TeDDy session's versions are its turns' plans, read
from disk when asked for.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plankit.board import views
from plankit.board.discover import PlanRef, discover, locate, looks_like_plan, parse_id
from plankit.board.sources import Source

MAX_VERSIONS = 50
"""Versions kept per plan."""
FIRST_READS = 500
"""Plans read for one list at most; the others are listed as being read (their line
comes as a ``changed`` event once :meth:`Catalog.fill` has read it), so the first
list of a tree of 10,000 plans comes at once, not after reading them all."""


@dataclass(slots=True)
class _Entry:
    signature: tuple[object, ...]
    summary: dict[str, Any] | None
    versions: list[tuple[str, str, str]] = field(default_factory=list)  # (label, time, text)


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Catalog:
    """The plans under ``root`` (see the module documentation).  Thread-safe."""

    def __init__(self, root: Path, sources: Sequence[Source] = ()) -> None:
        self.root = root.resolve()
        self.sources = tuple(sources)
        """Where plans come from besides the root (:mod:`plankit.board.sources`)."""
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

    def plans(self, budget: int | None = None) -> list[dict[str, Any]]:
        """Every plan's summary: the root's, in order, then each source's.  With a
        ``budget``, at most that many plans not read yet are read; the others are
        listed as being read (``"status": "reading…"``, see :meth:`unread`)."""
        out = []
        for ref in self.refs():
            if budget is not None and not self._known(ref):
                if budget <= 0:
                    out.append(_reading(ref))
                    continue
                budget -= 1
            found = self.summary(ref)
            if found is not None:
                out.append(found)
        for source in self.sources:
            out += source.plans()
        return out

    def _known(self, ref: PlanRef) -> bool:
        with self._lock:
            return ref.id in self._entries

    def unread(self) -> list[PlanRef]:
        """The plans found whose summary was never read."""
        return [ref for ref in self.refs() if not self._known(ref)]

    def fill(self, most: int = FIRST_READS) -> list[dict[str, Any]]:
        """Read ``most`` plans not read yet; a ``changed`` event for each (a plan
        that turned out not to be one is ``removed``).  Nothing: all are read."""
        events: list[dict[str, Any]] = []
        for ref in self.unread()[:most]:
            made = self.summary(ref)
            if made is None:
                events.append({"type": "removed", "id": ref.id})
            else:
                events.append({"type": "changed", "plan": made})
        return events

    def source_of(self, plan_id: str) -> Source | None:
        """The source ``plan_id`` belongs to, or None for a plan under the root."""
        return next((s for s in self.sources if s.owns(plan_id)), None)

    def page(self, plan_id: str, query: Mapping[str, str]) -> dict[str, Any] | None:
        """The page of the plan ``plan_id`` names, wherever it comes from (None when
        the board has no such plan)."""
        source = self.source_of(plan_id)
        if source is not None:
            data = source.detail(plan_id, query)
            if data is not None:
                data["history"] = _history(source.versions(plan_id))
            return data
        ref = self.find(plan_id)
        return self.detail(ref) if ref is not None else None

    def diff_of(self, plan_id: str, old: int, new: int) -> str | None:
        """:meth:`diff` for the plan ``plan_id`` names, wherever it comes from."""
        source = self.source_of(plan_id)
        if source is not None:
            return _diff(source.versions(plan_id), old, new)
        ref = self.find(plan_id)
        return self.diff(ref, old, new) if ref is not None else None

    def summary(self, ref: PlanRef) -> dict[str, Any] | None:
        """One plan's summary, re-read only when its files changed."""
        path = locate(self.root, ref)
        if path is None:
            return None
        tracked = self._tracked(ref, path)
        sig = (*views.signature(ref, path), tracked)
        with self._lock:
            entry = self._entries.get(ref.id)
            if entry is not None and entry.signature == sig:
                return entry.summary
        try:
            made, text = views.read(ref, path, tracked=tracked)
        except Exception as exc:  # a plan that cannot be read is listed broken
            made, text = (
                {
                    "kind": ref.kind,
                    "id": ref.id,
                    "path": ref.rel,
                    "title": ref.rel,
                    "progress": {"done": 0, "total": 0},
                    "updated": None,
                    "status": f"unreadable: {exc}",
                },
                None,
            )
        with self._lock:
            entry = self._entries.setdefault(ref.id, _Entry(sig, made))
            entry.signature, entry.summary = sig, made
            if text is not None and (not entry.versions or entry.versions[-1][2] != text):
                entry.versions.append((f"seen {_now()}", _now(), text))
                del entry.versions[:-MAX_VERSIONS]
        return made

    def _tracked(self, ref: PlanRef, path: Path) -> views.Tracked | None:
        """The session that owns an agentflow directory, and its tasks' states."""
        if ref.kind != "agentflow":
            return None
        for source in self.sources:
            found = source.tracked(str(path))
            if found is not None:
                return found
        return None

    def recheck(self) -> list[dict[str, Any]]:
        """``changed`` events for the agentflow directories whose line changed with
        their session's task states (after a poll of the control plane)."""
        events = []
        for ref in self.refs():
            if ref.kind != "agentflow":
                continue
            with self._lock:
                entry = self._entries.get(ref.id)
                before = entry.summary if entry else None
            if entry is None:
                continue
            made = self.summary(ref)
            if made is not None and made != before:
                events.append({"type": "changed", "plan": made})
        return events

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
            data = views.detail(ref, path, self._tracked(ref, path))
        except Exception as exc:  # never a 500 for a plan: its errors are shown
            data = {"kind": ref.kind, "id": ref.id, "path": ref.rel, "title": ref.rel}
            data["errors"] = [
                {"code": "unreadable", "message": str(exc), "line": None, "file": ref.rel}
            ]
        if data is not None:
            data["history"] = self.history(ref)
        return data

    def _versions(self, ref: PlanRef) -> list[tuple[str, str, str]]:
        if ref.kind == "teddy":  # a session's history is its turns, kept on disk
            path = locate(self.root, ref)
            return _turn_versions(path) if path is not None else []
        with self._lock:
            entry = self._entries.get(ref.id)
            return list(entry.versions) if entry else []

    def history(self, ref: PlanRef) -> list[dict[str, Any]]:
        """The versions kept: their number, label, time and size."""
        return _history(self._versions(ref))

    def diff(self, ref: PlanRef, old: int, new: int) -> str | None:
        """A unified diff between two kept versions (None when one does not exist)."""
        return _diff(self._versions(ref), old, new)

    # --- changes on disk -----------------------------------------------------------------

    def changed(self, paths: Iterable[Path]) -> list[dict[str, Any]]:
        """The events for files that changed: a plan changed, appeared or went away.

        A file inside a known plan touches that plan (``.teddy/memos.yaml``: every
        session beside it); a change elsewhere sends the walk for plans again only when
        it may add or remove one (see :func:`may_hold_plans`), so editing source files
        costs no walk."""
        before = {ref.id: ref for ref in self.refs()}
        touched: set[str] = set()
        rescan = False
        for path in paths:
            try:
                rel = path.resolve().relative_to(self.root).as_posix()
            except ValueError:
                continue
            owners = [r for r in before.values() if rel == r.rel or rel.startswith(r.rel + "/")]
            if rel.endswith(".teddy/memos.yaml"):
                sessions = rel[: -len("memos.yaml")]
                owners += [
                    r for r in before.values() if r.kind == "teddy" and r.rel.startswith(sessions)
                ]
            touched.update(r.id for r in owners)
            if not rescan and (not owners or not path.exists()):
                rescan = may_hold_plans(rel, path, before.values())
        events: list[dict[str, Any]] = []
        if rescan:
            self.rescan()
            after = {ref.id: ref for ref in self.refs()}
            for plan_id in sorted(before.keys() - after.keys()):
                with self._lock:
                    self._entries.pop(plan_id, None)
                events.append({"type": "removed", "id": plan_id})
            for plan_id in sorted(after.keys() - before.keys()):
                made = self.summary(after[plan_id])
                if made is not None:
                    events.append({"type": "added", "plan": made})
            touched &= after.keys()
        for plan_id in sorted(touched):
            made = self.summary(before[plan_id])
            if made is not None:
                events.append({"type": "changed", "plan": made})
        return events


def _reading(ref: PlanRef) -> dict[str, Any]:
    """The line of a plan listed before it was read."""
    name = ref.rel.rsplit("/", 1)[-1]
    return {
        "kind": ref.kind,
        "id": ref.id,
        "path": ref.rel,
        "title": name,
        "progress": {"done": 0, "total": 0},
        "updated": None,
        "status": "reading…",
    }


def _history(versions: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    return [
        {"version": i, "label": label, "time": time, "size": len(text)}
        for i, (label, time, text) in enumerate(versions)
    ]


def _diff(versions: list[tuple[str, str, str]], old: int, new: int) -> str | None:
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


def may_hold_plans(rel: str, path: Path, known: Iterable[PlanRef]) -> bool:
    """Whether a change at ``rel`` may add or remove a plan: a directory, a file named
    like a plan (or inside ``.teddy``), or a path that held known plans and is gone."""
    if not path.exists():
        return any(r.rel == rel or r.rel.startswith(rel + "/") for r in known) or looks_like_plan(
            rel
        )
    return path.is_dir() or looks_like_plan(rel)


def _turn_versions(session: Path) -> list[tuple[str, str, str]]:
    """A TeDDy session's history: the plan of every turn."""
    out = []
    for turn in views.turn_dirs(session)[-MAX_VERSIONS:]:
        text = views.read_small(turn / "plan.md")
        if text is not None:
            stamp = views.iso(views.mtime(turn / "plan.md"))
            out.append((f"turn {turn.name}", stamp, text))
    return out
