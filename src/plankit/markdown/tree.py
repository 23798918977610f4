"""Markdown source → a tree of blocks with 1-based line spans, built on markdown-it-py.

:func:`parse_document` returns a :class:`Document` whose ``blocks`` are headings,
paragraphs, lists (with their items' blocks), fenced blocks and a catch-all
:class:`OtherBlock` (block quotes, thematic breaks, HTML, indented code).  Every
block knows the lines it came from, so callers can report problems by line and slice
the raw source of any block.  The block model is in :mod:`plankit.markdown.blocks`.

Speed: plans are mostly bytes inside fenced blocks, and a fenced block's content needs
no Markdown parsing at all.  Before handing the text to markdown-it-py, a regular
expression finds the fenced blocks that open at the left margin and cuts their content
out, leaving a small *skeleton* (:mod:`plankit.markdown.skeleton`).  The skeleton is
read region by region, between ATX headings: a region made only of simple lines needs
no parser, markdown-it-py parses any other region alone (:mod:`plankit.markdown.regions`),
and the tree is built from its tokens with the line numbers mapped back and the content
put back in (:mod:`plankit.markdown.tokens`).  Every block cut out must be confirmed as
a top-level fence spanning exactly its fence lines (by the simple lines before it, or
by markdown-it-py).  Since the text before a top-level opening fence is the same in the
skeleton and the original, and a top-level fence ends at its first closing line
whatever follows (or runs to the end of the document when there is none), that makes
the result identical to parsing the whole text.  From a region that ends inside an
HTML block or a fence it opened, the rest of the skeleton is parsed whole; and when a
cut is not confirmed (an opening fence that is really inside an HTML block, say) the
rest of the original text is.

Memory: the text is held once (plus one copy when its line endings are CRLF); the
skeleton is a list of its lines, never a second copy of the text; a cut block's
content is one slice of the text, shared by the tree and whatever is built from it.
"""

from __future__ import annotations

from plankit.markdown.blocks import (
    MAX_NESTING,
    Block,
    Document,
    Fence,
    Heading,
    ListBlock,
    ListItem,
    OtherBlock,
    Paragraph,
    normalize,
    walk,
)
from plankit.markdown.regions import regions
from plankit.markdown.skeleton import cut_fences
from plankit.markdown.tokens import Builder, markdown_it, verified

__all__ = [
    "MAX_NESTING",
    "Block",
    "Document",
    "Fence",
    "Heading",
    "ListBlock",
    "ListItem",
    "OtherBlock",
    "Paragraph",
    "normalize",
    "parse_document",
    "walk",
]

# The names other modules of the package and its tests reach through this module.
_Builder = Builder
_markdown_it = markdown_it


def parse_document(text: str) -> Document:
    """Parse Markdown ``text`` into a :class:`Document` (never raises on any text)."""
    src = normalize(text)
    skeleton = cut_fences(src)
    builder = Builder(skeleton.cuts)
    blocks, rest = regions(skeleton, builder)
    too_deep = builder.too_deep
    if rest is not None:
        # From the skeleton line ``rest`` on, the text is read whole: the skeleton, when
        # markdown-it-py finds the cut blocks where they were cut, else the original.
        md = markdown_it()
        tokens = md.parse(skeleton.text(rest))
        later = {line: fence for line, fence in skeleton.cuts.items() if line >= rest}
        if verified(tokens, later, rest):
            blocks += builder.build(tokens, rest)
            too_deep = builder.too_deep
        else:
            del tokens
            start = builder.orig(rest)
            whole = Builder({})
            blocks += whole.build(md.parse(_from_line(src, start)), start)
            too_deep = too_deep if too_deep is not None else whole.too_deep
    return Document(src, tuple(blocks), too_deep)


def _from_line(src: str, line: int) -> str:
    """``src`` from its 0-based ``line`` on."""
    pos = 0
    for _ in range(line):
        pos = src.index("\n", pos) + 1
    return src[pos:] if pos else src
