"""What the regex fast path (``plankit.checklist.scan``) answers on small texts that
mutation testing (``tools/mutate.py``) showed no test was holding: the exact line it
finds (or None, or UNSURE) next to a blank first line, a one-character line, a heading
indented by one space, a run of indented lines at its limit, fences and headings that
only look like the ones that matter, and the text a cold update writes from it.

Every definite answer is also checked against the Markdown tree, so a case can only
pin down the fast path where it agrees with the tree."""

from __future__ import annotations

import datetime as dt

import pytest

from plankit.checklist import locate, scan, update_task_status
from plankit.checklist.errors import AmbiguousStepError
from plankit.checklist.structure import read_structure

TODAY = dt.date(2026, 1, 15)
UNSURE = "UNSURE"
"""Stands for :data:`scan.UNSURE` in the tables below."""


def answer(text: str, step: str = "1.1") -> int | str | None:
    """The fast path's answer for ``step`` (``UNSURE`` for :data:`scan.UNSURE`); a definite
    answer must be the tree's."""
    got = scan.task_line_start(text, step)
    if got is scan.UNSURE:
        return UNSURE
    found = read_structure(text)
    line = found.targets.get(step)
    assert got == (None if line is None else found.line_starts[line - 1]), "not the tree's"
    return got


def expect(text: str, marker: str | None) -> int | str | None:
    """The answer a case expects: the start of the line holding ``marker`` (which must
    start a line), None, or UNSURE."""
    if marker is None or marker == UNSURE:
        return marker
    at = text.index(marker)
    assert at == 0 or text[at - 1] == "\n", marker
    return at


def run(text: str, marker: str | None, step: str = "1.1") -> None:
    assert answer(text, step) == expect(text, marker)


# --- which heading a task is under -----------------------------------------------------

PHASE = "- [ ] 1.1 first\n{heading}\n- [ ] 1.1 second\n"
"""A loose task, the heading, a second task: the second task's line when the heading
opens a phase, the first's when it opens a section (Notes …), UNSURE (two loose tasks)
when it opens neither."""


@pytest.mark.parametrize(
    ("heading", "marker"),
    [
        ("### Phase 1: W", "- [ ] 1.1 second"),
        ("### Phase 1: X", "- [ ] 1.1 second"),  # X is text, not trimmed
        ("### Phase 1: W ###", "- [ ] 1.1 second"),
        ("### Phase 1: #", UNSURE),  # the closing # goes: "Phase 1:" has no title
        ("### Phase 1: ##", UNSURE),
        ("### Phase 1: ###", UNSURE),
        ("### Phase 1:\t#", UNSURE),
        ("### Phase 1: a#", "- [ ] 1.1 second"),  # no space before the #: it stays
        ("### Phase 1: # #", "- [ ] 1.1 second"),  # title "#"
        ("## Notes", "- [ ] 1.1 first"),
        ("## Notes ##", "- [ ] 1.1 first"),
        ("## X Notes", UNSURE),
        ("# Notes", UNSURE),  # a title, not a section
        ("#### Phase 1: W", UNSURE),  # too deep to count
        ("### Details", UNSURE),
    ],
)
def test_heading_above_a_task(heading: str, marker: str) -> None:
    run(PHASE.format(heading=heading), marker)


@pytest.mark.parametrize(
    ("text", "marker"),
    [
        # a blank first line: the heading's "\n#" starts at offset 0
        ("\n## Notes\n- [ ] 1.1 a\n", None),
        ("\n### Phase 1: W\n- [ ] 1.1 a\n- [ ] 1.1 b\n", UNSURE),
        ("- [ ] 1.1 loose\n\n## Notes\n- [ ] 1.1 note\n", "- [ ] 1.1 loose"),
        # no heading at all above the task
        ("x\n- [ ] 1.1 a\n", "- [ ] 1.1 a"),
        ("\n- [ ] 1.1 a\n", "- [ ] 1.1 a"),
        # a heading inside a fence is skipped; the section above the fence counts
        ("## Notes\n```\n# x\n```\n- [ ] 1.1 a\n", None),
        ("## Notes\n~~~\n### Phase 1: W\n~~~\n- [ ] 1.1 a\n", None),
        ("### Phase 1: W\n```\n## Notes\n```\n- [ ] 1.1 a\n", "- [ ] 1.1 a"),
    ],
)
def test_headings_found_above_a_task(text: str, marker: str | None) -> None:
    run(text, marker)


# --- indented task lines ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "marker"),
    [
        ("  - [ ] 1.1 a\n", "  - [ ] 1.1 a"),  # the text starts with it
        ("\n  - [ ] 1.1 a\n", UNSURE),  # below a blank line
        ("\n- a\n  - [ ] 1.1 b\n", "  - [ ] 1.1 b"),
        ("- a\n  X\n  - [ ] 1.1 b\n", "  - [ ] 1.1 b"),  # X is paragraph text
        ("- a\n \u00a0\n  - [ ] 1.1 b\n", "  - [ ] 1.1 b"),  # so is a no-break space
        ("- a\n  1. x\n  - [ ] 1.1 b\n", UNSURE),  # an ordered item above
        ("- a\n  - \n  - [ ] 1.1 b\n", UNSURE),  # an empty item above
        ("  x\n  - [ ] 1.1 b\n", UNSURE),  # indented text, no list above
        ("### Phase 1: W\n  x\n  - [ ] 1.1 b\n", UNSURE),
        # lazy continuation: four columns in, but left of the item's content
        ("   - a\n    - [ ] 1.1 b\n", None),
        ("### Phase 1: W\n   - a\n    - [ ] 1.1 b\n", None),
        # back out of nested items to an enclosing one
        ("- a\n  - b\n    - c\n  - [ ] 1.1 d\n", "  - [ ] 1.1 d"),
        ("- a\n  - b\n    - c\n      - d\n    - [ ] 1.1 e\n", "    - [ ] 1.1 e"),
        # out of every item, four columns in: indented code for the parser
        ("### Phase 1: W\n   - a\n     - b\n    - [ ] 1.1 c\n", UNSURE),
    ],
)
def test_indented_task_lines(text: str, marker: str | None) -> None:
    run(text, marker)


def nested(depth: int, sibling: bool = False) -> str:
    """A list nested ``depth`` items deep below ``- x`` (with a second item at the first
    level when ``sibling``), then a task one level deeper."""
    lines = ["- x", "  - a", *(["  - a2"] if sibling else [])]
    lines += ["  " * d + "- n" for d in range(2, depth + 1)]
    return "\n".join([*lines, "  " * (depth + 1) + "- [ ] 1.1 t"]) + "\n"


@pytest.mark.parametrize(
    ("text", "marker"),
    [
        (nested(8), "  " * 9 + "- [ ] 1.1 t"),
        (nested(9), UNSURE),  # ten lists open above the task: as deep as replayed
        (nested(8, sibling=True), "  " * 9 + "- [ ] 1.1 t"),
        (nested(9, sibling=True), UNSURE),  # a sibling item closes no list
    ],
)
def test_list_nesting_replayed_at_most(text: str, marker: str) -> None:
    run(text, marker)


@pytest.mark.parametrize(("lines", "marker"), [(200, "  - [ ] 1.1 b"), (201, UNSURE)])
def test_indented_lines_replayed_at_most(lines: int, marker: str) -> None:
    text = "- a\n" + "  x\n" * lines + "  - [ ] 1.1 b\n"
    run(text, marker)


# --- lines that make the fast path unsure ----------------------------------------------


@pytest.mark.parametrize(
    ("text", "marker"),
    [
        # HTML blocks and block quotes, wherever the first one is
        ("<x>\n### Phase 1: W\n- [ ] 1.1 a\n\n<div>\n", UNSURE),
        (">\n### Phase 1: W\n- [ ] 1.1 a\n\n> q\n", UNSURE),
        ("<div>\n### Phase 1: W\n- [ ] 1.1 a\n  # h\n", UNSURE),
        ("<div>\n### Phase 1: W\n- [ ] 1.1 a\nx\n---\n", UNSURE),
        ("\n<div>\n### Phase 1: W\n- [ ] 1.1 a\n", UNSURE),
        ("# T\ntext\n<div>\n- [ ] 1.1 a\n", UNSURE),
        ("\n> q\n### Phase 1: W\n- [ ] 1.1 a\n", UNSURE),
        # indented ATX headings
        ("### Phase 1: W\n # Notes\n- [ ] 1.1 a\n", UNSURE),
        ("\n # Notes\n- [ ] 1.1 a\n", UNSURE),
        ("# T\nx\n # Notes\n- [ ] 1.1 a\n", UNSURE),
        ("### Phase 1: W\n- [ ] 1.1 Fix issue #5\n", "- [ ] 1.1 Fix issue #5"),
        ("### Phase 1: W\n```\n  # comment\n```\n- [ ] 1.1 a\n", "- [ ] 1.1 a"),
        ("# Plan\n### Phase 1: W\n  #5 tag\n- [ ] 1.1 a\n", "- [ ] 1.1 a"),
        ("### Phase 1: W\n  #5 tag\n- [ ] 1.1 a\n", "- [ ] 1.1 a"),
        # setext underlines
        ("### Phase 1: W\ntext\n-\n- [ ] 1.1 a\n", UNSURE),
        ("### Phase 1: W\ntext\n=\n- [ ] 1.1 a\n", UNSURE),
        ("### Phase 1: W\ntext\n  \n- [ ] 1.1 a\n", "- [ ] 1.1 a"),  # blank, not dashes
        ("### Phase 1: W\n\n---\n- [ ] 1.1 a\n", "- [ ] 1.1 a"),  # below a blank line
        ("\n---\n- [ ] 1.1 a\n", "- [ ] 1.1 a"),
        ("# T\nx\n\n---\n- [ ] 1.1 a\n", "- [ ] 1.1 a"),
        ("\nx\n---\n- [ ] 1.1 a\n", UNSURE),
        ("# T\nX\n---\n- [ ] 1.1 a\n", UNSURE),  # a one-character line above
        ("# T\n\u00a0\n---\n- [ ] 1.1 a\n", UNSURE),  # a no-break space is text
        # list nesting deep enough for the parser's limit: 40 columns
        (" " * 38 + "- x\n- [ ] 1.1 a\n", UNSURE),
        (" " * 37 + "- x\n- [ ] 1.1 a\n", "- [ ] 1.1 a"),
        ("# T\n" + " " * 38 + "- x\n- [ ] 1.1 a\n", UNSURE),
        ("# T\n" + " " * 37 + "- x\n- [ ] 1.1 a\n", "- [ ] 1.1 a"),
        ("\n" + "- " * 20 + "x\n- [ ] 1.1 a\n", UNSURE),
        ("# T\n" + "\t" * 10 + "- x\n- [ ] 1.1 a\n", UNSURE),  # a tab counts 4
        ("# T\n" + "\t" * 9 + "- x\n- [ ] 1.1 a\n", "- [ ] 1.1 a"),
    ],
)
def test_what_makes_the_fast_path_unsure(text: str, marker: str | None) -> None:
    run(text, marker)


# --- fences ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "marker"),
    [
        ("\n```\n- [ ] 1.1 x\n```\n- [ ] 1.1 y\n", "- [ ] 1.1 y"),
        ("### Phase 1: W\nuse ``` here\n- [ ] 1.1 a\n", "- [ ] 1.1 a"),
    ],
)
def test_fences(text: str, marker: str | None) -> None:
    run(text, marker)


# --- the text as a whole ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "marker"),
    [
        ("### Phase 1: W\n- [ ] 1.1 a", "- [ ] 1.1 a"),  # no line ending at the end
        ("### Phase 1: W\r\n- [ ] 1.1 a", "- [ ] 1.1 a"),
        ("### Phase 1: W\n- [ ] 1.1 a\0\n", UNSURE),  # a NUL: the parser replaces it
        ("### Phase 1: W\n- [ ] 1.1 a\r- [ ] 1.2 b\n", UNSURE),  # a lone CR
        ("] 1.1 x\n### Phase 1: W\n- [ ] 1.1 a\n", "- [ ] 1.1 a"),  # "] 1.1" first
        ("\ufeff### Phase 1: W\n- [ ] 1.1 a\n", "- [ ] 1.1 a"),
    ],
)
def test_whole_text(text: str, marker: str | None) -> None:
    run(text, marker)


@pytest.mark.parametrize(
    ("text", "updated"),
    [
        (
            "### Phase 1: W\r\n```\r\n- [ ] 1.1 fenced\r\n```\r\n- [ ] 1.1 a\r\n",
            "### Phase 1: W\r\n```\r\n- [ ] 1.1 fenced\r\n```\r\n- [x] 1.1 a ✅ 2026-01-15\r\n",
        ),
        ("### Phase 1: W\n- [ ] 1.1 a", "### Phase 1: W\n- [x] 1.1 a ✅ 2026-01-15"),
        (
            "\ufeff### Phase 1: W\n  - [ ] 1.1 a\n",
            "\ufeff### Phase 1: W\n  - [x] 1.1 a ✅ 2026-01-15\n",
        ),
        (
            "### Phase 1: W\r- [ ] 1.1 a\r",  # lone CRs: the tree decides
            "### Phase 1: W\r- [x] 1.1 a ✅ 2026-01-15\r",
        ),
    ],
)
def test_cold_update_text(text: str, updated: str) -> None:
    locate.clear()
    assert update_task_status(text, "1.1", "done", today=TODAY) == updated


def test_a_nested_task_and_a_loose_one_with_one_step_are_refused() -> None:
    text = "- a\n  - b\n    - c\n  - [ ] 1.1 d\n- [ ] 1.1 e\n"
    assert answer(text) == UNSURE  # two tasks: the tree names them
    locate.clear()
    with pytest.raises(AmbiguousStepError) as caught:
        update_task_status(text, "1.1", "done", today=TODAY)
    assert caught.value.lines == [4, 5]
    assert str(caught.value).startswith(
        "step '1.1' is ambiguous: the tasks on lines 4 and 5 all have that number; "
        "nothing was changed."
    )
