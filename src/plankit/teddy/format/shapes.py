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
``tail``
    a closing fence with a sentence after it on its line (```` ``` Next, the tests. ````)
    right before a section or action heading ends its block, and the sentence, a
    remark, is dropped (the fence line would otherwise be the block's content; no
    block opens right before a heading).  The last block's is
    :func:`plankit.teddy.format.answer`'s.
``separator``
    a thematic break (``---``, ``***``) after a blank line or a heading and before a
    section or action heading, and an HTML comment after a blank line or a heading in
    the header or between actions (not in a message), become blank lines.

Lines are rewritten in place or blanked, never added or removed, so every line keeps
its number and each change is reported at its line.  A heading inside a fenced block
(a ``####`` heading in a CREATE's Markdown, a ``---`` in content) is never touched.
"""

from __future__ import annotations

import re
from functools import lru_cache

from plankit.teddy.format.changes import Change
from plankit.teddy.format.model import ActionType
from plankit.teddy.format.parse import action_type_of, section_of
from plankit.teddy.format.parse.checker import norm_key
from plankit.teddy.format.parse.fields import CANONICAL_KEY
from plankit.teddy.format.parse.tail import is_sentence

_FENCE_RE = re.compile(r" {0,3}(?P<run>`{3,}|~{3,})(?P<rest>[^\r\n]*)")
_HEADING_RE = re.compile(r" {0,3}(?P<hashes>#{1,6})[ \t]+(?P<text>[^\r\n]*?)(?:[ \t]+#+)?[ \t]*")
_BOLD_LINE_RE = re.compile(r" {0,3}(?P<mark>\*\*|__)(?P<text>[^\r\n*]+?)(?P=mark)[ \t]*:?[ \t]*")
_VISIT_RE = re.compile(
    r"^ {0,3}(?:`{3}|~{3}|#{1,6}[ \t]|\*\*|__|<!--|[-*_][ \t]*[-*_][ \t]*[-*_])", re.M
)
_LIST_LINE_RE = re.compile(r"[ \t]*(?:[-*+][ \t]|\r?$)|[ \t]{2,}\S")
_RULE_RE = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
_META_RE = re.compile(
    r" {0,3}(?:\*\*|__)(?P<key>[A-Za-z][A-Za-z0-9 _-]*?)[ \t]*(?::(?:\*\*|__)|(?:\*\*|__):)"
    r"[ \t]*\S[^\r\n]*"
)
_NUMBER_RE = re.compile(
    r"^(?:(?:step|action|task)[ \t]*)?\d+[ \t]*[.):-]?[ \t]*(?:[-–—:][ \t]*)?", re.IGNORECASE
)
_NAME_AND_PATH_RE = re.compile(
    r"(?P<name>[^:–—(]+?)[ \t]*(?::|[ \t]-|–|—|\(|(?=[ \t]+`))[ \t]*(?P<path>[^ \t]+?)[ \t)]*"
)
_ACTION_WORD_RE = re.compile(r"^(?:step|action|task)[ \t]*[:\-–—][ \t]*", re.IGNORECASE)
_QUOTES = str.maketrans({"‘": "`", "’": "`", "“": "`", "”": "`", "'": "`", '"': "`"})
FREE = frozenset({ActionType.CHAT_WITH_USER, ActionType.INVOKE, ActionType.CONCLUDE})
_SECTIONS = ("Rationale", "Memos", "Action Plan")


def _bare(text: str) -> str:
    """A heading's text without emphasis, quotes, backticks and a trailing colon."""
    text = text.translate(_QUOTES).replace("*", "").replace("`", "").strip()
    return text.rstrip(":").strip()


@lru_cache(maxsize=1024)
def section_named(text: str) -> str | None:
    """The section a heading's text names once decorations are taken off."""
    found = section_of(text)
    if found is None:
        bare = _bare(text)
        found = section_of(bare) or section_of(_NUMBER_RE.sub("", bare))
    return found


@lru_cache(maxsize=1024)
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
    """One pass over the lines of a text, recording the rewrites.

    Only the lines a rule may look at are visited (fence lines, headings, lines that
    start with emphasis, an HTML comment or a rule: one regular expression finds them),
    so a long plan's content costs little; what a rule needs of the lines between
    (whether the line before is blank, whether a metadata list goes on) is read from
    them when it is needed."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.out = list(self.lines)
        self.changes: list[Change] = []
        self.section: str | None = None  # None before the title, "header" after it
        self.action: ActionType | None = None
        self.meta = False  # whether the next lines may be a metadata list
        self.meta_from = 0  # the line after which they may
        self.skip = -1  # the last line of an HTML comment being dropped

    def set(self, i: int, new: str, message: str, kind: str) -> None:
        self.out[i] = new + ("\r" if self.lines[i].endswith("\r") else "")
        self.changes.append(Change(i + 1, message, kind))

    def next_text(self, i: int) -> str | None:
        """The next non-blank line after line ``i`` (0-based), or None."""
        for line in self.lines[i + 1 :]:
            if line.strip():
                return line.removesuffix("\r")
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

    def list_goes_on(self, first: int, last: int) -> bool:
        """Whether lines ``first`` to ``last`` (exclusive) are blank or list lines."""
        return all(_LIST_LINE_RE.match(line) for line in self.lines[first:last])

    def run(self) -> None:
        closed = -2  # the line of the last closing fence
        text, lines = self.text, self.lines
        i, pos = 0, 0
        m = _VISIT_RE.search(text)
        while m is not None:
            i += text.count("\n", pos, m.start())
            pos = m.start()
            line = lines[i].rstrip("\r")
            f = _FENCE_RE.fullmatch(line)
            if f and not (f["run"][0] == "`" and "`" in f["rest"]) and i > self.skip:
                self.meta = False
                end = self.block_end(i, pos, f["run"][0], len(f["run"]))
                if end is None:
                    return  # the block runs to the end of the text
                i, pos = end
                closed = i
                m = _VISIT_RE.search(text, pos + 1)
                continue
            if i > self.skip:
                if self.meta and not self.list_goes_on(self.meta_from, i):
                    self.meta = False
                before = lines[i - 1] if i else ""
                # a block starts after a blank line, a closing fence or a heading line
                blank = not before.strip() or closed == i - 1 or _is_heading(before)
                self.line(i, line, blank)
                self.meta_from = i + 1
            m = _VISIT_RE.search(text, pos + 1)

    def block_end(self, i: int, pos: int, char: str, length: int) -> tuple[int, int] | None:
        """The line and offset of the fence that closes the block opened on line ``i``
        (at offset ``pos``): a bare one of its character, at least as long, or one with a
        remark after it (:meth:`fence_remark`); None when nothing closes it."""
        text = self.text
        for m in _fence_lines_re(char, length).finditer(
            text, text.find("\n", pos) + 1 or len(text)
        ):
            i += text.count("\n", pos, m.start())
            pos = m.start()
            line = self.lines[i].rstrip("\r")
            f = _FENCE_RE.fullmatch(line)
            if f and (not f["rest"].strip() or self.fence_remark(i, line, f)):
                return i, pos
        return None

    def fence_remark(self, i: int, line: str, fence: re.Match[str]) -> bool:
        """A closing fence with a sentence after it on its line, right before a section
        or action heading: the fence ends the block, the sentence is a remark (dropped).
        Whether it was one."""
        rest = fence["rest"].strip()
        if self.section is None or not is_sentence(rest) or not self.opens_part(self.next_text(i)):
            return False
        self.set(
            i,
            line[: fence.end("run")],
            f"the closing fence here has text after it: read as the end of its block and a "
            f"remark before the next part, dropped: '{_clip(rest)}'",
            "tail",
        )
        return True

    def comment_end(self, i: int) -> int:
        """Blank the rest of the HTML comment that starts at line ``i``."""
        if "-->" in self.lines[i]:
            return i
        for j in range(i + 1, len(self.lines)):
            self.out[j] = "\r" if self.lines[j].endswith("\r") else ""
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
        if found is None and self.action not in FREE:
            found = self.named_with_its_path(i, text)
        if found is None or not self.may_start_action(text, level):
            if level <= 3:
                self.action = action_type_of(text)
            return
        if level == 3 and action_type_of(text) is not None:
            self.action = found
            self.meta = True
            return
        self.start_action(i, line, found)

    def named_with_its_path(self, i: int, text: str) -> ActionType | None:
        """The action a heading names followed by the path its metadata gives
        (``### READ: src/app.py``, ``### `CREATE` — `docs/a.md```), or None."""
        m = _NAME_AND_PATH_RE.fullmatch(text)
        if m is None:
            return None
        found = action_named(m["name"])
        path = m["path"].strip("`*_[]()<>'\" ")
        if found is None or not path:
            return None
        for line in self.lines[i + 1 : i + 6]:  # the metadata list, right under it
            if f"[{path}]" in line or f"`{path}`" in line or f"](/{path})" in line:
                return found
        return None

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
        if self.section != "header" and (
            self.action is ActionType.CHAT_WITH_USER or norm_key(m["key"]) not in CANONICAL_KEY
        ):
            return False  # a message's bold line, or a key no action takes
        self.set(i, "- " + stripped, f"made '{_clip(stripped)}' a metadata list item", "metadata")
        return True


_WORDS = (
    r"(?:rationale|memos|action[ _-]?plan"
    r"|create|read|edit|execute|research|chat|invoke|conclude|prune)"
)
# A line some rule may change (a superset: a line it finds is then read in its place).
_MAYBE_RE = re.compile(
    r"^ {0,3}(?:"
    rf"(?:#|#{{4,6}})[ \t]+[^\n]*?{_WORDS}"  # a heading at another level
    rf"|##[ \t]+(?!(?:rationale|memos|action plan)[ \t]*\r?$)[^\n]*?{_WORDS}"
    rf"|###[ \t]+(?![`*]*[A-Z_]+[`*]*[ \t]*\r?$)[^\n]*?{_WORDS}"  # a decorated action heading
    r"|(?:\*\*|__)[^\n]*(?:\*\*|__)[ \t]*:?"  # a bold line or a bold key
    r"|([-*_])(?:[ \t]*\1){2,}[ \t]*\r?$"  # a rule
    r"|<!--"  # a comment
    r"|(?:`{3,}|~{3,})[ \t]*[^\W\d_][^\n]*?[ \t]\S"  # a fence with words after it
    r")",
    re.IGNORECASE | re.MULTILINE,
)


def _is_heading(line: str) -> bool:
    return _HEADING_RE.fullmatch(line.rstrip("\r")) is not None


@lru_cache(maxsize=64)
def _fence_lines_re(char: str, length: int) -> re.Pattern[str]:
    """Lines that start with a run of ``char`` at least ``length`` long."""
    return re.compile(rf"^ {{0,3}}{re.escape(char)}{{{length},}}", re.M)


def _clip(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def reshape(text: str) -> tuple[str, tuple[Change, ...]]:
    """``text`` with its headings, metadata lines and separators rewritten (see the
    module documentation), and the changes; ``text`` itself when nothing changed."""
    if _MAYBE_RE.search(text) is None:
        return text, ()  # no line any rule could change
    scan = _Scan(text)
    scan.run()
    if not scan.changes:
        return text, ()
    return "\n".join(scan.out), tuple(scan.changes)
