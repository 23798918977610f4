"""The state of one plan check: the document read, the problems found, how to word them.

Every part of the parser takes the :class:`Checker` of the plan being read and reports
through it, so a problem anywhere becomes a :class:`~plankit.errors.Diagnostic` with its
line, and nothing that does not fit the format is dropped silently.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from plankit.errors import Diagnostic
from plankit.markdown.tree import Block, Document, Fence, Heading, ListBlock, Paragraph
from plankit.teddy.format.parse.tail import unclosed_reading

# a section or action heading: a block holding one was left open before it
_PLAN_HEADING_RE = re.compile(
    r"^ {0,3}#{2,3}[ \t]+[`*]*(?:create|read|edit|execute|research|chat_with_user|invoke"
    r"|conclude|prune|rationale|memos|action plan)[`*]*[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)


class Checker:
    """The document being checked and the diagnostics found in it so far."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.diags: list[Diagnostic] = []

    def error(self, line: int, code: str, message: str) -> None:
        """Report a problem at 1-based ``line``."""
        self.diags.append(Diagnostic(line, code, message))

    def stray(self, block: Block, where: str) -> None:
        """Report a block that has no place ``where`` it is."""
        what = describe(block)
        self.error(block.start, "stray-content", f"unexpected {what} {where}")

    def closed(self, fence: Fence) -> bool:
        """Whether ``fence`` has its closing fence; report it when it has not."""
        if not fence.closed:
            run = fence.char * fence.length
            reading = unclosed_reading(fence.content, fence.start + 1, fence.char, fence.length)
            if reading is not None and _PLAN_HEADING_RE.search(fence.content):
                reading = None  # it swallowed later parts of the plan: its end is elsewhere
            self.error(
                fence.start,
                "fence-unclosed",
                f"the fenced block opened here with {run} is never closed; "
                + (reading or f"close it with a {run} line after its last line"),
            )
        return fence.closed

    def end(self) -> int:
        """The document's last line (1 for an empty one)."""
        return max(1, self.doc.line_count)

    def section_end(self, blocks: list[Block]) -> int:
        """The last line of a section made of ``blocks``."""
        return blocks[-1].end if blocks else self.end()


def norm_key(text: str) -> str:
    """A key or heading as compared: words split at spaces and ``_``, case folded."""
    return " ".join(text.replace("_", " ").split()).casefold()


def suggest(word: str, options: Sequence[str]) -> str:
    """``; did you mean X?`` for the option closest to ``word``, or nothing."""
    import difflib

    close = difflib.get_close_matches(word, options, n=1, cutoff=0.75)
    return f"; did you mean {close[0]}?" if close else ""


def clip(text: str, width: int = 60) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    text = text.replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def describe(block: Block) -> str:
    """How a message names ``block``: ``paragraph '…'``, ``list``, ``fenced block`` …"""
    if isinstance(block, Paragraph):
        return f"paragraph '{clip(block.text, 40)}'"
    if isinstance(block, Heading):
        return f"heading '{'#' * block.level} {clip(block.text, 40)}'"
    if isinstance(block, Fence):
        return "fenced block"
    if isinstance(block, ListBlock):
        return "list"
    return block.kind.replace("_", " ")
