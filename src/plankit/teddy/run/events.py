"""Machine-readable events of ``teddy run --json`` and ``teddy execute --json``.

Each event is one JSON object on its own line of standard output, with an ``event``
name: ``turn_started``, ``plan_written``, ``validation_failed``, ``action_started``,
``action_finished``, ``turn_finished`` and (``teddy run``) ``stopped``.  The fields of
each are listed in docs/teddy-sessions.md.  :class:`EventProgress` turns execution
progress into the action events; :class:`Both` lets a live display follow too.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TextIO

from plankit.teddy.run.report import action_target

if TYPE_CHECKING:
    from plankit.teddy.format.model import Action
    from plankit.teddy.run.actions import Progress
    from plankit.teddy.run.report import ActionResult

Emit = Callable[[Mapping[str, Any]], None]
"""Where events go."""


def json_lines(stream: TextIO | None = None) -> Emit:
    """An emitter writing one JSON object per line (standard output by default)."""

    def emit(event: Mapping[str, Any]) -> None:
        out = stream or sys.stdout
        out.write(json.dumps(event, ensure_ascii=False) + "\n")
        out.flush()

    return emit


class EventProgress:
    """Execution progress as ``action_started`` / ``action_finished`` events."""

    def __init__(self, emit: Emit, turn: str | None = None) -> None:
        self.emit = emit
        self.turn = turn

    def _base(self, name: str, index: int, action: Action) -> dict[str, Any]:
        return {
            "event": name,
            "turn": self.turn,
            "index": index,
            "type": str(action.type),
            "target": action_target(action) or None,
        }

    def started(self, index: int, action: Action) -> None:
        """Action ``index`` starts."""
        self.emit(self._base("action_started", index, action))

    def finished(self, index: int, result: ActionResult) -> None:
        """Action ``index`` ran, or was skipped (``success`` null)."""
        event = self._base("action_finished", index, result.action)
        event.update(
            success=result.success,
            skipped=result.skip_reason,
            duration=round(result.duration, 3) if result.duration is not None else None,
            notes=list(result.notes),
        )
        self.emit(event)


class Both:
    """Two progress followers as one (a live display and the event stream)."""

    def __init__(self, first: Progress, second: Progress) -> None:
        self.first = first
        self.second = second

    def started(self, index: int, action: Action) -> None:
        """Tell both."""
        self.first.started(index, action)
        self.second.started(index, action)

    def finished(self, index: int, result: ActionResult) -> None:
        """Tell both."""
        self.first.finished(index, result)
        self.second.finished(index, result)
