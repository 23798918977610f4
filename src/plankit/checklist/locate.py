"""Where a plan's task lines are, fast, for texts seen before and the texts made from
them by status updates.

Reading the structure of a 50,000-character plan takes milliseconds; a status update
should take microseconds.  A status update replaces one task line and never adds or
removes a line, so the structure of the new text is the old one's, and a line's
offset moves only by the length changes of the lines above it.  Each text in the
small cache below is kept with the structure it was read from (and that structure's
line offsets) plus the list of lines changed since and by how much; the offset of any
line is then its old offset plus a sum over that short list, whatever the line's
position in the plan.

A text that is not cached is not always parsed: a status update first asks
:func:`plankit.checklist.scan.task_line_start`, which finds the task line with regular
expressions when the plan's Markdown is simple enough for that to be certain.
"""

from __future__ import annotations

import _thread
import bisect
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from plankit.checklist.lines import NEWLINE_RE

if TYPE_CHECKING:
    from plankit.checklist.structure import Structure


@dataclass(slots=True)
class Entry:
    """A text's structure, and how the text differs from the one it was read from."""

    structure: Structure
    """The structure (shared by every text derived by status updates)."""
    edited: list[int] = field(default_factory=list)
    """Lines changed since the structure was read, sorted."""
    deltas: list[int] = field(default_factory=list)
    """How many characters each of those lines grew (or shrank)."""

    def line_start(self, line: int) -> int:
        """Offset of the start of 1-based ``line`` in this entry's text."""
        shift = sum(self.deltas[: bisect.bisect_left(self.edited, line)])
        return self.structure.line_starts[line - 1] + shift

    def derive(self, line: int, delta: int) -> Entry:
        """The entry of the text made by changing ``line``'s length by ``delta``."""
        edited, deltas = list(self.edited), list(self.deltas)
        i = bisect.bisect_left(edited, line)
        if i < len(edited) and edited[i] == line:
            deltas[i] += delta
        else:
            edited.insert(i, line)
            deltas.insert(i, delta)
        return Entry(self.structure, edited, deltas)


_CACHE: OrderedDict[str, Entry] = OrderedDict()
_CACHE_LOCK = _thread.allocate_lock()  # threading's Lock, without importing threading
_CACHE_SIZE = 8
_CACHE_MAX_CHARS = 2_000_000


def cached(text: str) -> Entry | None:
    """The cached entry of ``text``, or None when it is not cached."""
    with _CACHE_LOCK:
        hit = _CACHE.get(text)
        if hit is not None:
            _CACHE.move_to_end(text)
        return hit


def entry(text: str) -> Entry:
    """The cached entry of ``text``, reading its structure when it is not cached."""
    hit = cached(text)
    if hit is not None:
        return hit
    from plankit.checklist.structure import read_structure  # the Markdown parser

    found = Entry(read_structure(text))
    remember(text, found)
    return found


def analyze(text: str) -> Structure:
    """The structure of ``text`` (cached)."""
    return entry(text).structure


def remember(text: str, found: Entry) -> None:
    """Keep ``found`` as the entry of ``text`` (texts over 2 MB are not kept)."""
    if len(text) > _CACHE_MAX_CHARS:
        return
    with _CACHE_LOCK:
        _CACHE[text] = found
        _CACHE.move_to_end(text)
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)


def clear() -> None:
    """Forget every cached text."""
    with _CACHE_LOCK:
        _CACHE.clear()


def line_end(text: str, start: int) -> int:
    """Offset where the line starting at ``start`` ends (its line ending excluded)."""
    m = NEWLINE_RE.search(text, start)
    return m.start() if m is not None else len(text)


def line_bounds(text: str, line: int) -> tuple[int, int]:
    """Start and end offsets of 1-based ``line`` in ``text`` (for texts not cached)."""
    start = 0
    if line > 1:
        count = 1
        for m in NEWLINE_RE.finditer(text):
            count += 1
            if count == line:
                start = m.end()
                break
        else:
            raise IndexError(line)
    return start, line_end(text, start)
