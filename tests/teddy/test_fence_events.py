"""The lines the fence sanitizer looks at (``plankit.teddy.format.fence_events``): which
lines are events, where each begins and ends, and how inner blocks nest."""

from __future__ import annotations

import pytest

from plankit.teddy.format.fence_events import (
    ACTION,
    EVENT_RE,
    FENCE,
    LABEL,
    SECTION,
    Event,
    closer_re,
    event_at,
    heading_event,
    nest,
)


def _events(text: str) -> list[Event | None]:
    return [event_at(text, m) for m in EVENT_RE.finditer(text)]


def test_each_kind_of_event_line_with_its_offsets() -> None:
    text = (
        "# T\n```python\nx\n```\r\n### `CREATE`\n**FIND:**\n## Rationale\n~~~~ `info`\n"
        "``` a`b\n#### find:\n## Install\n```"
    )
    assert _events(text) == [
        Event(FENCE, 4, 13, 14, "", "`", 3, False, 4),
        Event(FENCE, 16, 19, 21, "", "`", 3, True, 16),  # the CR is not part of the line
        Event(ACTION, 21, 33, 34, "CREATE"),
        Event(LABEL, 34, 43, 44, "FIND"),
        Event(SECTION, 44, 56, 57, "Rationale"),
        Event(FENCE, 57, 68, 69, "", "~", 4, False, 57),  # a tilde fence may hold a backtick
        None,  # a backtick fence whose info string holds a backtick is not a fence
        Event(LABEL, 77, 87, 88, "FIND"),
        # "## Install" is not even matched; the last line has no newline after it
        Event(FENCE, 99, 102, 102, "", "`", 3, True, 99),
    ]


def test_an_indented_fence_starts_at_its_line_and_its_run_after_the_spaces() -> None:
    assert _events("   ````\n") == [Event(FENCE, 0, 7, 8, "", "`", 4, True, 3)]


def test_a_crlf_label_and_heading_end_before_the_cr() -> None:
    assert _events("REPLACE:\r\n### `READ`\r\n") == [
        Event(LABEL, 0, 8, 10, "REPLACE"),
        Event(ACTION, 10, 20, 22, "READ"),
    ]


def test_the_last_line_of_a_text_has_no_next_line() -> None:
    assert _events("## Memos") == [Event(SECTION, 0, 8, 8, "Memos")]


@pytest.mark.parametrize(
    ("level", "title", "event"),
    [
        (3, "`CREATE`", (ACTION, "CREATE")),
        (3, "create ###", (ACTION, "CREATE")),
        (3, "create#", None),  # a # run without a space before it is part of the title
        (2, "Action Plan ##", (SECTION, "Action Plan")),
        (1, "Memos", (SECTION, "Memos")),
        (3, "Rationale", None),  # a section is ## or #
        (2, "CREATE", None),  # an action is ###
        (4, "**Replace**:", (LABEL, "REPLACE")),
        (2, "find", (LABEL, "FIND")),
        (3, "Create the file", None),
    ],
)
def test_what_a_heading_is_to_the_sanitizer(
    level: int, title: str, event: tuple[int, str] | None
) -> None:
    assert heading_event(level, title) == event


def test_a_closing_fence_is_as_long_or_longer_and_bare() -> None:
    closer = closer_re("`", 4)
    assert [m.group() for m in closer.finditer("````\n`````  \n```\n```` x\n   ````\r\n")] == [
        "````",
        "`````  ",
        "   ````\r",
    ]


def _fence(char: str, length: int, *, bare: bool) -> Event:
    return Event(FENCE, 0, 0, 0, "", char, length, bare, 0)


@pytest.mark.parametrize(
    ("stack", "fence", "result", "after"),
    [
        # outside inner blocks
        ([], _fence("`", 3, bare=True), False, []),  # a candidate end of the outer block
        ([], _fence("`", 3, bare=False), True, [("`", 3)]),  # an info string opens one
        ([], _fence("~", 3, bare=True), True, [("~", 3)]),  # so does the other character
        # inside an inner block of ``` (4 long)
        ([("`", 4)], _fence("`", 4, bare=True), True, []),  # closes it
        ([("`", 4)], _fence("`", 5, bare=True), True, []),  # longer: closes it too
        ([("`", 4)], _fence("`", 3, bare=True), True, [("`", 4)]),  # shorter: content
        ([("`", 4)], _fence("~", 5, bare=True), True, [("`", 4)]),  # other character: content
        ([("`", 4)], _fence("~", 3, bare=True), True, [("`", 4)]),
        ([("`", 4)], _fence("`", 4, bare=False), True, [("`", 4), ("`", 4)]),  # nested
    ],
)
def test_nest_tracks_inner_blocks(
    stack: list[tuple[str, int]], fence: Event, result: bool, after: list[tuple[str, int]]
) -> None:
    stack = list(stack)  # the parameter's list is shared by every run of the test
    assert nest(stack, fence, "`") is result
    assert stack == after
