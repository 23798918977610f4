"""Evidence of the work on tasks: what an agent run recorded for each claim of a task.

``agentctl run`` and ``agentctl worker`` write one record per claim of a task: when the
agent starts (``outcome`` ``running``, with where its live transcript is) and again when
it ends (``done``, ``failed`` or ``released``), with the merge commit, the files
changed, the agent's last message, every tool call (kind, title, status, exit status),
its plan updates and the stop reason.  The records live in the control plane's
database (table ``task_records``, created by the first writer, in SQLite and
PostgreSQL alike), so every host and every reader sees them.

Readers: :func:`task_records` (every record of a session, by task ref, oldest first) and
:func:`latest_records` (the newest per task) are what ``agentctl plan show`` and the
board use.  A record is a JSON object; the keys the run writes are listed in
``docs/agentflow.md`` ("Running agents").
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from plankit.agentflow.store import now

if TYPE_CHECKING:
    from plankit.agentflow.control import ControlPlane
    from plankit.agentflow.store import Database

_TABLE = """CREATE TABLE IF NOT EXISTS task_records (
    session_id  TEXT NOT NULL,
    thread_id   TEXT NOT NULL,
    task_id     TEXT NOT NULL,
    claim_id    TEXT NOT NULL,
    started_at  TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    record      TEXT NOT NULL,
    PRIMARY KEY (session_id, thread_id, task_id, claim_id)
)"""


def _exists(db: Database) -> bool:
    if db.dialect == "postgresql":
        row = db.execute("SELECT to_regclass('task_records') IS NOT NULL").fetchone()
    else:
        row = db.execute(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'task_records'"
        ).fetchone()
    return bool(row[0])


def write_record(
    plane: ControlPlane, session_id: str, ref: str, claim_id: str, outcome: str,
    record: dict[str, Any],
) -> None:  # fmt: skip
    """Record (or replace) the evidence of one claim of the task ``ref``."""
    thread_id, _, task_id = ref.partition("/")
    text = json.dumps(record, ensure_ascii=False, default=str)
    when = now()

    def save(db: Database) -> None:
        db.execute(_TABLE)
        db.execute(
            "INSERT INTO task_records (session_id, thread_id, task_id, claim_id, started_at, "
            "recorded_at, outcome, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (session_id, thread_id, task_id, claim_id) DO UPDATE SET "
            "recorded_at = excluded.recorded_at, outcome = excluded.outcome, "
            "record = excluded.record",
            (session_id, thread_id, task_id, claim_id, when, when, outcome, text),
        )

    with plane._db() as db:
        db.write(save)


def task_records(
    plane: ControlPlane, session: str | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Every record of the session (``None``: ``$AGENTFLOW_SESSION_ID``), by task ref
    (``thread/task``), oldest claim first.  Each is the run's JSON object plus
    ``claim``, ``outcome``, ``started_at`` and ``recorded_at``."""
    with plane._db(write=False) as db:
        found = plane._find(db, session)
        return read_records(db, found.session_id)


def read_records(db: Database, session_id: str) -> dict[str, list[dict[str, Any]]]:
    """:func:`task_records` on an open database, read-only (the board's reader uses it):
    a database no run wrote to has no table yet, which is no record."""
    if not _exists(db):
        return {}
    rows = db.execute(
        "SELECT thread_id, task_id, claim_id, started_at, recorded_at, outcome, record "
        "FROM task_records WHERE session_id = ? ORDER BY started_at, claim_id",
        (session_id,),
    ).fetchall()
    out: dict[str, list[dict[str, Any]]] = {}
    for thread_id, task_id, claim_id, started, recorded, outcome, text in rows:
        try:
            data = json.loads(text)
        except ValueError:
            data = {}
        if not isinstance(data, dict):
            data = {}
        data.update(claim=claim_id, outcome=outcome, started_at=started, recorded_at=recorded)
        out.setdefault(f"{thread_id}/{task_id}", []).append(data)
    return out


def latest_records(plane: ControlPlane, session: str | None = None) -> dict[str, dict[str, Any]]:
    """The newest record of each task of the session, by task ref."""
    return {ref: rows[-1] for ref, rows in task_records(plane, session).items()}


def attach(doc: dict[str, object], records: dict[str, list[dict[str, Any]]]) -> None:
    """Add ``evidence`` (the newest record) and ``attempts`` to each task of a
    ``plan show --json`` document."""
    threads = doc.get("threads")
    if not isinstance(threads, list):
        return
    for thread in threads:
        for task in thread["plan"]["tasks"]:
            rows = records.get(f"{thread['thread_id']}/{task['id']}")
            if rows:
                task["evidence"] = rows[-1]
                task["attempts"] = len(rows)


def evidence_text(records: dict[str, list[dict[str, Any]]]) -> str:
    """The evidence as text, one block per task that has any ('' when none)."""
    blocks = []
    for ref, rows in records.items():
        last = rows[-1]
        lines = [f"{ref}: {last.get('outcome')} (attempt {len(rows)}, agent {last.get('agent')}"
                 f" on {last.get('host')})"]  # fmt: skip
        if last.get("merge_commit"):
            lines.append(f"  merged as {last['merge_commit']}")
        if last.get("files_changed"):
            lines.append(f"  files: {', '.join(last['files_changed'])}")
        if last.get("stop_reason"):
            lines.append(f"  stop reason: {last['stop_reason']}")
        if last.get("reason"):
            lines.append(f"  reason: {last['reason']}")
        for call in last.get("tool_calls") or ():
            lines.append(
                f"  tool {call.get('kind')}: {call.get('title')} → {call.get('exit_status')}"
            )
        message = " ".join(str(last.get("last_message") or "").split())
        if message:
            lines.append(f"  last message: {message[:200]}")
        blocks.append("\n".join(lines))
    return "\n".join(blocks)
