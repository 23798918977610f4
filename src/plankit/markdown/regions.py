"""The second fast path: a skeleton read region by region, simple regions without a parser.

A skeleton is cut into regions at its ATX headings.  No block can run across an ATX
heading at the left margin except a top-level HTML block or fenced block, so each region
can be read on its own unless it ends inside one of those.  A region whose every line
is one of a few unambiguous shapes (blank, ``- item`` on one line, ``  - nested item``,
a plain paragraph line, a cut fence) is built directly; any other region goes to
markdown-it-py, alone.  Only from a region that ends inside an HTML block or a fence it
opened (or whose cut blocks markdown-it-py does not confirm) is the rest of the text
read whole.  The shapes are chosen so that each has exactly one CommonMark reading; a
property test compares the result with markdown-it-py's.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Mapping, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING

from plankit.markdown.blocks import Block, Fence, Heading, ListBlock, ListItem, Paragraph
from plankit.markdown.skeleton import Skeleton
from plankit.markdown.tokens import Builder, markdown_it, verified

if TYPE_CHECKING:
    from markdown_it.token import Token

_ATX_RE = re.compile(r"#{1,6}(?:[ \t]|$)")
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


def regions(skeleton: Skeleton, builder: Builder) -> tuple[list[Block], int | None]:
    """The blocks, region by region, as far as regions can be read on their own.

    Returns the blocks and None, or the blocks of the regions before the first one that
    cannot be read alone and that region's first skeleton line: from there on the
    skeleton must be read whole.  A region cannot be read alone when a block in it may
    run on into the next (:func:`_runs_on`), or when markdown-it-py does not find one of
    its cut blocks where the cut put it (then the rest of the original text must be
    read, which the caller finds out with :func:`~plankit.markdown.tokens.verified`).

    The lines of the regions read are blanked in ``skeleton.lines``, so that a large
    text's lines and its blocks are not all held at once; the lines from the returned
    one on are left as they were.
    """
    lines = skeleton.lines
    cuts = skeleton.cuts
    last = len(lines)
    if lines and not lines[-1].strip(" \t"):
        last -= 1  # a final newline; markdown-it-py also ignores a last line of blanks
    starts = [i for i, ln in enumerate(lines) if ln[:1] == "#" and _ATX_RE.match(ln)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    starts.append(last)
    cut_keys = list(cuts)
    blocks: list[Block] = []
    for a, b in pairwise(starts):
        simple = simple_region(lines, a, b, cuts, builder.orig)
        if simple is not None:
            blocks.extend(simple)
        else:
            # the text's last line keeps its lack of a newline: that can end a block
            # quote's fence a line earlier
            end = "\n" if b < len(lines) else ""
            tokens = markdown_it().parse("\n".join(lines[a:b]) + end)
            first, stop = bisect.bisect_left(cut_keys, a), bisect.bisect_left(cut_keys, b)
            inside = {k: cuts[k] for k in cut_keys[first:stop]}
            if (b < last and _runs_on(tokens, b - a)) or not verified(tokens, inside, a):
                return blocks, a
            blocks.extend(builder.build(tokens, a))
        lines[a:b] = [""] * (b - a)  # read: let go of the lines as the blocks grow
    return blocks, None


def _runs_on(tokens: Sequence[Token], line_count: int) -> bool:
    """Whether a block of a region's tokens may go on past the region's last line.

    The next region starts with an ATX heading at the left margin, which ends every
    block but a fenced block without its closing fence and an HTML block (which ends
    at a blank line or an end marker), both at the top level: any other container ends
    there, and what is in it with it.
    """
    for tok in tokens:
        if tok.level or tok.map is None or tok.map[1] < line_count:
            continue
        if tok.type == "html_block":
            return True
        if tok.type == "fence":
            content = tok.content
            lines = content.count("\n") + (0 if not content or content.endswith("\n") else 1)
            if lines != tok.map[1] - tok.map[0] - 2:
                return True  # not closed
    return False


def _one_line_item(line: int, text: str) -> ListItem:
    return ListItem(line, line, (Paragraph(line, line, text),))


def simple_region(
    lines: Sequence[str],
    a: int,
    b: int,
    cuts: Mapping[int, Fence],
    orig: Callable[[int], int],
) -> list[Block] | None:
    """Blocks of skeleton lines ``a`` … ``b-1``, or None when a line is not simple."""
    out: list[Block] = []
    para: list[str] = []
    para_start = 0
    items: list[tuple[int, int, str, list[tuple[int, str]]]] = []  # start, end, text, nested
    nested_indent = 0
    blank = False  # a blank line since the last list line

    # a line number is computed once per line: equal numbers share one int object
    def flush_para() -> None:
        if para:
            text = "\n".join(para).strip()
            first = orig(para_start) + 1
            last = first if len(para) == 1 else orig(para_start + len(para) - 1) + 1
            out.append(Paragraph(first, last, text))
            para.clear()

    def flush_list() -> None:
        if items:
            built: list[ListItem] = []
            for start, end, text, nested in items:
                first = orig(start) + 1
                para_block = Paragraph(first, first, text)
                if nested:
                    sub = tuple(_one_line_item(orig(n) + 1, t) for n, t in nested)
                    last = sub[-1].end
                    children: tuple[Block, ...] = (
                        para_block,
                        ListBlock(sub[0].start, last, False, sub),
                    )
                else:
                    last = first if end == start else orig(end) + 1
                    children = (para_block,)
                built.append(ListItem(first, last, children))
            out.append(ListBlock(built[0].start, built[-1].end, False, tuple(built)))
            items.clear()

    i = a
    if a < b:
        m = _ATX_RE.match(lines[a])
        if m is not None:
            level = len(lines[a]) - len(lines[a].lstrip("#"))
            at = orig(a) + 1
            out.append(Heading(at, at, level, _heading(level, lines[a])))
            i = a + 1
    while i < b:
        line = lines[i]
        cut = cuts.get(i)
        if cut is not None:
            flush_para()
            flush_list()
            blank = False
            out.append(cut)
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
