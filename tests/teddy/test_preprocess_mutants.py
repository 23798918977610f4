"""The fence sanitizer's repairs, change by change: the repaired text and the exact list
of changes (lines, messages) that ``teddy preprocess --json`` prints, for the cases the
corpus does not pin down: repairs that take more than one reading, text after the last
action, blocks that never close, budgets and mixed line endings."""

from __future__ import annotations

import pytest

import plankit.teddy.format.preprocess as preprocess_module
from plankit.teddy.format.answer import answer_to_plan
from plankit.teddy.format.parse import check_plan
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
    # the line it follows decides, whatever the lines after it end with
    after = "\n### `EXECUTE`\r\n- **Description:** d\r\n- **Expected Outcome:** ok\r\n```shell\r\nls\r\n```\r\n"
    assert preprocess(HEAD + EXECUTE + "```\nls\n" + after).text == (
        HEAD + EXECUTE + "```\nls\n```\n" + after
    )


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


# --- what may follow a block ------------------------------------------------------------

CREATE_PLAN_DOC = (
    "### `CREATE`\n- **File Path:** [docs/plan.md](/docs/plan.md)\n- **Description:** d\n"
)


def _plan_doc(tail: str) -> str:
    """A CREATE (heading on line 20, fence on line 23) of a document about plans whose
    first code block (lines 25-27) ends the outer block in CommonMark, followed by
    ``tail`` and the outer block's own closing fence."""
    return (
        HEAD
        + CREATE_PLAN_DOC
        + "```markdown\nAn example:\n```python\nx = 1\n```\n"
        + tail
        + "```\n"
    )


def _lengthened(opening: int, closing: int) -> tuple[Change, Change]:
    return (
        Change(
            opening, f"lengthened the opening fence from 3 to 4 (the block ends at line {closing})"
        ),
        Change(
            closing, f"lengthened the closing fence from 3 to 4 (the block opens at line {opening})"
        ),
    )


@pytest.mark.parametrize(
    ("tail", "changes"),
    [
        # an EDIT must start with FIND: (a REPLACE: first, or a fenced block, is content)
        ("### `EDIT`\nREPLACE:\n```\na\n```\nREPLACE:\n```\nb\n```\n", _lengthened(23, 37)),
        ("### `EDIT`\n```\na\n```\n", _lengthened(23, 32)),
        # … and have a REPLACE: outside fenced blocks before the next action
        ("### `EDIT`\nFIND:\n```\na\n```\nFIND:\n```\nb\n```\n", _lengthened(23, 37)),
        ("### `EDIT`\nFIND:\n~~~\nFIND:\nREPLACE:\n~~~\n", _lengthened(23, 34)),
        # an EDIT with a second FIND: or a label in its block still fits: the CREATE
        # ends early and the stray fence after the EDIT's last block is what is repaired
        (
            "### `EDIT`\nFIND:\n```\na\n```\nFIND:\n```\nb\n```\nREPLACE:\n```\nc\n```\n",
            _lengthened(38, 41),
        ),
        ("### `EDIT`\nFIND:\n~~~\nFIND:\n~~~\nREPLACE:\n```\nc\n```\n", _lengthened(34, 37)),
        # a READ holds no fenced block, even after something else
        ("### `READ`\n- **Resource:** [a](/a)\nFIND:\n```\nx\n```\n", _lengthened(23, 34)),
    ],
    ids=[
        "edit-replace-first",
        "edit-block-first",
        "edit-without-replace",
        "edit-replace-only-inside-a-block",
        "edit-two-finds",
        "edit-label-inside-its-block",
        "read-with-a-block",
    ],
)
def test_a_block_ends_early_only_before_an_action_its_content_fits(
    tail: str, changes: tuple[Change, ...]
) -> None:
    text = _plan_doc(tail)
    result = preprocess(text)
    assert result.changes == changes
    lines = text.split("\n")
    for change in changes:
        lines[change.line - 1] = lines[change.line - 1].replace("```", "````", 1)
    assert result.text == "\n".join(lines)


USAGE_THEN_EDIT = (
    "### `CREATE`\n- **File Path:** [docs/usage.md](/docs/usage.md)\n"
    "```markdown\n# Usage\n\nImport `plankit`.\n\n"  # never closed
    "### `EDIT`\n- **File Path:** [README.md](/README.md)\n\n"
    "FIND:\n```markdown\n```python\nimport oldkit\n```\n\n"  # one fence for two blocks
    "REPLACE:\n```markdown\n```python\nimport plankit\n```\n"
)


def test_an_edit_whose_find_ends_with_one_fence_for_two_blocks_is_no_content() -> None:
    # the CREATE's block never closed, and the EDIT after it closes its FIND's nested
    # block and the FIND itself with one fence: REPLACE: right after that fence still
    # tells the FIND's end, so the EDIT is an action (whose blocks the parser then
    # reports), not text of docs/usage.md with the plan reading as one CREATE
    result = answer_to_plan(HEAD + USAGE_THEN_EDIT)
    assert result.changes == (
        Change(22, "the block opened here never closed: inserted the closing fence ``` after line 25", "fence"),
    )  # fmt: skip
    assert "Import `plankit`.\n```\n\n### `EDIT`\n" in result.text
    plan, problems = check_plan(result.text)
    assert plan is None
    assert [(p.line, p.code) for p in problems] == [
        (33, "fence-ambiguous"),
        (39, "fence-ambiguous"),
    ]


def _doc_about_edits(path: str, content: str) -> str:
    """A CREATE of ``path`` (a Markdown file fenced too short for its examples) whose
    ``content`` shows an EDIT."""
    return f"### `CREATE`\n- **File Path:** [{path}](/{path})\n```markdown\n{content}```\n"


@pytest.mark.parametrize(
    ("path", "content", "kept"),
    [
        # the example's FIND is closed by the bare fence after ```py (it holds that one
        # line); a REPLACE: two paragraphs below does not come right after that fence
        (
            "docs/edits.md",
            "# Writing EDITs\n\nAn example:\n\n### `EDIT`\n- **File Path:** [README.md](/README.md)\n\n"
            "FIND:\n```markdown\n```py\n```\n\nbecomes\n\n"
            "REPLACE:\n```markdown\n```python\n```\n\nThat is all.\n",
            "FIND:\n```markdown\n```py\n```\n\nbecomes\n\nREPLACE:\n",
        ),
        # only a bare fence that leaves the FIND block open tells its end, not the FIND's
        # own opening fence: a REPLACE: right under it is the FIND's text
        (
            "docs/labels.md",
            "# Labels\n\nA FIND block may hold a line that reads like a label:\n\n"
            "### `EDIT`\n- **File Path:** [plan.md](/plan.md)\n\n"
            "FIND:\n```\nREPLACE:\n```\n\nThat line is the FIND's text.\n",
            "FIND:\n```\nREPLACE:\n```\n\nThat line is the FIND's text.",
        ),
    ],
    ids=["prose-before-replace", "replace-under-the-find-fence"],
)
def test_an_example_edit_in_a_document_stays_its_text(path: str, content: str, kept: str) -> None:
    # the example is no action: the plan is one CREATE of the document, holding it
    result = answer_to_plan(HEAD + _doc_about_edits(path, content))
    plan, problems = check_plan(result.text)
    assert problems == []
    assert plan is not None
    assert [(str(a.type), a.path) for a in plan.actions] == [("CREATE", path)]
    assert kept in plan.actions[0].content


def test_a_read_that_ends_with_a_label_fits() -> None:
    # the document's closing fence is followed by a READ with a label and nothing else:
    # that fits a READ, so the block ends at that fence
    text = _plan_doc("") + "### `READ`\n- **Resource:** [a](/a)\nFIND:\n"
    assert propose(text).changes == _lengthened(23, 28)


def test_a_block_whose_commonmark_end_fits_keeps_it() -> None:
    # a block with an inner one that CommonMark closes where the plan goes on with
    # remarks: that end is kept, and the remarks are found after it
    body = CREATE_PLAN_DOC + "```\n```python\nx = 1\n```\n"
    text = HEAD + body + "\nHope this helps!\n"
    assert propose(text) == Proposal(text, (), (len(HEAD + body), len(HEAD + body) + 1))


def test_a_rationale_block_is_not_followed_by_remarks() -> None:
    # only actions are followed by remarks: prose after the Rationale's block is its
    # content, and the block is closed after it
    text = "# T\n- **Status:** Green\n\n## Rationale\n```text\n```python\nx\n```\n\nMore words\n"
    assert preprocess(text) == Preprocessed(
        text.replace("```text", "````text") + "````\n",
        (
            Change(
                5,
                "the block opened here never closed: lengthened its opening fence from 3 to 4 "
                "and inserted the closing fence ```` after line 10",
            ),
        ),
    )


# --- the walk -------------------------------------------------------------------------


def test_a_block_in_the_header_is_closed_before_the_rationale() -> None:
    text = (
        "# T\n- **Status:** Green\n\n```text\nnotes\n\n## Rationale\n```text\nwhy\n```\n\n"
        "## Action Plan\n\n" + EXECUTE + "```shell\nls\n```\n"
    )
    assert preprocess(text) == Preprocessed(
        text.replace("notes\n", "notes\n```\n"),
        (
            Change(
                4, "the block opened here never closed: inserted the closing fence ``` after line 5"
            ),
        ),
    )


def test_a_block_on_the_first_line_is_read() -> None:
    assert preprocess("```\nx\n") == Preprocessed(
        "```\nx\n```\n",
        (
            Change(
                1, "the block opened here never closed: inserted the closing fence ``` after line 2"
            ),
        ),
    )
    # after a byte-order mark too, which is not part of the line
    assert preprocess("\ufeff```\nx\n") == Preprocessed(
        "\ufeff```\nx\n```\n",
        (
            Change(
                1, "the block opened here never closed: inserted the closing fence ``` after line 2"
            ),
        ),
    )


def test_headings_that_are_not_events_are_passed_over() -> None:
    # "### Find out more" looks like a label or an action to the first search, but is
    # neither: the block on the next line is still read
    text = HEAD + "### `CHAT_WITH_USER`\n### Find out more\n```python\nx\n"
    assert preprocess(text) == Preprocessed(
        text + "```\n",
        (
            Change(
                22,
                "the block opened here never closed: inserted the closing fence ``` after line 23",
            ),
        ),
    )


def test_the_closing_fence_goes_after_the_last_line_whatever_it_holds() -> None:
    text = HEAD + EXECUTE + "```\nXXX\n\n"
    assert preprocess(text).text == HEAD + EXECUTE + "```\nXXX\n```\n\n"


# --- remarks --------------------------------------------------------------------------


def test_remarks_after_a_read_without_a_list() -> None:
    text = HEAD + "### `READ`\n\nHope this helps!\n"
    end = len(HEAD + "### `READ`\n")
    assert propose(text) == Proposal(text, (), (end, end + 1))


def test_remarks_after_a_read_list_with_a_continuation_line() -> None:
    body = "### `READ`\n- **Resource:** [a](/a)\n  more\n"
    text = HEAD + body + "\nHope this helps!\n"
    assert propose(text).remarks == (len(HEAD + body), len(HEAD + body) + 1)


def test_a_read_list_at_the_end_of_the_text_leaves_no_remarks() -> None:
    # even when the text starts with a blank line, and the list has no final newline
    assert propose("\n" + HEAD + "### `READ`\n- **Resource:** [a](/a)").remarks is None
    assert (
        propose("\nSome words first.\n" + HEAD + "### `READ`\n- **Resource:** [a](/a)").remarks
        is None
    )


# --- the budget -----------------------------------------------------------------------

# Each copy makes an EDIT's FIND: block run to the next copy, so a reading scans events
# quadratically in the copies: the budget, about two events a line beyond 10,000, lets
# 57 copies be repaired and not 58.
BUDGET_UNIT = "### `CREATE`\n```\n```\n### `EDIT`\n`FIND:`\n```python\n"


def test_a_text_within_the_budget_is_repaired() -> None:
    text = "# T\n\n## Action Plan\n\n" + BUDGET_UNIT * 57
    assert len(preprocess(text).changes) == 57


def test_a_text_beyond_the_budget_is_left_as_it_is() -> None:
    for copies in (58, 200):
        text = "# T\n\n## Action Plan\n\n" + BUDGET_UNIT * copies
        assert propose(text) == Proposal(text, (), None)
        assert preprocess(text) == Preprocessed(text, ())


def test_a_text_that_needs_its_whole_budget_is_repaired() -> None:
    # 58 copies and a last FIND: scan 10,892 events beyond the walk; 93 more blank lines
    # in the header make the budget exactly that, and one fewer leaves it two short
    for blank, repaired in ((93, 58), (92, 0)):
        text = "# T\n" + "\n" * blank + "\n## Action Plan\n\n" + BUDGET_UNIT * 58 + "FIND:\n"
        assert len(propose(text).changes) == repaired


def test_a_text_one_event_beyond_its_budget_is_left_as_it_is() -> None:
    # the last FIND: under an EDIT heading of its own: 10,953 events; 123 blank lines
    # give a budget of 10,954, and 122 one of 10,952, one event short
    for blank, repaired in ((123, 58), (122, 0)):
        text = "# T\n" + "\n" * blank + "\n## Action Plan\n\n" + BUDGET_UNIT * 58
        assert len(propose(text + "### `EDIT`\nFIND:\n").changes) == repaired


# --- repairs --------------------------------------------------------------------------


@pytest.mark.parametrize("closing", ["````", "`````"])
def test_a_closing_fence_already_long_enough_stays(closing: str) -> None:
    text = _plan_doc("").removesuffix("```\n") + closing + "\n"
    assert preprocess(text) == Preprocessed(
        text.replace("```markdown", "````markdown"),
        (Change(23, "lengthened the opening fence from 3 to 4 (the block ends at line 28)"),),
    )


@pytest.mark.parametrize(
    ("body", "last"),
    [
        # in an EXECUTE, the block of line 23 could only end at line 24, where nothing
        # that fits follows; the bare fence of line 25 then opens a block that never
        # closes (a shorter one: in a structured place the length does not matter)
        ("### `EXECUTE`\n- **Description:** d\n\n````\n````\n```\nHope this helps!\n", 26),
        # in a message, the block of line 23 ends where CommonMark ends it; the block of
        # line 27 never closes, and is as long as the first
        (
            "### `CHAT_WITH_USER`\nREPLACE:\n\n````\n````markdown\na ``` b\n````markdown\n"
            "````\n````\nx\n",
            29,
        ),
    ],
    ids=["structured", "free"],
)
def test_a_block_that_ended_short_takes_the_stretch_of_a_later_one_that_never_closes(
    body: str, last: int
) -> None:
    text = HEAD + body
    lines = text.split("\n")
    assert lines[22] == "````"
    lines[22] = "`````"
    assert preprocess(text) == Preprocessed(
        "\n".join(lines) + "`````\n",
        (
            Change(
                23,
                "the block opened here never closed: lengthened its opening fence from 4 to 5 "
                f"and inserted the closing fence ````` after line {last}",
            ),
        ),
    )


def test_the_first_of_two_blocks_that_ended_short_takes_the_stretch() -> None:
    # lines 23-24 and 26-27 are both blocks that end where nothing that fits follows;
    # the bare fence of line 29 never closes: the first block takes everything
    text = HEAD + "### `EXECUTE`\n- **Description:** d\n\n````\n````\nx\n````\n````\ny\n```\nz\n"
    lines = text.split("\n")
    lines[22] = "`````"
    assert preprocess(text) == Preprocessed(
        "\n".join(lines) + "`````\n",
        (
            Change(
                23,
                "the block opened here never closed: lengthened its opening fence from 4 to 5 "
                "and inserted the closing fence ````` after line 30",
            ),
        ),
    )


def test_a_block_taking_a_stretch_keeps_the_repairs_before_it() -> None:
    text = (
        HEAD
        + CREATE_DOC
        + "\n### `EXECUTE`\n- **Description:** d\n\n````\n````\n```\nHope this helps!\n"
    )
    lines = (HEAD + CREATE_DOC_FIXED).split("\n")[:-1]
    assert preprocess(text) == Preprocessed(
        "\n".join(lines)
        + "\n\n### `EXECUTE`\n- **Description:** d\n\n`````\n````\n```\nHope this helps!\n`````\n",
        (
            *LENGTHENED,
            Change(
                36,
                "the block opened here never closed: lengthened its opening fence from 4 to 5 "
                "and inserted the closing fence ````` after line 39",
            ),
        ),
    )


def test_a_plan_that_parses_is_kept_whatever_the_sanitizer_proposes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = HEAD + EXECUTE + "```shell\nls\n```\n"
    original_run = preprocess_module.Sanitizer.run

    def run_and_lengthen(self: preprocess_module.Sanitizer) -> None:
        original_run(self)
        self.edits.append((len(HEAD + EXECUTE), len(HEAD + EXECUTE) + 3, "````"))
        self.notes.append((len(HEAD + EXECUTE), "lengthened", ()))

    monkeypatch.setattr(preprocess_module.Sanitizer, "run", run_and_lengthen)
    assert propose(text).changes == (Change(23, "lengthened"),)  # the proposal is there …
    assert preprocess(text) == Preprocessed(text, ())  # … but the plan parses: rule 1
    bom = "\ufeff" + text
    assert preprocess(bom) == Preprocessed(bom, ())


def _readings_that_lengthen(monkeypatch: pytest.MonkeyPatch, unsure: int) -> list[int]:
    """Make each reading lengthen the fence at the end of HEAD + EXECUTE by one, and the
    first ``unsure`` readings give an end that does not fit; the list counts readings."""
    original_run = preprocess_module.Sanitizer.run
    readings: list[int] = []

    def run_and_lengthen(self: preprocess_module.Sanitizer) -> None:
        original_run(self)
        readings.append(1)
        if len(readings) > unsure:
            return
        at = len(HEAD + EXECUTE)
        run = len(self.text[at:]) - len(self.text[at:].lstrip("`"))
        self.edits.append((at, at + run, "`" * (run + 1)))
        self.unsure = True

    monkeypatch.setattr(preprocess_module.Sanitizer, "run", run_and_lengthen)
    return readings


def test_a_repair_that_settles_on_the_last_reading_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = HEAD + EXECUTE + "```shell\nls\n```\n"
    readings = _readings_that_lengthen(monkeypatch, unsure=3)
    proposal = propose(text)
    assert len(readings) == preprocess_module.MAX_PASSES == 4
    assert proposal == Proposal(
        HEAD + EXECUTE + "``````shell\nls\n``````\n",
        (
            Change(23, "lengthened the opening fence from 3 to 6 (the block ends at line 25)"),
            Change(25, "lengthened the closing fence from 3 to 6 (the block opens at line 23)"),
        ),
        None,
    )


def test_a_repair_that_never_settles_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    text = HEAD + EXECUTE + "```shell\nls\n```\n"
    readings = _readings_that_lengthen(monkeypatch, unsure=99)
    assert propose(text) == Proposal(text, (), None)
    assert len(readings) == 4


def test_a_second_reading_beyond_the_budget_leaves_the_text_as_it_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = HEAD + EXECUTE + "```shell\nls\n```\n"
    readings = _readings_that_lengthen(monkeypatch, unsure=1)
    original_spend = preprocess_module.Sanitizer.spend

    def spend(self: preprocess_module.Sanitizer) -> None:
        if readings:
            raise preprocess_module.OutOfBudget
        original_spend(self)

    monkeypatch.setattr(preprocess_module.Sanitizer, "spend", spend)
    assert propose(text) == Proposal(text, (), None)


def test_a_second_reading_that_repairs_more() -> None:
    # the first reading closes the block of line 27 early and inserts a fence after the
    # empty block of line 28; the second reading then finds that the tilde block of
    # line 23 ends at that fence, and lengthens both.  (Indented by two spaces after
    # the list, these fences are in its last item for CommonMark, which has no block
    # there to name the other end of.)
    text = HEAD + EXECUTE + "  ~~~\n~~~\n  ````\nx\n  ```\n  ~~~\n"
    fixed = HEAD + EXECUTE + "  ~~~~\n~~~\n  ````\nx\n  ````\n  ~~~\n~~~~\n"
    changes = (
        Change(23, "lengthened the fence from 3 to 4"),
        Change(27, "lengthened the fence from 3 to 4"),
        Change(
            28, "the block opened here never closed: inserted the closing fence ~~~~ after line 28"
        ),
    )
    assert propose(text) == Proposal(fixed, changes, None, True)
    assert preprocess(fixed) == Preprocessed(fixed, ())


def test_lines_are_counted_from_a_blank_first_line() -> None:
    assert preprocess("\n```\nx\n").changes == (
        Change(
            2, "the block opened here never closed: inserted the closing fence ``` after line 3"
        ),
    )


def test_a_crlf_text_of_a_blank_line_and_an_opening_fence() -> None:
    assert preprocess("\r\n```").text == "\r\n```\r\n```"


def test_a_heading_that_is_not_an_event_is_not_read_as_the_event_after_it() -> None:
    # the CommonMark end on line 27 is followed by "### Find out more", which is not an
    # event: the shell block after it is read once, and the document ends at line 32
    text = _plan_doc("### Find out more\n```shell\ny\n```\n")
    assert preprocess(text).changes == _lengthened(23, 32)
