"""YAML front matter: split it from the Markdown body and parse it strictly.

A document with front matter starts with a line ``---``; the front matter ends at the
next line ``---`` and the Markdown body follows.  The YAML between them is read into a
small tree (:class:`Scalar`, :class:`Seq`, :class:`Map`, from
:mod:`plankit.agentflow.yamltree`) that keeps the line of every key and item, so
errors can point at them.

Parsing is strict and safe: no tags (``!!python/object``), no anchors or aliases (so
no alias bombs), no duplicate keys, at most :data:`MAX_DEPTH` levels of nesting and
:data:`MAX_FRONT_MATTER` characters, checked before any YAML is parsed.  Scalars are
read as written: ``id: 2024`` is the text ``2024``; only an empty plain value, ``~``
and ``null`` are null.

Two parsers give the same tree.  Front matter made only of ``key: value`` lines,
flow lists of simple items and block lists (what plans are made of) is read by a
line-based fast path; anything else goes through ruamel.yaml's event parser
(:mod:`plankit.agentflow.yamlstrict`), imported only then.  ``tests/agentflow``
checks the two agree.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from plankit.agentflow.yamltree import (
    NULLS,
    FrontMatterError,
    Map,
    Node,
    Scalar,
    Seq,
    plain_value,
)

__all__ = [
    "MAX_DEPTH",
    "MAX_FRONT_MATTER",
    "Document",
    "FrontMatterError",
    "Map",
    "Node",
    "Scalar",
    "Seq",
    "fast_lines",
    "flow_texts",
    "normalize_newlines",
    "parse",
    "plain_value",
    "scalar_text",
    "split",
]

MAX_FRONT_MATTER = 64 * 1024
"""Largest front matter parsed, in characters; long text belongs in the body."""

MAX_DEPTH = 16
"""Deepest nesting of lists and mappings accepted in front matter."""


class Document(NamedTuple):
    """A text split into front matter and body (a named tuple: one is made per task file,
    and a tuple is made in a third of a frozen dataclass's time)."""

    front_matter: str | None
    """The YAML text between the ``---`` lines, or ``None`` when there is none."""
    yaml_line: int
    """1-based line of the file where the YAML text starts."""
    body: str
    """The Markdown after the closing ``---`` (the whole text without front matter)."""
    body_line: int
    """1-based line of the file where the body starts."""


_OPEN = re.compile(r"---[ \t]*(?:\n|\Z)")
_BLANKS = re.compile(r"[ \t]*")


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR line endings as LF (a BOM is removed by the reader)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def split(text: str) -> Document:
    """Split ``text`` (LF line endings) at its front matter delimiters.

    Raises :class:`FrontMatterError` when the front matter is not closed or is larger
    than :data:`MAX_FRONT_MATTER`; only a bounded prefix is searched, so a huge file
    is refused quickly.
    """
    if text.startswith("---\n"):  # the usual opening line, without a regex
        at = text.find("\n---", 3, MAX_FRONT_MATTER + 7)
        if at >= 0 and (text.startswith("\n", at + 4) or at + 4 == len(text)):
            yaml = text[4 : at + 1]  # closed by the usual line "---", within the limit
            return Document(yaml, 2, text[at + 5 :], 3 + yaml.count("\n"))
        start = 4
    else:
        opened = _OPEN.match(text)
        if opened is None:
            return Document(None, 1, text, 1)
        start = opened.end()
    if start == len(text) and not text.endswith("\n"):
        raise FrontMatterError("front matter is not closed; add a line --- after it", 1)
    # Only a bounded window is searched, so a huge file is refused without scanning it all.
    window = min(len(text), start + MAX_FRONT_MATTER + 64)
    closed = _closing(text, start, window)
    if closed is None or closed[0] - start > MAX_FRONT_MATTER:
        if len(text) - start <= MAX_FRONT_MATTER:
            raise FrontMatterError("front matter is not closed; add a line --- after it", 1)
        later = closed or _closing(text, window - 64, len(text))
        size = (later[0] if later else len(text)) - start
        raise FrontMatterError(
            f"front matter is {_size(size)}{'' if later else ' and not closed'}; at most "
            f"{MAX_FRONT_MATTER // 1024} KiB is read (put long text in the Markdown body)",
            1,
        )
    closed_start, closed_end = closed
    yaml = text[start:closed_start]
    body_start = closed_end + 1
    body_line = 2 + yaml.count("\n") + 1
    return Document(yaml, 2, text[body_start:], body_line)


def _closing(text: str, pos: int, end: int) -> tuple[int, int] | None:
    """Start and end of the first line ``---`` (blanks may follow) that begins in
    ``text[pos:end]``; its blanks are read to the end of the line, past ``end``.

    Line starts are found with ``str.find`` of a newline and the dashes, so megabytes
    without a closing line are passed over at the speed of a memory scan.
    """
    at = 0 if pos == 0 and text.startswith("---", 0, end) else -1
    search = max(pos - 1, 0)
    while True:
        if at < 0:
            newline = text.find("\n---", search, end)
            if newline < 0:
                return None
            at = newline + 1
        if text.startswith("\n", at + 3) or at + 3 == len(text):
            return at, at + 3  # the usual closing line, "---" alone
        blanks = _BLANKS.match(text, at + 3)
        assert blanks is not None  # the pattern matches the empty string
        if blanks.end() == len(text) or text[blanks.end()] == "\n":
            return at, blanks.end()
        search, at = at, -1  # "----" or "--- text": not a closing line


def _size(chars: int) -> str:
    """``chars`` for a message; KiB round up, so a size over the limit never reads as
    the limit itself."""
    if chars >= 1_000_000:
        return f"{chars / 1_000_000:.1f} MB"
    return f"{-(-chars // 1024)} KiB"


def parse(yaml: str, first_line: int = 1, *, fast: bool = True) -> Node:
    """Parse front matter YAML into a tree (an empty document is an empty :class:`Map`).

    ``first_line`` is the file line the YAML starts on.  Raises
    :class:`FrontMatterError` for invalid or unsafe YAML and duplicate keys.
    ``fast=False`` skips the fast path (for tests and benchmarks).
    """
    if len(yaml) > MAX_FRONT_MATTER:
        raise FrontMatterError(
            f"front matter is {_size(len(yaml))}; at most {MAX_FRONT_MATTER // 1024} KiB is read",
            first_line,
        )
    node = _fast(yaml, first_line) if fast else None
    if node is not None:
        # The fast path's tree is one mapping of scalars and lists: duplicates can only
        # be among its keys.
        assert isinstance(node, Map)
        if len({key for key, _, _ in node.items}) != len(node.items):
            _check_duplicates(node)
        return node
    from plankit.agentflow.yamlstrict import parse_events

    node = parse_events(yaml, first_line, MAX_DEPTH)
    _check_duplicates(node)
    return node


def _check_duplicates(node: Node) -> None:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, Map):
            seen: dict[str, int] = {}
            for key, line, value in current.items:
                if key in seen:
                    raise FrontMatterError(
                        f"duplicate field {key!r} (first on line {seen[key]}); keep one", line
                    )
                seen[key] = line
                stack.append(value)
        elif isinstance(current, Seq):
            stack.extend(current.items)


# --- the fast path --------------------------------------------------------------------
#
# Only lines with exactly one YAML reading are accepted; anything else returns None and
# the full parser decides.  Plain scalars must start with a character that cannot start
# YAML syntax and contain no ':' or '#' (which could start a mapping or a comment) and
# no character YAML treats specially (control characters, BOM, NEL, line separators).

_BAD = "\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029\\ufeff\\ufffe\\uffff"
_PLAIN = rf"[A-Za-z0-9_(./$][^{_BAD}#:]*"
_FLOW_ITEM = rf"[A-Za-z0-9_(./$][^{_BAD}#:,\[\]{{}}]*"
_DQ = rf'"[^"\\{_BAD}]*"'
_SQ = rf"'[^'{_BAD}]*'"
_SCALAR = rf"{_PLAIN}|{_DQ}|{_SQ}"
# Each item and the blanks after it are matched once for all (an atomic group): a plain
# item's trailing blanks could also be the blanks after it, and trying every split of
# them on a list that does not close took time exponential in its items.
_FLOW_ENTRY = rf"(?>(?:{_FLOW_ITEM}|{_DQ}|{_SQ})[ ]*)"
_FLOW = re.compile(rf"\[[ ]*(?:{_FLOW_ENTRY}(?:,[ ]*{_FLOW_ENTRY})*)?\]")
_FLOW_SPLIT = re.compile(rf"[ ]*({_FLOW_ITEM}|{_DQ}|{_SQ})[ ]*(?:,|\Z)")
# One line of the fast path's front matter, with its newline: ``key: scalar``,
# ``key: [flow, list]`` or ``key:`` (groups 1 and 2), a block list item ``- scalar``
# (groups 3 and 4), or a blank or comment line (no group).
_LINE = (
    rf"(?:([A-Za-z_][A-Za-z0-9_-]*):(?:[ ]+({_SCALAR}|\[[^{_BAD}]*))?[ ]*"
    rf"|( *)-[ ]+({_SCALAR})[ ]*"
    rf"|[ ]*(?:#[^{_BAD}]*)?)\n"
)
# The same, with any other line as group 5 (``rest``): every line matches one of the
# alternatives, so one ``findall`` reads them all, line by line, and a ``rest`` tells
# the front matter is not of the fast path's shapes.  Each line is matched on its own
# (an alternative ends at its newline): a line that does not match never sends the
# search back through the lines before it.
_SHAPES = re.compile(rf"{_LINE}|([^\n]*\n)")
_NULL_KEYS = frozenset(("null", "Null", "NULL"))


def fast_lines(yaml: str) -> list[tuple[str, str, str, str, str]] | None:
    """The lines of front matter as the fast path reads them, or ``None`` for front
    matter too large.

    Each line is ``(key, value, indent, item, rest)``: a key line has ``key`` and its
    ``value`` as written (empty for ``key:``, ``[…]`` for a flow list, not yet checked),
    an item line ``- item`` has the ``indent`` before its dash and the ``item``, a
    blank or comment line has all five empty, and a line of no fast path shape is its
    ``rest`` (with its newline): the front matter is then not the fast path's.  A line
    holding a character YAML treats specially (a tab, a control character, a byte-order
    mark, a line separator) has no fast path shape.
    """
    if len(yaml) > MAX_FRONT_MATTER:
        return None
    if not yaml.endswith("\n"):
        yaml += "\n"
    return _SHAPES.findall(yaml)


def scalar_text(text: str) -> str | None:
    """The value of a scalar of the fast path's shape as written: quotes removed, a
    plain scalar's trailing blanks trimmed; ``None`` for null."""
    if text[0] == '"' or text[0] == "'":
        return text[1:-1]
    # YAML trims only spaces and tabs around a plain scalar: "null" followed by a
    # no-break space is the text "null\u00a0", not null.
    return plain_value(text.rstrip(" \t"))


def flow_texts(value: str) -> list[str | None] | None:
    """The items of a flow list ``[a, "b", c]`` of scalars (as :func:`scalar_text`
    reads them), or ``None`` for any other flow."""
    value = value.rstrip(" ")
    if _FLOW.fullmatch(value) is None:
        return None
    inner = value[1:-1]
    if '"' in inner or "'" in inner:  # a quoted item may hold a comma
        return [scalar_text(m.group(1)) for m in _FLOW_SPLIT.finditer(inner)]
    if inner.strip(" "):  # plain items hold no comma (nor a tab): a split finds them
        return [None if (item := raw.strip(" ")) in NULLS else item for raw in inner.split(",")]
    return []


Items = list[tuple[str | None, int]] | tuple[tuple[str | None, int], ...]
"""The items of a list as :func:`fast_entries` reads them, each ``(text, line)``: a list
for a block list (empty for a key with nothing under it, which is null), a tuple for a
flow list (``[]`` included)."""


def fast_entries(yaml: str, first_line: int) -> list[tuple[str, int, str | Items | None]] | None:
    """The fields of front matter made only of the fast path's shapes, each ``(key,
    line of the key, value)``: a scalar's text (``None`` for null) or a list's
    :data:`Items`; ``None`` for any other front matter (then the full parser reads it).
    Keys are as written, repeated ones included; lines count from ``first_line``."""
    found = fast_lines(yaml)
    if found is None:
        return None
    entries: list[tuple[str, int, str | Items | None]] = []
    block: list[tuple[str | None, int]] | None = None  # the items of a key with no value
    indent = ""
    for line, (key, value, spaces, item, rest) in enumerate(found, first_line):
        if key:
            block = None
            if not value:
                block = []
                entries.append((key, line, block))  # filled by the item lines below it
            elif value == "[]":  # no dependencies, the commonest flow list
                entries.append((key, line, ()))
            elif value[0] == "[":
                texts = flow_texts(value)
                if texts is None:
                    return None
                entries.append((key, line, tuple([(text, line) for text in texts])))
            else:
                entries.append((key, line, scalar_text(value)))
        elif item:
            if block is None:
                return None  # a list item with no key above it
            if not block:
                indent = spaces
            elif spaces != indent:
                return None
            block.append((scalar_text(item), line))
        elif rest:
            return None  # a line of no fast path shape
    return entries


def _fast(yaml: str, first_line: int) -> Node | None:
    entries = fast_entries(yaml, first_line)
    if entries is None:
        return None
    items: list[tuple[str, int, Node]] = []
    for key, line, value in entries:
        if key in _NULL_KEYS:
            return None  # a null key: the full parser refuses it as YAML reads it
        node: Node
        if isinstance(value, tuple):
            node = Seq(tuple(Scalar(text, line) for text, _ in value), line)
        elif isinstance(value, list):  # a block list starts on its first item's line
            scalars = tuple(Scalar(text, at) for text, at in value)
            node = Seq(scalars, value[0][1]) if value else Scalar(None, line)
        else:
            node = Scalar(value, line)
        items.append((key, line, node))
    return Map(tuple(items), items[0][1] if items else first_line)
