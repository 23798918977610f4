"""The end of a last block left open: a remark after it is never read as its content.

A model that forgets the last closing fence and adds a remark, or writes its remark on
the closing fence's line, gives a text whose last lines read two ways.  The rule of
:mod:`plankit.teddy.format.parse.tail`: a sentence after a closing fence on its line is
a remark (repaired, listed); a remark after an open block is named with both readings.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from plankit.teddy import cli as teddy_cli
from plankit.teddy.format.answer import answer_to_plan
from plankit.teddy.format.parse import check_plan
from plankit.teddy.format.parse.tail import TAIL_CHARS
from plankit.teddy.format.preprocess import Change, Preprocessed

HEAD = """# Fix the flaky worker test

## Rationale
```text
### 1. Synthesis
The worker test races on the queue.
### 2. Justification
A lock around the queue removes the race.
### 3. Expected Outcome
The test passes ten times in a row.
### 4. State Dashboard
- Worker test: flaky
```

## Action Plan

"""
EXECUTE_OPEN = """### `EXECUTE`
- **Description:** Run the worker tests.
- **Expected Outcome:** They pass.
```shell
pytest -q tests/test_worker.py

Let me know if the tests fail and I'll take another look.
"""
CREATE_FENCE_REMARK = """### `CREATE`
- **File Path:** [docs/worker.md](/docs/worker.md)
```markdown
# Worker

The queue is guarded by a lock:

```python
with queue.lock:
    queue.put(job)
```
``` Let me know if you'd like a section on retries too.
"""


def test_a_remark_after_an_open_last_block_is_reported_with_both_readings() -> None:
    text = HEAD + EXECUTE_OPEN
    result = answer_to_plan(text)
    assert result.text == text  # nothing guessed
    assert not result.changes
    (problem,) = result.problems
    assert problem.line == 20 and problem.kind == "unsure"
    assert "line 23 is either its last line or a remark after the plan" in problem.message
    assert "close it after line 23 to keep it, or after line 21 and delete it" in problem.message
    _, diagnostics = check_plan(text)
    assert [d.code for d in diagnostics] == ["fence-unclosed"]
    assert "or a remark after the plan" in diagnostics[0].message


def test_teddy_preprocess_writes_nothing_when_the_answer_reads_two_ways(tmp_path: Path) -> None:
    plan = tmp_path / "plan.md"
    plan.write_text(HEAD + EXECUTE_OPEN, encoding="utf-8")
    result = CliRunner().invoke(teddy_cli.cli, ["preprocess", str(plan)])
    assert result.exit_code == 1
    assert f"{plan}:20: error: the block opened here is never closed" in result.stderr
    assert "nothing was written" in result.stderr
    assert plan.read_text(encoding="utf-8") == HEAD + EXECUTE_OPEN
    parsed = CliRunner().invoke(teddy_cli.cli, ["parse", str(plan)])
    assert parsed.exit_code == 1
    assert "or a remark after the plan" in parsed.stderr + parsed.stdout
    assert "teddy preprocess" not in parsed.stderr + parsed.stdout  # it would change nothing


def test_a_sentence_after_the_closing_fence_is_a_remark_and_the_repair_is_listed() -> None:
    text = HEAD + CREATE_FENCE_REMARK
    result = answer_to_plan(text)
    plan, diagnostics = check_plan(result.text)
    assert plan is not None, diagnostics
    (create,) = plan.actions
    assert create.content.endswith("    queue.put(job)\n```")  # type: ignore[attr-defined]
    assert "Let me know" not in create.content  # type: ignore[attr-defined]
    tail = [c for c in result.changes if c.kind == "tail"]
    assert [c.line for c in tail] == [28] and tail[0].touches_action
    assert "Let me know if you'd like a section" in tail[0].message
    assert not result.problems


def test_a_word_after_the_last_fence_could_open_a_block_and_is_reported() -> None:
    text = HEAD + CREATE_FENCE_REMARK.replace(
        "``` Let me know if you'd like a section on retries too.", "```python"
    )
    result = answer_to_plan(text)
    (problem,) = result.problems
    assert "line 28 ('```python') either closes it" in problem.message


def test_an_open_last_block_ending_in_code_is_still_closed() -> None:
    text = HEAD + EXECUTE_OPEN.replace(
        "Let me know if the tests fail and I'll take another look.", "pytest -q tests/ -x"
    )
    result = answer_to_plan(text)
    assert not result.problems
    plan, diagnostics = check_plan(result.text)
    assert plan is not None, diagnostics
    assert plan.actions[0].command.endswith("pytest -q tests/ -x")  # type: ignore[attr-defined]


def test_a_valid_plan_whose_content_holds_a_fence_with_text_is_untouched() -> None:
    text = HEAD + (
        "### `CREATE`\n- **File Path:** [notes.md](/notes.md)\n````markdown\n"
        "Fences may carry text:\n\n``` Let me know if this renders.\n````\n"
    )
    assert check_plan(text)[0] is not None
    result = answer_to_plan(text)
    assert result.text == text and not result.changes and not result.problems


def test_a_remark_right_under_the_last_command_is_reported_too() -> None:
    text = HEAD + EXECUTE_OPEN.replace("\n\nLet me know", "\nLet me know")
    (problem,) = answer_to_plan(text).problems
    assert "line 22 is either its last line or a remark after the plan" in problem.message


def test_the_lines_are_right_at_the_end_of_a_long_block() -> None:
    body = "".join(f"echo step {n}\n" for n in range(3_000))
    text = HEAD + EXECUTE_OPEN.replace("pytest -q tests/test_worker.py\n", body)
    last = text.rstrip("\n").count("\n") + 1
    (problem,) = answer_to_plan(text).problems
    assert f"line {last} is either its last line" in problem.message
    assert f"or after line {last - 2} and delete it" in problem.message
    _, diagnostics = check_plan(text)
    assert f"line {last} is either its last line" in diagnostics[0].message


def test_a_block_that_swallowed_later_actions_is_not_given_a_remark_reading() -> None:
    text = HEAD + EXECUTE_OPEN.replace(
        "\nLet me know", "\n### `CHAT_WITH_USER`\nDid it pass?\n\nLet me know"
    )
    _, diagnostics = check_plan(text)
    assert [d.code for d in diagnostics] == ["fence-unclosed"]
    assert "remark" not in diagnostics[0].message


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_the_remark_on_the_last_fence_is_cut_and_listed_with_the_answer_s_lines(
    newline: str,
) -> None:
    # pasted after a line of chat, with two spaces before the remark and a last
    # question under it: everything from the remark on goes, the rest keeps its bytes
    create = CREATE_FENCE_REMARK.replace("``` Let", "```  Let") + "\nAnything else?\n"
    result = answer_to_plan(("Here is the plan:\n\n" + HEAD + create).replace("\n", newline))
    meant = HEAD + CREATE_FENCE_REMARK.replace("```markdown", "````markdown").replace(
        "``` Let me know if you'd like a section on retries too.", "````"
    )
    assert result.text == meant.replace("\n", newline)
    assert result.changes == (
        Change(1, "dropped the text before the plan's title (line 1): 'Here is the plan:'", "preamble"),
        Change(21, "lengthened the opening fence from 3 to 4 (the block ends at line 30)", "fence"),
        Change(30, "the closing fence here has text after it: read as the end of the block opened at line 21 and a remark after the plan, dropped (lines 30-32): 'Let me know if you'd like a section on …'", "tail"),
        Change(30, "lengthened the closing fence from 3 to 4 (the block opens at line 21)", "fence"),
    )  # fmt: skip
    assert not result.problems


def test_a_remark_of_forty_characters_is_quoted_whole() -> None:
    remark = "Should the docs mention the retry limit?"
    assert len(remark) == 40
    create = CREATE_FENCE_REMARK.replace("```markdown\n", "```\n").replace(
        "Let me know if you'd like a section on retries too.", remark
    )
    result = answer_to_plan(HEAD + create)
    assert check_plan(result.text)[0] is not None
    (tail,) = [c for c in result.changes if c.kind == "tail"]
    assert tail.message.endswith(f"dropped (line 28): '{remark}'")
    assert "opened at line 19" in tail.message


# --- what reads as a remark at the end of an open block (the parser's message) ----------

REMARK = "Let me know if the tests fail and I'll take another look."
"""The remark of :data:`EXECUTE_OPEN`, on line 23 of ``HEAD + EXECUTE_OPEN``."""


def _unclosed(text: str, line: int = 20) -> str:
    """The message of the one problem of ``text``: its last block, opened at ``line``, is
    never closed."""
    plan, diagnostics = check_plan(text)
    assert plan is None
    assert [(d.line, d.code) for d in diagnostics] == [(line, "fence-unclosed")]
    return diagnostics[0].message


UNCLOSED = "the fenced block opened here with ``` is never closed; "
UNSURE = "the block opened here is never closed, and its end cannot be told: "
NO_READING = UNCLOSED + "close it with a ``` line after its last line"


def test_a_remark_is_named_with_its_line_and_both_places_to_close() -> None:
    assert _unclosed(HEAD + EXECUTE_OPEN) == UNCLOSED + (
        "line 23 is either its last line or a remark after the plan ('Let me know if the "
        "tests fail and I'll …'): close it after line 23 to keep it, or after line 21 and "
        "delete it"
    )


def test_a_remark_of_two_lines_is_named_whole() -> None:
    text = HEAD + EXECUTE_OPEN.replace(
        REMARK, "Tell me if the worker test still fails\nonce the lock is in."
    )
    assert _unclosed(text) == UNCLOSED + (
        "lines 23-24 are either its last lines or a remark after the plan ('Tell me if the "
        "worker test still fails'): close it after line 24 to keep them, or after line 21 "
        "and delete them"
    )


def test_a_remark_of_two_paragraphs_is_named_whole() -> None:
    text = HEAD + EXECUTE_OPEN.replace(REMARK, "Thanks for the review.\n\n" + REMARK)
    assert _unclosed(text) == UNCLOSED + (
        "lines 23-25 are either its last lines or a remark after the plan ('Thanks for the "
        "review.'): close it after line 25 to keep them, or after line 21 and delete them"
    )


def test_a_remark_under_the_last_of_several_commands_starts_at_its_own_line() -> None:
    text = HEAD + EXECUTE_OPEN.replace(
        "pytest -q tests/test_worker.py\n\n", "cd tests\npytest -q test_worker.py\n"
    )
    assert _unclosed(text) == UNCLOSED + (
        "line 23 is either its last line or a remark after the plan ('Let me know if the "
        "tests fail and I'll …'): close it after line 23 to keep it, or after line 22 and "
        "delete it"
    )


def test_a_remark_of_forty_characters_under_an_open_block_is_quoted_whole() -> None:
    remark = "Should the docs mention the retry limit?"
    assert len(remark) == 40
    assert f"('{remark}')" in _unclosed(HEAD + EXECUTE_OPEN.replace(REMARK, remark))


@pytest.mark.parametrize("emoji", ["🚀", "✅", "☀️", "🌀", "➿"])
def test_a_remark_may_open_with_an_emoji(emoji: str) -> None:
    # the first and last emoji of both blocks read as emoji, whatever follows them
    remark = f"{emoji} Run it & tell me how it goes!"
    assert _unclosed(HEAD + EXECUTE_OPEN.replace(REMARK, remark)) == UNCLOSED + (
        f"line 23 is either its last line or a remark after the plan ('{remark}'): close it "
        "after line 23 to keep it, or after line 21 and delete it"
    )


def test_a_line_opening_with_inline_code_is_content_not_a_remark() -> None:
    text = HEAD + EXECUTE_OPEN.replace(REMARK, "`make test` should pass now.")
    assert _unclosed(text) == NO_READING


def test_an_indented_last_line_is_code_not_a_remark() -> None:
    script = "python - <<'EOF'\nfor name in names:\n    print(\"Checked.\")"
    text = HEAD + EXECUTE_OPEN.replace("pytest -q tests/test_worker.py\n\n" + REMARK, script)
    assert _unclosed(text) == NO_READING


def test_a_block_holding_only_sentences_is_its_content() -> None:
    text = HEAD + EXECUTE_OPEN.replace(
        "pytest -q tests/test_worker.py\n\n" + REMARK,
        "The worker retries three times.\nEach retry waits a second.",
    )
    assert _unclosed(text) == NO_READING


def test_a_remark_in_a_crlf_plan_is_named_at_its_line() -> None:
    text = (HEAD + EXECUTE_OPEN.replace("\n\n" + REMARK, "\n\nThanks.\n\n" + REMARK)).replace(
        "\n", "\r\n"
    )
    reading = (
        "lines 23-25 are either its last lines or a remark after the plan ('Thanks.'): close "
        "it after line 25 to keep them, or after line 21 and delete them"
    )
    assert _unclosed(text) == UNCLOSED + reading
    (problem,) = answer_to_plan(text).problems  # the answer's text keeps its CRs
    assert problem.message == UNSURE + reading


def test_a_remark_under_the_last_command_of_a_crlf_plan_is_named_at_its_line() -> None:
    text = (HEAD + EXECUTE_OPEN.replace("\n\n" + REMARK, "\n" + REMARK)).replace("\n", "\r\n")
    reading = (
        "line 22 is either its last line or a remark after the plan ('Let me know if the "
        "tests fail and I'll …'): close it after line 22 to keep it, or after line 21 and "
        "delete it"
    )
    assert _unclosed(text) == UNCLOSED + reading
    (problem,) = answer_to_plan(text).problems
    assert problem.message == UNSURE + reading


def test_three_words_after_the_last_fence_are_a_remark() -> None:
    create = (
        "### `CREATE`\n- **File Path:** [docs/worker.md](/docs/worker.md)\n```markdown\n"
        "# Worker\n\nThe queue is guarded by a lock.\n``` Hope this helps\n"
    )
    assert _unclosed(HEAD + create, 19) == NO_READING
    result = answer_to_plan(HEAD + create)
    assert [c.kind for c in result.changes] == ["tail"] and not result.problems


def test_an_announcement_after_the_last_fence_could_open_a_block() -> None:
    create = (
        "### `CREATE`\n- **File Path:** [docs/worker.md](/docs/worker.md)\n```markdown\n\n"
        "# Worker\n\nThe queue is guarded by a lock.\n``` Here is what it prints:\n\n"
        "Let me know if it differs.\n"
    )
    reading = (
        "line 24 ('``` Here is what it prints:') either closes it, with text after the "
        "fence, or opens a block inside it: put the closing ``` alone on its line, or close "
        "the inner block"
    )
    assert _unclosed(HEAD + create, 19) == UNCLOSED + reading
    crlf = (HEAD + create).replace("\n", "\r\n")
    (problem,) = answer_to_plan(crlf).problems  # the answer's text keeps its CRs
    assert problem.message == UNSURE + reading


CREATE_WORKER = "### `CREATE`\n- **File Path:** [docs/worker.md](/docs/worker.md)\n"
WORKER_DOC = "# Worker\n\nThe queue is guarded by a lock:\n\n"


@pytest.mark.parametrize("fence", ["````", "~~~"])
def test_a_fence_of_another_kind_with_a_word_cannot_close_the_block(fence: str) -> None:
    # a block fenced longer, or with tildes: its last line ```python opens an inner block
    text = HEAD + CREATE_WORKER + f"{fence}markdown\n" + WORKER_DOC + "```python\n"
    assert _unclosed(text, 19) == (
        f"the fenced block opened here with {fence} is never closed; close it with a "
        f"{fence} line after its last line"
    )


def test_an_inner_block_left_open_at_the_end_is_not_a_closing_fence() -> None:
    code = "```python\nwith queue.lock:\n    queue.put(job)\n"
    assert _unclosed(HEAD + CREATE_WORKER + "```markdown\n" + WORKER_DOC + code, 19) == NO_READING


def test_a_sentence_on_the_last_fence_at_the_very_end_of_the_answer_is_a_remark() -> None:
    # no newline after it, as a model's answer often ends
    text = HEAD + CREATE_WORKER + "```markdown\n" + WORKER_DOC + "It holds.\n``` Done."
    assert _unclosed(text, 19) == NO_READING
    result = answer_to_plan(text)
    assert result.changes == (
        Change(25, "the closing fence here has text after it: read as the end of the block opened at line 19 and a remark after the plan, dropped (line 25): 'Done.'", "tail"),
    )  # fmt: skip
    assert not result.problems


def test_the_lines_are_right_at_the_end_of_a_long_script_with_blank_lines() -> None:
    # a blank line after the opening fence and between the steps: the last 4 KB read
    # start on a blank line, which still counts
    body = "\n" + "".join(f"echo step {n}\n\n" for n in range(600))
    text = HEAD + EXECUTE_OPEN.replace("pytest -q tests/test_worker.py\n", body)
    last = text.rstrip("\n").count("\n") + 1
    assert _unclosed(text) == UNCLOSED + (
        f"line {last} is either its last line or a remark after the plan ('Let me know if "
        f"the tests fail and I'll …'): close it after line {last} to keep it, or after line "
        f"{last - 3} and delete it"
    )


def test_only_the_last_4_kb_of_a_long_open_block_are_read_for_a_remark() -> None:
    # a runbook of sentences left open: its last paragraphs read as a remark, from the
    # first whole paragraph of its last 4 KB (the block is not read back to its start)
    steps = "".join(f"Step {n} of the runbook is done by hand.\n\n" for n in range(150))
    create = (
        "### `CREATE`\n- **File Path:** [docs/runbook.md](/docs/runbook.md)\n```markdown\n" + steps
    )
    assert _unclosed(HEAD + create, 19) == UNCLOSED + (
        "lines 124-318 are either its last lines or a remark after the plan ('Step 52 of the "
        "runbook is done by hand.'): close it after line 318 to keep them, or after line "
        "122 and delete them"
    )


def test_a_blank_first_line_in_the_block_is_counted() -> None:
    text = HEAD + EXECUTE_OPEN.replace("```shell\n", "```shell\n\n")
    assert _unclosed(text) == UNCLOSED + (
        "line 24 is either its last line or a remark after the plan ('Let me know if the "
        "tests fail and I'll …'): close it after line 24 to keep it, or after line 22 and "
        "delete it"
    )


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_the_remark_on_the_last_fence_of_a_block_opened_with_a_spaced_info_string(
    newline: str,
) -> None:
    # ``` markdown: the fence's length is its run of backticks, not its last word
    text = HEAD + CREATE_FENCE_REMARK.replace("```markdown", "``` markdown")
    meant = HEAD + CREATE_FENCE_REMARK.replace("``` markdown", "```` markdown")
    meant = meant.replace("```markdown", "```` markdown").replace(
        "``` Let me know if you'd like a section on retries too.", "````"
    )
    assert answer_to_plan(text.replace("\n", newline)) == Preprocessed(
        meant.replace("\n", newline),
        (
            Change(19, "lengthened the opening fence from 3 to 4 (the block ends at line 28)", "fence"),
            Change(28, "the closing fence here has text after it: read as the end of the block opened at line 19 and a remark after the plan, dropped (line 28): 'Let me know if you'd like a section on …'", "tail"),
            Change(28, "lengthened the closing fence from 3 to 4 (the block opens at line 19)", "fence"),
        ),
    )  # fmt: skip


def test_a_remark_after_an_open_last_block_is_reported_after_a_heading_repair() -> None:
    text = HEAD.replace("## Action Plan", "# Action Plan") + EXECUTE_OPEN
    result = answer_to_plan(text)
    assert result.text == text.replace("# Action Plan", "## Action Plan")
    assert result.changes == (Change(15, "rewrote the heading '# Action Plan'", "heading"),)
    (problem,) = result.problems
    assert problem.line == 20 and problem.kind == "unsure"
    assert "line 23 is either its last line or a remark after the plan" in problem.message


# --- cases the mutation run showed no test holding (tools/mutate.py) ---------------------


def test_an_answer_cut_off_right_after_a_one_letter_language_fence_is_reported() -> None:
    # the answer ran out of tokens as the document opened its C example: no newline after
    # ```c, which either closes the block (with a word after it) or opens the example
    text = HEAD + CREATE_WORKER + "```markdown\n" + WORKER_DOC + "A C client:\n\n```c"
    assert _unclosed(text, 19) == UNCLOSED + (
        "line 26 ('```c') either closes it, with text after the fence, or opens a block "
        "inside it: put the closing ``` alone on its line, or close the inner block"
    )


def test_a_line_opening_with_inline_code_after_the_last_fence_is_the_inner_block_s() -> None:
    # ```python then a line that would be a sentence but for its inline code: the
    # fence opens a block holding that line, as under a command (not a remark)
    text = (
        HEAD
        + CREATE_WORKER
        + "```markdown\n"
        + WORKER_DOC
        + "```python\n`queue.put` is guarded now."
    )
    assert _unclosed(text, 19) == NO_READING


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_output_between_the_last_fence_and_a_remark_is_read_alike_in_a_crlf_answer(
    newline: str,
) -> None:
    # the fence announces what the program prints: the output is no prose, so the fence
    # is read as opening its block and only the last paragraph as a remark
    create = (
        CREATE_WORKER + "```markdown\n" + WORKER_DOC + "``` It prints:\n\nqueue ready\n\n"
        "Let me know if it differs.\n"
    )
    text = (HEAD + create).replace("\n", newline)
    reading = (
        "line 28 is either its last line or a remark after the plan ('Let me know if it "
        "differs.'): close it after line 28 to keep it, or after line 26 and delete it"
    )
    assert _unclosed(text, 19) == UNCLOSED + reading
    (problem,) = answer_to_plan(text).problems  # the answer's text keeps its CRs
    assert problem.message == UNSURE + reading


def test_a_block_of_exactly_4_kb_is_read_from_its_first_line() -> None:
    # a runbook of sentences left open, 4 KB to the character: all of it is read, so its
    # paragraphs are no remark after content (they are all it holds); only its last
    # line, under the one before, is named (read from its second line, the paragraphs
    # after the first would all have been named as a remark)
    steps = "".join(f"Step {n} of the runbook is done by hand.\n\n" for n in range(99))
    last = "Each step above is checked off once it is done."
    assert len(steps + last) == TAIL_CHARS  # the content: up to the last line's newline
    create = CREATE_WORKER.replace("worker", "runbook") + "```markdown\n" + steps + last + "\n"
    assert _unclosed(HEAD + create, 19) == UNCLOSED + (
        "line 218 is either its last line or a remark after the plan ('Each step above is "
        "checked off once it …'): close it after line 218 to keep it, or after line 216 and "
        "delete it"
    )


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_the_remark_on_the_last_fence_of_a_block_opened_one_space_in(newline: str) -> None:
    # ` ```markdown`: CommonMark takes that one space off each line of the content, so
    # the block's text is not found as written; the remark must still not reach the file
    text = HEAD + CREATE_FENCE_REMARK.replace("```markdown", " ```markdown")
    result = answer_to_plan(text.replace("\n", newline))
    assert [change.kind for change in result.changes] == ["fence", "tail", "fence"]
    assert "Let me know" not in result.text
    plan, diagnostics = check_plan(result.text)
    assert plan is not None, diagnostics
    assert plan.actions[-1].content.endswith("queue.put(job)\n```")
