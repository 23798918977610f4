"""The block model of a Markdown document: headings, paragraphs, lists, fences, the rest.

Every block knows the 1-based lines it came from, so callers can report problems by line
and slice the raw source of any block with :meth:`Document.lines`.
:func:`plankit.markdown.tree.parse_document` builds a :class:`Document`.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

_STRIDE = 16
"""Every how many lines :class:`Document` marks where a line starts."""
_STRIDE_RE = re.compile(rf"(?:[^\n]*\n){{{_STRIDE}}}")

MAX_NESTING = 40
"""Deepest token nesting accepted (a list level counts 2: the list and its item, a block
quote 1).  markdown-it-py stops descending a little deeper than this; a document that
reaches it is reported through :attr:`Document.too_deep_line`, never silently cut."""


@dataclass(frozen=True, slots=True)
class Heading:
    """An ATX or setext heading."""

    start: int
    """First line (1-based)."""
    end: int
    """Last line (1-based, inclusive)."""
    level: int
    """1 for ``#`` … 6 for ``######``."""
    text: str
    """The heading's inline Markdown source, trimmed (``#`` marks removed)."""


@dataclass(frozen=True, slots=True)
class Paragraph:
    """A paragraph (also the text of a tight list item)."""

    start: int
    """First line (1-based)."""
    end: int
    """Last line (1-based, inclusive)."""
    text: str
    """The inline Markdown source, lines joined with ``\\n``, indentation removed."""


@dataclass(frozen=True, slots=True)
class Fence:
    """A fenced code block."""

    start: int
    """Line of the opening fence (1-based)."""
    end: int
    """Line of the closing fence, or the last line when unclosed (1-based, inclusive)."""
    char: str
    """The fence character: ``\\``` or ``~``."""
    length: int
    """How many fence characters the opening fence has (at least 3)."""
    info: str
    """The info string after the opening fence, trimmed (``python``, ``text``, …)."""
    content: str
    """Exactly the text between the fences; the newline before the closing fence is not
    part of it."""
    closed: bool
    """False when the block runs to the end of its container without a closing fence."""


@dataclass(frozen=True, slots=True)
class ListItem:
    """One item of a list."""

    start: int
    """First line (1-based)."""
    end: int
    """Last non-blank line (1-based, inclusive)."""
    children: tuple[Block, ...]
    """The item's blocks (a paragraph, nested lists, fences …)."""


@dataclass(frozen=True, slots=True)
class ListBlock:
    """A bullet or ordered list."""

    start: int
    """First line (1-based)."""
    end: int
    """Last non-blank line (1-based, inclusive)."""
    ordered: bool
    """True for ``1.`` lists."""
    items: tuple[ListItem, ...]
    """The items, in order."""


@dataclass(frozen=True, slots=True)
class OtherBlock:
    """Any other block: ``blockquote``, ``hr``, ``html_block`` or ``code_block``."""

    start: int
    """First line (1-based)."""
    end: int
    """Last non-blank line (1-based, inclusive)."""
    kind: str
    """markdown-it-py's name for the block."""
    children: tuple[Block, ...] = ()
    """Nested blocks (block quotes only)."""


Block: TypeAlias = Heading | Paragraph | Fence | ListBlock | OtherBlock


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed Markdown document."""

    source: str
    """The text parsed, line endings normalised to ``\\n``."""
    blocks: tuple[Block, ...]
    """Top-level blocks, in order."""
    too_deep_line: int | None = None
    """First line of a container nested deeper than :data:`MAX_NESTING`, if any."""
    _marks: array[int] = field(default_factory=lambda: array("q"), repr=False, compare=False)
    """Where every :data:`_STRIDE`-th line starts in :attr:`source`, filled on first use;
    a line in between is found from the mark before it (an index of every line would
    cost more than the lines a plan ever slices)."""

    @property
    def line_count(self) -> int:
        """Number of lines in :attr:`source`."""
        source = self.source
        return source.count("\n") + (0 if source.endswith("\n") else 1)

    def _offset(self, index: int) -> int:
        """Where 0-based line ``index`` starts in :attr:`source`.  Past the last line: the
        end of the source when it ends with a newline, else one past it (so that slicing
        to one before the offset never takes a final newline)."""
        source = self.source
        size = len(source)
        if index < 0:
            return size + 1
        marks = self._marks
        if not marks:
            marks.append(0)
            marks.extend(m.end() for m in _STRIDE_RE.finditer(source))
        mark = min(index // _STRIDE, len(marks) - 1)
        pos = marks[mark]
        find = source.find
        for _ in range(index - mark * _STRIDE):
            found = find("\n", pos)
            if found < 0:
                return pos if pos == size and size else size + 1
            pos = found + 1
        return pos

    def lines(self, start: int, end: int) -> str:
        """The raw source of lines ``start`` … ``end`` (1-based, inclusive), no final newline."""
        if end < start:
            return ""
        return self.source[self._offset(start - 1) : self._offset(end) - 1]

    def line(self, number: int) -> str:
        """The raw source of one line (1-based)."""
        return self.lines(number, number)


def normalize(text: str) -> str:
    """Line endings to ``\\n`` and NUL to U+FFFD, as markdown-it-py does before parsing.

    Lone ``\\r`` are looked for only once ``\\r\\n`` are gone, so a large text with CRLF
    line endings costs one copy beside the caller's, not two.
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if "\r" in text:
            text = text.replace("\r", "\n")
    if "\0" in text:
        text = text.replace("\0", "\ufffd")
    return text


def walk(blocks: Sequence[Block]) -> Iterator[Block]:
    """Every block in ``blocks`` and, depth first, every block nested in them."""
    for block in blocks:
        yield block
        if isinstance(block, ListBlock):
            for item in block.items:
                yield from walk(item.children)
        elif isinstance(block, OtherBlock) and block.children:
            yield from walk(block.children)
