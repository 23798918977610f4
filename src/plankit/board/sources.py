"""Plans the board reads from somewhere other than the files under its root: the
agentflow control plane (:mod:`plankit.board.control`) and Google Sheets checklists
(:mod:`plankit.board.sheets`).

No file watcher sees them change, so the board polls each source (every
:attr:`Source.interval` seconds, in a worker thread) and sends the same ``added``,
``changed`` and ``removed`` events as for files.  Requests never wait on a source:
:meth:`Source.plans` answers from what the last poll read.  A source that cannot be
read says why in :meth:`Source.status`, shown above the list; it never fails a request.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Mapping
from typing import Any


class Source:
    """One place plans come from besides the root (see the module documentation).

    Subclasses implement :meth:`poll`, :meth:`detail` and :meth:`versions`, and keep
    their summaries with :meth:`_publish`.
    """

    name = ""
    """What the page calls the source (``agentflow sessions``, ``Google Sheets``)."""
    interval = 1.0
    """Seconds between polls."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._summaries: dict[str, dict[str, Any]] = {}
        self.error: str | None = None
        """Why the source could not be read at the last poll, or None."""
        self.where = ""
        """Where it reads from, for the page (never a password)."""

    def plans(self) -> list[dict[str, Any]]:
        """The summaries read by the last poll, in the source's order."""
        with self._lock:
            return list(self._summaries.values())

    def owns(self, plan_id: str) -> bool:
        """Whether ``plan_id`` is one of this source's plans."""
        with self._lock:
            return plan_id in self._summaries

    def status(self) -> dict[str, Any]:
        """``{"name", "where", "error"}`` for the page."""
        return {"name": self.name, "where": self.where, "error": self.error}

    def poll(self) -> list[dict[str, Any]]:
        """Read the source again; the events for what changed since the last poll."""
        raise NotImplementedError

    def detail(self, plan_id: str, query: Mapping[str, str]) -> dict[str, Any] | None:
        """One plan's page (None when the source has no such plan)."""
        raise NotImplementedError

    def versions(self, plan_id: str) -> list[tuple[str, str, str]]:
        """The plan's kept versions, oldest first: ``(label, time, text)``."""
        raise NotImplementedError

    def tracked(self, path: str) -> tuple[str, dict[str, str]] | None:
        """The session that owns the plan directory at ``path`` and its tasks' states,
        when this source knows one (the control plane); else None."""
        return None

    def close(self) -> None:
        """Let go of connections (the board is stopping)."""

    def _publish(
        self, summaries: list[dict[str, Any]], touched: Collection[str] = ()
    ) -> list[dict[str, Any]]:
        """Keep ``summaries`` as the source's plans; the events that tell the page.

        ``touched``: plans whose page changed even where their line in the list did
        not (a step's text, a thread added): they are told as changed too."""
        fresh = {s["id"]: s for s in summaries}
        events: list[dict[str, Any]] = []
        with self._lock:
            old = self._summaries
            self._summaries = fresh
        for plan_id in sorted(old.keys() - fresh.keys()):
            events.append({"type": "removed", "id": plan_id})
        for plan_id, summary in fresh.items():
            if plan_id not in old:
                events.append({"type": "added", "plan": summary})
            elif old[plan_id] != summary or plan_id in touched:
                events.append({"type": "changed", "plan": summary})
        return events
