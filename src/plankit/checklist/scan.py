"""Where a task line is, found with regular expressions instead of the Markdown tree.

:func:`task_line_start` answers, for a text never seen before, the one question a
status update asks: which line is task ``step`` (the line
:attr:`~plankit.checklist.structure.Structure.targets` names)?  Parsing the whole plan
with :func:`plankit.markdown.tree.parse_document` takes milliseconds for 50,000
characters; this takes a few C-speed scans of the text (``str.find`` and regular
expressions with a literal first character) and a little Python per line that holds
the step, per fence, per ``#``, ``<`` or ``>`` after a space or a tab, and per heading
between a task line and the heading that decides its section or phase.  The scans
cover the whole text whichever task is updated, so the cost does not depend on where
the task is.

The answer is only given when it is certainly the tree's; otherwise the result is
:data:`UNSURE` and the caller parses.  The reading used here is CommonMark's as
markdown-it-py implements it, for documents in which nothing up to the last line
numbered ``step`` is any of these (outside fenced blocks that open at the left margin):

- a block quote or HTML block (a line starting with ``>`` or ``<``, after indentation
  and list markers), a fence that does not open at the left margin, an indented ATX
  heading, a line that may underline a setext heading (``===``/``---`` under a
  non-blank line), list nesting deep enough for the parser's nesting limit, a lone
  ``\\r`` line ending or a NUL.

In such a document the top-level structure is simple:

- a line starting with ````` ``` ````` or ``~~~`` opens a fenced block that runs to its
  first closing line (or the end), whatever came before;
- a line starting with ``#`` (and a space, a tab or nothing) is a top-level ATX
  heading, and no other line is a top-level heading, so the section or phase a line
  is in follows from the headings above it (as :class:`~plankit.checklist.structure`
  reads them);
- a task line at the left margin starts a list item of a top-level list (a bullet item
  interrupts a paragraph and ends any deeper list), so it is a task unless it is in a
  section;
- an indented task line is a list item or not depending on the list items above it:
  the lines from the nearest line at the left margin (a heading, the start of the
  text, or a simple list item) down to it are replayed with markdown-it-py's rules for
  list items and paragraph continuation lines, provided every one of them is a simple
  list item (``-``, ``*`` or ``+``, one space, ordinary text) or ordinary paragraph
  text, with no blank line and no tab in the indentation.

Anything else (an indented task line after a blank line, under an ordered list, below
a paragraph at the left margin …) is :data:`UNSURE`.  A property test
(``tests/checklist/test_update_fast.py``) compares the answers with the tree's on
generated plans.
"""

from __future__ import annotations

import bisect
import re
from enum import Enum
from functools import lru_cache
from typing import Final, Literal

from plankit.checklist.lines import PHASE_TEXT_RE, SECTIONS, TASK_LINE_RE
from plankit.checklist.locate import cached


class Unsure(Enum):
    """The type of :data:`UNSURE`."""

    UNSURE = "unsure"


UNSURE: Final = Unsure.UNSURE
"""The answer when the regular expressions cannot be sure: parse with the tree."""

STEP_RE = re.compile(r"\d+\.\d+(?:\.\d+)?")
"""A step as :data:`~plankit.checklist.structure.TASK_LINE_RE` reads it (fullmatch)."""

_LONE_CR_RE = re.compile(r"\r(?!\n)")
_PREFIX_RE = re.compile(r"[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)*")
"""Indentation and list markers: what may stand before the first character of a block
(use with ``fullmatch``)."""
_INDENT_RE = re.compile(r"[ \t]+")
_LT_RE = re.compile(r"<(?<=[\n \t]<)")
_GT_RE = re.compile(r">(?<=[\n \t]>)")
"""A ``<`` or ``>`` that may start a block (after a newline, a space or a tab); a quick
scan: re finds the literal character in C before checking what stands before it."""
_HASH_RE = re.compile(r"#(?<=[ \t]#)")
"""A ``#`` after a space or a tab, which may start an indented ATX heading."""
_ATX_RE = re.compile(r"#{1,6}(?=[ \t\r\n]|\Z)")
"""The start of an ATX heading (use with ``match`` at the first ``#``)."""
_RUN_RE = re.compile(r"`+|~+")
_UNDERLINE_RE = re.compile(r"[ \t]*(?:-+|=+)[ \t]*\r?")
"""A line that underlines a setext heading when the line above is paragraph text."""
_DASHES_RE = re.compile(r"\n[-= \t]+(?=\r?\n)")
"""A line (not the last) of dashes, equals signs and spaces (a quick scan)."""
_DEEP_RE = re.compile(r"\n[ \t\-*+.)0-9]{11}")
"""A line (not the first) starting with a long run of indentation and list markers."""
_DEEP_COLUMNS = 40
"""A line whose leading indentation and list markers span this many columns may reach
the parser's nesting limit (22 nested lists put a marker at column 42 or further)."""
_ODD_SPACE_RE = re.compile(r"[^\S \t]|\ufeff")
"""Whitespace other than space and tab (where the parser's trims differ)."""

_ITEM_RE = re.compile(r"( *)[-*+] ([^ \t].*)")
"""A simple bullet list item: spaces, the bullet, one space, text."""
_MARKER_RE = re.compile(r" *(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_TEXT_RE = re.compile(r"( +)[^ \t]")
_ORDERED_RE = re.compile(r"\d{1,9}[.)](?:[ \t]|$)")
_PLAIN_FIRST = frozenset("#><`~=_*-+[|")
"""Text starting with one of these could be something other than paragraph text."""

_MAX_RUN = 200
"""Indented lines replayed at most, above an indented task line."""
_MAX_DEPTH = 10
"""List nesting replayed at most."""


@lru_cache(maxsize=16)
def _closer_re(char: str, length: int) -> re.Pattern[str]:
    return re.compile(rf" {{0,3}}{re.escape(char)}{{{length},}}[ \t]*(?=\r?\n|\Z)")


def task_line_start(text: str, step: str) -> int | Literal[Unsure.UNSURE] | None:
    """Offset of the start of the line a status update of ``step`` changes, None when
    ``step`` names no task, or :data:`UNSURE` (see the module's docstring).

    ``step`` is taken as given (callers strip it).
    """
    found = task_in_phase(text, step)
    return found if found is None or found is UNSURE else found[0]


def task_in_phase(text: str, step: str) -> tuple[int, int | None] | Literal[Unsure.UNSURE] | None:
    """:func:`task_line_start` with the number of the phase the task is in (None for
    a task outside phases): ``(offset, phase)``, None, or :data:`UNSURE`."""
    if STEP_RE.fullmatch(step) is None:
        return None
    if "\0" in text or ("\r" in text and _LONE_CR_RE.search(text) is not None):
        return UNSURE
    cands = _candidates(text, step)
    if not cands:
        return None
    fences, risky = _fences(text)
    if cands[-1] >= risky:
        return UNSURE
    cutoff = text.find("\n", cands[-1])
    cutoff = len(text) if cutoff < 0 else cutoff
    starts = [a for a, _ in fences]
    if _first_risky(text, fences, starts) < cutoff:
        return UNSURE
    # nothing above the cutoff is read differently by the tree: decide
    in_phase: list[tuple[int, int | None]] = []
    loose: list[tuple[int, int | None]] = []
    unsure_phase = unsure_loose = False
    for cand in cands:
        if _inside(fences, starts, cand):
            continue
        context = _context(text, fences, starts, cand)
        if context is None:
            return UNSURE
        section, phase = context
        if section:
            continue  # never a task, whatever its Markdown
        is_task = True if text[cand] not in " \t" else _indented_is_task(text, cand)
        if is_task is None:
            if phase is not None:
                unsure_phase = True
            else:
                unsure_loose = True
        elif is_task:
            if phase is not None:
                in_phase.append((cand, phase))
            else:
                loose.append((cand, None))
    # a step that two tasks have is ambiguous: the tree confirms it, and the update is
    # refused (so is any doubt about a second task)
    if unsure_phase or len(in_phase) > 1:
        return UNSURE
    if in_phase:
        return in_phase[0]  # the task of a phase
    if unsure_loose or len(loose) > 1:
        return UNSURE
    return loose[0] if loose else None


def _candidates(text: str, step: str) -> list[int]:
    """Starts of the lines that are task lines numbered ``step``, in order."""
    out: list[int] = []
    needle = "] " + step
    find = text.find
    rfind = text.rfind
    i = find(needle)
    while i >= 0:
        start = rfind("\n", 0, i) + 1
        end = find("\n", i)
        if end < 0:
            end = len(text)
        stop = end - 1 if end > start and text[end - 1] == "\r" else end
        m = TASK_LINE_RE.fullmatch(text, start, stop)
        if m is not None and m.group(4) == step:
            out.append(start)
        i = find(needle, end)
    return out


def _fences(text: str) -> tuple[list[tuple[int, int]], int]:
    """The fenced blocks opening at the left margin, as (start, end) offsets (``end``
    is where the closing line, or the text, ends), and the start of the first line
    outside them where a fence follows indentation or a list marker (past the end of
    the text when there is none).  The blocks are exact above that line."""
    lines: list[tuple[int, int]] = []  # (line start, offset of the fence run)
    for needle in ("```", "~~~"):
        if needle[0] not in text:
            continue
        i = text.find(needle)
        while i >= 0:
            start = text.rfind("\n", 0, i) + 1
            if start == i or _PREFIX_RE.fullmatch(text, start, i) is not None:
                lines.append((start, i))
            end = text.find("\n", i)
            if end < 0:
                break
            i = text.find(needle, end)
    lines.sort()
    out: list[tuple[int, int]] = []
    closer: re.Pattern[str] | None = None
    opened = 0
    for start, i in lines:
        if closer is not None:
            m = closer.match(text, start)
            if m is not None:
                out.append((opened, m.end()))
                closer = None
            continue
        if start < i:
            return out, start
        run = _RUN_RE.match(text, i)
        assert run is not None
        end = text.find("\n", run.end())
        if end < 0:
            end = len(text)
        if run.group(0)[0] == "`" and "`" in text[run.end() : end]:
            continue  # not an opening fence: a ``` fence's info string has no `
        closer = _closer_re(run.group(0)[0], len(run.group(0)))
        opened = start
    if closer is not None:
        out.append((opened, len(text)))
    return out, len(text) + 1


def _inside(fences: list[tuple[int, int]], starts: list[int], offset: int) -> bool:
    """Whether the line starting at ``offset`` is a line of one of ``fences``."""
    i = bisect.bisect_right(starts, offset) - 1
    return i >= 0 and offset <= fences[i][1]


def _first_risky(text: str, fences: list[tuple[int, int]], starts: list[int]) -> int:
    """The start of the first line outside ``fences`` that the tree may read otherwise
    than the simple reading assumes (see the module's docstring), or the length of the
    text.  (Every scan covers the whole text, so the cost does not depend on where the
    task is.)"""
    first = len(text)
    for char, found in (("<", _LT_RE), (">", _GT_RE)):
        if char in text:
            if text[0] == char:
                first = 0  # a block quote or an HTML block on the first line
            for m in found.finditer(text, 0, first):
                start = text.rfind("\n", 0, m.start()) + 1
                if _PREFIX_RE.fullmatch(text, start, m.start()) is not None and not _inside(
                    fences, starts, start
                ):
                    first = start  # a block quote or an HTML block
                    break
    if "#" in text:
        for m in _HASH_RE.finditer(text, 0, first):
            start = text.rfind("\n", 0, m.start()) + 1
            if (
                _INDENT_RE.fullmatch(text, start, m.start()) is not None
                and _ATX_RE.match(text, m.start()) is not None
                and not _inside(fences, starts, start)
            ):
                first = start  # an indented ATX heading
                break
    for m in _DASHES_RE.finditer(text, 0, first):
        start = m.start() + 1
        if _UNDERLINE_RE.fullmatch(text, start, m.end()) is not None and not _inside(
            fences, starts, start
        ):
            above = text.rfind("\n", 0, m.start()) + 1
            if _line(text, above).strip(" \t"):
                first = start  # may underline a setext heading
                break
    for start in [0, *(m.start() + 1 for m in _DEEP_RE.finditer(text, 0, first))]:
        if _columns(_line(text, start)) >= _DEEP_COLUMNS and not _inside(fences, starts, start):
            first = min(first, start)  # may reach the nesting limit
            break
    return first


def _line(text: str, start: int) -> str:
    """The line starting at ``start``, without its line ending."""
    end = text.find("\n", start)
    if end < 0:
        end = len(text)
    if end > start and text[end - 1] == "\r":
        end -= 1
    return text[start:end]


def _columns(line: str) -> int:
    """At least the columns spanned by the line's leading indentation and list markers
    (a tab counted as 4)."""
    run = len(line) - len(line.lstrip(" \t-*+.)0123456789"))
    return run + 3 * line[:run].count("\t")


def _context(
    text: str, fences: list[tuple[int, int]], starts: list[int], offset: int
) -> tuple[bool, int | None] | None:
    """(in a section, the number of the phase it is in or None) for the line at
    ``offset``, from the headings above it, read as :mod:`plankit.checklist.structure`
    reads them; None when unsure."""
    closed = False  # a malformed phase heading ends a phase (outside sections)
    pos = offset
    while pos > 0:
        i = text.rfind("\n#", 0, pos)
        start = i + 1 if i >= 0 else 0
        if i < 0 and text[0] != "#":
            break
        pos = start
        k = bisect.bisect_right(starts, start) - 1
        if k >= 0 and start <= fences[k][1]:
            pos = starts[k]  # a line of a fenced block: go on above the block
            continue
        if _ATX_RE.match(text, start) is None:
            continue
        line = _line(text, start)
        level = len(line) - len(line.lstrip("#"))
        if level == 1:
            return False, None
        if level > 3:
            continue
        content = _heading_text(line, level)
        if content is None:
            return None
        if level == 2:
            return content.lower().startswith(SECTIONS), None
        heading = PHASE_TEXT_RE.fullmatch(content)
        if heading is not None:
            return False, None if closed else int(heading.group(1))
        if content[:6].lower() == "phase ":
            closed = True
    return False, None


def _heading_text(line: str, level: int) -> str | None:
    """The text of an ATX heading line, as markdown-it-py and the tree trim it; None
    for unusual whitespace (where the two trims differ)."""
    if _ODD_SPACE_RE.search(line) is not None:
        return None
    end = len(line.rstrip(" \t"))
    if end < level:
        end = level
    hashes = end
    while hashes > level and line[hashes - 1] == "#":
        hashes -= 1
    if hashes < end and hashes > level and line[hashes - 1] in " \t":
        end = hashes
    return line[level:end].strip(" \t")


def _indented_is_task(text: str, start: int) -> bool | None:
    """Whether the indented task line at ``start`` starts a list item; None if unsure."""
    run: list[str] = []
    pos = start
    anchor: str | None = None
    while pos > 0:
        prev = text.rfind("\n", 0, pos - 1) + 1
        line = _line(text, prev)
        if not line.strip(" \t"):
            return None
        if line[0] not in " \t":
            anchor = line
            break
        if len(run) >= _MAX_RUN:
            return None
        run.append(line)
        pos = prev
    stack: list[int] = []  # content columns of the open list items
    if anchor is not None and _ATX_RE.match(anchor) is None:
        if _item_indent(anchor) != 0:
            return None
        stack.append(2)
    run.reverse()
    run.append(_line(text, start))
    result: bool | None = None
    for line in run:
        result = _replay(line, stack)
        if result is None:
            return None
    return result


def _item_indent(line: str) -> int | None:
    """The indentation of a simple list item line, or None."""
    m = _ITEM_RE.fullmatch(line)
    if m is None:
        return None
    content = m.group(2)
    if (content[0] in _PLAIN_FIRST or _ORDERED_RE.match(content) is not None) and (
        TASK_LINE_RE.fullmatch(line) is None
    ):
        return None
    return len(m.group(1))


def _replay(line: str, stack: list[int]) -> bool | None:
    """One more line below the lines replayed into ``stack`` (content columns of the
    open list items, each with a paragraph open): whether it starts a list item; None
    when unsure.  ``stack`` is updated."""
    k = _item_indent(line)
    if k is None:
        m = _TEXT_RE.match(line)
        if m is None or not stack or _MARKER_RE.match(line) is not None:
            return None
        if line[len(m.group(1))] in _PLAIN_FIRST:
            return None
        return False  # a paragraph continuation line (lazy or not)
    if not stack:
        if k >= 4:
            return None  # indented code
        stack.append(k + 2)
        return True
    inner = stack[-1]
    outer = stack[-2] if len(stack) > 1 else 0
    if k - inner >= 4:
        return False  # continues the paragraph
    if k < inner and k - outer >= 4:
        return False  # a lazy continuation line (markdown-it's special case)
    if k < inner:
        while stack and k < stack[-1]:
            stack.pop()
        if k - (stack[-1] if stack else 0) >= 4:
            return None  # indented code in an enclosing item
    if len(stack) >= _MAX_DEPTH:
        return None
    stack.append(k + 2)
    return True


def phase_task_line(text: str, step: str) -> tuple[int, int] | None:
    """(line, phase number) of task ``step`` of a phase in a text never seen, when the
    scan is sure of it: a status update then changes one line without parsing the
    plan.  None: parse it (a text already parsed, a step the scan is unsure of or finds
    in no phase)."""
    if cached(text) is not None:
        return None
    found = task_in_phase(text, step)
    if found is None or found is UNSURE:
        return None
    offset, phase = found
    if phase is None:
        return None
    return text.count("\n", 0, offset) + 1, phase
