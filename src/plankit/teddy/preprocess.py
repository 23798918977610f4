"""The fence sanitizer behind ``teddy preprocess`` and ``teddy plan``.

Models often wrap content that contains fences in a fence no longer than the inner
ones (a CREATE of a Markdown file with code blocks, a FIND that contains three
backticks), so CommonMark closes the outer block early.  The sanitizer reads the
plan's structure to find where each block really ends and lengthens its fences:

1. A plan that parses without any problem is returned byte for byte unchanged.
2. Each fenced block that opens at plan level in a structured place (the Rationale,
   the Memos, a CREATE, EDIT, EXECUTE or RESEARCH) keeps its CommonMark end when what
   follows that end fits the plan (blank lines, then the next action or section, a
   FIND/REPLACE label in an EDIT, the next query in a RESEARCH, or the end).
3. Otherwise the real end is searched for: inner blocks are tracked as a stack
   (a fence line with an info string opens one, a bare fence closes it), and the end
   is the last bare fence at depth 0 that is followed, after blank lines only, by the
   next action or section heading (or a label in an EDIT, or the end of the text).
   Both fences of the block are then made longer than any run inside it.
4. A block that never closes gets a closing fence before the next action or section
   heading at depth 0, or at the end of the text.

Only fence runs are lengthened and closing fences inserted: every other byte,
including CRLF line endings, stays as it was.  The result is idempotent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from plankit.markdown.fences import longest_run
from plankit.teddy.parse import action_type_of, check_plan, is_edit_label, section_of
from plankit.teddy.plan import ActionType


@dataclass(frozen=True, slots=True)
class Change:
    """One repair, reported on stderr by ``teddy preprocess``."""

    line: int
    """1-based line in the input."""
    message: str
    """What was done there."""


@dataclass(frozen=True, slots=True)
class Preprocessed:
    """The sanitizer's result."""

    text: str
    """The repaired text (the input itself when nothing needed repair)."""
    changes: tuple[Change, ...]
    """What was changed, in line order."""

    @property
    def changed(self) -> bool:
        """Whether the text differs from the input."""
        return bool(self.changes)


_EVENT_RE = re.compile(
    r"^(?:(?P<indent> {0,3})(?P<run>`{3,}|~{3,})(?P<rest>[^\r\n]*)"
    r"|(?P<hashes>#{1,6})[ \t]+(?P<title>[^\r\n]*)"
    r"|(?P<label>[ \t]*[`*_]*(?i:find|replace)[`*_]*:?[`*_]*[ \t]*))\r?$",
    re.MULTILINE,
)

_FENCED_CONTEXTS = frozenset(
    {
        "Rationale",
        "Memos",
        ActionType.CREATE,
        ActionType.EDIT,
        ActionType.EXECUTE,
        ActionType.RESEARCH,
    }
)


@dataclass(slots=True)
class _Event:
    line: int  # 0-based
    start: int  # offset of the line
    end: int  # offset of the end of the line's text (before \r\n)
    kind: str  # "fence" | "action" | "section" | "label" | "heading"
    char: str = ""
    length: int = 0
    bare: bool = False
    run_start: int = 0
    name: str = ""


def _events(text: str) -> list[_Event]:
    events: list[_Event] = []
    line = 0
    pos = 0
    count = text.count
    for m in _EVENT_RE.finditer(text):
        line += count("\n", pos, m.start())
        pos = m.start()
        end = m.end()
        if end > m.start() and text[end - 1] == "\r":
            end -= 1
        run = m.group("run")
        if run is not None:
            rest = m.group("rest")
            if run[0] == "`" and "`" in rest:
                continue  # not a fence line in CommonMark
            events.append(
                _Event(line, pos, end, "fence", run[0], len(run), not rest.strip(), m.start("run"))
            )
        elif m.group("hashes") is not None:
            level = len(m.group("hashes"))
            title = m.group("title").strip().rstrip("#").strip()
            if level == 3 and action_type_of(title) is not None:
                events.append(_Event(line, pos, end, "action", name=str(action_type_of(title))))
            elif level <= 2 and section_of(title) is not None:
                events.append(_Event(line, pos, end, "section", name=section_of(title) or ""))
            elif is_edit_label(title):
                events.append(_Event(line, pos, end, "label"))
        else:
            events.append(_Event(line, pos, end, "label"))
    return events


class _Sanitizer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.events = _events(text)
        self.edits: list[tuple[int, int, str]] = []  # (start, end, replacement)
        self.changes: list[Change] = []

    def blank(self, start: int, end: int | None = None) -> bool:
        return not self.text[start:end].strip()

    def boundary(self, ev: _Event, context: str) -> bool:
        return ev.kind in ("action", "section") or (
            ev.kind == "label" and context == ActionType.EDIT
        )

    def follows_ok(self, k: int, context: str) -> bool:
        """Whether what comes after the fence event ``k`` fits the plan's structure."""
        events = self.events
        close = events[k]
        if k + 1 == len(events):
            return self.blank(close.end)
        nxt = events[k + 1]
        if not self.blank(close.end, nxt.start):
            return False
        if self.boundary(nxt, context):
            return True
        return nxt.kind == "fence" and context == ActionType.RESEARCH and not nxt.bare

    def run(self) -> None:
        events = self.events
        context = "header"
        k = 0
        while k < len(events):
            ev = events[k]
            if ev.kind == "action" or ev.kind == "section":
                context = ev.name
                k += 1
                continue
            if ev.kind != "fence":
                k += 1
                continue
            k = self.block(k, context)

    def cm_close(self, k: int) -> int | None:
        opener = self.events[k]
        for j in range(k + 1, len(self.events)):
            ev = self.events[j]
            if (
                ev.kind == "fence"
                and ev.bare
                and ev.char == opener.char
                and ev.length >= opener.length
            ):
                return j
        return None

    def block(self, k: int, context: str) -> int:
        """Handle the block opened at event ``k``; return the index after its end."""
        j = self.cm_close(k)
        structured = context in _FENCED_CONTEXTS
        if j is not None and (not structured or self.follows_ok(j, context)):
            return j + 1
        end, first_boundary = self.search(k, context)
        if end is not None:
            if end != j:
                self.lengthen(k, end)
            return end + 1
        if j is not None:
            return j + 1  # a plausible end; what follows is for the parser to report
        self.insert_close(k, first_boundary)
        return first_boundary if first_boundary is not None else len(self.events)

    def search(self, k: int, context: str) -> tuple[int | None, int | None]:
        events = self.events
        opener = events[k]
        stack: list[tuple[str, int]] = []
        last: int | None = None  # last bare fence of the block's char at depth 0
        first_boundary: int | None = None
        for j in range(k + 1, len(events)):
            ev = events[j]
            if ev.kind == "fence":
                if not ev.bare:
                    stack.append((ev.char, ev.length))
                elif stack and stack[-1][0] == ev.char and ev.length >= stack[-1][1]:
                    stack.pop()
                elif not stack and ev.char == opener.char:
                    last = j
                continue
            if stack or not self.boundary(ev, context):
                continue
            if last is not None and self.blank(events[last].end, ev.start):
                return last, first_boundary
            if first_boundary is None:
                first_boundary = j
        if last is not None and self.blank(events[last].end):
            return last, first_boundary
        return None, first_boundary

    def content_run(self, k: int, stop: int) -> int:
        opener = self.events[k]
        return longest_run(self.text[opener.end : stop], opener.char)

    def lengthen(self, k: int, end: int) -> None:
        opener, closer = self.events[k], self.events[end]
        length = max(opener.length, self.content_run(k, closer.start) + 1)
        fence = opener.char * length
        if length != opener.length:
            self.edits.append((opener.run_start, opener.run_start + opener.length, fence))
            self.changes.append(
                Change(
                    opener.line + 1,
                    f"lengthened the opening fence from {opener.length} to {length} "
                    f"(the block ends at line {closer.line + 1})",
                )
            )
        if length != closer.length:
            self.edits.append((closer.run_start, closer.run_start + closer.length, fence))
            self.changes.append(
                Change(
                    closer.line + 1,
                    f"lengthened the closing fence from {closer.length} to {length} "
                    f"(the block opens at line {opener.line + 1})",
                )
            )

    def insert_close(self, k: int, before: int | None) -> None:
        text = self.text
        opener = self.events[k]
        limit = self.events[before].start if before is not None else len(text)
        stop = len(text[:limit].rstrip())
        if stop <= opener.end:
            stop = opener.end
        length = max(opener.length, self.content_run(k, stop) + 1)
        if length != opener.length:
            self.edits.append(
                (opener.run_start, opener.run_start + opener.length, opener.char * length)
            )
        newline = "\r\n" if text[opener.end : opener.end + 2] == "\r\n" else "\n"
        self.edits.append((stop, stop, newline + opener.char * length))
        closing_line = text.count("\n", 0, stop) + 2
        self.changes.append(
            Change(
                opener.line + 1,
                f"closed the fenced block opened here (it never closed): inserted "
                f"{opener.char * length} as line {closing_line}",
            )
        )

    def result(self) -> str:
        if not self.edits:
            return self.text
        out: list[str] = []
        pos = 0
        for start, end, replacement in sorted(self.edits):
            out.append(self.text[pos:start])
            out.append(replacement)
            pos = end
        out.append(self.text[pos:])
        return "".join(out)


def preprocess(text: str) -> Preprocessed:
    """Repair ambiguous fences in plan ``text`` (see the module documentation)."""
    sanitizer = _Sanitizer(text)
    sanitizer.run()
    if not sanitizer.edits:
        return Preprocessed(text, ())
    plan, _ = check_plan(text)
    if plan is not None:
        return Preprocessed(text, ())
    changes = tuple(sorted(sanitizer.changes, key=lambda c: c.line))
    return Preprocessed(sanitizer.result(), changes)
