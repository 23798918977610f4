"""agentflow sessions on the board, read from the control plane's database.

The control plane (``AGENTFLOW_HOME/agentflow.db``, or the PostgreSQL database agents
on several hosts share) holds each session's threads, its commits (every committed
plan, kept) and the state of the latest commit's tasks as agents claim and finish them.
:class:`ControlSource` reads it with :mod:`plankit.agentflow.reader`, read-only, and
polls a one-row :func:`~plankit.agentflow.reader.signature` twice a second, so work
done on any host reaches the page within a second.

A session is listed as an ``agentflow`` plan with the id ``agentflow:@session/<id>``
(no path under a root can start with ``@session/`` *and* be an agentflow directory the
board lists under that name, since ids of files are checked after a source's).  Its
page is the session, its threads, its commits over time and, for the commit asked for
(the latest by default), each thread's plan as a dependency graph with the task states
when that commit is the tracked one.  Its history is its commits.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from plankit.board.sources import Source
from plankit.board.views import error, graph_layout

PREFIX = "agentflow:@session/"
"""The start of a session's plan id."""
POLL = 0.5
"""Seconds between two looks at the control plane."""
MAX_VERSIONS = 50
"""Commits kept in a session's history (the latest ones)."""


def _where(home: str | None, database: str | None) -> str:
    if database:
        from plankit.agentflow.pgstore import safe_url

        return safe_url(database)
    return home or ""


class ControlSource(Source):
    """The sessions of the control plane at ``home`` (SQLite) or ``database``
    (PostgreSQL URL)."""

    name = "agentflow sessions"
    interval = POLL

    def __init__(self, home: str | None, database: str | None = None) -> None:
        super().__init__()
        self.home = home
        self.database = database or None
        self.where = _where(home, self.database)
        self._local = threading.local()
        self._signature: tuple[Any, ...] | None = None
        self._polled = False

    # --- the connection ------------------------------------------------------------------

    def _db(self) -> Any:
        """This thread's read-only connection, (re)opened when needed; None when there
        is no database (yet)."""
        from plankit.agentflow import reader

        db = getattr(self._local, "db", None)
        if db is not None and (db.closed or not db.usable(False)):
            reader.close(db)
            db = None
        if db is None:
            db = reader.open_reader(self.home, self.database)
            self._local.db = db
        return db

    def _drop(self) -> None:
        from plankit.agentflow import reader

        reader.close(getattr(self._local, "db", None))
        self._local.db = None

    def _read(self, action: Any) -> Any:
        """``action(db)`` on this thread's connection; a failure becomes a ControlError
        (the connection is dropped, the next call opens a new one)."""
        from plankit.agentflow.records import ControlError

        try:
            db = self._db()
            return None if db is None else action(db)
        except ControlError:
            self._drop()
            raise
        except Exception as exc:
            self._drop()
            raise ControlError(
                "state-unusable", f"cannot read the agentflow database {self.where} ({exc})"
            ) from None

    def close(self) -> None:
        self._drop()

    # --- the list ------------------------------------------------------------------------

    def plans(self) -> list[dict[str, Any]]:
        if not self._polled:  # the first list is read at once, not at the first poll
            self.poll()
        return super().plans()

    def poll(self) -> list[dict[str, Any]]:
        from plankit.agentflow import reader
        from plankit.agentflow.records import ControlError

        self._polled = True
        try:
            signature = self._read(reader.signature)
            if signature is not None and signature == self._signature and self.error is None:
                return []
            rows = self._read(reader.sessions) or []
        except ControlError as exc:
            self.error = str(exc)
            self._signature = None
            return []
        self.error = None
        self._signature = signature
        return self._publish([_summary(row) for row in rows])

    # --- one session ---------------------------------------------------------------------

    def detail(self, plan_id: str, query: Mapping[str, str]) -> dict[str, Any] | None:
        from plankit.agentflow.records import ControlError

        if not plan_id.startswith(PREFIX):
            return None
        session_id = plan_id[len(PREFIX) :]
        asked = query.get("commit")
        number = int(asked) if asked is not None and asked.isdigit() else None
        try:
            found = self._read(lambda db: _session_page(db, session_id, number))
        except ControlError as exc:
            with self._lock:
                head = self._summaries.get(plan_id)
            if head is None:
                return None
            return head | {"errors": [error(exc.rule, str(exc), None)], "plan": None}
        return found if isinstance(found, dict) else None

    def versions(self, plan_id: str) -> list[tuple[str, str, str]]:
        from plankit.agentflow import reader
        from plankit.agentflow.records import ControlError

        if not plan_id.startswith(PREFIX):
            return []
        session_id = plan_id[len(PREFIX) :]
        try:
            found = self._read(lambda db: reader.commit_texts(db, session_id, MAX_VERSIONS))
        except ControlError:
            return []
        return [(f"commit {n}", when, text) for n, when, text in found or []]


def _summary(row: Any) -> dict[str, Any]:
    """A session's line in the list (``row``: a ``reader.SessionCounts``)."""
    from plankit.agentflow.records import iso_ms

    session = row.summary.session
    times = [session.created_at, row.summary.last_commit_at, session.ended_at]
    times.append(iso_ms(row.last_change_ms))
    if session.ended_at:
        status: str | None = "ended"
    elif not row.summary.commits:
        status = "no commit yet"
    else:
        waiting = [
            f"{row.states[s]} {s}" for s in ("claimed", "failed", "blocked") if row.states.get(s)
        ]
        status = ", ".join(waiting) or None
    name = session.agent_session_id or session.session_id
    return {
        "kind": "agentflow",
        "id": PREFIX + session.session_id,
        "path": f"@session/{session.session_id}",
        "source": "control",
        "title": session.topic or f"Session {name}",
        "progress": {"done": row.done, "total": row.total},
        "updated": max(t for t in times if t),
        "status": status,
    }


def _session_page(db: Any, session_id: str, number: int | None) -> dict[str, Any] | None:
    from plankit.agentflow import reader
    from plankit.agentflow.records import ControlError

    counts = next(
        (r for r in reader.sessions(db) if r.summary.session.session_id == session_id), None
    )
    if counts is None:
        return None
    summary = counts.summary
    threads, commits = reader.timeline(db, session_id)
    page = _summary(counts) | {
        "session": summary.to_dict(),
        "threads": [t.to_dict() for t in threads],
        "commits": [c.to_dict() for c in commits],
        "commit": None,
        "tracked": False,
        "plans": [],
        "errors": [],
    }
    if not commits:
        return page
    try:
        record, states = reader.commit(db, session_id, number)
    except ControlError as exc:  # a commit it does not have: said, never a 500
        page["errors"] = [error(exc.rule, str(exc), None)]
        return page
    by_thread: dict[str, list[Any]] = {}
    for task in states or []:
        by_thread.setdefault(task.thread_id, []).append(task)
    plans = []
    for thread in record.threads:
        data = thread.plan.to_dict()
        tracked = {t.task_id: t.state for t in by_thread.get(thread.thread_id, [])}
        plans.append(
            {
                "thread_id": thread.thread_id,
                "kind": "current" if thread.current else "additional",
                "plan": data,
                "graph": graph_layout(data, tracked) if states is not None else _untracked(data),
                "tasks": [t.to_dict() for t in by_thread.get(thread.thread_id, [])],
            }
        )
    page |= {"commit": record.number, "tracked": states is not None, "plans": plans}
    return page


def _untracked(plan: dict[str, Any]) -> dict[str, Any]:
    """The graph of a commit older than the tracked one: no task states."""
    graph = graph_layout(plan, {})
    for node in graph["nodes"]:
        node["state"] = "untracked"
    return graph
