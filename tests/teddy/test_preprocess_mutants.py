"""The fence sanitizer's repairs, change by change: the repaired text and the exact list
of changes (lines, messages) that ``teddy preprocess --json`` prints, for the cases the
corpus does not pin down: repairs that take more than one reading, text after the last
action, blocks that never close, budgets and mixed line endings."""

from __future__ import annotations

import pytest

from plankit.teddy.format.answer import answer_to_plan
from plankit.teddy.format.preprocess import Change, Preprocessed, Proposal, preprocess, propose

HEAD = (
    "# T\n- **Status:** Green 🟢\n- **Plan Type:** Implementation\n- **Agent:** Developer\n\n"
    "## Rationale\n```text\n### 1. Synthesis\nDone.\n### 2. Justification\nDone.\n"
    "### 3. Expected Outcome\nDone.\n### 4. State Dashboard\nDone.\n```\n\n## Action Plan\n\n"
)
"""A plan's header, Rationale and Action Plan heading: its last line is line 19."""
EXECUTE = "### `EXECUTE`\n- **Description:** d\n- **Expected Outcome:** ok\n"
"""An EXECUTE heading and its list: lines 20 to 22 after :data:`HEAD`."""


def test_an_inserted_closing_fence_ends_its_line_as_the_line_before_it() -> None:
    # the opening fence ends in CRLF, the block's last line in LF: that line keeps its
    # LF, and the inserted fence ends with one too
    text = HEAD + EXECUTE + "```\r\nls\n"
    assert preprocess(text) == Preprocessed(
        HEAD + EXECUTE + "```\r\nls\n```\n",
        (
            Change(
                23,
                "the block opened here never closed: inserted the closing fence ``` after line 24",
            ),
        ),
    )
    # and the other way round; at the end of a text without a final newline the fence
    # gets the opening fence's line ending
    assert preprocess(HEAD + EXECUTE + "```\nls\r\n").text == HEAD + EXECUTE + "```\nls\r\n```\r\n"
    assert preprocess(HEAD + EXECUTE + "```\r\nls").text == HEAD + EXECUTE + "```\r\nls\r\n```"


CREATE_DOC = (
    "### `CREATE`\n- **File Path:** [docs/guide.md](/docs/guide.md)\n- **Description:** d\n"
    "```markdown\n# Guide\n\n```python\nx = 1\n```\n\nThat is all.\n```\n"
)
"""A CREATE (heading on line 20) of a document whose code block (lines 26-28) closes the
block opened on line 23 too early: its fences, on lines 23 and 31, need four backticks."""
CREATE_DOC_FIXED = CREATE_DOC.replace("```markdown", "````markdown").replace(
    "all.\n```\n", "all.\n````\n"
)
LENGTHENED = (
    Change(23, "lengthened the opening fence from 3 to 4 (the block ends at line 31)"),
    Change(31, "lengthened the closing fence from 3 to 4 (the block opens at line 23)"),
)


def test_remarks_after_a_repaired_block_are_reported_at_their_own_line() -> None:
    text = HEAD + CREATE_DOC + "\nHope this helps! Run it\nand see.\n"
    assert answer_to_plan(text) == Preprocessed(
        HEAD + CREATE_DOC_FIXED,
        (
            *LENGTHENED,
            Change(
                33,
                "dropped the text after the last action (lines 33-34): 'Hope this helps! Run it'",
                "remarks",
            ),
        ),
    )
    proposal = propose(text)
    end, start = proposal.remarks or (0, 0)
    assert proposal.text[:end] == HEAD + CREATE_DOC_FIXED
    assert text[start:] == "Hope this helps! Run it\nand see.\n"


# --- repairs that take two readings -----------------------------------------------------
# The first reading can only give a block an end that does not fit the plan (a short
# bare fence followed by text); the second reading of the repaired text finds the rest.
# The changes are then those between the input and the final text, fence by fence, each
# with the line of its block's other end when the repaired text has one.

TWO_READINGS = {
    "a short closing fence, then a block cut off without a final newline": (
        "````\n```\n~~~text",
        "````\n````\n~~~text\n~~~",
        (
            Change(24, "lengthened the closing fence from 3 to 4 (the block opens at line 23)"),
            Change(
                25,
                "the block opened here never closed: inserted the closing fence ~~~ after line 25",
            ),
        ),
        True,
    ),
    "an indented short closing fence keeps its indentation": (
        "````\n  ```\nx\n",
        "````\n  ````\nx\n",
        (Change(24, "lengthened the closing fence from 3 to 4 (the block opens at line 23)"),),
        False,
    ),
    # the opening fence of the second block is lengthened, and its closing fence inserted
    # after the last line: the lengthened fence's partner is that new line, which the
    # input does not have, so its message names no line
    "a bare fence after a closed block opens one that never closes": (
        "````markdown\n```\n```\nprose\n```python\n",
        "````markdown\n````\n````\nprose\n```python\n````\n",
        (
            Change(24, "lengthened the closing fence from 3 to 4 (the block opens at line 23)"),
            Change(25, "lengthened the opening fence from 3 to 4"),
            Change(
                25,
                "the block opened here never closed: inserted the closing fence ```` after line 27",
            ),
        ),
        True,
    ),
    "a tilde block around backtick fences, then a backtick block left open": (
        "~~~\n````\n~~~\n````\n~~~\n````\n",
        "~~~~\n````\n~~~\n````\n~~~~\n````\n````\n",
        (
            Change(23, "lengthened the opening fence from 3 to 4 (the block ends at line 27)"),
            Change(27, "lengthened the closing fence from 3 to 4 (the block opens at line 23)"),
            Change(
                28,
                "the block opened here never closed: inserted the closing fence ```` after line 28",
            ),
        ),
        True,
    ),
    # indented by two spaces right after the list, the fences belong to its last item in
    # CommonMark: the repaired text has no block there to name the other end of
    "fences in a list item": (
        "  ```\n```python\nx\n```\n```\nFIND:\n",
        "  ````\n```python\nx\n```\n````\nFIND:\n",
        (
            Change(23, "lengthened the fence from 3 to 4"),
            Change(27, "lengthened the fence from 3 to 4"),
        ),
        False,
    ),
}


@pytest.mark.parametrize("crlf", [False, True], ids=["lf", "crlf"])
@pytest.mark.parametrize("name", list(TWO_READINGS))
def test_a_repair_in_two_readings_reports_each_fence_against_the_input(
    name: str, crlf: bool
) -> None:
    body, repaired, changes, open_end = TWO_READINGS[name]
    text, fixed = HEAD + EXECUTE + body, HEAD + EXECUTE + repaired
    if crlf:
        text, fixed = text.replace("\n", "\r\n"), fixed.replace("\n", "\r\n")
    assert propose(text) == Proposal(fixed, changes, None, open_end)
    assert preprocess(text) == Preprocessed(fixed, changes)
    assert preprocess(fixed) == Preprocessed(fixed, ())


def test_remarks_after_a_repair_in_two_readings() -> None:
    text = (
        HEAD
        + EXECUTE
        + "prose\n````\n\n```\nFIND:\n"
        + EXECUTE
        + "````\n  ```\n\nHope this helps!\n"
    )
    proposal = propose(text)
    assert proposal.changes == (
        Change(26, "lengthened the closing fence from 3 to 4 (the block opens at line 24)"),
        Change(32, "lengthened the closing fence from 3 to 4 (the block opens at line 31)"),
    )
    end, start = proposal.remarks or (0, 0)
    assert proposal.text[:end] == (
        HEAD + EXECUTE + "prose\n````\n\n````\nFIND:\n" + EXECUTE + "````\n  ````\n"
    )
    assert text[start:] == "Hope this helps!\n"
