"""The write-ahead journal of a turn, and finishing a turn that was cut short.

``teddy execute`` appends one JSON object per line to the turn's ``journal.jsonl`` as
the turn goes on:

- ``begin``: the approved plan (rendered with the user's changes), before anything has
  an effect; ``validation-failed`` instead when the plan did not pass validation;
- ``memos``: what happened to the memo changes;
- ``start`` (with the action's file targets) before an action has an effect, and
  ``finish`` with its result;
- ``reported`` once ``report.md`` is written, ``closed`` once the next turn exists.

Each ``start`` is flushed to disk (fsync) before the action runs, and so is everything
written before it; a CREATE's or EDIT's ``start`` is flushed by the file system sync
made before its rename (:mod:`plankit.syncing`), shared by a run of such writes
(:mod:`plankit.teddy.run.batch`), whose actions all start before any of them finishes.

When teddy is killed or crashes mid-turn, the next ``teddy execute``, ``resume``,
``context`` or ``plan`` finds a latest turn whose journal is not closed and
finishes it from the journal: the report (status after an interruption, which actions
ran, the one that was running, which never started), then the next turn, as the turn
itself would have; temporary files a killed write left next to its target are removed.
Ctrl-C anywhere in a turn takes the same road, so a report is always written.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plankit import syncing
from plankit.teddy.format.model import Action, Create, Edit, Memo, Plan

if TYPE_CHECKING:
    from plankit.teddy.run.report import ActionResult
    from plankit.teddy.session.layout import Turn
    from plankit.teddy.session.memos import MemoResult

JOURNAL_FILE = "journal.jsonl"
"""The journal's name in a turn directory."""
MAX_ENTRY_BYTES = 256 * 1024 * 1024
"""Longest journal line read back: far above what a turn writes (a 20 MiB plan, cut
outputs); a longer one is not TeDDy's and ends the replay like a torn line."""

STOPPED_NOTE = (
    "teddy stopped while this action ran (killed, crashed or interrupted); what it had "
    "done by then is unknown: check its target"
)
NOT_STARTED = "skipped: execution was interrupted"
PLAN_SKIPPED = "the plan was skipped by the user"
"""Why each action of a plan the user skipped as a whole did not run."""


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def action_targets(action: Action) -> list[str]:
    """The root-relative files an action writes (for cleaning up after a kill)."""
    if isinstance(action, Create | Edit):
        return [action.path]
    return []


class Journal:
    """Appends entries to a turn's journal; every entry up to a ``start`` is on disk
    before the action it announces runs."""

    def __init__(self, turn: Turn) -> None:
        self.path = turn.file(JOURNAL_FILE)
        self._fd: int | None = None

    def _write(self, entry: Mapping[str, Any], *, sync: bool) -> None:
        if self._fd is None:
            self._fd = os.open(
                self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o666
            )
            _cut_torn_line(self._fd)
        line = json.dumps({**entry, "time": _now()}, ensure_ascii=False) + "\n"
        os.write(self._fd, line.encode("utf-8"))
        if sync:
            syncing.barrier(self._fd)

    def descriptor(self) -> int | None:
        """The journal's open file (None before its first entry)."""
        return self._fd

    def close(self) -> None:
        """Release the file (the journal itself stays)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def begin(self, plan_text: str, decision: str) -> None:
        """The approved plan as it will run (``decision``: approve or skip)."""
        self._write({"event": "begin", "decision": decision, "plan": plan_text}, sync=True)

    def validation_failed(self) -> None:
        """The plan failed validation: nothing runs; the report and next turn follow."""
        self._write({"event": "validation-failed"}, sync=True)

    def memos(self, results: Sequence[MemoResult]) -> None:
        """What happened to the memo changes."""
        self._write({"event": "memos", "results": [_memo_json(r) for r in results]}, sync=False)

    def start(self, index: int, action: Action) -> None:
        """Action ``index`` is about to have an effect (on disk before it does).  Inside
        :func:`plankit.syncing.shared_syncs`, a CREATE's or an EDIT's entry reaches the disk
        with the shared sync made just before its rename (its first effect on the
        target)."""
        entry = {"event": "start", "index": index, "targets": action_targets(action)}
        later = isinstance(action, Create | Edit) and self._fd is not None
        if later and syncing.deferred(self._fd):
            self._write(entry, sync=False)
        else:
            self._write(entry, sync=True)

    def finish(self, index: int, result: ActionResult) -> None:
        """What action ``index`` did (or why it did not run)."""
        self._write({"event": "finish", "index": index, **_result_json(result)}, sync=False)

    def reported(self) -> None:
        """``report.md`` is written."""
        self._write({"event": "reported"}, sync=True)

    def closed(self, next_turn: str) -> None:
        """The next turn exists: the turn is over."""
        self._write({"event": "closed", "next": next_turn}, sync=True)
        self.close()


def _cut_torn_line(fd: int) -> None:
    """Cut off a last line that a kill tore (it has no newline), so that the next entry
    starts a line of its own: glued to the torn piece it could not be read back, and
    the replay stops at the first line it cannot read."""
    end = os.fstat(fd).st_size
    if end == 0 or os.pread(fd, 1, end - 1) == b"\n":
        return
    keep = end
    while keep > 0:
        start = max(0, keep - _CHUNK)
        newline = os.pread(fd, keep - start, start).rfind(b"\n")
        if newline >= 0:
            os.ftruncate(fd, start + newline + 1)
            return
        keep = start
    os.ftruncate(fd, 0)


_CHUNK = 64 * 1024
"""Bytes read at a time while looking back for the end of the last whole line."""


def _memo_json(result: MemoResult) -> dict[str, Any]:
    memo = result.memo
    return {
        "op": str(memo.op),
        "text": memo.text,
        "comment": memo.comment,
        "applied": result.applied,
        "note": result.note,
    }


def _result_json(result: ActionResult) -> dict[str, Any]:
    return {
        "approved": result.approved,
        "skip_reason": result.skip_reason,
        "success": result.success,
        "duration": result.duration,
        "details": result.details,
        "modified": result.modified,
        "notes": list(result.notes),
    }


# --- reading a journal back ------------------------------------------------------------


@dataclass(slots=True)
class Replay:
    """What a journal says happened in its turn."""

    begun: bool = False
    """Whether the plan was approved and began to run (a ``begin`` entry)."""
    validation_failed: bool = False
    """Whether the plan failed validation."""
    skipped: bool = False
    """Whether the user skipped the whole plan."""
    plan_text: str = ""
    """The plan as it ran."""
    memos: list[dict[str, Any]] | None = None
    """The memo results, once recorded."""
    started: dict[int, list[str]] = field(default_factory=dict)
    """Action index → its file targets, for every action that started."""
    finished: dict[int, dict[str, Any]] = field(default_factory=dict)
    """Action index → its recorded result."""
    reported: bool = False
    """Whether report.md was written."""
    closed: bool = False
    """Whether the next turn was created."""
    start_time: str | None = None
    """When the turn began."""


def _entries(path: Path) -> Iterator[dict[str, Any]]:
    """The journal's entries; a line torn by a kill (the last one) is left out."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return
    with os.fdopen(fd, "rb") as handle:
        while raw := handle.readline(MAX_ENTRY_BYTES):
            if not raw.endswith(b"\n"):  # torn, or longer than any entry TeDDy writes
                return
            try:
                entry = json.loads(raw)
            except ValueError:
                return
            if isinstance(entry, dict):
                yield entry


def replay(path: Path) -> Replay:
    """Read a journal back (see the module documentation)."""
    state = Replay()
    for entry in _entries(path):
        event = entry.get("event")
        if event == "begin":
            state.begun = True
            state.skipped = entry.get("decision") == "skip"
            state.plan_text = str(entry.get("plan", ""))
            state.start_time = entry.get("time")
        elif event == "validation-failed":
            state.validation_failed = True
            state.start_time = entry.get("time")
        elif event == "memos":
            state.memos = list(entry.get("results") or [])
        elif event == "start":
            state.started[int(entry["index"])] = [str(t) for t in entry.get("targets") or []]
        elif event == "finish":
            state.finished[int(entry["index"])] = entry
        elif event == "reported":
            state.reported = True
        elif event == "closed":
            state.closed = True
    return state


def results_from(state: Replay, plan: Plan) -> list[ActionResult]:
    """One result per action of ``plan`` (the plan as it ran), from the journal."""
    from plankit.teddy.run.report import ActionResult

    out: list[ActionResult] = []
    for index, action in enumerate(plan.actions):
        done = state.finished.get(index)
        if done is not None:
            out.append(
                ActionResult(
                    action,
                    bool(done.get("approved")),
                    done.get("skip_reason"),
                    done.get("success"),
                    done.get("duration"),
                    str(done.get("details") or ""),
                    done.get("modified"),
                    tuple(str(n) for n in done.get("notes") or ()),
                )
            )
        elif index in state.started:
            out.append(ActionResult(action, True, None, False, None, "", None, (STOPPED_NOTE,)))
        elif state.skipped:
            out.append(ActionResult(action, False, PLAN_SKIPPED))
        else:
            out.append(ActionResult(action, True, NOT_STARTED))
    return out


def memo_results_from(state: Replay) -> list[MemoResult]:
    """The memo results the journal recorded (none when it recorded none)."""
    from plankit.teddy.session.memos import MemoResult

    return [
        MemoResult(
            Memo("-" if m.get("op") == "-" else "+", str(m.get("text", "")), m.get("comment")),
            bool(m.get("applied")),
            str(m.get("note") or ""),
        )
        for m in state.memos or ()
    ]


def parse_time(text: str | None) -> _dt.datetime | None:
    """A journal time stamp as a datetime (None when missing or malformed)."""
    if not text:
        return None
    try:
        return _dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=_dt.UTC)
    except ValueError:
        return None
