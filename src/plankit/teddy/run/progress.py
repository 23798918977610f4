"""Progress while ``teddy execute`` runs the actions: each one pending, running (with
its elapsed time), done, failed or skipped.

:func:`live_progress` gives a live rich display when the stream is a terminal and plain
lines otherwise (a log, CI).  Either one is a :class:`~plankit.teddy.run.actions.Progress`
for ``Runtime(progress=…)``; :meth:`Tracker.watch` wraps the approver so the display
learns the approved actions (and which were left out) before the first one runs.
Progress goes to standard error, like every message that is not the command's output;
rich is imported only when that is a terminal.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from plankit.teddy.format.model import Action, ChatWithUser, Create, Edit
from plankit.teddy.run.approval import Approval, Approver, Decision
from plankit.teddy.run.report import ActionResult, action_target

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.live import Live

    from plankit.teddy.format.model import Plan

SHOW_ELAPSED_AFTER = 1.0
"""Seconds after which a running action shows its elapsed time."""
GATHER_FOR = 0.1
"""Seconds the plain lines of file writes may wait to be written out together."""
_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class State(StrEnum):
    """Where an action is."""

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    SKIPPED = "skipped"


@dataclass(slots=True)
class Row:
    """One action's line."""

    label: str
    """``TYPE target``."""
    state: State = State.PENDING
    started: float | None = None
    """``time.monotonic()`` when it started."""
    duration: float | None = None
    """Seconds it took, once finished."""
    why: str = ""
    """Why it failed or was skipped."""


def label(action: Action) -> str:
    """``TYPE target`` on one line."""
    target = action_target(action)
    return f"{action.type} {target}" if target else str(action.type)


def seconds(value: float) -> str:
    """``12 ms``, ``3.4 s``, ``2 min 05 s``."""
    if value < 1:
        return f"{value * 1000:.0f} ms"
    if value < 60:
        return f"{value:.1f} s"
    return f"{int(value // 60)} min {int(value % 60):02d} s"


class _Watching:
    """An approver that tells the tracker what was approved."""

    def __init__(self, inner: Approver, tracker: Tracker) -> None:
        self.inner = inner
        self.tracker = tracker

    def review(self, plan: Plan, plan_file: Path | None) -> Decision | Approval:
        answer = self.inner.review(plan, plan_file)
        approval = answer if isinstance(answer, Approval) else Approval(answer)
        if approval.decision is Decision.APPROVE:
            actions = approval.actions if approval.actions is not None else plan.actions
            self.tracker.expect(actions, approval.selected)
        return answer


class Tracker:
    """The states of the actions; subclasses show them."""

    def __init__(self) -> None:
        self.rows: dict[int, Row] = {}
        self.total: int | None = None

    def watch(self, approver: Approver) -> Approver:
        """``approver``, telling this tracker what it approves."""
        return _Watching(approver, self)

    def expect(self, actions: Sequence[Action], selected: Collection[int] | None) -> None:
        """The actions about to run; those not in ``selected`` are skipped."""
        self.total = len(actions)
        self.rows = {i: Row(label(a)) for i, a in enumerate(actions)}
        for i, row in self.rows.items():
            if selected is not None and i not in selected:
                row.state, row.why = State.SKIPPED, "not selected"

    def started(self, index: int, action: Action) -> None:
        row = self.rows.setdefault(index, Row(label(action)))
        row.label, row.state, row.started = label(action), State.RUNNING, time.monotonic()
        self.show_started(index, row, action)

    def finished(self, index: int, result: ActionResult) -> None:
        row = self.rows.setdefault(index, Row(label(result.action)))
        if result.success is None:
            row.state, row.why = State.SKIPPED, result.skip_reason or "not run"
        else:
            row.state = State.DONE if result.success else State.FAILED
            row.duration = result.duration
            row.why = "" if result.success else (result.notes[0] if result.notes else "")
        self.show_finished(index, row, result.action)

    def line(self, index: int, row: Row) -> str:
        """The plain text of a row: ``[2/5] EDIT a.py: done (12 ms)``."""
        where = f"[{index + 1}/{self.total}]" if self.total else f"[{index + 1}]"
        text = f"{where} {row.label}: {row.state}"
        if row.state is State.RUNNING and row.started is not None:
            elapsed = time.monotonic() - row.started
            if elapsed >= SHOW_ELAPSED_AFTER:
                text += f" {seconds(elapsed)}"
        details = [row.why] if row.why else []
        if row.duration is not None:
            details.append(seconds(row.duration))
        return text + (f" ({', '.join(details)})" if details else "")

    def show_started(self, index: int, row: Row, action: Action) -> None:
        """Show that ``row`` started."""

    def show_finished(self, index: int, row: Row, action: Action) -> None:
        """Show how ``row`` ended."""

    def close(self) -> None:
        """Stop any live display."""


class PlainProgress(Tracker):
    """One line when an action starts and one when it ends.

    The lines of a file write (CREATE, EDIT: a millisecond each, a thousand in a turn)
    are written out together, at the latest :data:`GATHER_FOR` seconds after the first
    of them or when any other action starts or ends; those of every other action at
    once, since it may take long (a command, a question to the user)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        super().__init__()
        self.stream = stream or sys.stderr
        self._lines: list[str] = []
        self._since = 0.0  # when the first line waiting was said

    def _say(self, text: str, action: Action) -> None:
        now = time.monotonic()
        if not self._lines:
            self._since = now
        self._lines.append(text + "\n")
        if not isinstance(action, Create | Edit) or now - self._since >= GATHER_FOR:
            self.flush()

    def flush(self) -> None:
        """Write out the lines waiting."""
        if self._lines:
            self.stream.write("".join(self._lines))
            self._lines.clear()
        self.stream.flush()

    def show_started(self, index: int, row: Row, action: Action) -> None:
        self._say(self.line(index, row), action)

    def show_finished(self, index: int, row: Row, action: Action) -> None:
        self._say(self.line(index, row), action)

    def close(self) -> None:
        self.flush()


_MARKS = {
    State.PENDING: ("·", "dim"),
    State.DONE: ("✓", "green"),
    State.FAILED: ("✗", "bold red"),
    State.SKIPPED: ("–", "yellow"),
}


class RichProgress(Tracker):
    """A live list: finished actions print above it, the rest stay below with a
    spinner and the elapsed time on the running one.  The live list is stopped while
    CHAT_WITH_USER talks with the user."""

    def __init__(self, console: Console) -> None:
        super().__init__()
        self.console = console
        self.live: Live | None = None
        self.shown: set[int] = set()

    def _styled(self, index: int, row: Row) -> RenderableType:
        from rich.text import Text

        if row.state is State.RUNNING:
            mark, style = _SPINNER[int(time.monotonic() * 10) % len(_SPINNER)], "bold cyan"
        else:
            mark, style = _MARKS[row.state]
        text = Text(f" {mark} ", style=style)
        text.append(self.line(index, row), style=style if row.state is State.FAILED else "")
        return text

    def __rich__(self) -> RenderableType:
        from rich.console import Group

        waiting = [
            self._styled(i, row) for i, row in sorted(self.rows.items()) if i not in self.shown
        ]
        return Group(*waiting)

    def _print(self, index: int, row: Row) -> None:
        self.shown.add(index)
        (self.live.console if self.live else self.console).print(self._styled(index, row))

    def _start_live(self) -> None:
        if self.live is None:
            from rich.live import Live

            self.live = Live(self, console=self.console, transient=True, refresh_per_second=8)
            self.live.start()

    def show_started(self, index: int, row: Row, action: Action) -> None:
        if isinstance(action, ChatWithUser):
            self.close()  # the user is asked in the plain terminal
            self._print(index, row)
            self.shown.discard(index)
            return
        self._start_live()

    def show_finished(self, index: int, row: Row, action: Action) -> None:
        self._print(index, row)
        if self.total is not None and len(self.shown) >= self.total:
            self.close()

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None


def live_progress(stream: TextIO | None = None) -> Tracker:
    """Rich when ``stream`` (standard error by default) is a terminal, else plain lines."""
    out = stream or sys.stderr
    if out.isatty():
        from rich.console import Console

        return RichProgress(Console(file=out))
    return PlainProgress(out)
