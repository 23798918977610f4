"""The structural repairs leave alone what only looks like structure.

Each answer below is broken in one way the structural step repairs (``# Action Plan`` at
level 1), so the step runs on it; what it must not touch is in a CREATE's Markdown
content, in a message, or in a JSON example.  The repairs themselves are in the
hand-written corpus (tests/data/answers, test_answer_corpus.py).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plankit.teddy.format.answer import answer_to_plan
from plankit.teddy.format.changes import Change
from plankit.teddy.format.parse import check_plan
from plankit.teddy.format.shapes import action_named, reshape, section_named
from tests.profiles import examples

HEAD = """# Tidy the docs

## Rationale
```text
### 1. Synthesis
The docs drifted.
### 2. Justification
One pass fixes them.
### 3. Expected Outcome
Docs match the code.
### 4. State Dashboard
- Docs: stale
```

# Action Plan

"""


def _plan(actions: str) -> tuple[str, str]:
    """The answer (Action Plan at level 1) and the plan it means."""
    answer = HEAD + actions
    return answer, answer.replace("\n# Action Plan\n", "\n## Action Plan\n", 1)


def _repaired(answer: str) -> str:
    result = answer_to_plan(answer)
    assert not result.problems
    plan, diagnostics = check_plan(result.text)
    assert plan is not None, diagnostics
    return result.text


def test_headings_rules_and_bold_lines_inside_content_are_content() -> None:
    content = (
        "````markdown\n# Guide\n\n## Action plan:\n\n#### `READ`\n\n---\n\n**CREATE**\n\n"
        "<!-- a comment -->\n\n**File Path:** not metadata\n````\n"
    )
    answer, meant = _plan(
        "### `CREATE`\n- **File Path:** [docs/guide.md](/docs/guide.md)\n" + content
    )
    assert _repaired(answer) == meant


def test_a_message_keeps_its_headings_bold_lines_and_comments() -> None:
    message = (
        "### `CHAT_WITH_USER`\nBefore I go on:\n\n#### Read the logs first\n\n**Read**\n\n"
        "<!-- the logs are in /var/log -->\n\n**Description:** of what you saw, please.\n"
    )
    answer, meant = _plan(message)
    assert _repaired(answer) == meant


def test_a_rule_that_underlines_a_paragraph_is_a_heading_and_stays() -> None:
    answer, _ = _plan(
        "### `CHAT_WITH_USER`\nIs this right?\n---\n\n### `READ`\n- Resource: [a](/a)\n"
    )
    text, changes = reshape(answer)
    assert [c.kind for c in changes] == ["heading"]  # only # Action Plan
    assert "Is this right?\n---\n" in text


def test_names_are_read_through_numbers_quotes_and_bold_but_not_through_words() -> None:
    assert action_named("1. `READ`") == "READ"
    assert action_named("Action 2: `EDIT`") == "EDIT"
    assert action_named("Step 3 - “EXECUTE”") == "EXECUTE"
    assert action_named("**CREATE**:") == "CREATE"
    assert action_named("Read the config") is None
    assert action_named("Create a branch") is None
    assert section_named("Action plan:") == "Action Plan"
    assert section_named("**Rationale**") == "Rationale"
    assert section_named("Action plan for a first sync") is None


def test_a_json_example_in_a_plan_is_not_read_as_the_plan() -> None:
    answer, meant = _plan(
        "### `CHAT_WITH_USER`\nThe API answers like this:\n\n```json\n"
        '{"plan": "# Not this\\n\\n## Action Plan\\n"}\n```\n\nIs that what you expected?\n'
    )
    assert _repaired(answer) == meant


shape_line = st.sampled_from(
    [
        "# A plan",
        "# Action Plan",
        "## Rationale:",
        "## `READ`",
        "#### 2. ‘EDIT’",
        "**CREATE**",
        "**File Path:** [a.md](/a.md)",
        "- File Path: [a.md](/a.md)",
        "---",
        "<!-- note -->",
        "<!--",
        "-->",
        "```markdown",
        "```",
        "~~~",
        "### `CHAT_WITH_USER`",
        "Some text.",
        "",
    ]
)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(shape_line, max_size=40), st.sampled_from(["\n", "\r\n"]))
def test_reshape_keeps_every_line_and_a_second_pass_changes_nothing(
    lines: list[str], newline: str
) -> None:
    text = newline.join(lines)
    once, changes = reshape(text)
    assert once.count("\n") == text.count("\n")
    assert all(1 <= c.line <= text.count("\n") + 1 for c in changes)
    assert reshape(once) == (once, ())


def test_numbered_section_headings_name_their_sections() -> None:
    assert section_named("2. Action Plan") == "Action Plan"
    assert section_named("1) **Rationale**:") == "Rationale"
    assert section_named("2 plans") is None


def test_a_heading_with_a_path_is_an_action_only_when_its_metadata_gives_that_path() -> None:
    head = "### CREATE: docs/guide.md\n- **File Path:** [{0}](/{0})\n```markdown\n# Guide\n```\n"
    answer, _ = _plan(head.format("docs/guide.md"))
    assert "### `CREATE`\n" in _repaired(answer)
    other, _ = _plan(head.format("docs/other.md"))
    text, changes = reshape(other)
    assert "### CREATE: docs/guide.md\n" in text  # two paths: the parser says which is wrong
    assert [c.kind for c in changes] == ["heading"]  # only # Action Plan
    # nor does the path of the next action's metadata, even right under the block
    later = other + "### `READ`\n- **Resource:** [docs/guide.md](/docs/guide.md)\n"
    assert "### CREATE: docs/guide.md\n" in reshape(later)[0]


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_comments_bold_actions_and_bare_metadata_are_repaired_line_for_line(
    newline: str,
) -> None:
    # the way a local model writes a plan: a comment under the title, a comment right
    # under a closing fence, a bold action name, its metadata without bullets, and a
    # numbered heading for the question at the end, whose own comment is its message's
    description = "**Description:** Read the guide we made."
    assert len(description) == 40
    resource = "**Resource:** [docs/guide.md](/docs/guide.md)"
    actions = (
        "### `CREATE`\n- **File Path:** [docs/guide.md](/docs/guide.md)\n```markdown\n"
        "# Guide\n```\n<!-- next, read it back\nto check it -->\n\n**READ**\n"
        f"{description}\n{resource}\n\n### Step 3: CHAT_WITH_USER\n"
        "Does the guide say what you meant?\n\n<!-- wait for the answer -->\n"
    )
    answer, _ = _plan(actions)
    answer = answer.replace("# Tidy the docs\n", "# Tidy the docs\n\n<!-- by the planner -->\n")
    meant = answer.replace("<!-- by the planner -->", "").replace(
        "\n# Action Plan", "\n## Action Plan"
    )
    meant = meant.replace("<!-- next, read it back\nto check it -->", "\n").replace(
        "**READ**", "### `READ`"
    )
    meant = meant.replace(description, "- " + description).replace(resource, "- " + resource)
    meant = meant.replace("### Step 3: CHAT_WITH_USER", "### `CHAT_WITH_USER`")
    text, changes = reshape(answer.replace("\n", newline))
    assert text == meant.replace("\n", newline)
    assert check_plan(text)[0] is not None
    assert changes == (
        Change(3, "dropped the HTML comment (line 3) between actions", "separator"),
        Change(17, "rewrote the heading '# Action Plan'", "heading"),
        Change(24, "dropped the HTML comment (lines 24-25) between actions", "separator"),
        Change(27, "rewrote '**READ**' as an action heading", "heading"),
        Change(28, f"made '{description}' a metadata list item", "metadata"),
        Change(29, "made '**Resource:** [docs/guide.md](/docs/gui…' a metadata list item", "metadata"),
        Change(31, "rewrote '### Step 3: CHAT_WITH_USER' as an action heading", "heading"),
    )  # fmt: skip


def test_a_bold_chat_with_user_is_an_action_and_its_question_stays() -> None:
    # the underscores of the name are no emphasis inside ** **; read as a remark, the
    # question to the user would have been dropped
    answer, meant = _plan(
        "**READ**\n- **Resource:** [docs/guide.md](/docs/guide.md)\n\n"
        "**CHAT_WITH_USER**\nDoes the guide say what you meant?\n"
    )
    meant = meant.replace("**READ**", "### `READ`")
    assert _repaired(answer) == meant.replace("**CHAT_WITH_USER**", "### `CHAT_WITH_USER`")
    assert _repaired(answer.replace("**CHAT_WITH_USER**", "__CHAT_WITH_USER__")) == meant.replace(
        "**CHAT_WITH_USER**", "### `CHAT_WITH_USER`"
    )


# --- each rule at its edges (tools/mutate.py showed no test holding them) ----------------


@pytest.fixture(autouse=True)
def _fresh_name_caches() -> None:
    """The name lookups are cached for the process: each test starts with empty caches,
    so what it checks is what the code computes now, not an answer an earlier test left."""
    section_named.cache_clear()
    action_named.cache_clear()


def _rewritten(answer: str, *edits: tuple[str, str]) -> str:
    for old, new in edits:
        assert old in answer
        answer = answer.replace(old, new, 1)
    return answer


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_remark_on_a_fence_and_a_rule_go_only_right_before_the_next_part(
    newline: str,
) -> None:
    answer, meant = _plan(
        "### `CREATE`\n- **File Path:** [docs/guide.md](/docs/guide.md)\n```markdown\n# Guide\n"
        "``` Next, I'll read it back.\n### `READ`\n- **Resource:** [docs/guide.md](/docs/guide.md)\n"
        "\n  <!-- then ask -->\n\n---\n### `CHAT_WITH_USER`\nDoes the guide read well?\n\n---\n"
    )
    meant = _rewritten(
        meant,
        ("``` Next, I'll read it back.", "```"),
        ("  <!-- then ask -->", ""),
        ("---\n### `CHAT", "\n### `CHAT"),
    )  # the last rule opens no part: it stays
    assert reshape(answer.replace("\n", newline)) == (
        meant.replace("\n", newline),
        (
            Change(15, "rewrote the heading '# Action Plan'", "heading"),
            Change(21, "the closing fence here has text after it: read as the end of its block and a remark before the next part, dropped: 'Next, I'll read it back.'", "tail"),
            Change(25, "dropped the HTML comment (line 25) between actions", "separator"),
            Change(27, "dropped the rule '---' before the next part", "separator"),
        ),
    )  # fmt: skip


def test_a_comment_left_open_at_the_end_is_dropped_to_the_end() -> None:
    answer, meant = _plan(
        "### `READ`\n- **Resource:** [docs/guide.md](/docs/guide.md)\n\n<!-- more steps\nlater"
    )
    text, changes = reshape(answer)
    assert text == meant.replace("<!-- more steps\nlater", "\n")
    assert changes[-1] == Change(
        20, "dropped the HTML comment (lines 20-21) between actions", "separator"
    )


def test_a_fence_with_a_word_inside_a_block_of_the_same_fence_is_content() -> None:
    answer, meant = _plan(
        "### `CREATE`\n- **File Path:** [docs/guide.md](/docs/guide.md)\n```markdown\n# Guide\n"
        "```text\n## Action plan:\n```\n\n### `CHAT_WITH_USER`\nDone?\n"
    )
    assert reshape(answer)[0] == meant


def test_in_a_message_only_a_heading_of_level_3_or_less_in_capitals_starts_an_action() -> None:
    answer, meant = _plan(
        "### `CHAT_WITH_USER`\nShall I go on?\n\n#### READ\nthe notes first.\n\n### Rationale\n"
        "is above.\n\n### 2. READ\n- **Resource:** [docs/guide.md](/docs/guide.md)\n"
    )
    assert reshape(answer)[0] == meant.replace("### 2. READ", "### `READ`")


def test_a_line_of_inline_code_is_no_fence_and_a_bold_action_after_it_starts_one() -> None:
    answer, meant = _plan(
        "### `CHAT_WITH_USER`\nBefore you answer:\n\n```make docs``` builds the site.\n\n"
        "**READ**\n- **Resource:** [docs/guide.md](/docs/guide.md)\n"
    )
    assert reshape(answer)[0] == meant.replace("**READ**", "### `READ`")


def test_a_heading_with_a_path_needs_that_path_in_its_metadata_written_any_way() -> None:
    answer, meant = _plan(
        "### CREATE: `docs/guide.md`\n- **File Path:** [docs/other.md](/docs/other.md)\n"
        "```markdown\n# Guide\n```\n\n### EDIT: docs/guide.md\n"
        "- **File Path:** [docs/guide.md](docs/guide.md)\n\n### READ: docs/guide.md\n"
        "- **Resource:** `docs/guide.md`\n"
    )
    assert reshape(answer)[0] == _rewritten(
        meant, ("### EDIT: docs/guide.md", "### `EDIT`"), ("### READ: docs/guide.md", "### `READ`")
    )


@pytest.mark.parametrize("bullet", ["-", "*", "+"])
def test_bare_metadata_lines_go_on_after_a_bulleted_one(bullet: str) -> None:
    answer, meant = _plan(
        f"### `READ`\n{bullet} **Resource:** [docs/guide.md](/docs/guide.md)\n"
        "**Description:** Read the guide back.\n"
    )
    description = "**Description:** Read the guide back."
    assert reshape(answer)[0] == meant.replace(description, "- " + description)


def test_an_indented_metadata_line_becomes_an_item_and_a_message_keeps_its_bold_key() -> None:
    answer, meant = _plan(
        "### `EXECUTE`\n **Description:** Run the tests.\n```shell\npytest -q\n```\n\n"
        "### `CHAT_WITH_USER`\n**Description:** of what you saw, please.\n"
    )
    text, changes = reshape(answer)
    assert text == meant.replace(" **Description:** Run", "- **Description:** Run")
    assert changes[-1] == Change(
        18, "made '**Description:** Run the tests.' a metadata list item", "metadata"
    )


def test_a_paragraph_or_a_key_no_action_takes_ends_the_metadata() -> None:
    answer, meant = _plan(
        "### `EXECUTE`\n- **Description:** Run the tests.\nThis runs the whole suite.\n"
        "**Expected Outcome:** All pass.\n```shell\npytest -q\n```\n\n"
        "### `READ`\n**Resource:** [docs/guide.md](/docs/guide.md)\n**Note:** keep it short\n"
        "**Description:** Read it back.\n"
    )
    assert reshape(answer)[0] == meant.replace("**Resource:**", "- **Resource:**")


def test_a_section_heading_is_read_through_bold_a_colon_and_its_level() -> None:
    answer, meant = _plan("### `Step 2: EDIT`\n- **File Path:** [docs/guide.md](/docs/guide.md)\n")
    meant = meant.replace("### `Step 2: EDIT`", "### `EDIT`")
    for heading in ("# **Action Plan:**", "### Action Plan"):
        assert reshape(answer.replace("# Action Plan", heading))[0] == meant
    assert reshape(answer.replace("## Rationale", "### Rationale"))[0] == meant


# --- cases the mutation run showed no test holding (tools/mutate.py) ---------------------


def test_a_heading_naming_a_path_that_ends_in_a_capital_x_is_an_action() -> None:
    # the Linux kernel's documentation kept an index in each folder, named 00-INDEX
    path = "Documentation/networking/00-INDEX"
    answer, meant = _plan(f"### READ: {path}\n- **Resource:** [{path}](/{path})\n")
    assert reshape(answer)[0] == _rewritten(meant, (f"### READ: {path}", "### `READ`"))


def test_a_remark_ending_in_a_capital_x_on_a_closing_fence_is_dropped() -> None:
    # a keyboard layout for the X server, and the remark to restart it after the fence
    answer, meant = _plan(
        "### `CREATE`\n- **File Path:** [xorg/00-keyboard.conf](/xorg/00-keyboard.conf)\n"
        '```\nSection "InputClass"\n    Identifier "keyboard"\n    Option "XkbLayout" "de"\n'
        "EndSection\n``` Then restart X\n### `CHAT_WITH_USER`\nDo the umlauts type now?\n"
    )
    assert reshape(answer)[0] == _rewritten(meant, ("``` Then restart X", "```"))


def test_a_bold_key_right_under_the_action_plan_heading_is_no_action_s_metadata() -> None:
    # a summary of the plan written as a bold key before the first action
    answer, meant = _plan(
        "**Expected Outcome:** the guide is written and read back.\n\n"
        "### `READ`\n- **Resource:** [docs/guide.md](/docs/guide.md)\n"
    )
    assert reshape(answer)[0] == meant


def test_a_section_written_after_the_actions_is_a_section() -> None:
    # the Memos written last, with a colon: a section heading, not an action's text
    answer, meant = _plan(
        "### `READ`\n- **Resource:** [docs/guide.md](/docs/guide.md)\n\n## Memos:\n"
        "```\n[+] The guide lives in docs/.\n```\n"
    )
    assert reshape(answer)[0] == _rewritten(meant, ("## Memos:", "## Memos"))


def test_an_action_heading_in_title_case_after_a_message_ends_the_message() -> None:
    # the parser reads action names in any case: "### Read" is a READ, which ends the
    # message (in it, only a heading in capitals is rewritten); its own "#### Rationale"
    # is its text, and a comment after it is between actions
    answer, meant = _plan(
        "### `CHAT_WITH_USER`\nShould the guide cover the CLI too? I'll read it meanwhile.\n\n"
        "### Read\n- **Resource:** [docs/guide.md](/docs/guide.md)\n\n#### Rationale\n"
        "To see what it covers now.\n\n<!-- the answer decides the next plan -->\n"
    )
    assert reshape(answer)[0] == _rewritten(
        meant, ("<!-- the answer decides the next plan -->", "")
    )


def test_a_rule_under_the_first_paragraph_of_the_header_underlines_it_and_stays() -> None:
    answer, _ = _plan("### `READ`\n- **Resource:** [docs/guide.md](/docs/guide.md)\n")
    answer = _rewritten(
        answer,
        ("# Tidy the docs\n\n", "# Tidy the docs\n\nOne pass brings the docs in line.\n---\n"),
    )
    text, changes = reshape(answer)
    assert "\nOne pass brings the docs in line.\n---\n## Rationale\n" in text
    assert [c.kind for c in changes] == ["heading"]  # only # Action Plan


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_bare_metadata_lines_ending_in_hard_line_breaks_keep_them(newline: str) -> None:
    # without bullets, two trailing blanks are how Markdown keeps such lines apart
    answer, meant = _plan(
        "### `READ`\n**Resource:** [docs/guide.md](/docs/guide.md)  \n"
        "**Description:** Read the guide back.\n"
    )
    meant = _rewritten(
        meant, ("**Resource:**", "- **Resource:**"), ("**Description:**", "- **Description:**")
    )
    assert reshape(answer.replace("\n", newline))[0] == meant.replace("\n", newline)


def test_a_commented_out_action_is_dropped_whole_and_what_follows_is_read() -> None:
    # an action commented out with the comment it held (the first --> ends it), and one
    # whose comment closes on its closing fence's line
    answer, meant = _plan(
        "### `READ`\n- **Resource:** [docs/guide.md](/docs/guide.md)\n\n"
        "<!-- not this time:\n### `EXECUTE`\n- **Description:** Run the slow tests.\n\n"
        "<!-- they take an hour -->\n\n"
        "<!--\n### `EXECUTE`\n- **Description:** Build the site.\n```shell\nmake docs\n``` -->\n\n"
        "**READ**\n- **Resource:** [docs/api.md](/docs/api.md)\n"
    )
    first = answer.index("<!-- not this")
    comments = answer[first : answer.index("``` -->") + len("``` -->")]
    meant = _rewritten(meant, (comments, "\n" * comments.count("\n")), ("**READ**", "### `READ`"))
    text, changes = reshape(answer)
    assert text == meant
    assert [c.message for c in changes] == [
        "rewrote the heading '# Action Plan'",
        "dropped the HTML comment (lines 20-24) between actions",
        "dropped the HTML comment (lines 26-31) between actions",
        "rewrote '**READ**' as an action heading",
    ]


@pytest.mark.parametrize(
    ("written", "dropped"),
    [
        # a comment or a rule right under a heading, with no blank line between: after
        # a heading line a new block starts (CommonMark), as after a blank line
        ("# Tidy the docs\n<!-- drafted by the planner -->\n", "<!-- drafted by the planner -->"),
        ("# Tidy the docs\n---\n", "---"),
        ("# Action Plan\n***\n", "***"),
    ],
)
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_comment_or_rule_right_under_a_heading_is_dropped(
    written: str, dropped: str, newline: str
) -> None:
    actions = "### `READ`\n- **Resource:** [docs/guide.md](/docs/guide.md)\n"
    answer, meant = _plan(actions)
    heading = written.split("\n", 1)[0] + "\n"
    answer = answer.replace(heading, written, 1)
    repaired = _repaired(answer.replace("\n", newline))
    assert dropped not in repaired
    assert repaired == meant.replace(
        heading.replace("# Action", "## Action"), written.replace("# Action", "## Action"), 1
    ).replace(dropped, "", 1).replace("\n", newline)


def _api_doc(fence: str, heading: str, text: str) -> str:
    """A CREATE of a Markdown file with code examples, under ``fence``: the file's own
    ``heading`` comes after its first example, so with a fence as short as the examples'
    CommonMark reads that heading outside any block."""
    return (
        "### `CREATE`\n- **File Path:** [docs/api.md](/docs/api.md)\n"
        f"{fence}markdown\n# API\n\n### read()\n\nReads one record.\n\n"
        "```python\nrecord = client.read()\n```\n\n"
        f"{heading}\n\n{text}\n\n"
        '```python\nrows = client.execute("SELECT 1")\n```\n'
        f"{fence}\n\n### `READ`\n- **Resource:** [README.md](/README.md)\n"
    )


def test_a_method_heading_in_a_markdown_file_fenced_too_short_stays_the_file_s() -> None:
    # "### execute()" names an action and an empty path: no heading with its path (the
    # parentheses are a method's), so the file keeps it and only the fences are repaired
    answer, _ = _plan(_api_doc("```", "### execute()", "Runs a query."))
    _, meant = _plan(_api_doc("````", "### execute()", "Runs a query."))
    assert _repaired(answer) == meant


def test_a_heading_naming_an_action_and_a_capital_x_is_no_action() -> None:
    # API conventions written for any resource X; the file's fence is too short, so its
    # "### Read X" is read outside any block, and is no action heading (nor is a heading
    # naming a path X that the metadata does not give)
    answer, _ = _plan(_api_doc("```", "### Read X", "`GET /x/{id}` returns one X."))
    _, meant = _plan(_api_doc("````", "### Read X", "`GET /x/{id}` returns one X."))
    assert _repaired(answer) == meant
    other, _ = _plan("### READ: X\n- **Resource:** [docs/x.md](/docs/x.md)\n")
    assert "### READ: X\n" in reshape(other)[0]  # two paths: the parser says which is wrong
