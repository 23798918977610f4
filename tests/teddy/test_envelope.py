"""What an answer holds its plan in besides Markdown (plankit.teddy.format.envelope): the
JSON a model calling a function answers with, a tag wrapped around the plan, and a plan
corrected by a later one; each with the line and words of the change it reports."""

from __future__ import annotations

import json
import re

import pytest

from plankit.teddy.format.changes import Change
from plankit.teddy.format.envelope import from_json, last_plan, several_plans, xml_wrapper

PLAN = (
    "# Add a greeting\n\n## Rationale\n```text\nThe app says nothing.\n```\n\n"
    "## Action Plan\n\n### `EXECUTE`\n- **Description:** Greet.\n```shell\necho hi\n```\n"
)
"""A short plan: a title, a Rationale and one action (14 lines)."""
OTHER = PLAN.replace("echo hi", "echo hello")
FROM_OBJECT = "took the plan out of a JSON object (the lines of the changes after this one are the plan's own)"
FROM_STRING = FROM_OBJECT.replace("a JSON object", "a JSON string")


def _json(plan: str = PLAN) -> str:
    return json.dumps({"plan": plan})


# --- JSON ------------------------------------------------------------------------------


def test_a_function_call_s_arguments_give_the_plan() -> None:
    call = json.dumps({"id": "call_1", "function": {"name": "submit_plan", "arguments": _json()}})
    assert from_json(call) == (PLAN, Change(1, FROM_OBJECT, "json"))


def test_a_json_string_after_a_sentence_gives_the_plan_at_its_line() -> None:
    answer = "Here is the plan, as a JSON string as you asked:\n" + json.dumps(PLAN) + "\n"
    assert from_json(answer) == (PLAN, Change(2, FROM_STRING, "json"))


def test_a_json_fence_and_the_blank_lines_in_it_are_passed_over() -> None:
    answer = "Here is the plan:\n\n```json\n\n  \t\r\n" + _json() + "\n```\n\nHope it helps.\n"
    assert from_json(answer) == (PLAN, Change(6, FROM_OBJECT, "json"))
    assert from_json("~~~ json\n" + _json() + "\n~~~") == (PLAN, Change(2, FROM_OBJECT, "json"))
    # one blank line, as models often leave after the fence (an odd number of blanks)
    one = "Here is the plan:\n\n```json\n\n" + _json() + "\n```\n"
    assert from_json(one) == (PLAN, Change(5, FROM_OBJECT, "json"))


def test_a_plan_in_a_json_array_or_nested_objects() -> None:
    answer = json.dumps([{"tool": "plan", "input": {"text": PLAN, "model": "small"}}])
    assert from_json(answer) is None  # an answer that starts with [ is not read as JSON
    nested = json.dumps({"result": [{"tool": "plan", "input": {"text": PLAN, "n": 1}}]})
    assert from_json(nested) == (PLAN, Change(1, FROM_OBJECT, "json"))


def test_the_same_plan_twice_is_one_plan_and_two_plans_are_none() -> None:
    assert from_json(json.dumps({"plan": PLAN, "draft": PLAN})) == (
        PLAN,
        Change(1, FROM_OBJECT, "json"),
    )
    assert from_json(json.dumps({"plan": PLAN, "draft": OTHER})) is None
    assert from_json(json.dumps({"status": "error", "message": "rate limited"})) is None


@pytest.mark.parametrize(
    "value",
    [
        "Add a greeting\n\n## Action Plan\n",  # no title
        "#Add a greeting\n\n## Action Plan\n### `EXECUTE`\n",  # no space after the #
        "# Add a greeting\n\nThe plan has no Action Plan.\n",
        "  [not json at all",
        "{broken",
    ],
)
def test_strings_that_are_not_plans_give_none(value: str) -> None:
    assert from_json(json.dumps({"plan": value})) is None


def test_a_plan_string_may_have_blank_lines_around_its_title() -> None:
    padded = "\n  " + PLAN + "\n\n"
    assert from_json(json.dumps({"plan": padded})) == (padded, Change(1, FROM_OBJECT, "json"))


def test_json_nested_deeper_than_eight_levels_is_not_searched() -> None:
    def within(levels: int) -> object:
        value: object = PLAN
        for _ in range(levels):
            value = [value]
        return value

    assert from_json(json.dumps({"a": within(7)})) == (PLAN, Change(1, FROM_OBJECT, "json"))
    assert from_json(json.dumps({"a": within(8)})) is None
    # a string holding JSON is a level, and what it holds one more
    assert from_json(json.dumps({"a": json.dumps(within(6))})) == (
        PLAN,
        Change(1, FROM_OBJECT, "json"),
    )
    assert from_json(json.dumps({"a": json.dumps(within(7))})) is None


def test_up_to_three_lines_may_come_before_the_json() -> None:
    lead = "Sure!\n\nHere it is.\nAs JSON:\n\n"
    assert from_json(lead + _json()) == (PLAN, Change(6, FROM_OBJECT, "json"))
    assert from_json("One.\n" + lead + _json()) is None


@pytest.mark.parametrize(
    "lead",
    [
        "# Add a greeting\nThe plan as JSON:\n",  # a Markdown answer with a JSON example
        "```\nx\n```\n",
        # a code block before: its closing fence is no JSON fence
        "Save the helper first:\n```python\nprint('hi')\n```\n",
    ],
)
def test_json_after_markdown_is_not_the_answer(lead: str) -> None:
    assert from_json(lead + _json()) is None


def test_json_far_into_the_answer_is_not_the_answer() -> None:
    lead = "I thought about it. " * 99 + "\n"  # 1981 characters
    assert from_json(lead + _json()) == (PLAN, Change(2, FROM_OBJECT, "json"))
    assert from_json("I thought about it. " + lead + _json()) is None


@pytest.mark.parametrize(
    "answer",
    [
        "```json\n",  # nothing after the fence
        "```json\n\n\n",
        "```json\nplan: none\n```\n",  # not JSON after the fence
        '{"plan": "# Add a greeting\\n\\n## Action Plan\\n"',  # cut off
    ],
)
def test_no_json_where_it_should_start(answer: str) -> None:
    assert from_json(answer) is None


@pytest.mark.parametrize(
    "rest",
    [
        "\n" + _json(OTHER),  # more JSON
        '\n["x"]',
        '\n"x"',
        "\n# Add a greeting",  # Markdown
        "\n```\n# Add a greeting",
        "\nAnd here it is as Markdown:\n# Add a greeting\n",
        "\n```\n" + _json(OTHER),  # a second call after the fence
        "\n~~~\n" + _json(OTHER),
    ],
)
def test_more_json_or_markdown_after_the_json_is_not_one_answer(rest: str) -> None:
    assert from_json(_json() + rest) is None


@pytest.mark.parametrize(
    "rest",
    [
        "",
        "\n```\n",
        "\n~~~",
        "\n```\nLet me know if it needs changes.\n",
        "\nDone.",
        "\nXcode picks up the new file on its next build.\n",
    ],
)
def test_a_closing_fence_or_a_sentence_after_the_json_is_fine(rest: str) -> None:
    assert from_json(_json() + rest) == (PLAN, Change(1, FROM_OBJECT, "json"))


# --- a tag around the plan ----------------------------------------------------------------


def test_a_tag_around_the_plan_is_cut_at_its_closing_line() -> None:
    answer = "I'll wrap it as asked.\n<plan>\n\n" + PLAN + "</plan>\n\nHope it helps.\n"
    cut = answer.index("</plan>")
    assert xml_wrapper(answer) == (
        answer[:cut],
        Change(
            18,
            "dropped the closing tag </plan> of the tag wrapped around the plan, and what "
            "follows it",
            "wrapper",
        ),
    )


def test_the_last_closing_tag_and_any_tag_name_count() -> None:
    inner = PLAN.replace("echo hi", "echo '</answer>'\n</answer>")
    answer = "<answer>\r\n# " + inner[2:] + "  </answer>  \r\nthanks\r\n"
    cut = answer.rindex("  </answer>")
    assert xml_wrapper(answer) == (
        answer[:cut],
        Change(
            17,
            "dropped the closing tag </answer> of the tag wrapped around the plan, and what "
            "follows it",
            "wrapper",
        ),
    )


@pytest.mark.parametrize(
    "answer",
    [
        "<plan>\n" + PLAN,  # never closed
        "<plan>\n" + PLAN + "</answer>\n",  # closed by another tag
        "<plan>\n" + PLAN + "</plan> and more\n",  # not alone on its line
        "<plan>\nThe plan:\n" + PLAN + "</plan>\n",  # the title does not follow the tag
        "<plan> " + PLAN + "</plan>\n",
        "<1plan>\n" + PLAN + "</1plan>\n",
        "x" * 2000 + "\n<plan>\n" + PLAN + "</plan>\n",  # too far into the answer
    ],
)
def test_no_tag_around_the_plan(answer: str) -> None:
    assert xml_wrapper(answer) is None


# --- a plan corrected by a later one --------------------------------------------------------

SORRY = "Sorry, I misread the loader: it reads JSON. Corrected plan below.\n\n"


@pytest.mark.parametrize(
    ("lead", "last_dropped"), [("", 17), ("\n", 18)], ids=["", "a-blank-first-line"]
)
def test_a_corrected_plan_is_the_plan_and_the_earlier_lines_are_dropped(
    lead: str, last_dropped: int
) -> None:
    answer = lead + PLAN + "\n" + SORRY + OTHER
    start = answer.index("# Add", len(lead) + 1)
    assert last_plan(answer) == (
        start,
        Change(
            1,
            f"dropped lines 1-{last_dropped}: the answer corrects that plan with the one at "
            f"line {last_dropped + 1} "
            "('Sorry, I misread the loader: it reads JSON. Corrected plan b')",
            "plan",
        ),
    )


def test_the_correction_is_read_in_the_last_three_lines_before_the_plan() -> None:
    cue = "I made a mistake above.\n"
    far = PLAN + "\n" + cue + "a\nb\nc\n\n" + OTHER
    assert last_plan(far) == (far.index("# Add", 1), None)
    near = PLAN + "\n" + cue + "b\nc\n\n" + OTHER
    start = near.index("# Add", 1)
    assert last_plan(near) == (
        start,
        Change(
            1,
            "dropped lines 1-19: the answer corrects that plan with the one at line 20 ('c')",
            "plan",
        ),
    )


def test_two_plans_without_a_correction_do_not_say_which() -> None:
    answer = PLAN + "\nOr, if you prefer:\n\n" + OTHER
    start = answer.index("# Add", 1)
    assert last_plan(answer) == (start, None)
    assert several_plans(answer, start) == Change(
        18,
        "the answer holds more than one plan and does not say which one it means (this one "
        "starts at line 18): keep one plan and delete the others",
        "unsure",
    )


def test_one_plan_is_not_several() -> None:
    assert last_plan(SORRY + PLAN) is None
    # a second title without an Action Plan of its own: one plan
    assert last_plan(PLAN + "\n" + SORRY + "# Notes\n\nNothing else.\n") is None


def test_a_plan_without_an_action_under_its_action_plan_is_not_complete() -> None:
    unfinished = "# Add a greeting\n\n## Action Plan\n\nI will run echo.\n"
    assert last_plan(unfinished + "\n" + SORRY + PLAN) is None
    assert last_plan(PLAN + "\n" + SORRY + unfinished) is None
    # an action heading before the Action Plan does not make the plan complete
    early = "# Add a greeting\n\n### `EXECUTE`\n\n## Action Plan\n\nnone\n"
    assert last_plan(early + "\n" + SORRY + PLAN) is None


def test_plans_quoted_in_a_fence_are_not_plans_of_the_answer() -> None:
    quoted = "You asked for this shape:\n\n````\nLike this:\n" + PLAN + "````\n\n"
    answer = quoted + "Sorry, here is mine:\n\n" + OTHER
    assert last_plan(answer) is None
    # a fence with backticks in its info string is no fence: its plan counts
    loose = "```a`b\n" + PLAN + "\n" + SORRY + OTHER
    assert last_plan(loose) == (
        loose.index("# Add", 10),
        Change(
            1,
            "dropped lines 1-18: the answer corrects that plan with the one at line 19 "
            "('Sorry, I misread the loader: it reads JSON. Corrected plan b')",
            "plan",
        ),
    )


def test_a_corrected_plan_wrapped_in_a_fence_starts_at_the_fence() -> None:
    answer = PLAN + "\n" + SORRY + "```markdown\n" + OTHER + "```\n"
    start = answer.index("```markdown")
    assert last_plan(answer) == (
        start,
        Change(
            1,
            "dropped lines 1-17: the answer corrects that plan with the one at line 18 "
            "('Sorry, I misread the loader: it reads JSON. Corrected plan b')",
            "plan",
        ),
    )


CORRECTS = (
    "dropped lines 1-{}: the answer corrects that plan with the one at line {} "
    "('Sorry, I misread the loader: it reads JSON. Corrected plan b')"
)


@pytest.mark.parametrize("fence", ["```md", "~~~~plan", "````", "``` text "])
def test_both_plans_wrapped_in_fences(fence: str) -> None:
    closing = re.match(r"[`~]+", fence)[0]  # type: ignore[index]
    first = fence + "\n" + PLAN + closing + "\n"
    answer = first + "\n" + SORRY + fence + "\n\n" + OTHER + closing + "\n"
    start = answer.index(SORRY) + len(SORRY)
    assert last_plan(answer) == (start, Change(1, CORRECTS.format(19, 20), "plan"))


@pytest.mark.parametrize(
    "heading",
    ["# Action Plan", "**Action Plan**", "**Action Plan:**"],
    ids=["level-1", "bold", "bold-with-colon"],
)
def test_two_plans_whose_action_plan_heading_is_written_another_way(heading: str) -> None:
    first, second = (p.replace("## Action Plan", heading) for p in (PLAN, OTHER))
    answer = first + "\n" + SORRY + second
    start = answer.index("# Add", 1)
    assert last_plan(answer) == (start, Change(1, CORRECTS.format(17, 18), "plan"))


def test_a_bold_heading_before_the_first_plan_does_not_end_the_search() -> None:
    answer = "**Plan**\n\n" + PLAN + "\n" + SORRY + OTHER
    start = answer.index("# Add", 12)
    assert last_plan(answer) == (start, Change(1, CORRECTS.format(19, 20), "plan"))


def test_a_plan_corrected_twice_is_the_last_one() -> None:
    third = PLAN.replace("echo hi", "echo hey")
    answer = PLAN + "\n" + SORRY + OTHER + "\nOops, that one is wrong too. Fixed:\n\n" + third
    assert last_plan(answer) == (
        answer.rindex("# Add"),
        Change(
            1,
            "dropped lines 1-34: the answer corrects that plan with the one at line 35 "
            "('Oops, that one is wrong too. Fixed:')",
            "plan",
        ),
    )
    # the third not finished: no plan is the last word
    unfinished = "# Add a greeting\n\n## Action Plan\n\nTo be decided.\n"
    assert last_plan(PLAN + "\n" + SORRY + OTHER + "\nActually, wait.\n\n" + unfinished) is None


def test_a_correction_word_that_starts_its_line_is_read() -> None:
    answer = PLAN + "\nActually, here is the plan with the right command:\n\n" + OTHER
    assert last_plan(answer) == (
        answer.index("# Add", 1),
        Change(
            1,
            "dropped lines 1-17: the answer corrects that plan with the one at line 18 "
            "('Actually, here is the plan with the right command:')",
            "plan",
        ),
    )


# --- an answer that starts with a blank line (models often begin so) -----------------------


def test_a_blank_first_line_counts_in_every_line_given() -> None:
    blank = "\n"
    answer = blank + "Here is the plan:\n" + json.dumps(PLAN) + "\n"
    assert from_json(answer) == (PLAN, Change(3, FROM_STRING, "json"))
    wrapped = blank + "I'll wrap it as asked.\n<plan>\n\n" + PLAN + "</plan>\n"
    assert xml_wrapper(wrapped)[1].line == 19  # type: ignore[index]
    # a corrected plan after a blank first line: the corrected-plan test above
    two = blank + PLAN + "\nOr, if you prefer:\n\n" + OTHER
    assert several_plans(two, two.index("# Add", 2)).line == 19
