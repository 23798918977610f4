"""The fence sanitizer's repairs, change by change: the repaired text and the exact list
of changes (lines, messages) that ``teddy preprocess --json`` prints, for the cases the
corpus does not pin down: repairs that take more than one reading, text after the last
action, blocks that never close, budgets and mixed line endings."""

from __future__ import annotations

from plankit.teddy.format.preprocess import Change, Preprocessed, preprocess

HEAD = (
    "# T\n- **Status:** Green 🟢\n- **Plan Type:** Implementation\n- **Agent:** Developer\n\n"
    "## Rationale\n```text\nWhy.\n```\n\n## Action Plan\n\n"
)
"""A plan's header, Rationale and Action Plan heading: its last line is line 12."""
EXECUTE = "### `EXECUTE`\n- **Description:** d\n"
"""An EXECUTE heading and its list: lines 13 and 14 after :data:`HEAD`."""


def test_an_inserted_closing_fence_ends_its_line_as_the_line_before_it() -> None:
    # the opening fence ends in CRLF, the block's last line in LF: that line keeps its
    # LF, and the inserted fence ends with one too
    text = HEAD + EXECUTE + "```\r\nls\n"
    assert preprocess(text) == Preprocessed(
        HEAD + EXECUTE + "```\r\nls\n```\n",
        (
            Change(
                15,
                "the block opened here never closed: inserted the closing fence ``` after line 16",
            ),
        ),
    )
    # and the other way round; at the end of a text without a final newline the fence
    # gets the opening fence's line ending
    assert preprocess(HEAD + EXECUTE + "```\nls\r\n").text == HEAD + EXECUTE + "```\nls\r\n```\r\n"
    assert preprocess(HEAD + EXECUTE + "```\r\nls").text == HEAD + EXECUTE + "```\r\nls\r\n```"
