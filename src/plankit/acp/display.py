"""Showing an agent's plan as ACP's "Client Display" asks.

:class:`PlanState` follows the session updates (pure, no terminal): each ``plan``
update replaces the plan whole; tool calls are merged by id; it knows the overall
progress, the current task (the ``in_progress`` entries) and which entries were added
or removed by the last update.  Two views show it:

- :class:`LiveView` (stdout is a terminal; rich): one panel redrawn in place — a
  progress bar with ``done/total``, one line per entry with its status icon, the
  current task highlighted, then the tool calls with their status; agent messages
  scroll above it; permission questions are asked below it.
- :class:`LineView` (anything else): the same information as plain lines, one block
  per change, for logs and tests; thoughts as ``[thought]`` lines.

An entry's note (``_meta.plankit.note``: ``failed: exit 1``, ``waiting for
permission``) is shown after its content; only ``completed`` entries count as done.

Whatever the agent sends is shown literally: rich never interprets it as markup
(``[bold]``, ``[/]`` are printed as written), and control characters that could
move the cursor, rewrite the terminal's title or reorder text (escape sequences,
carriage returns, bidirectional overrides) are shown as ``\x1b``-style escapes
(:func:`literal`).
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Protocol, TextIO

from plankit.acp.asking import ask_at_tty, literal, read_choice
from plankit.acp.entries import META_KEY, entry_of

__all__ = ["LineView", "LiveView", "PlanState", "View", "literal", "read_choice"]

ICONS = {
    "pending": "○",
    "blocked": "⏸",
    "awaiting_permission": "?",
    "in_progress": "▶",
    "review": "👁",
    "completed": "✓",
    "failed": "✗",
    "skipped": "–",
    "rejected": "⊘",
    "cancelled": "⊘",
}
STYLES = {
    "in_progress": "bold reverse",
    "awaiting_permission": "bold yellow reverse",
    "review": "bold magenta",
    "completed": "green",
    "failed": "red",
    "skipped": "dim",
    "rejected": "yellow",
    "cancelled": "yellow",
    "blocked": "yellow",
}
TOOL_ICONS = {"pending": "…", "in_progress": "▶", "completed": "✓", "failed": "✗"}


@dataclass(slots=True)
class ShownEntry:
    """One plan entry as the views show it."""

    content: str
    """The entry's content."""
    status: str
    """Its rich status (from ``_meta.plankit`` when an agent sends one, else v1)."""
    priority: str
    """``high``, ``medium`` or ``low``."""
    key: str
    """Identity across updates: the ``_meta`` id, else the content."""
    note: str | None = None
    """What is happening to it, when the agent says (``_meta.plankit.note``)."""

    @property
    def done(self) -> bool:
        """Done (failed, skipped, rejected and cancelled entries are not)."""
        return self.status == "completed"

    @property
    def shown(self) -> str:
        """The content with its note."""
        return f"{self.content} — {self.note}" if self.note else self.content

    @property
    def current(self) -> bool:
        """Being worked on (the v1 status is ``in_progress``)."""
        return self.status in ("in_progress", "awaiting_permission", "review")


@dataclass(slots=True)
class ShownTool:
    """One tool call."""

    id: str
    """``toolCallId``."""
    title: str = ""
    """Its title."""
    kind: str = "other"
    """Its kind."""
    status: str = "pending"
    """pending, in_progress, completed or failed."""
    detail: str = ""
    """A one-line summary of its content (the diff's file, the command …)."""
    content: list[dict[str, Any]] = field(default_factory=list)
    """Its latest content (JSON form)."""


@dataclass(slots=True)
class PlanState:
    """Everything shown, built from session updates."""

    entries: list[ShownEntry] = field(default_factory=list)
    """The current plan."""
    added: list[str] = field(default_factory=list)
    """Keys of the entries the last plan update added."""
    removed: list[str] = field(default_factory=list)
    """Contents of the entries the last plan update removed."""
    tools: dict[str, ShownTool] = field(default_factory=dict)
    """Tool calls by id, in arrival order."""
    plans: int = 0
    """How many plan updates arrived."""
    title: str | None = None
    """The plan's title, when the agent sends one in ``_meta.plankit.title``."""

    def apply(self, update: dict[str, Any]) -> str:
        """Take one ``session/update`` payload (JSON form); its ``sessionUpdate`` kind."""
        kind = str(update.get("sessionUpdate", ""))
        if kind == "plan":
            self._plan(update)
        elif kind in ("tool_call", "tool_call_update"):
            self._tool(update)
        return kind

    def _plan(self, update: dict[str, Any]) -> None:
        before = {e.key: e for e in self.entries}
        entries: list[ShownEntry] = []
        for wire in update.get("entries") or ():
            ident, status = entry_of(wire)
            content = literal(wire.get("content", ""))
            key = ident if ident is not None else content
            meta = wire.get("_meta")
            ours = meta.get(META_KEY) if isinstance(meta, dict) else None
            note = ours.get("note") if isinstance(ours, dict) else None
            shown = ShownEntry(content, status, str(wire.get("priority", "")), key)
            shown.note = literal(note) if isinstance(note, str) and note else None
            entries.append(shown)
        keys = {e.key for e in entries}
        self.added = [e.key for e in entries if e.key not in before] if self.plans else []
        self.removed = [e.content for k, e in before.items() if k not in keys]
        self.entries = entries
        self.plans += 1
        meta = update.get("_meta")
        ours = meta.get("plankit") if isinstance(meta, dict) else None
        if isinstance(ours, dict) and isinstance(ours.get("title"), str):
            self.title = literal(ours["title"])

    def _tool(self, update: dict[str, Any]) -> None:
        ident = literal(update.get("toolCallId", ""))
        tool = self.tools.setdefault(ident, ShownTool(ident))
        if update.get("title"):
            tool.title = literal(update["title"])
        if update.get("kind"):
            tool.kind = literal(update["kind"])
        if update.get("status"):
            tool.status = literal(update["status"])
        if update.get("content"):
            tool.content = list(update["content"])
        for item in update.get("content") or ():
            if item.get("type") == "diff":
                old, new = item.get("oldText"), str(item.get("newText", ""))
                what = "new file" if old is None else "edit"
                count = new.count("\n")
                path = literal(item.get("path"))
                tool.detail = f"{what} {path} ({count} line{'s' * (count != 1)})"
            elif item.get("type") == "terminal":
                tool.detail = f"terminal {literal(item.get('terminalId'))}"

    @property
    def progress(self) -> tuple[int, int]:
        """(done entries, all entries)."""
        return sum(e.done for e in self.entries), len(self.entries)

    @property
    def current(self) -> list[ShownEntry]:
        """The entries being worked on."""
        return [e for e in self.entries if e.current]


def with_known(state: PlanState, tool_call: dict[str, Any]) -> dict[str, Any]:
    """A permission request's tool call completed with what its ``tool_call`` said."""
    known = state.tools.get(literal(tool_call.get("toolCallId")))
    if known is None:
        return tool_call
    base = {"title": known.title, "kind": known.kind, "content": known.content}
    return {**base, **{k: v for k, v in tool_call.items() if v}}


def progress_bar(done: int, total: int, width: int = 30) -> str:
    """``██████░░░░ 60%``."""
    filled = round(width * done / total) if total else 0
    percent = done * 100 // total if total else 0
    return "█" * filled + "░" * (width - filled) + f" {percent}%"


class View(Protocol):
    """What the client tells its display."""

    def update(self, update: dict[str, Any]) -> None:
        """A ``session/update`` arrived (JSON form)."""
        ...

    def decided(self, tool_call: dict[str, Any], choice: str, how: str) -> None:
        """A permission request was answered: ``choice`` is the option's name (or
        ``cancelled``), ``how`` by whom."""
        ...

    def ask(
        self,
        tool_call: dict[str, Any],
        options: list[dict[str, Any]],
        stop: threading.Event,
    ) -> str | None:
        """Ask the user (blocking, in a thread of its own); the chosen option id, or
        None to cancel (no terminal, end of input, or ``stop`` set: Ctrl-C)."""
        ...

    def note(self, text: str) -> None:
        """A line from the client itself (errors, the end)."""
        ...

    def close(self) -> None:
        """The run ended."""
        ...


class LineView:
    """Plain lines on ``out`` (see the module documentation)."""

    def __init__(self, out: TextIO | None = None, *, interactive: bool = False) -> None:
        self.out = out or sys.stdout
        self.state = PlanState()
        self.interactive = interactive
        self._message_open: str | None = None

    def _print(self, text: str) -> None:
        if self._message_open:
            self.out.write("\n")
            self._message_open = None
        self.out.write(text + "\n")
        self.out.flush()

    def update(self, update: dict[str, Any]) -> None:
        kind = self.state.apply(update)
        if kind == "plan":
            self._print(self.render_plan())
        elif kind in ("tool_call", "tool_call_update") and update.get("status"):
            tool = self.state.tools[str(update["toolCallId"])]
            icon = TOOL_ICONS.get(tool.status, "·")
            detail = f" — {tool.detail}" if tool.detail else ""
            self._print(
                f"[tool] {icon} {tool.title or tool.id} ({tool.kind}): {tool.status}{detail}"
            )
        elif kind in ("agent_message_chunk", "agent_thought_chunk"):
            content = update.get("content") or {}
            if content.get("type") == "text":
                label = "[agent]" if kind == "agent_message_chunk" else "[thought]"
                if self._message_open != label:
                    if self._message_open:
                        self.out.write("\n")
                    self.out.write(label + " ")
                self.out.write(literal(content.get("text", "")))
                self._message_open = label
                self.out.flush()

    def render_plan(self) -> str:
        """The plan as lines: a header with progress, then one line per entry."""
        done, total = self.state.progress
        title = f" {self.state.title}" if self.state.title else ""
        lines = [f"[plan]{title} {done}/{total} done"]
        if self.state.added:
            lines[0] += f", {len(self.state.added)} added"
        if self.state.removed:
            lines[0] += f", {len(self.state.removed)} removed"
        for entry in self.state.entries:
            marker = "▶" if entry.current else " "
            icon = ICONS.get(entry.status, "·")
            lines.append(f" {marker}{icon} [{entry.status}] {entry.shown}")
        return "\n".join(lines)

    def decided(self, tool_call: dict[str, Any], choice: str, how: str) -> None:
        name = literal(tool_call.get("title") or tool_call.get("toolCallId"))
        self._print(f"[permission] {name}: {literal(choice)} ({how})")

    def ask(
        self, tool_call: dict[str, Any], options: list[dict[str, Any]], stop: threading.Event
    ) -> str | None:
        header = "[permission] the agent asks to run:\n"
        return ask_at_tty(header, with_known(self.state, tool_call), options, stop)

    def note(self, text: str) -> None:
        self._print(literal(text))

    def close(self) -> None:
        if self._message_open:
            self.out.write("\n")
            self._message_open = None
        self.out.flush()


class LiveView:
    """A rich panel redrawn in place on a terminal (see the module documentation)."""

    def __init__(self, console: Any = None) -> None:
        from rich.console import Console
        from rich.live import Live

        self.console = console or Console()
        self.state = PlanState()
        self.live = Live(self._render(), console=self.console, auto_refresh=False, transient=False)
        self.live.start()
        self._message: list[str] = []
        self._thought: list[str] = []

    def _render(self) -> Any:
        from rich.console import Group
        from rich.panel import Panel
        from rich.table import Table
        from rich.text import Text

        done, total = self.state.progress
        rows = Table.grid(padding=(0, 1))
        rows.add_column(width=2)
        rows.add_column(ratio=1)
        for entry in self.state.entries:
            style = STYLES.get(entry.status, "")
            icon = ICONS.get(entry.status, "·")
            label = Text(entry.shown, style=style)
            if entry.key in self.state.added:
                label.append("  (new)", style="cyan")
            rows.add_row(Text(icon, style=style), label)
        current = self.state.current
        header = Text(f"{done}/{total} done", style="bold")
        if current:
            header.append(f"   current: {current[0].shown}", style="bold")
        parts: list[Any] = [header, Text(progress_bar(done, total), style="blue"), rows]
        if self.state.removed:
            parts.append(Text(f"{len(self.state.removed)} task(s) removed", style="dim"))
        tools = list(self.state.tools.values())[-6:]
        if tools:
            grid = Table.grid(padding=(0, 1))
            for tool in tools:
                style = {"completed": "green", "failed": "red", "in_progress": "bold"}.get(
                    tool.status, "dim"
                )
                grid.add_row(
                    Text(TOOL_ICONS.get(tool.status, "·"), style=style),
                    Text(tool.title or tool.id, style=style),
                    Text(f"{tool.kind} · {tool.status}", style="dim"),
                )
            parts.append(Panel(grid, title="tool calls", title_align="left", border_style="dim"))
        title = Text(self.state.title or "Plan")  # a str title would be read as markup
        return Panel(Group(*parts), title=title, title_align="left", border_style="blue")

    def _refresh(self) -> None:
        self.live.update(self._render(), refresh=True)

    def _flush_message(self) -> None:
        if self._thought:
            text = "".join(self._thought)
            self.live.console.print(text, style="dim italic", markup=False, highlight=False)
            self._thought = []
        if self._message:
            self.live.console.print("".join(self._message), markup=False, highlight=False)
            self._message = []

    def update(self, update: dict[str, Any]) -> None:
        kind = self.state.apply(update)
        if kind in ("agent_message_chunk", "agent_thought_chunk"):
            content = update.get("content") or {}
            if content.get("type") == "text":
                thought = kind == "agent_thought_chunk"
                if self._message if thought else self._thought:
                    self._flush_message()  # the other stream ended
                (self._thought if thought else self._message).append(
                    literal(content.get("text", ""))
                )
            return
        self._flush_message()
        if kind in ("plan", "tool_call", "tool_call_update"):
            self._refresh()

    def decided(self, tool_call: dict[str, Any], choice: str, how: str) -> None:
        from rich.text import Text

        self._flush_message()
        name = literal(tool_call.get("title") or tool_call.get("toolCallId"))
        line = Text.assemble(("permission", "dim"), f" {name}: {literal(choice)} ({how})")
        self.live.console.print(line, highlight=False)

    def ask(
        self, tool_call: dict[str, Any], options: list[dict[str, Any]], stop: threading.Event
    ) -> str | None:
        self._flush_message()
        self.live.stop()
        try:
            header = "\n\033[1mThe agent asks permission:\033[0m\n"
            return ask_at_tty(header, with_known(self.state, tool_call), options, stop)
        finally:
            self.live.start()
            self._refresh()

    def note(self, text: str) -> None:
        self._flush_message()
        self.live.console.print(literal(text), markup=False, highlight=False)

    def close(self) -> None:
        self._flush_message()
        self._refresh()
        self.live.stop()
