"""The front matter tree: what the fast path and the YAML parser both build.

:mod:`plankit.agentflow.frontmatter` reads simple front matter itself and hands the
rest to :mod:`plankit.agentflow.yamlstrict`; both produce these nodes and raise
:class:`FrontMatterError`, which live here so that neither parser imports the other
for them.
"""

from __future__ import annotations

from dataclasses import dataclass

from plankit.errors import PlankitError


@dataclass(frozen=True, slots=True)
class Scalar:
    """A YAML scalar."""

    value: str | None
    """The text as written (quotes removed), or ``None`` for null."""
    line: int
    """1-based line in the file (for a mapping value: the line of its key)."""


@dataclass(frozen=True, slots=True)
class Seq:
    """A YAML sequence (a list)."""

    items: tuple[Node, ...]
    """The items, in order."""
    line: int
    """1-based line where the list starts (its ``[`` or first ``-``)."""


@dataclass(frozen=True, slots=True)
class Map:
    """A YAML mapping, with its keys in order (duplicates kept, to be reported)."""

    items: tuple[tuple[str, int, Node], ...]
    """``(key, line of the key, value)`` triples."""
    line: int
    """1-based line where the mapping starts."""


Node = Scalar | Seq | Map
"""A node of the front matter tree."""


class FrontMatterError(PlankitError):
    """Front matter that cannot be read; ``line`` is 1-based in the file, or ``None``."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.line = line


NULLS = frozenset(("", "~", "null", "Null", "NULL"))
"""The plain scalars YAML reads as null."""


def plain_value(text: str) -> str | None:
    """A plain scalar's value: ``None`` for YAML null, else the text."""
    return None if text in NULLS else text
