"""The plan's structure written another way: headings, metadata lines, separators.

A step of :func:`plankit.teddy.format.answer.answer_to_plan`, before the fences are
repaired, on a text that does not parse.  Each rule rewrites lines outside fenced
blocks (as CommonMark reads them), one kind of line each, where the meaning is plain:

``heading``
    a heading (any level, with a colon, bold, backticks or curly quotes) that names
    a section once decorations are taken off (``# Action Plan``, ``## Action plan:``,
    ``# Rationale``) becomes ``## Rationale`` / ``## Memos`` / ``## Action Plan``; the
    plan's first level-1 heading is its title and stays.  In the Action Plan, a heading
    of level 2 to 6, or a line that is only bold, naming an action once a number
    (``1.``, ``Step 2:``, ``Action 3 -``) and decorations are taken off (``## READ``,
    ``### 1. `EDIT```, ``### Action 2: `CREATE```, ``#### ‘EXECUTE’``,
    ``**CREATE**``) becomes ``### `NAME```.  Inside a CHAT_WITH_USER, INVOKE or
    CONCLUDE message, whose Markdown is free, only a level-2 or level-3 heading or a
    bold line naming an action in capitals counts.
``metadata``
    right under an action heading or the title, lines written as ``**Key:** value``
    without a bullet (the key an action field, any key under the title) become list
    items ``- **Key:** value``.
``separator``
    a thematic break (``---``, ``***``) after a blank line and before a section or
    action heading, and an HTML comment after a blank line in the header or between
    actions (not in a message), become blank lines.

Lines are rewritten in place or blanked, never added or removed, so every line keeps
its number and each change is reported at its line.  A heading inside a fenced block
(a ``####`` heading in a CREATE's Markdown, a ``---`` in content) is never touched.
"""

from __future__ import annotations

import re

from plankit.teddy.format.changes import Change
from plankit.teddy.format.model import ActionType
from plankit.teddy.format.parse import action_type_of, section_of
from plankit.teddy.format.parse.checker import norm_key
from plankit.teddy.format.parse.fields import CANONICAL_KEY

_FENCE_RE = re.compile(r" {0,3}(?P<run>`{3,}|~{3,})(?P<rest>[^\r\n]*)")
_HEADING_RE = re.compile(r" {0,3}(?P<hashes>#{1,6})[ \t]+(?P<text>[^\r\n]*?)(?:[ \t]+#+)?[ \t]*")
_BOLD_LINE_RE = re.compile(r" {0,3}(?:\*\*|__)(?P<text>[^\r\n*_]+?)(?:\*\*|__)[ \t]*:?[ \t]*")
_RULE_RE = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
_META_RE = re.compile(
    r" {0,3}(?:\*\*|__)(?P<key>[A-Za-z][A-Za-z0-9 _-]*?)[ \t]*(?::(?:\*\*|__)|(?:\*\*|__):)"
    r"[ \t]*\S[^\r\n]*"
)
_NUMBER_RE = re.compile(
    r"^(?:(?:step|action|task)[ \t]*)?\d+[ \t]*[.):-]?[ \t]*(?:[-–—:][ \t]*)?", re.IGNORECASE
)
_ACTION_WORD_RE = re.compile(r"^(?:step|action|task)[ \t]*[:\-–—][ \t]*", re.IGNORECASE)
_QUOTES = str.maketrans({"‘": "`", "’": "`", "“": "`", "”": "`", "'": "`", '"': "`"})
FREE = frozenset({ActionType.CHAT_WITH_USER, ActionType.INVOKE, ActionType.CONCLUDE})
_SECTIONS = ("Rationale", "Memos", "Action Plan")


def _bare(text: str) -> str:
    """A heading's text without emphasis, quotes, backticks and a trailing colon."""
    text = text.translate(_QUOTES).replace("*", "").replace("`", "").strip()
    return text.rstrip(":").strip()


def section_named(text: str) -> str | None:
    """The section a heading's text names once decorations are taken off."""
    found = section_of(text)
    return found if found is not None else section_of(_bare(text))


def action_named(text: str) -> ActionType | None:
    """The action a heading's or bold line's text names once a number and decorations
    are taken off (``1. `READ```, ``Action 2: EDIT``), or None."""
    bare = _bare(text)
    for candidate in (bare, _NUMBER_RE.sub("", bare), _ACTION_WORD_RE.sub("", bare)):
        found = action_type_of(candidate) if candidate else None
        if found is not None:
            return found
    return None


class _Scan:
    """One pass over the lines of a text, recording the rewrites."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines(keepends=True)
        self.out = list(self.lines)
        self.changes: list[Change] = []
        self.section: str | None = None  # None before the title, "header" after it
        self.action: ActionType | None = None
        self.meta = False  # whether the next lines may be a metadata list
        self.skip = -1  # the last line of an HTML comment being dropped

    def set(self, i: int, new: str, message: str, kind: str) -> None:
        line = self.lines[i]
        ending = line[len(line.rstrip("\r\n")) :]
        self.out[i] = new + ending
        self.changes.append(Change(i + 1, message, kind))

    def next_text(self, i: int) -> str | None:
        """The next non-blank line after line ``i`` (0-based), or None."""
        for line in self.lines[i + 1 :]:
            if line.strip():
                return line.strip("\r\n")
        return None

    def opens_part(self, line: str | None) -> bool:
        """Whether ``line`` is a heading or bold line that starts a section or action."""
        if line is None:
            return False
        m = _HEADING_RE.fullmatch(line) or _BOLD_LINE_RE.fullmatch(line)
        if m is None:
            return False
        text = m.group("text")
        return section_named(text) is not None or action_named(text) is not None

    def run(self) -> None:
        fence: tuple[str, int] | None = None
        blank = True  # after a blank line or a closing fence: no paragraph goes on
        for i, raw in enumerate(self.lines):
            line = raw.rstrip("\r\n")
            if fence is not None:
                m = _FENCE_RE.fullmatch(line)
                if (
                    m
                    and m["run"][0] == fence[0]
                    and len(m["run"]) >= fence[1]
                    and not m["rest"].strip()
                ):
                    fence = None
                blank = fence is None
                continue
            if i <= self.skip:
                continue
            m = _FENCE_RE.fullmatch(line)
            if m and not (m["run"][0] == "`" and "`" in m["rest"]):
                fence = (m["run"][0], len(m["run"]))
                self.meta = False
                blank = False
                continue
            if not line.strip():
                blank = True
                continue
            self.line(i, line, blank)
            blank = False

    def comment_end(self, i: int) -> int:
        """Blank the rest of the HTML comment that starts at line ``i``."""
        if "-->" in self.lines[i]:
            return i
        for j in range(i + 1, len(self.lines)):
            self.out[j] = self.lines[j][len(self.lines[j].rstrip("\r\n")) :]
            if "-->" in self.lines[j]:
                return j
        return len(self.lines)

    def line(self, i: int, line: str, blank: bool) -> None:
        heading = _HEADING_RE.fullmatch(line)
        if heading is not None:
            self.heading(i, line, len(heading["hashes"]), heading["text"])
            return
        if self.section is None:
            return
        if self.meta and self.metadata(i, line):
            return
        self.meta = False
        if not blank:
            return
        bold = _BOLD_LINE_RE.fullmatch(line)
        if bold is not None and self.section == "Action Plan":
            found = action_named(bold["text"])
            if found is not None and self.may_start_action(bold["text"], 3):
                self.start_action(i, line, found)
                return
        if _RULE_RE.fullmatch(line) and self.opens_part(self.next_text(i)):
            self.set(i, "", f"dropped the rule '{line.strip()}' before the next part", "separator")
            return
        if line.lstrip().startswith("<!--") and self.comment_allowed():
            end = self.skip = self.comment_end(i)
            last = min(end, len(self.lines) - 1) + 1
            where = f"line {i + 1}" if last == i + 1 else f"lines {i + 1}-{last}"
            self.set(i, "", f"dropped the HTML comment ({where}) between actions", "separator")

    def comment_allowed(self) -> bool:
        if self.section == "header":
            return True
        return self.section == "Action Plan" and self.action not in FREE

    def may_start_action(self, text: str, level: int) -> bool:
        """Whether a heading (or bold line) naming an action starts one here: in a
        message only at level 2 or 3, in capitals."""
        if self.action not in FREE:
            return True
        bare = _bare(text)
        return level <= 3 and bare.upper() == bare

    def heading(self, i: int, line: str, level: int, text: str) -> None:
        self.meta = False
        if self.section is None:
            if level == 1:
                self.section = "header"
                self.meta = True
            return
        name = section_named(text)
        if name is not None and self.action is not None and level > 2:
            name = None  # a heading of an action's text that names a section: leave it
        if name is not None:
            self.section, self.action = name, None
            if level != 2 or section_of(text) is None:
                self.set(i, f"## {name}", f"rewrote the heading '{line.strip()}'", "heading")
            return
        if self.section != "Action Plan":
            return
        found = action_named(text)
        if found is None or not self.may_start_action(text, level):
            if level <= 3:
                self.action = action_type_of(text)
            return
        if level == 3 and action_type_of(text) is not None:
            self.action = found
            self.meta = True
            return
        self.start_action(i, line, found)

    def start_action(self, i: int, line: str, found: ActionType) -> None:
        self.set(i, f"### `{found}`", f"rewrote '{line.strip()}' as an action heading", "heading")
        self.action = found
        self.meta = True

    def metadata(self, i: int, line: str) -> bool:
        """Make a ``**Key:** value`` line under a heading a list item; whether it was one
        (a list item already, or made one)."""
        stripped = line.lstrip()
        if stripped[:2] in ("- ", "* ", "+ "):
            return True
        m = _META_RE.fullmatch(line)
        if m is None:
            return False
        if self.section != "header" and norm_key(m["key"]) not in CANONICAL_KEY:
            return False
        self.set(i, "- " + stripped, f"made '{_clip(stripped)}' a metadata list item", "metadata")
        return True


def _clip(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def reshape(text: str) -> tuple[str, tuple[Change, ...]]:
    """``text`` with its headings, metadata lines and separators rewritten (see the
    module documentation), and the changes; ``text`` itself when nothing changed."""
    scan = _Scan(text)
    scan.run()
    if not scan.changes:
        return text, ()
    return "".join(scan.out), tuple(scan.changes)
