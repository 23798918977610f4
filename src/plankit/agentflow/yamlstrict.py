"""Strict, safe YAML for front matter, on ruamel.yaml's event parser.

The tree is built from parser events, never by a YAML constructor, so nothing in the
text can make Python objects: a tag (``!!python/object:os.system``), an anchor or an
alias is refused at the first event that carries it, which also stops alias bombs
("billion laughs") before any expansion.  Nesting deeper than a limit is refused
without recursion, and flow collections (``[[[…``) are measured before the parser
runs (:func:`plankit.yamllimits.check_flow_nesting`: ruamel.yaml's scanner slows down
quadratically inside them); neither limit exceeds plankit's YAML limits
(:mod:`plankit.yamllimits`).  Every error carries a line of the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from plankit.agentflow.yamltree import FrontMatterError, Map, Node, Scalar, Seq, plain_value
from plankit.yamllimits import (
    MAX_YAML_BYTES,
    MAX_YAML_DEPTH,
    YamlLimitError,
    check_flow_nesting,
    check_size,
)


@dataclass(slots=True)
class _Frame:
    """A collection being built."""

    mapping: bool
    line: int
    items: list[object] = field(default_factory=list)
    key: str | None = None
    key_line: int = 0


def _line(event: object, first_line: int) -> int:
    mark = getattr(event, "start_mark", None)
    return first_line + (mark.line if mark is not None else 0)


def parse_events(yaml: str, first_line: int, max_depth: int) -> Node:
    """Parse ``yaml`` (starting on file line ``first_line``) into a front matter tree."""
    from ruamel.yaml import YAML
    from ruamel.yaml import events as ev
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    max_depth = min(max_depth, MAX_YAML_DEPTH)
    try:
        check_size(yaml, MAX_YAML_BYTES)
    except YamlLimitError as exc:
        raise FrontMatterError(f"front matter is {exc.message}", first_line) from None
    try:
        check_flow_nesting(yaml, max_depth)
    except YamlLimitError as exc:
        raise FrontMatterError(
            f"front matter is nested more than {max_depth} levels deep",
            first_line + exc.line - 1,
        ) from None
    stack: list[_Frame] = []
    root: Node | None = None
    documents = 0
    loader = YAML(typ="safe", pure=True)
    try:
        for event in loader.parse(yaml):
            if isinstance(event, ev.AliasEvent) or getattr(event, "anchor", None) is not None:
                raise FrontMatterError(
                    "YAML anchors (&name) and aliases (*name) are not allowed in front matter; "
                    "write each value out",
                    _line(event, first_line),
                )
            tag = getattr(event, "tag", None)
            if tag is not None:
                raise FrontMatterError(
                    f"YAML tags such as {_short_tag(str(tag))} are not allowed in front matter; "
                    "write plain values",
                    _line(event, first_line),
                )
            node: Node | None = None
            if isinstance(event, ev.ScalarEvent):
                line = _line(event, first_line)
                if event.style is None:
                    node = Scalar(plain_value(event.value), line)
                else:
                    node = Scalar(event.value, line)
            elif isinstance(event, ev.SequenceStartEvent | ev.MappingStartEvent):
                if len(stack) >= max_depth:
                    raise FrontMatterError(
                        f"front matter is nested more than {max_depth} levels deep",
                        _line(event, first_line),
                    )
                mapping = isinstance(event, ev.MappingStartEvent)
                stack.append(_Frame(mapping, _line(event, first_line)))
                continue
            elif isinstance(event, ev.SequenceEndEvent | ev.MappingEndEvent):
                done = stack.pop()
                if done.mapping:
                    node = Map(tuple(done.items), done.line)  # type: ignore[arg-type]
                else:
                    node = Seq(tuple(done.items), done.line)  # type: ignore[arg-type]
            elif isinstance(event, ev.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    raise FrontMatterError(
                        "front matter holds more than one YAML document; remove the '...' line",
                        _line(event, first_line),
                    )
                continue
            else:
                continue  # stream start/end, document end
            if not stack:
                root = node
                continue
            frame = stack[-1]
            if not frame.mapping:
                frame.items.append(node)
            elif frame.key is None:
                if not isinstance(node, Scalar) or node.value is None:
                    raise FrontMatterError("front matter keys must be plain field names", node.line)
                frame.key, frame.key_line = node.value, node.line
            else:
                if isinstance(node, Scalar) and node.value is None:
                    node = Scalar(None, frame.key_line)  # an empty value sits on its key's line
                frame.items.append((frame.key, frame.key_line, node))
                frame.key = None
    except FrontMatterError:
        raise
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = first_line + mark.line if mark is not None else first_line
        problem = exc.problem or exc.context or "invalid YAML"
        raise FrontMatterError(f"invalid YAML: {problem}", line) from None
    except YAMLError as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid YAML"
        raise FrontMatterError(f"invalid YAML: {message}", first_line) from None
    except RecursionError:
        raise FrontMatterError("front matter is nested too deeply", first_line) from None
    if root is None:
        return Map((), first_line)
    return root


def _short_tag(tag: str) -> str:
    prefix = "tag:yaml.org,2002:"
    tag = "!!" + tag[len(prefix) :] if tag.startswith(prefix) else tag
    return tag if len(tag) <= 40 else tag[:39] + "…"
