"""Blocks from markdown-it-py's tokens, with line numbers mapped back to the original.

markdown-it-py reads a skeleton (:mod:`plankit.markdown.skeleton`), a region of one or
the whole text; :class:`Builder` turns its tokens into blocks, mapping the skeleton's
line numbers back to the original's and putting each cut block back in place.
:func:`verified` checks that every cut block came back as the top-level fence it was
taken for.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from plankit.markdown.blocks import (
    MAX_NESTING,
    Block,
    Fence,
    Heading,
    ListBlock,
    ListItem,
    OtherBlock,
    Paragraph,
)

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token


@lru_cache(maxsize=1)
def markdown_it() -> MarkdownIt:
    """The CommonMark parser (imported on first use: most plans never need it)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"maxNesting": MAX_NESTING + 4})


class Builder:
    """Builds blocks from tokens; ``cuts`` are the skeleton's cut blocks by skeleton line."""

    def __init__(self, cuts: Mapping[int, Fence]) -> None:
        self.tokens: Sequence[Token] = ()
        self.pos = 0
        self.offset = 0
        self.cuts = cuts
        self.cut_keys = list(cuts)
        self.cut_shift = []
        total = 0
        for fence in cuts.values():
            total += fence.end - fence.start - 1
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
        if cut is not None and tok.level == 0:
            return cut
        start, end = self.span(tok)
        content = tok.content
        lines = content.count("\n") + (0 if not content or content.endswith("\n") else 1)
        closed = lines == tok.map[1] - tok.map[0] - 2
        if content.endswith("\n"):
            content = content[:-1]
        char = tok.markup[0]
        return Fence(start, end, char, len(tok.markup), tok.info.strip(), content, closed)


def verified(tokens: Sequence[Token], cuts: Mapping[int, Fence], offset: int = 0) -> bool:
    """Whether every cut block came back as a top-level fence of its fence lines only.

    A closed block keeps two lines in the skeleton, an unclosed one its opening line,
    the last of the skeleton; either way markdown-it-py must find an empty fence there
    with the same fence characters and info string.
    """
    if not cuts:
        return True
    found = {
        t.map[0] + offset: t
        for t in tokens
        if t.type == "fence" and t.level == 0 and t.map is not None
    }
    for line, fence in cuts.items():
        tok = found.get(line)
        if (
            tok is None
            or tok.map is None
            or tok.map[1] + offset != line + (2 if fence.closed else 1)
            or tok.markup != fence.char * fence.length
            or tok.info.strip() != fence.info
            or tok.content
        ):
            return False
    return True
