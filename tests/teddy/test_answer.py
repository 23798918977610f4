"""From a model's answer to a plan: unwrapping, fences, remarks, and the swallowed action.

The corpus of :mod:`tests.teddy.broken_answers` (valid plans broken the ways chat models
break them) must come out of :func:`answer_to_plan` parsing to the plan it came from in
at least 99% of cases, and no valid plan may change.  The rate is printed with ``-s``
(``ANSWER_CORPUS=N`` builds a larger corpus).
"""

from __future__ import annotations

import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plankit.teddy.format.answer import answer_to_plan
from plankit.teddy.format.model import Plan
from plankit.teddy.format.parse import check_plan
from plankit.teddy.format.preprocess import Change, Preprocessed
from plankit.teddy.format.render import render_plan
from tests.profiles import examples
from tests.teddy.broken_answers import corpus, valid_plans
from tests.teddy.strategies import plans, text_line

SETTINGS = settings(
    max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

HEAD = """# Add the version module
- **Status:** Green 🟢

## Rationale
```text
### 1. Synthesis
The version is hard-coded.

### 2. Justification
One source of truth.

### 3. Expected Outcome
The module exists.

### 4. State Dashboard
- **Version:** In Progress
```

## Action Plan

"""
CREATE = """### `CREATE`
- **File Path:** [src/app/version.py](/src/app/version.py)
- **Description:** The version, in one place.
```python
VERSION = "1.2.0"
```
"""
EXECUTE = """### `EXECUTE`
- **Description:** Run the tests.
- **Expected Outcome:** They pass.
```shell
pytest -q
```
"""
CHAT = """### `CHAT_WITH_USER`
Is 1.2.0 the right version?
"""
PLAN = HEAD + CREATE + "\n" + EXECUTE


def _settled(text: str) -> bool:
    """Whether ``answer_to_plan`` leaves ``text`` as it is (what it reports as reading
    two ways, it reports again)."""
    again = answer_to_plan(text)
    return again.text == text and not again.changes


def actions(text: str) -> list[str]:
    plan, diagnostics = check_plan(text)
    assert plan is not None, diagnostics
    return [str(a.type) for a in plan.actions]


# --- the corpus --------------------------------------------------------------------------

CORPUS_SIZE = int(os.environ.get("ANSWER_CORPUS", "0")) or 400


def test_broken_answers_come_out_as_the_plans_they_were_meant_to_be() -> None:
    cases = corpus(seed=12, count=CORPUS_SIZE)
    kinds = Counter(kind for case in cases for kind in case.kinds)
    assert all(kinds[k] >= CORPUS_SIZE // 10 for k in ("short-fences", "unclosed", "remarks"))
    assert all(kinds[k] >= CORPUS_SIZE // 4 for k in ("preamble", "wrapper"))
    assert kinds["crlf"] and kinds["bom"]
    failed: list[str] = []
    for case in cases:
        intended, diagnostics = check_plan(case.valid)
        assert intended is not None, (case.name, diagnostics)  # the generator's own plan
        assert check_plan(case.broken)[0] != intended, case.name  # broken, really
        result = answer_to_plan(case.broken)
        if check_plan(result.text)[0] != intended:
            failed.append(case.name)
        assert answer_to_plan(result.text) == Preprocessed(result.text, ()), case.name
    rate = 1 - len(failed) / len(cases)
    print(f"\nanswer corpus: {len(cases) - len(failed)}/{len(cases)} = {rate:.2%}; {failed}")
    assert rate >= 0.99, failed


def test_valid_plans_in_every_style_are_never_changed() -> None:
    for text in valid_plans(seed=12, count=150):
        assert check_plan(text)[0] is not None
        assert answer_to_plan(text) == Preprocessed(text, ())
        assert answer_to_plan("\ufeff" + text) == Preprocessed("\ufeff" + text, ())


# --- properties --------------------------------------------------------------------------


@SETTINGS
@given(plans, st.booleans(), st.booleans())
def test_rendered_plans_come_back_byte_for_byte(plan: Plan, crlf: bool, bom: bool) -> None:
    text = render_plan(plan)
    if crlf:
        text = text.replace("\n", "\r\n")
    if bom:
        text = "\ufeff" + text
    assert answer_to_plan(text) == Preprocessed(text, ())


@SETTINGS
@given(st.text())
def test_never_raises_and_is_idempotent_on_any_text(text: str) -> None:
    once = answer_to_plan(text)
    assert once.changed == (once.text != text)
    assert _settled(once.text)


answer_line = st.one_of(
    st.sampled_from(
        [
            "Here is the plan:",
            "```",
            "```markdown",
            "~~~~md",
            "````",
            "~~~~",
            "# A plan",
            "## Action Plan",
            "### `CREATE`",
            "### `EXECUTE`",
            "- **File Path:** [a.md](/a.md)",
            "`FIND:`",
            "**REPLACE:**",
            "```python",
            "```shell",
            "Hope this helps!",
            "",
        ]
    ),
    text_line,
)


@SETTINGS
@given(
    st.lists(answer_line, max_size=30),
    st.sampled_from(["", "Here it is:\n\n", "```markdown\n", "Sure:\n~~~\n"]),
    st.sampled_from(["\n", "\r\n"]),
)
def test_idempotent_on_answer_like_text(lines: list[str], lead: str, newline: str) -> None:
    text = (lead + PLAN + "\n".join(lines)).replace("\n", newline)
    once = answer_to_plan(text)
    assert _settled(once.text)
    if check_plan(text)[0] is not None:
        assert once.text == text


# --- unwrapping --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "Sure! Here is the plan you asked for.\n\n" + PLAN,
        "```markdown\n" + PLAN + "```\n",
        "Here it is:\n\n```md\n" + PLAN + "```\n\nTell me if you want changes.\n",
        "~~~\n" + PLAN + "~~~",
        "~~~~~markdown\n" + PLAN + "~~~~~\n",
        "`````\n" + PLAN + "`````\n\nDone.\n",
        "First:\n\n```bash\n# install\npip install x\n```\n\n" + PLAN,
        "```markdown\n" + PLAN,  # cut off before the closing fence
        "```text\nnot a plan\n```\n" + PLAN,
        "```markdown\n\n" + PLAN + "\n\n```\n",
    ],
    ids=[
        "text-before",
        "fenced",
        "fenced-with-text-around",
        "tilde-fence-no-final-newline",
        "long-tilde-fence",
        "five-backticks",
        "shell-comment-before",
        "cut-off",
        "a-block-before",
        "blank-lines-inside",
    ],
)
def test_a_chat_copy_becomes_the_plan(answer: str) -> None:
    result = answer_to_plan(answer)
    assert result.text == PLAN
    kinds = {c.kind for c in result.changes}
    assert kinds & {"preamble", "wrapper"}
    assert answer_to_plan(PLAN) == Preprocessed(PLAN, ())


def test_the_wrapped_plan_may_hold_fences_of_the_wrapper_s_length() -> None:
    wrapped = "Here is the plan:\n\n```markdown\n" + PLAN + "```\n\nRun it with:\n\n"
    wrapped += "```bash\nteddy execute\n```\n"
    assert answer_to_plan(wrapped).text == PLAN
    cut_off = "```markdown\n" + HEAD + CREATE + "\n" + CHAT.rstrip("\n")
    assert answer_to_plan(cut_off).text == HEAD + CREATE + "\n" + CHAT.rstrip("\n")


def test_the_changes_say_what_was_dropped_with_lines_in_the_answer() -> None:
    answer = "Here is the plan:\n\n```markdown\n" + PLAN + "```\n\nLet me know if…\n"
    result = answer_to_plan(answer)
    last = 3 + PLAN.count("\n") + 1
    assert result.changes == (
        Change(1, "dropped the text before the plan's title (line 1): 'Here is the plan:'", "preamble"),
        Change(3, f"dropped the ```markdown fence wrapped around the plan (closed at line {last})", "wrapper"),
        Change(last + 2, f"dropped the text after the plan's fence (line {last + 2}): 'Let me know if…'", "remarks"),
    )  # fmt: skip


def test_crlf_and_a_byte_order_mark_are_kept() -> None:
    crlf = PLAN.replace("\n", "\r\n")
    answer = "\ufeffHere you go:\r\n\r\n```markdown\r\n" + crlf + "```\r\n"
    assert answer_to_plan(answer).text == "\ufeff" + crlf


def test_a_preamble_holding_plan_headings_is_not_dropped() -> None:
    # no `# Title` at the top, but sections: the title is further down, and dropping
    # what comes before it would drop part of the plan
    text = "## Rationale\nwhy\n\n# Title\n\n## Action Plan\n" + CHAT
    assert answer_to_plan(text) == Preprocessed(text, ())
    assert answer_to_plan("No plan at all, sorry.\n\n\n").changes == ()


# --- remarks -----------------------------------------------------------------------------


@pytest.mark.parametrize("remark", ["Hope this helps!", "---\n\n*Let me know.*", "Note: run it."])
@pytest.mark.parametrize("last", [CREATE, EXECUTE, "### `READ`\n- **Resource:** [a](/a)\n"])
def test_remarks_after_the_last_action_s_block_are_dropped(remark: str, last: str) -> None:
    plan = HEAD + last
    result = answer_to_plan(plan + "\n" + remark + "\n")
    assert result.text == plan
    assert [c.kind for c in result.changes] == ["remarks"]
    crlf = (plan + "\n" + remark + "\n").replace("\n", "\r\n")
    assert answer_to_plan(crlf).text == plan.replace("\n", "\r\n")


def test_text_after_a_chat_is_its_message_and_stays() -> None:
    text = HEAD + CHAT + "\nHope this helps!\n"
    assert answer_to_plan(text) == Preprocessed(text, ())


def test_remarks_are_kept_when_the_plan_would_not_parse_anyway() -> None:
    text = HEAD + "### `DEPLOY`\n- **Description:** no such action\n" + CREATE + "\nThanks!\n"
    result = answer_to_plan(text)
    assert result == Preprocessed(text, ())
    assert answer_to_plan(result.text) == result


# --- a block that swallowed the actions after it ----------------------------------------

SWALLOWED = (
    HEAD
    + CREATE.replace('VERSION = "1.2.0"\n```\n', 'VERSION = "1.2.0"\n\n')
    + EXECUTE
    + "\n"
    + CHAT
)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_an_unclosed_block_before_an_action_with_its_own_block_is_reported(
    newline: str,
) -> None:
    text = SWALLOWED.replace("\n", newline)
    plan, diagnostics = check_plan(text)
    assert plan is None  # not one action short, silently
    (diag,) = diagnostics
    assert (diag.line, diag.code) == (27, "action-in-fence")
    assert diag.message == (
        "'### `EXECUTE`' is inside the ```python block opened at line 24, whose closing fence "
        "(line 32) closes the ```shell block of line 30 instead: the block of line 24 was "
        "probably never closed; close it before line 27"
    )


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_an_unclosed_block_before_an_action_with_its_own_block_is_repaired(
    newline: str,
) -> None:
    text = SWALLOWED.replace("\n", newline)
    result = answer_to_plan(text)
    assert actions(result.text) == ["CREATE", "EXECUTE", "CHAT_WITH_USER"]
    assert result.text == (HEAD + CREATE + "\n" + EXECUTE + "\n" + CHAT).replace("\n", newline)
    assert result.changes == (
        Change(24, "the block opened here never closed: inserted the closing fence ``` after line 25"),
    )  # fmt: skip


def test_an_unclosed_research_query_before_the_next_one_is_repaired() -> None:
    research = "### `RESEARCH`\n- **Description:** Look.\n```text\nfirst query\n\n"
    research += "```text\nsecond query\n```\n"
    text = HEAD + research + "\n" + CHAT
    assert check_plan(text)[1][0].code == "fence-ambiguous"
    plan, _ = check_plan(answer_to_plan(text).text)
    assert plan is not None
    assert plan.actions[0].queries == ("first query", "second query")  # type: ignore[attr-defined]


def test_a_block_that_follows_the_fencing_rule_is_never_suspected() -> None:
    # a Markdown file documenting an action, fenced longer than anything inside it
    doc = "# Guide\n\n### `EXECUTE`\n- **Description:** x\n```shell\nls\n"
    create = "### `CREATE`\n- **File Path:** [g.md](/g.md)\n````markdown\n" + doc + "````\n"
    text = HEAD + create
    assert actions(text) == ["CREATE"]
    assert answer_to_plan(text) == Preprocessed(text, ())


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_repair_after_a_preamble_names_the_lines_of_the_answer(newline: str) -> None:
    # the inserted fence goes after line 27 of what the user pasted, not of the plan
    answer = ("Here is the plan:\n\n" + SWALLOWED).replace("\n", newline)
    result = answer_to_plan(answer)
    assert result.text == (HEAD + CREATE + "\n" + EXECUTE + "\n" + CHAT).replace("\n", newline)
    assert result.changes == (
        Change(1, "dropped the text before the plan's title (line 1): 'Here is the plan:'", "preamble"),
        Change(26, "the block opened here never closed: inserted the closing fence ``` after line 27"),
    )  # fmt: skip
    wrapped = answer_to_plan(("Sure.\n```markdown\n" + SWALLOWED + "```\n").replace("\n", newline))
    assert wrapped.text == result.text
    assert wrapped.changes[-1] == Change(
        26, "the block opened here never closed: inserted the closing fence ``` after line 27"
    )


def test_a_dropped_comment_after_a_preamble_names_the_lines_of_the_answer() -> None:
    comment = "## Action Plan\n\n<!-- first the module,\nthen the tests -->\n\n### `CREATE`"
    plan = PLAN.replace("## Action Plan\n\n### `CREATE`", comment)
    result = answer_to_plan("Here you go:\n\n" + plan)
    assert result.text == plan.replace("<!-- first the module,\nthen the tests -->", "\n")
    assert result.changes[1:] == (
        Change(23, "dropped the HTML comment (lines 23-24) between actions", "separator"),
    )
