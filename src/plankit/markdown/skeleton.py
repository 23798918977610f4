"""The first fast path: cut the content of top-level fenced blocks out of the text.

:func:`cut_fences` finds, with regular expressions, the fenced blocks that open at the
left margin and keeps only their fence lines: the rest is the *skeleton*, a small
text that still has every line that can be Markdown structure.  Each cut block is
already its :class:`~plankit.markdown.blocks.Fence`; only whether it really is a
top-level fence is left to check (an opening fence inside an HTML block is not one):
:mod:`plankit.markdown.regions` does, with :func:`plankit.markdown.tokens.verified`
where a region needs markdown-it-py.

A block whose closing fence never comes runs to the end of the document (CommonMark's
rule for a top-level fence), so it is cut out too, content and all: what comes before
it still takes the fast path, and nothing after it is Markdown.

The skeleton is kept as a list of lines, never joined into one text unless
markdown-it-py has to read it (:meth:`Skeleton.text`): a large plan's skeleton is
mostly lines a fast path reads one by one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from sys import intern

from plankit.markdown.blocks import Fence

_OPEN_RE = re.compile(r"^(`{3,}|~{3,})([^\n]*)$", re.MULTILINE)


@lru_cache(maxsize=64)
def _closer_re(char: str, length: int) -> re.Pattern[str]:
    return re.compile(rf"^ {{0,3}}{re.escape(char)}{{{length},}}[ \t]*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Skeleton:
    """A text with the content of its top-level fenced blocks cut out."""

    lines: list[str]
    """The skeleton's lines: the text's, less the content lines of the cut blocks (a cut
    block keeps its opening and closing fence lines, an unclosed one its opening line).
    :func:`~plankit.markdown.regions.regions` blanks those it has read."""
    cuts: dict[int, Fence]
    """Each cut block by the 0-based skeleton line of its opening fence, in order.  Line
    numbers in the fences are the original text's."""

    def text(self, start: int = 0) -> str:
        """The skeleton from its 0-based line ``start`` on, as one text, for markdown-it-py."""
        return "\n".join(self.lines[start:] if start else self.lines)


def cut_fences(src: str) -> Skeleton:
    """The skeleton of ``src`` (line endings already normalised)."""
    cuts: dict[int, Fence] = {}
    lines: list[str] = []
    pos = 0  # where the next search starts
    kept = 0  # start of the text not yet in ``lines`` (a line start)
    line = 0  # 0-based line number of ``pos``
    removed = 0  # content lines cut out so far
    size = len(src)
    search = _OPEN_RE.search
    count = src.count
    while True:
        m = search(src, pos)
        if m is None:
            break
        marker, info = m.group(1), m.group(2)
        line += count("\n", pos, m.start())
        pos = m.end()  # the opening line holds no newline: ``line`` stays right
        if marker[0] == "`" and "`" in info:
            continue  # not an opening fence: the info string of a ``` fence has no `
        open_end = m.end()  # at the "\n" ending the opening line (or the end of the text)
        lines.extend(src[kept:open_end].split("\n"))
        closer = None
        if open_end < size:
            closer = _closer_re(marker[0], len(marker)).search(src, open_end + 1)
        if closer is None:
            cuts[line - removed] = _unclosed(src, open_end + 1, line, marker, info)
            return Skeleton(lines, cuts)
        inner = count("\n", open_end + 1, closer.start())
        content = src[open_end + 1 : closer.start() - 1] if inner else ""
        fence = Fence(
            line + 1, line + 2 + inner, marker[0], len(marker), intern(info.strip()), content, True
        )
        cuts[line - removed] = fence
        kept = closer.start()
        removed += inner
        line += 1 + inner
        pos = closer.end()
    lines.extend(src[kept:].split("\n"))
    return Skeleton(lines, cuts)


def _unclosed(src: str, start: int, line: int, marker: str, info: str) -> Fence:
    """The block opened on 0-based ``line`` whose content starts at ``start`` and runs to
    the end of ``src``, as markdown-it-py reads it: a last line of only spaces and tabs
    with no newline after it is not a line at all, and the newline before the end of the
    content is not part of it."""
    stop = len(src)
    if start < stop and src[-1] != "\n":
        last = src.rfind("\n", start) + 1 or start
        if not src[last:].strip(" \t"):
            stop = last
    lines = src.count("\n", start, stop)
    if stop > start and src[stop - 1] == "\n":
        content = src[start : stop - 1]
    else:
        content = src[start:stop]
        lines += stop > start
    return Fence(line + 1, line + 1 + lines, marker[0], len(marker), info.strip(), content, False)
