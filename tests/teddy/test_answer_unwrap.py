"""How a chat copy is unwrapped, told line by line: where the wrapping fence ends, what
is dropped around it, a plan corrected later in the answer, and what ``answer_edits``
leaves to ``answer_to_plan``."""

from __future__ import annotations

import json

import pytest

from plankit.teddy.format.answer import answer_edits, answer_to_plan, repairs_note
from plankit.teddy.format.preprocess import Change
from tests.teddy.test_answer import CHAT, CREATE, EXECUTE, HEAD, PLAN, SWALLOWED

WRAPPER = "dropped the ```markdown fence wrapped around the plan"


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
