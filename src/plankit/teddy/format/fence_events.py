"""The lines the fence sanitizer looks at (:mod:`plankit.teddy.format.preprocess`).

One regular expression finds the *event* lines of a plan: fence lines, headings that
name an action or a section, and ``FIND:``/``REPLACE:`` labels.  :func:`event_at` turns a
match into an :class:`Event`; the constants say which places are structured and which
actions take one block; :func:`nest` tracks inner blocks while a block is read again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from plankit.teddy.format.model import ActionType
from plankit.teddy.format.parse import action_type_of, is_edit_label, section_of

# An event line.  Headings are only events when their text starts with a word that can
# name an action, a section or a label (the classification below decides), so the
# headings of Markdown content ("## Install") cost nothing.
EVENT_RE = re.compile(
    r"^(?:(?P<indent> {0,3})(?P<run>`{3,}|~{3,})(?P<rest>[^\r\n]*)"
    r"|(?P<hashes>#{1,6})[ \t]+(?P<title>[`*_ \t]*"
    r"(?i:create|read|edit|execute|research|chat|invoke|conclude|prune"
    r"|rationale|memos|action|find|replace)[^\r\n]*)"
    r"|(?P<label>[`*_ \t]*(?P<word>(?i:find|replace))[`*_ \t]*:?[`*_ \t]*))\r?$",
    re.MULTILINE,
)
BLANK_LINES_RE = re.compile(r"(?:[ \t]*\r?\n)*")
REST_BLANK_RE = re.compile(r"\s*\Z")


@lru_cache(maxsize=64)
def closer_re(char: str, length: int) -> re.Pattern[str]:
    return re.compile(rf"^ {{0,3}}{re.escape(char)}{{{length},}}[ \t]*\r?$", re.MULTILINE)


@lru_cache(maxsize=64)
def runs_re(char: str, length: int) -> re.Pattern[str]:
    return re.compile(rf"{re.escape(char)}{{{length},}}")


FENCE, ACTION, SECTION, LABEL = range(4)
SECTION_RANK = {"Rationale": 1, "Memos": 2, "Action Plan": 3}
"""Sections in plan order; the header before them has rank 0."""
STRUCTURED = frozenset(
    {
        "Rationale",
        "Memos",
        ActionType.CREATE,
        ActionType.EDIT,
        ActionType.EXECUTE,
        ActionType.RESEARCH,
    }
)
FREE_ACTIONS = frozenset({ActionType.CHAT_WITH_USER, ActionType.INVOKE, ActionType.CONCLUDE})
ONE_BLOCK_ACTIONS = frozenset({ActionType.CREATE, ActionType.EXECUTE, ActionType.RESEARCH})
LIST_ONLY_ACTIONS = frozenset({ActionType.READ, ActionType.PRUNE})
REMARKS_AFTER = ONE_BLOCK_ACTIONS | LIST_ONLY_ACTIONS | {ActionType.EDIT}
"""Actions after whose last block (or metadata list) no text belongs to them."""
# Remarks after a plan: prose after at least one blank line (a word, emphasis or a rule).
REMARKS_RE = re.compile(r"(?:[ \t]*\r?\n)+[ \t]*(?:[^\W\d_]|[*_-])")
# An action's metadata list: blank lines, list items and their indented continuations.
METADATA_LINES_RE = re.compile(
    r"(?:[ \t]*\r?\n|[ \t]{0,3}[-*+][ \t][^\n]*(?:\n|\Z)|[ \t]+\S[^\n]*(?:\n|\Z))*"
)


@dataclass(slots=True)
class Event:
    kind: int  # FENCE, ACTION, SECTION or LABEL
    start: int  # offset of the line
    end: int  # offset of the end of the line's text (before \r\n or \n)
    nxt: int  # offset of the next line (len(text) on the last line)
    name: str = ""  # action type, section name, or FIND/REPLACE
    char: str = ""  # fence character
    length: int = 0  # fence run length
    bare: bool = False  # a fence line with nothing after the run
    run_start: int = 0  # offset of the fence run


@lru_cache(maxsize=512)
def heading_event(level: int, title: str) -> tuple[int, str] | None:
    """What a heading is to the sanitizer: (kind, name), or None when it is not an event."""
    title = title.strip()
    stripped = title.rstrip("#")
    if stripped != title and (not stripped or stripped[-1] in " \t"):
        title = stripped.strip()  # a closing sequence of #
    if level == 3:
        action = action_type_of(title)
        if action is not None:
            return ACTION, str(action)
    if level <= 2:
        section = section_of(title)
        if section is not None:
            return SECTION, section
    if is_edit_label(title):
        return LABEL, "FIND" if "find" in title.lower() else "REPLACE"
    return None


def event_at(text: str, m: re.Match[str]) -> Event | None:
    """The event on the line ``m`` matched, or None when the line is not one."""
    start = m.start()
    end = m.end()
    nxt = end + 1 if end < len(text) else end
    if end > start and text[end - 1] == "\r":
        end -= 1
    run, rest, hashes, title, word = m.group("run", "rest", "hashes", "title", "word")
    if run is not None:
        if run[0] == "`" and "`" in rest:
            return None  # not a fence line in CommonMark
        return Event(FENCE, start, end, nxt, "", run[0], len(run), not rest.strip(), m.start("run"))
    if word is not None:
        return Event(LABEL, start, end, nxt, word.upper())
    kind = heading_event(len(hashes), title)
    if kind is None:
        return None
    return Event(kind[0], start, end, nxt, kind[1])


def nest(stack: list[tuple[str, int]], fence: Event, outer: str) -> bool:
    """Track the inner blocks of a block fenced with ``outer`` (rule 3) on ``stack``.

    Returns False for a bare ``outer`` fence outside inner blocks (a candidate end of
    the outer block), True for any other fence: one that opens or closes an inner
    block, or is content of one.  Inside an inner block only fences of its character
    and at least its length count (bare, they close it; with an info string, they open
    a block nested in it, as models write them); any other is content, as in CommonMark.
    """
    if stack:
        char, length = stack[-1]
        if fence.char != char or fence.length < length:
            return True
        if fence.bare:
            stack.pop()
        else:
            stack.append((fence.char, fence.length))
        return True
    if fence.bare and fence.char == outer:
        return False
    stack.append((fence.char, fence.length))
    return True
