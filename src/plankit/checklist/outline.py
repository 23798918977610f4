"""A checklist plan's text as the structure edits see it: lines and an outline.

:class:`PlanLines` holds each line with its own line ending (and a byte-order mark),
so an edit changes only the lines it means to and every other byte stays;
:func:`outline_of` finds, with the Markdown tree, what the edits of
:mod:`plankit.checklist.restructure` need beyond the cached structure: list item
spans, headings, paragraphs outside the named sections, the questions and the
Analysis section.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from plankit.checklist.lines import NEWLINE_RE, PHASE_TEXT_RE, SECTIONS
from plankit.markdown.tree import Heading, ListBlock, Paragraph, parse_document, walk


class PlanLines:
    """The text as a list of lines, each with its own line ending."""

    def __init__(self, text: str) -> None:
        self.bom = "\ufeff" if text.startswith("\ufeff") else ""
        body = text[len(self.bom) :]
        parts: list[str] = []
        pos = 0
        for m in NEWLINE_RE.finditer(body):
            parts.append(body[pos : m.end()])
            pos = m.end()
        parts.append(body[pos:])  # the last line ('' when the text ends with a newline)
        self.lines = parts
        first = NEWLINE_RE.search(body)
        self.nl = first.group(0) if first is not None else "\n"

    def text(self) -> str:
        return self.bom + "".join(self.lines)

    def content(self, line: int) -> str:
        """1-based ``line`` without its ending."""
        raw = self.lines[line - 1]
        return raw.rstrip("\r\n")

    def ending(self, line: int) -> str:
        raw = self.lines[line - 1]
        return raw[len(raw.rstrip("\r\n")) :]

    def set(self, line: int, content: str) -> None:
        self.lines[line - 1] = content + self.ending(line)

    @property
    def count(self) -> int:
        """Number of lines (a final line ending does not start another line)."""
        return len(self.lines) - (1 if self.lines[-1] == "" else 0)

    def insert(self, before: int, contents: Sequence[str]) -> None:
        """Insert lines before 1-based line ``before`` (``count + 1``: at the end)."""
        new = [c + self.nl for c in contents]
        if before <= self.count:
            self.lines[before - 1 : before - 1] = new
            return
        real = self.count
        unterminated = self.lines[-1] != ""
        if unterminated and real:
            self.lines[real - 1] += self.nl
        if unterminated and new:  # the text had no final newline: keep it that way
            new[-1] = new[-1][: -len(self.nl)]
        self.lines[real:] = [*new, *([] if unterminated else [""])]

    def delete(self, first: int, last: int) -> None:
        """Remove 1-based lines ``first`` … ``last``."""
        del self.lines[first - 1 : last]
        if not self.lines:
            self.lines = [""]

    def blank(self, line: int) -> bool:
        return 1 <= line <= len(self.lines) and not self.content(line).strip()


@dataclass(frozen=True, slots=True)
class Outline:
    """What the edits need beyond the cached structure: list item spans and headings."""

    item_end: dict[int, int]
    """First line of each list item → its last non-blank line."""
    headings: list[tuple[int, int, str]]
    """(line, level, text) of every top-level heading."""
    paragraphs: list[tuple[int, int, str]]
    """(first line, last line, text) of every top-level paragraph."""
    question_items: list[tuple[int, int]]
    """(first line, last line) of each top-level item of the Questions section."""
    analysis: tuple[int, int] | None
    """(heading line, last line of the section) of the Analysis section."""


def outline_of(text: str) -> Outline:
    """The list items, headings, paragraphs, questions and Analysis section of ``text``."""
    doc = parse_document(text.removeprefix("\ufeff"))
    item_end: dict[int, int] = {}
    for block in walk(doc.blocks):
        if isinstance(block, ListBlock):
            for item in block.items:
                item_end[item.start] = item.end
    headings: list[tuple[int, int, str]] = []
    paragraphs: list[tuple[int, int, str]] = []
    questions: list[tuple[int, int]] = []
    analysis: tuple[int, int] | None = None
    section: str | None = None
    section_start = 0
    last_line = 0
    for block in doc.blocks:
        if isinstance(block, Heading) and (
            block.level <= 2 or PHASE_TEXT_RE.fullmatch(block.text) is not None
        ):
            if section == "analysis" and analysis is None:
                analysis = (section_start, last_line)
            section = None
            if block.level == 2:
                lower = block.text.lower()
                section = next((n for n in SECTIONS if lower.startswith(n)), None)
                section_start = block.start
        if isinstance(block, Heading):
            headings.append((block.start, block.level, block.text))
        elif isinstance(block, Paragraph) and section is None:
            paragraphs.append((block.start, block.end, block.text))
        elif isinstance(block, ListBlock) and section == "questions":
            questions += [(item.start, item.end) for item in block.items]
        last_line = block.end
    if section == "analysis" and analysis is None:
        analysis = (section_start, last_line)
    return Outline(item_end, headings, paragraphs, questions, analysis)
