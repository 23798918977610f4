"""How big and how deep a YAML file plankit reads may be: one set of limits for every
YAML reader (TeDDy's ``config.yaml``, ``memos.yaml`` and ``meta.yaml``, agentflow's
front matter).

A YAML file written to hurt can nest ten thousand levels in 20 KB.  ruamel.yaml
builds nested values by recursion (a ``RecursionError`` after many seconds) and its
scanner slows down quadratically inside nested ``[`` flow sequences, so the nesting is
measured *before* the document is parsed: :func:`check_nesting` first scans the text
for flow brackets (linear, no parser), then, only when the indentation and the
indicators on a line leave room for nesting past the limit, walks the parser's events,
which stops at the first level too deep.  Either
way the answer is a :class:`YamlLimitError` naming the line and the limit, in
milliseconds.
"""

from __future__ import annotations

import re

MAX_YAML_BYTES = 1024 * 1024
"""Largest YAML file read (1 MiB): far beyond any configuration or memo list."""

MAX_YAML_DEPTH = 64
"""Deepest nesting of mappings and sequences accepted (the files need fewer than five)."""


class YamlLimitError(ValueError):
    """A YAML text beyond a limit; ``line`` is 1-based within the text."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


_SPECIAL = re.compile(r"""[\[\]{}"'#|>]""")
_BLOCK_HEADER = re.compile(r"[|>][-+0-9]*[ \t]*(?:#[^\n]*)?(?:\n|$)")
_LINE = re.compile(r"([ \t]*)([^\n]*)(?:\n|$)")
_DOUBLE = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SINGLE = re.compile(r"'(?:[^']|'')*'", re.DOTALL)
_INDENT = re.compile(r"^ +", re.MULTILINE)
# On one line, each of these may open a block level ("- - x", "? a: b").
_INDICATORS = re.compile(r"(?:^|(?<=\s))[-?:](?=\s|$)|:(?=\s|$)", re.MULTILINE)


def too_deep(limit: int) -> str:
    """The message for nesting past ``limit``."""
    return f"nested more than {limit} levels deep (the limit for YAML files); flatten the structure"


def _before(text: str, i: int) -> tuple[str, int]:
    """The character before position ``i`` on its line, spaces skipped ("" at the
    start of a line), and its position."""
    j = i - 1
    while j >= 0 and text[j] in " \t":
        j -= 1
    return ("" if j < 0 or text[j] == "\n" else text[j]), j


def _token_start(text: str, i: int, flow: bool) -> bool:
    """Whether a node can start at ``i``: after the line's indentation, a ``: ``, a
    ``- `` or ``? `` that itself starts a node, inside a flow collection after ``[``,
    ``{`` or ``,``, or after a tag or an anchor standing there."""
    for _ in range(16):
        c, j = _before(text, i)
        if c == "":
            return True
        if flow and c in "[{,":
            return True
        if c == ":" and j + 1 < i:
            return True
        if c in "-?" and j + 1 < i:
            i = j
            continue
        k = j
        while k >= 0 and text[k] not in " \t\n":
            k -= 1
        if j == i - 1 or text[k + 1] not in "!&":
            return False
        i = k + 1
    return False


def _skip_block_scalar(text: str, header: re.Match[str]) -> int:
    """Where the content of the block scalar with this header (``|``, ``>``) ends: at
    the first line not blank and indented no more than the header's line."""
    start = text.rfind("\n", 0, header.start()) + 1
    first = _LINE.match(text, start)
    indent = len(first.group(1)) if first is not None else 0
    i = header.end()
    while i < len(text):
        line = _LINE.match(text, i)
        assert line is not None
        if line.group(2).strip() and len(line.group(1)) <= indent:
            return i
        i = line.end()
    return i


def _flow_depth(text: str, limit: int) -> int:
    """The deepest flow nesting (raises past ``limit``): brackets count where a node
    starts (anywhere inside a flow collection), never in quotes, comments or block
    scalars."""
    depth = deepest = 0
    i = 0
    while match := _SPECIAL.search(text, i):
        i, c = match.start(), match.group()
        if c in "[{":
            if depth or _token_start(text, i, False):
                depth += 1
                if depth > limit:
                    raise YamlLimitError(too_deep(limit), text.count("\n", 0, i) + 1)
                deepest = max(deepest, depth)
        elif c in "]}":
            depth = max(depth - 1, 0)
        elif c == "#":
            if i == 0 or text[i - 1] in " \t\n":
                end = text.find("\n", i)
                i = len(text) if end < 0 else end
                continue
        elif c in "|>":
            header = _BLOCK_HEADER.match(text, i)
            if not depth and header is not None and _token_start(text, i, False):
                i = _skip_block_scalar(text, header)
                continue
        elif _token_start(text, i, depth > 0):
            quoted = (_DOUBLE if c == '"' else _SINGLE).match(text, i)
            if quoted is None:
                return deepest  # an unterminated string: the parser says where
            i = quoted.end()
            continue
        i += 1
    return deepest


def _block_bound(text: str) -> int:
    """An upper bound of the block nesting: a level indents by at least one column,
    except a sequence under a mapping key (same column) and levels opened on one line."""
    indent = max((len(m.group()) for m in _INDENT.finditer(text)), default=0)
    search = _INDICATORS.findall
    per_line = max((len(search(line)) for line in text.splitlines()), default=0)
    return 2 * (indent + 1) + per_line


def _event_depth(text: str, limit: int) -> None:
    from ruamel.yaml import YAML
    from ruamel.yaml import events as ev
    from ruamel.yaml.error import YAMLError

    depth = 0
    try:
        for event in YAML(typ="safe", pure=True).parse(text):
            if isinstance(event, ev.CollectionStartEvent):
                depth += 1
                if depth > limit:
                    mark = event.start_mark
                    raise YamlLimitError(too_deep(limit), mark.line + 1 if mark else 1)
            elif isinstance(event, ev.CollectionEndEvent):
                depth -= 1
    except YAMLError:
        return  # not YAML at all: the real parse says where and why


def check_flow_nesting(text: str, limit: int = MAX_YAML_DEPTH) -> None:
    """Raise :class:`YamlLimitError` when the flow collections (``[…]``, ``{…}``) of
    ``text`` nest deeper than ``limit``: a scan of the text, no parser (for a reader
    that walks the parser's events itself, counting the levels)."""
    if text.count("[") + text.count("{") > limit:
        _flow_depth(text, limit)


def check_nesting(text: str, limit: int = MAX_YAML_DEPTH) -> None:
    """Raise :class:`YamlLimitError` when ``text`` nests deeper than ``limit`` (before
    a parser that builds values by recursion sees it)."""
    brackets = text.count("[") + text.count("{")
    if brackets > limit:
        _flow_depth(text, limit)
        _event_depth(text, limit)  # also what the scan cannot see
    elif brackets + _block_bound(text) > limit:
        _event_depth(text, limit)


def check_size(data: str | bytes, limit: int = MAX_YAML_BYTES) -> None:
    """Raise :class:`YamlLimitError` when ``data`` is larger than ``limit`` bytes."""
    size = len(data.encode("utf-8")) if isinstance(data, str) else len(data)
    if size > limit:
        raise YamlLimitError(
            f"{size} bytes, more than the {limit // 1024} KiB allowed for YAML files", 1
        )
