"""Markdown source → a tree of blocks with 1-based line spans, built on markdown-it-py.

:func:`parse_document` returns a :class:`Document` whose ``blocks`` are headings,
paragraphs, lists (with their items' blocks), fenced blocks and a catch-all
:class:`OtherBlock` (block quotes, thematic breaks, HTML, indented code).  Every
block knows the lines it came from, so callers can report problems by line and slice
the raw source of any block.

Speed: plans are mostly bytes inside fenced blocks, and a fenced block's content needs
no Markdown parsing at all.  Before handing the text to markdown-it-py, a regular
expression finds the fenced blocks that open at the left margin and cuts their content
out, leaving a small *skeleton*.  markdown-it-py parses the skeleton; the tree is built
from its tokens with the line numbers mapped back and the content put back in.  The
cut is then checked: every block cut out must come back from markdown-it-py as a
top-level fence spanning exactly its opening and closing lines.  Since the text before
a top-level opening fence is the same in the skeleton and the original, and a
top-level fence ends at its first closing line whatever follows, that check makes the
result identical to parsing the whole text.  When the check fails (an opening fence
that is really inside an HTML block, say) the whole text is parsed instead.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

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
    _starts: list[int] = field(default_factory=list, repr=False, compare=False)

    @property
    def line_count(self) -> int:
        """Number of lines in :attr:`source`."""
        return len(self._line_starts()) - 1

    def _line_starts(self) -> list[int]:
        if not self._starts:
            starts = [0]
            find = self.source.find
            pos = find("\n")
            while pos >= 0:
                starts.append(pos + 1)
                pos = find("\n", pos + 1)
            if starts[-1] != len(self.source) or not self.source:
                starts.append(len(self.source) + 1)
            self._starts.extend(starts)
        return self._starts

    def lines(self, start: int, end: int) -> str:
        """The raw source of lines ``start`` … ``end`` (1-based, inclusive), no final newline."""
        if end < start:
            return ""
        starts = self._line_starts()
        last = min(end, len(starts) - 1)
        return self.source[starts[start - 1] : starts[last] - 1]

    def line(self, number: int) -> str:
        """The raw source of one line (1-based)."""
        return self.lines(number, number)


def normalize(text: str) -> str:
    """Line endings to ``\\n`` and NUL to U+FFFD, as markdown-it-py does before parsing."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\0" in text:
        text = text.replace("\0", "\ufffd")
    return text


@lru_cache(maxsize=1)
def _markdown_it() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"maxNesting": MAX_NESTING + 4})


# --- the fast path: cut out top-level fenced blocks ------------------------------------

_OPEN_RE = re.compile(r"^(`{3,}|~{3,})([^\n]*)$", re.MULTILINE)


@lru_cache(maxsize=64)
def _closer_re(char: str, length: int) -> re.Pattern[str]:
    return re.compile(rf"^ {{0,3}}{re.escape(char)}{{{length},}}[ \t]*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class _Cut:
    open_line: int  # 0-based, in the original
    close_line: int  # 0-based, in the original
    skeleton_line: int  # 0-based line of the opening fence in the skeleton
    marker: str
    info: str
    content: str


def _cut_fences(src: str) -> tuple[str, list[_Cut]]:
    """Find top-level fenced blocks with a regex and cut their content out."""
    cuts: list[_Cut] = []
    pieces: list[str] = []
    pos = 0  # where the next search starts
    kept = 0  # start of text not yet copied to the skeleton
    line = 0  # 0-based line number of ``pos``
    removed = 0
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
        open_end = m.end()  # at the "\n" ending the opening line (or end of text)
        if open_end >= len(src):
            break
        closer = _closer_re(marker[0], len(marker)).search(src, open_end + 1)
        if closer is None:
            break  # unclosed: runs to the end; markdown-it-py handles it
        inner = count("\n", open_end + 1, closer.start())
        content = src[open_end + 1 : closer.start() - 1] if inner else ""
        pieces.append(src[kept : open_end + 1])
        kept = closer.start()
        cuts.append(
            _Cut(
                open_line=line,
                close_line=line + 1 + inner,
                skeleton_line=line - removed,
                marker=marker,
                info=info.strip(),
                content=content,
            )
        )
        removed += inner
        line += 1 + inner
        pos = closer.end()
    if not cuts:
        return src, cuts
    pieces.append(src[kept:])
    return "".join(pieces), cuts


# --- building the tree from tokens ----------------------------------------------------


class _Builder:
    def __init__(self, cuts: Sequence[_Cut]) -> None:
        self.tokens: Sequence[Token] = ()
        self.pos = 0
        self.offset = 0
        self.cuts = {c.skeleton_line: c for c in cuts}
        self.cut_keys = [c.skeleton_line for c in cuts]
        self.cut_shift = []
        total = 0
        for c in cuts:
            total += c.close_line - c.open_line - 1
            self.cut_shift.append(total)
        self.too_deep: int | None = None

    def build(self, tokens: Sequence[Token], offset: int = 0) -> list[Block]:
        """Blocks from markdown-it-py tokens of skeleton text starting at line ``offset``."""
        self.tokens, self.pos, self.offset = tokens, 0, offset
        return self.blocks(-1)

    def orig(self, skeleton_line: int) -> int:
        """0-based skeleton line → 0-based original line."""
        i = bisect.bisect_right(self.cut_keys, skeleton_line - 1) - 1
        # lines strictly after a cut's opening line are shifted by that cut
        return skeleton_line + (self.cut_shift[i] if i >= 0 else 0)

    def span(self, tok: Token) -> tuple[int, int]:
        assert tok.map is not None
        a, b = tok.map
        return self.orig(a + self.offset) + 1, self.orig(b - 1 + self.offset) + 1

    def blocks(self, until_level: int) -> list[Block]:
        out: list[Block] = []
        tokens = self.tokens
        while self.pos < len(tokens):
            tok = tokens[self.pos]
            if tok.nesting == -1:
                if tok.level <= until_level:
                    self.pos += 1
                    return out
                self.pos += 1
                continue
            if tok.nesting == 1 and tok.level >= MAX_NESTING and self.too_deep is None:
                self.too_deep = self.span(tok)[0]
            out.append(self.block(tok))
        return out

    def block(self, tok: Token) -> Block:
        kind = tok.type
        if kind == "fence":
            self.pos += 1
            return self.fence(tok)
        if kind == "heading_open":
            start, end = self.span(tok)
            inline = self.tokens[self.pos + 1]
            self.pos += 3
            return Heading(start, end, int(tok.tag[1]), inline.content.strip())
        if kind == "paragraph_open":
            start, end = self.span(tok)
            inline = self.tokens[self.pos + 1]
            self.pos += 3
            return Paragraph(start, end, inline.content)
        if kind in ("bullet_list_open", "ordered_list_open"):
            start, _ = self.span(tok)
            self.pos += 1
            items: list[ListItem] = []
            while self.tokens[self.pos].type == "list_item_open":
                item_tok = self.tokens[self.pos]
                istart, _ = self.span(item_tok)
                self.pos += 1
                children = tuple(self.blocks(item_tok.level))
                iend = max([istart, *(c.end for c in children)])
                items.append(ListItem(istart, iend, children))
            self.pos += 1  # list close
            end = items[-1].end if items else start
            return ListBlock(start, end, kind == "ordered_list_open", tuple(items))
        if tok.nesting == 1:  # blockquote and any other container
            start, end = self.span(tok)
            self.pos += 1
            children = tuple(self.blocks(tok.level))
            name = kind.removesuffix("_open")
            end = max([start, *(c.end for c in children)])
            return OtherBlock(start, end, name, children)
        self.pos += 1
        start, end = self.span(tok)
        return OtherBlock(start, end, kind)

    def fence(self, tok: Token) -> Fence:
        assert tok.map is not None
        cut = self.cuts.get(tok.map[0] + self.offset)
        char = tok.markup[0]
        if cut is not None and tok.level == 0:
            return Fence(
                cut.open_line + 1,
                cut.close_line + 1,
                char,
                len(cut.marker),
                cut.info,
                cut.content,
                True,
            )
        start, end = self.span(tok)
        content = tok.content
        lines = content.count("\n") + (0 if not content or content.endswith("\n") else 1)
        closed = lines == tok.map[1] - tok.map[0] - 2
        if content.endswith("\n"):
            content = content[:-1]
        return Fence(start, end, char, len(tok.markup), tok.info.strip(), content, closed)


def _verified(tokens: Sequence[Token], cuts: Sequence[_Cut], offset: int = 0) -> bool:
    """Whether every cut fence came back as a top-level fence of exactly two lines."""
    if not cuts:
        return True
    found = {
        t.map[0] + offset: t
        for t in tokens
        if t.type == "fence" and t.level == 0 and t.map is not None
    }
    for cut in cuts:
        tok = found.get(cut.skeleton_line)
        if (
            tok is None
            or tok.map is None
            or tok.map[1] + offset != cut.skeleton_line + 2
            or tok.markup != cut.marker
            or tok.info.strip() != cut.info
            or tok.content
        ):
            return False
    return True


# --- the second fast path: regions made only of simple lines ---------------------------
#
# A skeleton is cut into regions at its ATX headings.  No block can run across an ATX
# heading at the left margin except an HTML block or a fenced block, so the cut is only
# made when the skeleton has neither (apart from the fences already cut out).  A region
# whose every line is one of a few unambiguous shapes (blank, ``- item`` on one line,
# ``  - nested item``, a plain paragraph line, a cut fence) is built directly; any other
# region goes to markdown-it-py.  The shapes are chosen so that each has exactly one
# CommonMark reading; a property test compares the result with markdown-it-py's.

_ATX_RE = re.compile(r"#{1,6}(?:[ \t]|$)")
_SPANNING_RE = re.compile(r"^ {0,3}(?:<|`{3}|~{3})", re.MULTILINE)
_ITEM_RE = re.compile(r"( {2,5})?- ([^ \t].*)")
_STARTS_BLOCK_RE = re.compile(
    r"[#><|=+\-]|`{3}|~{3}|\d{1,9}[.)](?:[ \t]|$)|\*(?:[ \t]|$)|\[[^\]]*\]:|(?:[*_][ \t]*){3,}$"
)
_PARA_RE = re.compile(r"[^ \t]")


def _heading(level: int, line: str) -> str:
    text = line[level:].strip()
    stripped = text.rstrip("#")
    if stripped != text and (not stripped or stripped[-1] in " \t"):
        text = stripped.strip()
    return text


def _simple_region(
    lines: Sequence[str], a: int, b: int, cuts: dict[int, _Cut], orig: Callable[[int], int]
) -> list[Block] | None:
    """Blocks of skeleton lines ``a`` … ``b-1``, or None when a line is not simple."""
    out: list[Block] = []
    para: list[str] = []
    para_start = 0
    items: list[tuple[int, int, str, list[tuple[int, str]]]] = []  # start, end, text, nested
    nested_indent = 0
    blank = False  # a blank line since the last list line

    def flush_para() -> None:
        if para:
            text = "\n".join(para).strip()
            out.append(Paragraph(orig(para_start) + 1, orig(para_start + len(para) - 1) + 1, text))
            para.clear()

    def flush_list() -> None:
        if items:
            built: list[ListItem] = []
            for start, end, text, nested in items:
                first = orig(start) + 1
                para_block = Paragraph(first, first, text)
                if nested:
                    sub = tuple(
                        ListItem(
                            orig(n) + 1, orig(n) + 1, (Paragraph(orig(n) + 1, orig(n) + 1, t),)
                        )
                        for n, t in nested
                    )
                    last = sub[-1].end
                    children: tuple[Block, ...] = (
                        para_block,
                        ListBlock(sub[0].start, last, False, sub),
                    )
                else:
                    last = orig(end) + 1
                    children = (para_block,)
                built.append(ListItem(first, last, children))
            out.append(ListBlock(built[0].start, built[-1].end, False, tuple(built)))
            items.clear()

    i = a
    if a < b:
        m = _ATX_RE.match(lines[a])
        if m is not None:
            level = len(lines[a]) - len(lines[a].lstrip("#"))
            out.append(Heading(orig(a) + 1, orig(a) + 1, level, _heading(level, lines[a])))
            i = a + 1
    while i < b:
        line = lines[i]
        cut = cuts.get(i)
        if cut is not None:
            flush_para()
            flush_list()
            blank = False
            out.append(
                Fence(
                    cut.open_line + 1,
                    cut.close_line + 1,
                    cut.marker[0],
                    len(cut.marker),
                    cut.info,
                    cut.content,
                    True,
                )
            )
            i += 2
            continue
        if not line.strip(" \t"):
            flush_para()
            blank = True
            i += 1
            continue
        m = _ITEM_RE.fullmatch(line)
        if m is not None:
            text = m.group(2)
            if _STARTS_BLOCK_RE.match(text):
                return None
            if m.group(1) is None:
                flush_para()
                items.append((i, i, text.strip(), []))
                nested_indent = 0
            else:
                if not items or para:
                    return None
                indent = len(m.group(1))
                nested = items[-1][3]
                if nested and indent != nested_indent:
                    return None
                nested_indent = indent
                nested.append((i, text.strip()))
            blank = False
            i += 1
            continue
        if _PARA_RE.match(line) is None or _STARTS_BLOCK_RE.match(line):
            return None
        if items:
            if not blank:
                return None  # a lazy continuation line of the item
            flush_list()
        if not para:
            para_start = i
        para.append(line)
        blank = False
        i += 1
    flush_para()
    flush_list()
    return out


def parse_document(text: str) -> Document:
    """Parse Markdown ``text`` into a :class:`Document` (never raises on any text)."""
    src = normalize(text)
    skeleton, cuts = _cut_fences(src)
    builder = _Builder(cuts)
    blocks = _regions(skeleton, cuts, builder)
    if blocks is None:
        md = _markdown_it()
        tokens = md.parse(skeleton)
        if _verified(tokens, cuts):
            blocks = builder.build(tokens)
        else:
            builder = _Builder(())
            blocks = builder.build(md.parse(src))
    return Document(src, tuple(blocks), builder.too_deep)


def _regions(skeleton: str, cuts: Sequence[_Cut], builder: _Builder) -> list[Block] | None:
    """The blocks, region by region, or None when the skeleton cannot be cut in regions."""
    cut_lines = {c.skeleton_line for c in cuts} | {c.skeleton_line + 1 for c in cuts}
    count = skeleton.count
    pos = line = 0
    for m in _SPANNING_RE.finditer(skeleton):
        line += count("\n", pos, m.start())
        pos = m.start()
        if line not in cut_lines:
            return None
    lines = skeleton.split("\n")
    if lines and not lines[-1].strip(" \t"):
        lines.pop()  # a final newline; markdown-it-py also ignores a last line of blanks
    starts = [i for i, ln in enumerate(lines) if ln[:1] == "#" and _ATX_RE.match(ln)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    starts.append(len(lines))
    by_line = {c.skeleton_line: c for c in cuts}
    blocks: list[Block] = []
    for a, b in pairwise(starts):
        simple = _simple_region(lines, a, b, by_line, builder.orig)
        if simple is not None:
            blocks.extend(simple)
            continue
        region = "\n".join(lines[a:b]) + "\n"
        tokens = _markdown_it().parse(region)
        inside = [c for c in cuts if a <= c.skeleton_line < b]
        if not _verified(tokens, inside, a):
            return None
        blocks.extend(builder.build(tokens, a))
    return blocks


def walk(blocks: Sequence[Block]) -> Iterator[Block]:
    """Every block in ``blocks`` and, depth first, every block nested in them."""
    for block in blocks:
        yield block
        if isinstance(block, ListBlock):
            for item in block.items:
                yield from walk(item.children)
        elif isinstance(block, OtherBlock) and block.children:
            yield from walk(block.children)
