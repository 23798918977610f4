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
CHART_COMMITS = 200
"""Commits a session's page lists and charts: the latest ones (and the one shown)."""


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
        if self.database:
            from plankit.agentflow import reader

            reader.check_url(self.database)  # a malformed URL: refused now, in one line
        self.where = _where(home, self.database)
        self._local = threading.local()
        self._open: set[Any] = set()  # every thread's PostgreSQL connection, to close
        self._closed = False
        self._signature: tuple[Any, ...] | None = None
        self._marks: dict[str, Any] = {}
        self._polling = threading.Lock()
        self._polled = False
        self._owners: dict[str, tuple[str, str]] = {}  # plan directory -> session, thread
        self._states: dict[str, dict[tuple[str, str], str]] = {}  # per session, this read

    # --- the connection ------------------------------------------------------------------

    def _connect(self) -> Any:
        """A read-only connection for one read, or None when there is no database
        (yet).  A SQLite file is opened for each read and closed after it (a connection
        kept open would keep agents from removing the database's ``-wal`` and ``-shm``
        files, which a reader cannot remove); a PostgreSQL connection is kept, one per
        thread, so that polls and requests never wait on each other."""
        from plankit.agentflow import reader
        from plankit.agentflow.records import ControlError

        if self._closed:
            raise ControlError("state-unusable", "the board is stopping")
        if not self.database:
            return reader.open_reader(self.home, None)
        db = getattr(self._local, "db", None)
        if db is not None and db.closed:
            self._forget(db)
            db = None
        if db is None:
            db = reader.open_reader(None, self.database)
            with self._lock:
                if self._closed:  # close() ran meanwhile: this one is not kept either
                    reader.close(db)
                    raise ControlError("state-unusable", "the board is stopping")
                self._open.add(db)
            self._local.db = db
        return db

    def _forget(self, db: Any) -> None:
        from plankit.agentflow import reader

        reader.close(db)
        with self._lock:
            self._open.discard(db)
        if getattr(self._local, "db", None) is db:
            self._local.db = None

    def _read(self, action: Any) -> Any:
        """``action(db)`` on a read-only connection; a failure becomes a ControlError
        (a kept connection is dropped, the next call opens a new one).  A read of a
        SQLite file that a writer changed meanwhile is done again."""
        from plankit.agentflow.records import ControlError

        for attempt in range(_ATTEMPTS):
            try:
                db = self._connect()
            except ControlError:
                raise
            except Exception as exc:
                raise self._failure(exc) from None
            if db is None:
                return None
            kept = False
            try:
                result = action(db)
                current = db.usable(False)
                kept = bool(self.database)  # only a PostgreSQL connection is kept
            except ControlError:
                raise
            except Exception as exc:
                raise self._failure(exc) from None
            finally:
                if not kept:
                    self._forget(db)
            if current or attempt == _ATTEMPTS - 1:
                return result
        raise AssertionError("unreachable")  # pragma: no cover

    def _failure(self, exc: Exception) -> Any:
        from plankit.agentflow import reader
        from plankit.agentflow.records import ControlError

        text = reader.hide_password(reader.first_line(exc), _url_params(self.database))
        return ControlError(
            "state-unusable", f"cannot read the agentflow database {self.where} ({text})"
        )

    def close(self) -> None:
        from plankit.agentflow import reader

        with self._lock:
            self._closed = True
            kept, self._open = list(self._open), set()
        for db in kept:
            reader.close(db)

    # --- the list ------------------------------------------------------------------------

    def plans(self) -> list[dict[str, Any]]:
        self._first_poll()
        return super().plans()

    def owns(self, plan_id: str) -> bool:
        if plan_id.startswith(PREFIX):  # a session's page asked for before any list
            self._first_poll()
        return super().owns(plan_id)

    def _first_poll(self) -> None:
        if not self._polled:  # the first list is read at once, not at the first poll
            with self._polling:
                if not self._polled:
                    self._poll()

    def poll(self) -> list[dict[str, Any]]:
        # one poll at a time: two at once (the first list and the first poll) could
        # publish an older read after a newer one
        with self._polling:
            return self._poll()

    def _poll(self) -> list[dict[str, Any]]:
        from plankit.agentflow import reader

        try:
            signature = self._read(reader.signature)
            if signature is not None and signature == self._signature and self.error is None:
                return []
            rows = self._read(reader.sessions) or []
            summaries = [_summary(row) for row in rows]
        except Exception as exc:  # whatever the database holds: said above the list
            self.error = _one_line(exc)
            self._signature = None
            return []
        finally:
            self._polled = True
        try:
            owners = self._read(lambda db: _owners(db, [row.summary.session for row in rows]))
        except Exception:  # the sessions are shown; their directories keep state.json
            owners = {}
        with self._lock:
            self._owners, self._states = owners or {}, {}
        self.error = None
        self._signature = signature
        marks = {s["id"]: _mark(row) for s, row in zip(summaries, rows, strict=True)}
        # a change the list does not show (a thread added or removed) still changes the
        # session's page: it is told too
        touched = {i for i, mark in marks.items() if self._marks.get(i, mark) != mark}
        self._marks = marks
        return self._publish(summaries, touched)

    def tracked(self, path: str) -> tuple[str, dict[str, str]] | None:
        """The session whose live thread's plan directory is ``path``, and the states of
        that thread's tasks in its tracked commit (agentflow's own words)."""
        from plankit.agentflow import reader

        self._first_poll()
        with self._lock:
            owner = self._owners.get(_real(path))
            cached = self._states.get(owner[0]) if owner else None
        if owner is None:
            return None
        session_id, thread_id = owner
        if cached is None:
            try:
                found = self._read(lambda db: reader.commit(db, session_id, None))
            except Exception:
                return None
            states = found[1] if found else None
            cached = {(t.thread_id, t.task_id): t.state for t in states or []}
            with self._lock:
                self._states[session_id] = cached
        mine = {task: state for (thread, task), state in cached.items() if thread == thread_id}
        return session_id, mine

    # --- one session ---------------------------------------------------------------------

    def detail(self, plan_id: str, query: Mapping[str, str]) -> dict[str, Any] | None:
        from plankit.agentflow.records import ControlError

        if not plan_id.startswith(PREFIX):
            return None
        session_id = plan_id[len(PREFIX) :]
        asked = query.get("commit")
        number = _commit_number(asked)
        try:
            found = self._read(lambda db: _session_page(db, session_id, number))
        except ControlError as exc:
            with self._lock:
                head = self._summaries.get(plan_id)
            if head is None:
                return None
            return head | {"errors": [error(exc.rule, str(exc), None)], "plan": None}
        if not isinstance(found, dict):
            return None
        if asked is not None and number is None:
            shown = asked if len(asked) <= 40 else asked[:40] + "…"
            problem = (
                f"?commit={shown!r} is not a commit number; the latest commit is shown "
                "(give ?commit=N, a number from the commits over time)"
            )
            found["errors"] = [error("commit-unknown", problem, None), *found["errors"]]
        return found

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


_ATTEMPTS = 4
"""Reads of a SQLite file done again when a writer changed it meanwhile, at most."""


def _real(path: str) -> str:
    import os

    return os.path.realpath(path)


def _owners(db: Any, sessions: list[Any]) -> dict[str, tuple[str, str]]:
    """Each live thread's plan directory (resolved) → its session and thread."""
    from plankit.agentflow import reader

    out: dict[str, tuple[str, str]] = {}
    for session in sessions:
        if session.ended_at:
            continue
        threads, _ = reader.timeline(db, session.session_id, 0)
        for thread in threads:
            if not thread.removed_at and thread.plan_dir:
                out[_real(thread.plan_dir)] = (session.session_id, thread.thread_id)
    return out


def _commit_number(asked: str | None) -> int | None:
    """The commit ``?commit=`` names, or None (the latest) for none or anything but a
    number (``²`` is a digit to Python, not a number to give SQL)."""
    if asked is None or not (asked.isascii() and asked.isdigit()) or len(asked) > 18:
        return None
    return int(asked)


def _url_params(url: str | None) -> dict[str, Any]:
    from plankit.agentflow import reader

    if not url:
        return {}
    try:
        return reader.url_params(url)
    except Exception:
        return {}


def _one_line(exc: Exception) -> str:
    from plankit.agentflow import reader
    from plankit.agentflow.records import ControlError

    if isinstance(exc, ControlError):
        return str(exc)
    return f"{type(exc).__name__}: {reader.first_line(exc)}"


def _mark(row: Any) -> tuple[Any, ...]:
    """What a session's page shows besides its summary, to tell when it changed."""
    return (row.summary.to_dict(), row.states, row.last_change_ms)


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

    counts = next(iter(reader.sessions(db, session_id)), None)
    if counts is None:
        return None
    summary = counts.summary
    threads, commits = reader.timeline(db, session_id, CHART_COMMITS, number)
    page = _summary(counts) | {
        "session": summary.to_dict(),
        "threads": [t.to_dict() for t in threads],
        "commit_count": summary.commits,
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
    records = _records(db, session_id) if states is not None else {}
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
                "tasks": [
                    t.to_dict() | _evidence(records.get(f"{thread.thread_id}/{t.task_id}"))
                    for t in by_thread.get(thread.thread_id, [])
                ],
            }
        )
    page |= {"commit": record.number, "tracked": states is not None, "plans": plans}
    return page


def _records(db: Any, session_id: str) -> dict[str, list[dict[str, Any]]]:
    """What ``agentctl run`` recorded for each task of the session (none when no run
    wrote any)."""
    from plankit.agentflow.evidence import read_records

    return read_records(db, session_id)


def _evidence(rows: list[dict[str, Any]] | None) -> dict[str, Any]:
    """A task's newest record as the page shows it: the agent's last plan, what it did
    and how it ended; nothing when no run recorded the task."""
    if not rows:
        return {}
    last = rows[-1]
    plans = last.get("plan_updates") or []
    shown = {
        key: last.get(key)
        for key in ("outcome", "agent", "host", "stop_reason", "reason", "merge_commit")
    }
    shown |= {
        "files_changed": list(last.get("files_changed") or []),
        "last_message": str(last.get("last_message") or "")[:2000],
        "tool_calls": list(last.get("tool_calls") or [])[-50:],
        "plan": list(plans[-1]) if plans and isinstance(plans[-1], list) else [],
        "attempts": len(rows),
    }
    return {"evidence": shown}


def _untracked(plan: dict[str, Any]) -> dict[str, Any]:
    """The graph of a commit older than the tracked one: no task states."""
    graph = graph_layout(plan, {})
    for node in graph["nodes"]:
        node["state"] = "untracked"
    return graph
