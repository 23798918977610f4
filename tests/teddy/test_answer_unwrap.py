"""How a chat copy is unwrapped, told line by line: where the wrapping fence ends, what
is dropped around it, a plan corrected later in the answer, and what ``answer_edits``
leaves to ``answer_to_plan``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plankit.teddy.format.answer import answer_edits, answer_to_plan, repairs_note
from plankit.teddy.format.preprocess import Change, Preprocessed
from tests.teddy.test_answer import CHAT, CREATE, EXECUTE, HEAD, PLAN, SWALLOWED

WRAPPER = "dropped the ```markdown fence wrapped around the plan"
CORPUS = Path(__file__).parent.parent / "data" / "answers"


def _corpus(name: str) -> str:
    """An answer of the hand-written corpus, as the model wrote it."""
    return (CORPUS / name).read_text(encoding="utf-8")


def _alone_and_around(name: str, before: str, after: str) -> tuple[Preprocessed, Preprocessed]:
    """A corpus answer read as it is, and read with ``before`` and ``after`` around it:
    the same plan either way."""
    answer = _corpus(name)
    alone, around = answer_to_plan(answer), answer_to_plan(before + answer + after)
    assert around.text == alone.text
    return alone, around


def test_a_wrapped_plan_is_not_cut_at_an_inner_fence_to_spare_a_repair() -> None:
    # cutting at the CREATE's closing fence would give a plan that parses with no
    # repair, but it would leave the EXECUTE out
    meant = HEAD + CREATE + "\n" + EXECUTE
    answer = "```markdown\n" + meant.replace("### `EXECUTE`", "#### `EXECUTE`") + "```\n"
    result = answer_to_plan(answer)
    assert result.text == meant
    assert result.changes == (
        Change(1, f"{WRAPPER} (closed at line 35)", "wrapper"),
        Change(29, "rewrote '#### `EXECUTE`' as an action heading", "heading"),
    )


def test_a_wrapped_plan_cut_off_inside_its_message_says_the_fence_never_closed() -> None:
    plan = HEAD + CREATE + "\n" + CHAT
    result = answer_to_plan("```markdown\n" + plan)
    assert result.text == plan
    assert result.changes == (Change(1, f"{WRAPPER} (never closed)", "wrapper"),)


def test_the_lines_around_a_wrapped_plan_are_counted_from_a_leading_blank_line() -> None:
    result = answer_to_plan("\nHere:\n```markdown\n" + PLAN + "```")
    assert result.text == PLAN
    assert result.changes == (
        Change(2, "dropped the text before the plan's title (line 2): 'Here:'", "preamble"),
        Change(3, f"{WRAPPER} (closed at line 37)", "wrapper"),
    )


def test_a_remark_right_under_the_wrapping_fence_is_dropped_whole() -> None:
    result = answer_to_plan("```markdown\n" + PLAN + "```\nThanks!")
    assert result.text == PLAN
    assert result.changes == (
        Change(1, f"{WRAPPER} (closed at line 35)", "wrapper"),
        Change(36, "dropped the text after the plan's fence (line 36): 'Thanks!'", "remarks"),
    )


@pytest.mark.parametrize(
    "preamble",
    [
        "```teddy preprocess``` repairs plans like this one:\n\n",
        "First:\n\n```text\n~~~\n```\n\n",
    ],
    ids=["inline-code", "other-fence-inside"],
)
def test_a_preamble_with_fence_like_lines_is_dropped(preamble: str) -> None:
    result = answer_to_plan(preamble + PLAN)
    assert result.text == PLAN
    assert [c.kind for c in result.changes] == ["preamble"]


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_corrected_plan_keeps_its_line_endings_and_its_lines(newline: str) -> None:
    first = PLAN.replace("src/app/version.py", "app/version.py")
    answer = first + "\nSorry, I put the module in the wrong folder. Corrected plan:\n\n"
    answer += PLAN + "\nHope this helps!\n"
    result = answer_to_plan(answer.replace("\n", newline))
    assert result.text == PLAN.replace("\n", newline)
    cue = "Sorry, I put the module in the wrong folder. Corrected plan:"
    assert result.changes == (
        Change(1, f"dropped lines 1-36: the answer corrects that plan with the one at line 37 ('{cue}')", "plan"),
        Change(71, "dropped the text after the last action (line 71): 'Hope this helps!'", "remarks"),
    )  # fmt: skip


@pytest.mark.parametrize(
    "answer",
    [
        "\ufeff" + SWALLOWED,
        json.dumps({"plan": SWALLOWED}),
        PLAN + "\nSorry, wrong one. Corrected plan:\n\n" + SWALLOWED,
        SWALLOWED.replace("## Action Plan", "# Action Plan"),
    ],
    ids=["byte-order-mark", "json", "corrected", "heading-to-rewrite"],
)
def test_answer_edits_leaves_the_other_steps_to_answer_to_plan(answer: str) -> None:
    assert answer_edits(SWALLOWED) is not None  # the fence repair alone: edits
    assert answer_edits(answer) is None


def test_the_repairs_note_lists_each_change_with_its_line() -> None:
    changes = (
        Change(1, "dropped the text before the plan's title (line 1): 'Sure:'", "preamble"),
        Change(26, "inserted the closing fence ``` after line 27"),
    )
    assert repairs_note("The plan was repaired before it ran", changes) == (
        "The plan was repaired before it ran:\n"
        "- line 1: dropped the text before the plan's title (line 1): 'Sure:'\n"
        "- line 26: inserted the closing fence ``` after line 27"
    )


# --- a wrapped plan, in JSON or corrected, that parses although a rule would change it ---

ASKS_FIRST = (
    HEAD
    + CREATE
    + "\n### `CHAT_WITH_USER`\nShall I go on with the tests?\n\n**EXECUTE**\n"
    + "```shell\npytest -q\n```\n"
)
"""A plan whose message names the next action in a bold line, as the heading rule would
write an action (it does not, in a message that parses): it parses as it is (35 lines)."""


@pytest.mark.parametrize(
    ("answer", "kept"),
    [
        ("```markdown\n" + ASKS_FIRST + "```\n", Change(1, f"{WRAPPER} (closed at line 36)", "wrapper")),
        ("Here it is:\n\n" + ASKS_FIRST, Change(1, "dropped the text before the plan's title (line 1): 'Here it is:'", "preamble")),
        (json.dumps({"plan": ASKS_FIRST}), Change(1, "took the plan out of a JSON object (the lines of the changes after this one are the plan's own)", "json")),
        (
            PLAN + "\nSorry, I should ask first. Corrected plan:\n\n" + ASKS_FIRST,
            Change(1, "dropped lines 1-36: the answer corrects that plan with the one at line 37 ('Sorry, I should ask first. Corrected plan:')", "plan"),
        ),
    ],
    ids=["fenced", "after-a-sentence", "json", "corrected"],
)  # fmt: skip
def test_a_plan_that_parses_inside_an_answer_is_taken_as_it_is(answer: str, kept: Change) -> None:
    assert answer_to_plan(ASKS_FIRST) == Preprocessed(ASKS_FIRST, ())
    assert answer_to_plan(answer) == Preprocessed(ASKS_FIRST, (kept,))


def test_the_wrapping_fence_of_a_plan_that_parses_is_not_one_inside_its_message() -> None:
    # the message's own block ends at a bare fence too: cutting there would close the
    # block again and report it
    result = answer_to_plan("```markdown\n" + ASKS_FIRST + "```\n\nThat's all.\n")
    assert result == Preprocessed(
        ASKS_FIRST,
        (
            Change(1, f"{WRAPPER} (closed at line 36)", "wrapper"),
            Change(
                38, "dropped the text after the plan's fence (line 38): 'That's all.'", "remarks"
            ),
        ),
    )


def test_a_bare_block_after_the_wrapped_plan_is_not_its_end() -> None:
    answer = "```markdown\n" + PLAN + "```\n\nRun it with:\n```\nteddy execute\n```\n"
    assert answer_to_plan(answer) == Preprocessed(
        PLAN,
        (
            Change(1, f"{WRAPPER} (closed at line 35)", "wrapper"),
            Change(37, "dropped the text after the plan's fence (lines 37-40): 'Run it with:'", "remarks"),
        ),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("closing", "where"), [("", "never closed"), ("```\n", "closed at line 37")]
)
def test_a_remark_inside_the_wrapping_fence_is_dropped(closing: str, where: str) -> None:
    answer = "```markdown\n" + PLAN + "\nHope this helps!\n" + closing
    assert answer_to_plan(answer) == Preprocessed(
        PLAN,
        (
            Change(1, f"{WRAPPER} ({where})", "wrapper"),
            Change(36, "dropped the text after the last action (line 36): 'Hope this helps!'", "remarks"),
        ),
    )  # fmt: skip


def test_a_summary_heading_before_a_wrapped_plan_is_dropped_with_the_preamble() -> None:
    answer = "## Summary\n\nI add the module.\n\n```markdown\n" + PLAN + "```\n"
    assert answer_to_plan(answer) == Preprocessed(
        PLAN,
        (
            Change(1, "dropped the text before the plan's title (lines 1-3): '## Summary'", "preamble"),
            Change(5, f"{WRAPPER} (closed at line 39)", "wrapper"),
        ),
    )  # fmt: skip


def test_a_readme_heading_in_a_plan_without_its_title_is_not_taken_for_the_title() -> None:
    readme = (
        "### `CREATE`\n- **File Path:** [README.md](/README.md)\n- **Description:** d\n"
        "```markdown\n# My app\n\nIt prints its version.\n```\n"
    )
    untitled = PLAN.split("\n", 2)[2].replace(CREATE, readme)  # the model left out the title
    assert answer_to_plan(untitled) == Preprocessed(untitled, ())


def test_link_definitions_before_the_title_are_kept_with_the_plan_that_parses() -> None:
    text = "[app]: /src/app/version.py\n\n" + PLAN.replace(
        "One source of truth.", "One [source][app]."
    )
    assert answer_to_plan(text) == Preprocessed(text, ())


CORRECTED = "\nSorry, I put the module in the wrong folder. Corrected plan:\n\n"
CORRECTS = (
    "dropped lines 1-{}: the answer corrects that plan with the one at line {} "
    "('Sorry, I put the module in the wrong folder. Corrected plan:')"
)


def test_both_plans_fenced_report_only_the_corrected_one_s_fence() -> None:
    first = PLAN.replace("src/app/version.py", "app/version.py")
    answer = "Here is the plan:\n\n```markdown\n" + first + "```\n" + CORRECTED
    answer += "```markdown\n" + PLAN + "```\n"
    assert answer_to_plan(answer) == Preprocessed(
        PLAN,
        (
            Change(1, CORRECTS.format(40, 41), "plan"),
            Change(41, f"{WRAPPER} (closed at line 75)", "wrapper"),
        ),
    )


def test_a_json_plan_corrected_inside_its_string_keeps_the_json_change() -> None:
    first = PLAN.replace("src/app/version.py", "app/version.py")
    answer = json.dumps({"plan": first + CORRECTED + PLAN})
    assert answer_to_plan(answer) == Preprocessed(
        PLAN,
        (
            Change(1, "took the plan out of a JSON object (the lines of the changes after this one are the plan's own)", "json"),
            Change(1, CORRECTS.format(36, 37), "plan"),
        ),
    )  # fmt: skip


def test_a_tag_around_a_corrected_plan_is_reported_with_the_correction() -> None:
    first = PLAN.replace("src/app/version.py", "app/version.py")
    answer = "<plan>\n" + first + CORRECTED + PLAN + "</plan>\n\nHope it helps.\n"
    assert answer_to_plan(answer) == Preprocessed(
        PLAN,
        (
            Change(1, CORRECTS.format(37, 38), "plan"),
            Change(71, "dropped the closing tag </plan> of the tag wrapped around the plan, and what follows it", "wrapper"),
        ),
    )  # fmt: skip


def test_a_wrapped_plan_that_parses_is_kept_whatever_the_sanitizer_proposes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # rule 1 is a safety net under the fence step: a plan inside a fence that parses
    # comes out byte for byte even if the sanitizer would change it
    import plankit.teddy.format.answer as answer_module
    from plankit.teddy.format.parse import check_plan
    from plankit.teddy.format.preprocess import Proposal, propose

    def propose_on_valid_plans_too(text: str) -> Proposal:
        if check_plan(text)[0] is None:
            return propose(text)
        at = text.index("```shell")
        lengthened = text[:at] + "`" + text[at:]
        return Proposal(lengthened, (Change(text.count("\n", 0, at) + 1, "lengthened"),), None)

    monkeypatch.setattr(answer_module, "propose", propose_on_valid_plans_too)
    assert answer_to_plan("```markdown\n" + PLAN + "```\n") == Preprocessed(
        PLAN, (Change(1, f"{WRAPPER} (closed at line 35)", "wrapper"),)
    )


def test_a_wrapping_fence_closed_twice_ends_at_its_first_closing_line() -> None:
    # a second bare fence right under the first: ending the plan there would leave the
    # first one as an empty block to close, so the wrapper ends one line higher
    answer = "```markdown\n" + PLAN + "```\n```\n"
    assert answer_to_plan(answer) == Preprocessed(
        PLAN,
        (
            Change(1, f"{WRAPPER} (closed at line 35)", "wrapper"),
            Change(36, "dropped the text after the plan's fence (line 36): '```'", "remarks"),
        ),
    )


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_remark_and_a_stray_fence_after_the_wrapped_plan_are_dropped(newline: str) -> None:
    # ending the plan at the stray fence would also give a plan, but only by dropping the
    # remark as text after the last action: the wrapper's own closing line drops less
    answer = "```markdown\n" + PLAN + "```\n\nWant me to bump it to 2.0 instead?\n```\n"
    result = answer_to_plan(answer.replace("\n", newline))
    assert result == Preprocessed(
        PLAN.replace("\n", newline),
        (
            Change(1, f"{WRAPPER} (closed at line 35)", "wrapper"),
            Change(37, "dropped the text after the plan's fence (lines 37-38): 'Want me to bump it to 2.0 instead?'", "remarks"),
        ),
    )  # fmt: skip


def test_a_bare_wrapper_cut_off_inside_its_last_block_keeps_every_action() -> None:
    # the bare fence of the block in the message could close a bare wrapper, but the
    # actions under it would then be cut off with the answer's end
    message = "### `CHAT_WITH_USER`\nThe old test failed:\n\n```text\nerror: no module named app\n```\n\nShall I go on?\n"
    plan = HEAD + message + "\n" + CREATE
    answer = "```\n" + plan.removesuffix("```\n")
    assert answer_to_plan(answer) == Preprocessed(
        plan,
        (
            Change(1, "dropped the ``` fence wrapped around the plan (never closed)", "wrapper"),
            Change(34, "the block opened here never closed: inserted the closing fence ``` after line 35", "fence"),
        ),
    )  # fmt: skip


def test_a_wrapped_plan_whose_markdown_block_is_never_closed_keeps_the_action_after_it() -> None:
    # the wrapper and the README block both open with four backticks; read as the end of
    # that block, the wrapper's closing fence would swallow the INVOKE into the README
    readme = "````markdown\n# Usage\n\n```shell\napp --version\n```\n\n"
    create = CREATE.replace("src/app/version.py", "docs/usage.md").replace(
        '```python\nVERSION = "1.2.0"\n```\n', readme
    )
    invoke = "### `INVOKE`\n- **Agent:** Reviewer\n\nPlease review the usage page.\n"
    answer = (
        "````markdown\n"
        + HEAD
        + create
        + invoke
        + "````\n\nI can add a changelog entry too if you like.\n"
    )
    closed = create.replace("```\n\n", "```\n````\n\n")
    assert answer_to_plan(answer) == Preprocessed(
        HEAD + closed + invoke,
        (
            Change(1, "dropped the ````markdown fence wrapped around the plan (closed at line 36)", "wrapper"),
            Change(25, "the block opened here never closed: inserted the closing fence ```` after line 30", "fence"),
            Change(38, "dropped the text after the plan's fence (line 38): 'I can add a changelog entry too if you …'", "remarks"),
        ),
    )  # fmt: skip


def test_a_wrapped_plan_cut_off_inside_a_heredoc_is_not_ended_at_a_fence_in_it() -> None:
    # the answer stops inside the last block, whose here-document holds a fenced
    # example; ending the wrapper at that example's closing fence would put the
    # command's next line after the plan, with nothing set apart
    notes = (
        "### `EXECUTE`\n"
        "- **Description:** Write the usage notes.\n"
        "- **Expected Outcome:** docs/usage.md exists.\n"
        "````shell\n"
        "cat > docs/usage.md <<'EOF'\n"
        "Run it:\n"
        "```\n"
        "app --version\n"
        "```\n"
        "EOF\n"
    )
    answer = "```markdown\n" + HEAD + CREATE + "\n" + notes
    assert answer_to_plan(answer) == Preprocessed(
        HEAD + CREATE + "\n" + notes + "````\n",
        (
            Change(1, f"{WRAPPER} (never closed)", "wrapper"),
            Change(32, "the block opened here never closed: inserted the closing fence ```` after line 38", "fence"),
        ),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("opener", "closer", "where"),
    [
        ("```\n", "```\n", "closed at line 44"),
        ("```markdown\n", "```\n", "closed at line 44"),
        ("```\n", "", "never closed"),  # cut off before the wrapper's end
    ],
)
def test_a_wrapped_answer_with_a_remark_on_its_last_closing_fence_is_read_as_unwrapped(
    opener: str, closer: str, where: str
) -> None:
    # GPT's answer of the corpus, its remark on the closing fence line of the last
    # block, as it comes when the whole answer was put in a fence
    name = "gpt-remark-on-the-closing-fence-line.answer.md"
    alone, wrapped = _alone_and_around(name, opener, closer)
    fence = opener.strip()
    # every line a change names is a line of the input: one more than unwrapped
    assert [(c.line, c.kind) for c in alone.changes] == [(42, "tail")]
    assert wrapped.changes == (
        Change(1, f"dropped the {fence} fence wrapped around the plan ({where})", "wrapper"),
        Change(
            43,
            "the closing fence here has text after it: read as the end of the block opened "
            "at line 27 and a remark after the plan, dropped (line 43): 'I can add a "
            "troubleshooting section too…'",
            "tail",
        ),
    )


@pytest.mark.parametrize("cut", ["### Step 2 - `EDIT`\n", "- **File Path:**", "- **Description:**"])
def test_a_wrapped_answer_cut_off_before_its_find_block_keeps_all_it_has(cut: str) -> None:
    # Gemini's answer of the corpus in a bare fence, stopped by the length limit in the
    # middle of an EDIT: the wrapping fence's own line is no end of it, so nothing of
    # the plan is dropped
    answer = _corpus("gemini-numbered-sections-and-steps.answer.md")
    lines = answer.splitlines(keepends=True)
    at = next(n for n, line in enumerate(lines) if line.startswith(cut)) + 1
    part = "".join(lines[:at])
    alone = answer_to_plan(part)
    wrapped = answer_to_plan("```\n" + part)
    assert wrapped.text == alone.text and wrapped.text.startswith("# Fix the flaky worker test")
    assert wrapped.changes == (
        Change(1, "dropped the ``` fence wrapped around the plan (never closed)", "wrapper"),
        *(Change(c.line + 1, c.message, c.kind) for c in alone.changes),
    )
    assert {c.kind for c in alone.changes} == {"heading"}


LET_ME_KNOW = "\nLet me know if you want changes.\n"


@pytest.mark.parametrize(
    ("opener", "after", "line", "dropped"),
    [
        ("```\n", LET_ME_KNOW, 40, "(line 40): 'Let me know if you want changes.'"),
        ("```\n", "  \n\nDone.\n", 41, "(line 41): 'Done.'"),  # two spaces on the line between
        ("```markdown\n", LET_ME_KNOW, 40, "(line 40): 'Let me know if you want changes.'"),
        ("~~~markdown\n", LET_ME_KNOW, 40, "(line 40): 'Let me know if you want changes.'"),
        ("~~~markdown\n", "\n```shell\npytest -q\n```\n", 40, "(lines 40-42): '```shell'"),
    ],
)
def test_a_wrapped_plan_whose_last_fence_has_a_word_ends_at_the_wrapper_not_the_remark(
    opener: str, after: str, line: int, dropped: str
) -> None:
    # a local model closes its last block with "```python"; the whole answer came in a
    # fence, with a remark (or the command to run) under it: the wrapper ends at its own
    # closing line, so what follows is dropped, not taken into the plan as the rest of
    # a wrapper never closed
    answer = _corpus("local-closing-fence-glued-to-a-word.answer.md")
    result = answer_to_plan(opener + answer + opener[:3] + "\n" + after)
    assert result.text == answer
    fence = opener.strip()
    assert result.changes == (
        Change(
            1, f"dropped the {fence} fence wrapped around the plan (closed at line 38)", "wrapper"
        ),
        Change(line, f"dropped the text after the plan's fence {dropped}", "remarks"),
    )


@pytest.mark.parametrize(
    ("opener", "closer"),
    [
        ("```markdown\n", "```\n"),
        ("```\n", "```\n"),
        ("````markdown\n", "````\n"),
        ("~~~\n", "~~~\n"),
    ],
)
@pytest.mark.parametrize(
    "remark", ["Let me know if you want changes.", "Xcode users: rebuild first."]
)
@pytest.mark.parametrize("blank", ["", "\n"])
def test_a_remark_after_the_wrapper_leaves_an_open_last_block_reported_as_alone(
    opener: str, closer: str, remark: str, blank: str
) -> None:
    # Claude's answer of the corpus never closes its last block (the test command, a
    # blank line, a remark); a chat gives it in a fence with its own remark under the
    # closing line, right under it or after a blank line.  That line is the wrapper's
    # end, and the answer is read as it is alone: where its last block ends cannot be
    # told, and it says so.  Read as a wrapper never closed, the closing line ended the
    # last block instead, and the answer's remark became a shell command, silently.
    answer = _corpus("claude-open-last-block-then-remark.answer.md")
    alone = answer_to_plan(answer)
    result = answer_to_plan(opener + answer + closer + blank + remark + "\n")
    assert result.text == alone.text
    at = 51 if blank else 50
    assert result.changes == (
        Change(1, f"dropped the {opener.strip()} fence wrapped around the plan (closed at line 49)", "wrapper"),
        Change(at, f"dropped the text after the plan's fence (line {at}): '{remark}'", "remarks"),
    )  # fmt: skip
    assert [p.message for p in result.problems] == [
        p.message.replace("line 47", "line 48").replace("line 45", "line 46")
        for p in alone.problems
    ]
    assert "line 47 is either its last line or a remark" in alone.problems[0].message


def test_two_remarks_after_the_wrapper_leave_an_open_last_block_reported() -> None:
    # the same answer, and after the wrapper two paragraphs of the chat: the first
    # line after the wrapper is the sentence that tells it
    answer = _corpus("claude-open-last-block-then-remark.answer.md")
    alone = answer_to_plan(answer)
    after = "\nLet me know if you want changes.\n\nHappy coding!\n"
    result = answer_to_plan("```markdown\n" + answer + "```\n" + after)
    assert result.text == alone.text
    assert result.changes == (
        Change(1, "dropped the ```markdown fence wrapped around the plan (closed at line 49)", "wrapper"),
        Change(51, "dropped the text after the plan's fence (lines 51-53): 'Let me know if you want changes.'", "remarks"),
    )  # fmt: skip
    assert [p.kind for p in result.problems] == ["unsure"]


@pytest.mark.parametrize("opener", ["```markdown\n", "````markdown\n"])
def test_two_remarks_right_under_the_wrapper_leave_an_open_last_block_reported(
    opener: str,
) -> None:
    # as above, with no blank line between the wrapper's closing line and the remarks:
    # the first line under it is the sentence that tells the wrapper's end
    answer = _corpus("claude-open-last-block-then-remark.answer.md")
    after = "Let me know if you want changes.\n\nHappy coding!\n"
    result = answer_to_plan(opener + answer + opener[:-9] + "\n" + after)
    assert result.text == answer_to_plan(answer).text
    assert result.changes[0].message.endswith("wrapped around the plan (closed at line 49)")
    assert [p.kind for p in result.problems] == ["unsure"]


def test_a_wrapped_answer_cut_off_after_a_rule_under_its_content_is_read_as_cut_off() -> None:
    # Gemini's answer of the corpus (a guide's Markdown in a ```` block, a rule under it)
    # in a ```` fence, stopped by the length limit right after that rule: the block's
    # closing line is no end of the wrapper followed by a remark, and the answer reads
    # as it does alone, with nothing to report
    lines = _corpus("gemini-level-1-sections-around-markdown-content.answer.md").splitlines(
        keepends=True
    )
    at = lines.index("---\n", lines.index("Sync only what changed.\n")) + 1
    part = "".join(lines[:at])
    alone, result = answer_to_plan(part), answer_to_plan("````markdown\n" + part)
    assert result.text == alone.text and not result.problems and not alone.problems
    assert result.changes[0] == Change(
        1, "dropped the ````markdown fence wrapped around the plan (never closed)", "wrapper"
    )


QUOTED_ERROR = """\
# Find out why the import job stalls

## Rationale
```text
### 1. Synthesis
The nightly import stopped halfway twice this week.
### 2. Justification
Its log says more than the exit code.
### 3. Expected Outcome
The user shares the log.
### 4. State Dashboard
- Import job: stalls, cause unknown
```

{heading}

### `CHAT_WITH_USER`
The last run ended with:
```
Timeout waiting for the lock on table orders.
```

Can you paste the lines of the log just before it?
"""


@pytest.mark.parametrize("heading", ["## Action Plan", "## Action plan:"])
def test_a_message_quoting_a_bare_block_is_not_cut_at_its_opening_fence(heading: str) -> None:
    # the answer came in a fence that was never closed (cut off, or forgotten), and its
    # message quotes an error in a bare block whose first line is a sentence: that
    # block's opening fence is no end of the wrapper followed by a remark, whether the
    # plan needs a repair or none
    plan = QUOTED_ERROR.format(heading=heading)
    result = answer_to_plan("```markdown\n" + plan)
    assert result.text == answer_to_plan(plan).text
    assert "Can you paste the lines of the log just before it?" in result.text
    assert result.changes[0] == Change(
        1, "dropped the ```markdown fence wrapped around the plan (never closed)", "wrapper"
    )
    assert not result.problems


@pytest.mark.parametrize(
    ("opener", "closers", "second"),
    [
        ("```markdown\n", "```\n```\n", 51),  # the wrapper closed twice
        ("```markdown\n", "```\n\n```\n", 52),
        ("````markdown\n", "````\n\n```\n", 52),  # then a fence of the inner blocks' length
        ("```\n", "```\n```\n", 51),
    ],
)
def test_a_stray_fence_after_the_wrapper_does_not_pull_the_remark_into_the_last_command(
    opener: str, closers: str, second: int
) -> None:
    # Gemini's answer of the corpus (a remark after its last EXECUTE block) in a fence,
    # with one fence too many at the end.  Ending the wrapper at that last fence instead
    # would make the remark and the wrapper's own closing line part of the shell command
    # (its block lengthened to hold them): dropping a remark must not count against an
    # end that needs fewer repairs
    _, result = _alone_and_around("gemini-numbered-sections-and-steps.answer.md", opener, closers)
    assert "pytest -q tests/test_worker.py --count 20\n```\n" in result.text
    fence = opener.strip()
    assert [c for c in result.changes if c.kind != "heading"] == [
        Change(
            1, f"dropped the {fence} fence wrapped around the plan (closed at line 50)", "wrapper"
        ),
        Change(
            49,
            "dropped the text after the last action (line 49): 'This should make the test "
            "deterministic…'",
            "remarks",
        ),
        Change(
            second, f"dropped the text after the plan's fence (line {second}): '```'", "remarks"
        ),
    ]


@pytest.mark.parametrize("opener", ["```markdown\n", "~~~markdown\n"])
def test_a_corrected_plan_cut_off_is_taken_not_the_first_plan_it_corrects(opener: str) -> None:
    # both plans fenced, and the corrected one stopped by the length limit inside its
    # last block: the first plan's closing fence is no end of the wrapper to stop at,
    # although the plan before it parses as it is; it would leave the corrected plan
    # out as text after the wrapper, and take the plan the answer says is wrong
    first = PLAN.replace("src/app/version.py", "app/version.py")
    answer = opener + first + opener[:3] + "\n" + CORRECTED + opener + PLAN.removesuffix("```\n")
    fence = opener.strip()
    assert answer_to_plan(answer) == Preprocessed(
        PLAN,
        (
            Change(1, CORRECTS.format(38, 39), "plan"),
            Change(39, f"dropped the {fence} fence wrapped around the plan (never closed)", "wrapper"),
            Change(70, "the block opened here never closed: inserted the closing fence ``` after line 71", "fence"),
        ),
    )  # fmt: skip


XFAIL_REPORTED = (
    "### `CHAT_WITH_USER`\n"
    "The suite passes, but pytest still reports:\n"
    "\n"
    "```\n"
    "XFAIL tests/test_version.py::test_old_format - kept for 1.x\n"
    "```\n"
    "\n"
    "Shall I remove that test now?\n"
)


@pytest.mark.parametrize("opener", ["```markdown\n", "```\n"])
def test_a_message_quoting_pytest_output_is_not_cut_at_its_bare_fence(opener: str) -> None:
    # the answer's wrapper was never closed, and its message quotes pytest's report in
    # a bare block whose first line starts with a capital X (XFAIL, XPASS): that
    # block's opening fence is no end of the wrapper, what follows it no remark
    plan = HEAD + CREATE + "\n" + XFAIL_REPORTED
    assert answer_to_plan(plan) == Preprocessed(plan, ())
    fence = opener.strip()
    assert answer_to_plan(opener + plan) == Preprocessed(
        plan, (Change(1, f"dropped the {fence} fence wrapped around the plan (never closed)", "wrapper"),)
    )  # fmt: skip
