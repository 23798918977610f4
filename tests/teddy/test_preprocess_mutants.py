"""The fence sanitizer's repairs, change by change: the repaired text and the exact list
of changes (lines, messages) that ``teddy preprocess --json`` prints, for the cases the
corpus does not pin down: repairs that take more than one reading, text after the last
action, blocks that never close, budgets and mixed line endings."""

from __future__ import annotations

from plankit.teddy.format.answer import answer_to_plan
from plankit.teddy.format.preprocess import Change, Preprocessed, preprocess, propose

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
