"""The shared Markdown foundation: a block tree with line spans, links, fences.

The names below are imported on first use, so that a module that needs one small part
(:mod:`plankit.markdown.encoding`) does not load the parser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plankit.lazy import lazy_exports

if TYPE_CHECKING:
    from plankit.markdown.encoding import repair_double_encoding
    from plankit.markdown.fences import fence_for, fenced, longest_run
    from plankit.markdown.links import Link, find_links, is_url, root_link, root_path
    from plankit.markdown.tree import (
        Block,
        Document,
        Fence,
        Heading,
        ListBlock,
        ListItem,
        OtherBlock,
        Paragraph,
        parse_document,
        walk,
    )

_WHERE = {
    "repair_double_encoding": "encoding",
    **dict.fromkeys(("fence_for", "fenced", "longest_run"), "fences"),
    **dict.fromkeys(("Link", "find_links", "is_url", "root_link", "root_path"), "links"),
    **dict.fromkeys(
        (
            "Block",
            "Document",
            "Fence",
            "Heading",
            "ListBlock",
            "ListItem",
            "OtherBlock",
            "Paragraph",
            "parse_document",
            "walk",
        ),
        "tree",
    ),
}

__all__ = [
    "Block",
    "Document",
    "Fence",
    "Heading",
    "Link",
    "ListBlock",
    "ListItem",
    "OtherBlock",
    "Paragraph",
    "fence_for",
    "fenced",
    "find_links",
    "is_url",
    "longest_run",
    "parse_document",
    "repair_double_encoding",
    "root_link",
    "root_path",
    "walk",
]

__getattr__ = lazy_exports(__name__, _WHERE)
