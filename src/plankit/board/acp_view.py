"""ACP runs on the board: the latest plan an agent sent, from a ``plankit acp run
--board`` transcript (``.plankit/acp/*.jsonl``).  An entry's state is plankit's rich
status from its ``_meta`` when the agent is TeDDy (``rejected``, ``failed`` …; the wire
says ``completed`` for every finished entry), else its wire status; progress counts the
entries done, never a rejected or failed one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from plankit.board.files import file_error, iso, mtime, read_file
from plankit.board.states import board_state


def read(path: Path, rel: str, *, detail: bool) -> dict[str, Any]:
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
    for entry in entries:
        entry["state"] = board_state("acp", _rich_status(entry))
    states = [e["state"] for e in entries]
    done = states.count("done")
    counted = [f"{states.count(s)} {s}" for s in ("failed", "skipped") if s in states]
    status = ", ".join(counted) or None
    if found.problem is not None:
        status = f"not shown: {path.name} {found.problem}"
    out: dict[str, Any] = {
        "title": title or path.stem,
        "progress": {"done": done, "total": len(entries)},
        "updated": iso(mtime(path)),
        "status": status,
        "state": "done" if entries and done == len(entries) else "doing" if done else "todo",
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


def _rich_status(entry: dict[str, Any]) -> str | None:
    """plankit's status of an entry (``_meta.plankit.status``), else the wire's."""
    meta = entry.get("_meta")
    ours = meta.get("plankit") if isinstance(meta, dict) else None
    rich = ours.get("status") if isinstance(ours, dict) else None
    if isinstance(rich, str):
        return rich
    wire = entry.get("status")
    return wire if isinstance(wire, str) else None
