"""The shared Markdown foundation: a block tree with line spans, links, fences."""

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
