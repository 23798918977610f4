"""The plan parser's messages and edges, as mutation testing (``tools/mutate.py``) showed
no test was holding them: the whole diagnostic (line, code and message) a user reads,
what each action kind accepts, and the helpers that word the messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plankit.errors import Diagnostic, PlanError
from plankit.markdown.tree import parse_document
from plankit.teddy.format.model import ActionType, action_to_dict
from plankit.teddy.format.parse import (
    RATIONALE_SECTIONS,
    action_type_of,
    check_plan,
    is_edit_label,
    parse_plan,
    section_of,
)
from plankit.teddy.format.parse.checker import Checker, clip, describe, norm_key, suggest
from plankit.teddy.format.parse.names import action_name
from plankit.teddy.format.parse.swallowed import swallowed_actions

DATA = Path(__file__).resolve().parents[1] / "data" / "plans"

RATIONALE = "\n".join(
    ["## Rationale", "```text"]
    + [f"### {i}. {name}\nx" for i, name in enumerate(RATIONALE_SECTIONS, 1)]
    + ["```"]
)
"""A valid Rationale section (11 lines)."""

Diag = tuple[int, str, str]


def _plan(actions: str) -> str:
    """A valid plan around ``actions``: the first action's heading is on line 18."""
    return f"# A plan\n- **Status:** Green\n\n{RATIONALE}\n\n## Action Plan\n\n{actions}\n"


def _diags(text: str) -> list[Diag]:
    plan, found = check_plan(text)
    assert (plan is None) == bool(found)
    return [(d.line, d.code, d.message) for d in found]


def _problems(actions: str) -> list[Diag]:
    return _diags(_plan(actions))


def _actions(actions: str) -> list[dict[str, Any]]:
    return [action_to_dict(a) for a in parse_plan(_plan(actions)).actions]


def _doc(title: str = "# T", rest: str = "") -> str:
    return f"{title}\n\n{RATIONALE}\n\n{rest}"


CONCLUDE = "## Action Plan\n\n### `CONCLUDE`\nx\n"


# --- every message of the invalid plans in tests/data -------------------------------------


def test_every_invalid_plan_gets_its_exact_messages() -> None:
    expected = json.loads((DATA / "invalid-messages.json").read_text(encoding="utf-8"))
    files = sorted(p.name for p in (DATA / "invalid").glob("*.md"))
    assert sorted(expected) == files, "invalid-messages.json lists every invalid plan"
    for name in files:
        text = (DATA / "invalid" / name).read_bytes().decode("utf-8")
        assert [list(d) for d in _diags(text)] == expected[name], name


# --- the document: title and sections -----------------------------------------------------

TITLE_DUPLICATE = (
    "a second level-1 heading; a plan has exactly one `# Title` (use ## for sections, "
    "### for actions, #### inside a message)"
)
RATIONALE_MISSING = (
    "the plan has no '## Rationale' section (a fenced block with the four sections "
    "Synthesis, Justification, Expected Outcome, State Dashboard)"
)
ACTION_PLAN_MISSING = "the plan has no '## Action Plan' section; add it with at least one action"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            _doc("#", CONCLUDE), [(1, "title-empty", "the plan's title is empty")], id="title-empty"
        ),
        pytest.param(
            f"{RATIONALE}\n\n# T\n\n{CONCLUDE}",
            [
                (1, "title-missing", "the plan has no `# Title` heading"),
                (13, "title-duplicate", TITLE_DUPLICATE),
            ],
            id="section-before-title",
        ),
        pytest.param(
            _doc(rest="# Other\n\n" + CONCLUDE),
            [(15, "title-duplicate", TITLE_DUPLICATE)],
            id="title-after-a-section",
        ),
        pytest.param(
            _doc(rest="## Action Plam\n\n### `CONCLUDE`\nx\n"),
            [
                (
                    15,
                    "unknown-section",
                    "unknown section '## Action Plam'; expected ## Rationale, ## Memos or "
                    "## Action Plan; did you mean Action Plan? (a heading inside a message must "
                    "be #### or deeper)",
                ),
                (18, "action-plan-missing", ACTION_PLAN_MISSING),
            ],
            id="unknown-section-with-a-suggestion",
        ),
        pytest.param(
            _doc(rest="## Notes\nsome text\n\n" + CONCLUDE),
            [
                (
                    15,
                    "unknown-section",
                    "unknown section '## Notes'; expected ## Rationale, ## Memos or ## Action "
                    "Plan (a heading inside a message must be #### or deeper)",
                )
            ],
            id="unknown-section-and-its-text",
        ),
        pytest.param(
            _doc(rest="## Rationale\nmore\n\n" + CONCLUDE),
            [(15, "section-duplicate", "'## Rationale' appears twice (first at line 3)")],
            id="duplicate-rationale",
        ),
        pytest.param(
            _doc(rest=CONCLUDE + "\n## Action Plan\n\n### `CONCLUDE`\ny\n"),
            [(20, "section-duplicate", "'## Action Plan' appears twice (first at line 15)")],
            id="duplicate-action-plan",
        ),
        pytest.param(
            _doc(rest="## Memos\n```\n[+] a\n```\n\n## Memos\n```\n[+] b\n```\n\n" + CONCLUDE),
            [(20, "section-duplicate", "'## Memos' appears twice (first at line 15)")],
            id="duplicate-memos",
        ),
        pytest.param(
            "# T\n\n## FIND:\n\n" + RATIONALE + "\n\n" + CONCLUDE,
            [
                (
                    3,
                    "unknown-section",
                    "unknown section '## FIND:'; expected ## Rationale, ## Memos or ## Action "
                    "Plan (a heading inside a message must be #### or deeper)",
                )
            ],
            id="a-label-heading-outside-the-action-plan",
        ),
        pytest.param(
            "# T\n\nhello\n",
            [
                (3, "action-plan-missing", ACTION_PLAN_MISSING),
                (3, "rationale-missing", RATIONALE_MISSING),
                (
                    3,
                    "stray-content",
                    "unexpected paragraph 'hello' in the plan header (only the metadata list "
                    "follows the title)",
                ),
            ],
            id="no-sections",
        ),
        pytest.param(
            "# T\n",
            [
                (1, "action-plan-missing", ACTION_PLAN_MISSING),
                (1, "rationale-missing", RATIONALE_MISSING),
            ],
            id="only-a-title",
        ),
        pytest.param(
            "# T\n\n## Memos\n```\n[+] a\n```\n\n" + CONCLUDE,
            [(3, "rationale-missing", RATIONALE_MISSING)],
            id="rationale-missing-at-the-first-section",
        ),
        pytest.param(
            "Intro\n\n# T\n\n" + RATIONALE + "\n\n" + CONCLUDE,
            [
                (
                    1,
                    "content-before-title",
                    "unexpected paragraph 'Intro' before the `# Title` heading",
                )
            ],
            id="content-before-title",
        ),
        pytest.param(
            "## Action Plan\n\n### `CONCLUDE`\nx\n",
            [
                (1, "rationale-missing", RATIONALE_MISSING),
                (1, "title-missing", "the plan has no `# Title` heading"),
            ],
            id="title-missing-once",
        ),
    ],
)
def test_document_problems(text: str, expected: list[Diag]) -> None:
    assert _diags(text) == expected


def test_a_label_heading_of_level_two_inside_an_edit_is_a_label() -> None:
    text = _doc(
        rest="## Action Plan\n\n### `EDIT`\n- **File Path:** [a](/a)\n\n## FIND:\n```\nx\n```\n"
        "## REPLACE:\n```\ny\n```\n"
    )
    plan = parse_plan(text)
    assert [action_to_dict(a) for a in plan.actions] == [
        {
            "type": "EDIT",
            "line": 17,
            "description": None,
            "path": "a",
            "edits": [{"find": "x", "replace": "y"}],
        }
    ]


def test_a_plan_is_returned_with_its_title_metadata_rationale_and_memos() -> None:
    text = (
        "# Plan âœ…\n- **Status:** Green ðŸŸ¢\n- **Agent:** Dev\n\n"
        + RATIONALE
        + "\n\n## Memos\n```\n[+] keep # why\n```\n\n"
        + CONCLUDE
    )
    plan = parse_plan(text)
    assert plan.title == "Plan ✅"
    assert plan.metadata == (("Status", "Green 🟢"), ("Agent", "Dev"))
    assert plan.rationale.startswith("### 1. Synthesis\nx\n")
    assert [(m.op, m.text, m.comment) for m in plan.memos] == [("+", "keep", "why")]


def test_too_deep_nesting_names_the_limits() -> None:
    nested = "\n".join("  " * depth + "- level" for depth in range(30))
    found = [d for d in _problems("### `CONCLUDE`\n" + nested) if d[1] == "nesting-too-deep"]
    assert len(found) == 1
    line, _, message = found[0]
    assert line > 18
    assert message == (
        "lists or quotes are nested too deeply (20 list levels or 40 quote levels at most); "
        "flatten them"
    )


def test_an_empty_plan_and_a_byte_order_mark() -> None:
    assert check_plan("\ufeff") == (
        None,
        [Diagnostic(1, "plan-empty", "the plan is empty; expected a `# Title`")],
    )
    with pytest.raises(PlanError) as caught:
        parse_plan("")
    assert [(d.line, d.code) for d in caught.value.diagnostics] == [(1, "plan-empty")]


def test_diagnostics_come_sorted_by_line() -> None:
    found = _diags("# T\n\nhello\n\n## Action Plan\n\n### `NOPE`\n")
    assert [d[0] for d in found] == sorted(d[0] for d in found)
    assert found[0][0] == 3


# --- the header, Rationale and Memos ------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        pytest.param(
            "- **Status:** x\n\nparagraph",
            [
                (
                    4,
                    "stray-content",
                    "unexpected paragraph 'paragraph' in the plan header (only the metadata "
                    "list follows the title)",
                )
            ],
            id="a-paragraph-after-the-list",
        ),
        pytest.param(
            "1. **Status:** x",
            [
                (
                    2,
                    "stray-content",
                    "unexpected list in the plan header (only the metadata list follows the title)",
                )
            ],
            id="an-ordered-list",
        ),
        pytest.param(
            "- **Status:** x\n\n  more para\n- **Agent:** A",
            [
                (
                    4,
                    "stray-content",
                    "unexpected paragraph 'more para' inside the metadata item 'Status'",
                )
            ],
            id="a-second-paragraph-in-an-item",
        ),
        pytest.param(
            "- **Status:** x\n- ```\n  y\n  ```\n- **Status:** z",
            [
                (3, "metadata-invalid", "expected '**Key:** value' in the plan's metadata list"),
                (
                    6,
                    "metadata-duplicate",
                    "'Status' appears twice in the metadata (first at line 2)",
                ),
            ],
            id="an-item-that-is-not-a-key-and-a-duplicate",
        ),
    ],
)
def test_header_problems(header: str, expected: list[Diag]) -> None:
    assert _diags(f"# T\n{header}\n\n{RATIONALE}\n\n{CONCLUDE}") == expected


def test_header_keeps_every_other_item_after_a_bad_one() -> None:
    text = f"# T\n- **A:** 1\n- nonsense\n- **B:** 2\n\n{RATIONALE}\n\n{CONCLUDE}"
    assert _diags(text) == [
        (
            3,
            "metadata-invalid",
            "expected '**Key:** value' in the plan's metadata list; found 'nonsense'",
        )
    ]


RATIONALE_SECTIONS_MESSAGE = (
    "; it needs the four sections 1. Synthesis, 2. Justification, 3. Expected Outcome, "
    "4. State Dashboard"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "# T\n\n## Rationale\n\n" + CONCLUDE,
            [(3, "rationale-empty", "the Rationale is empty")],
            id="no-blocks",
        ),
        pytest.param(
            "# T\n\n## Rationale\n```\n\n```\n\n" + CONCLUDE,
            [(3, "rationale-empty", "the Rationale is empty")],
            id="blank-fence",
        ),
        pytest.param(
            "# T\n\n## Rationale\n**Synthesis:** a\n\n**Justification** b\n\n"
            "3 Expected Outcome:\n\n#### 4. State Dashboard\n\n" + CONCLUDE,
            [
                (
                    4,
                    "rationale-sections",
                    "the Rationale lacks '1. Synthesis', '2. Justification'"
                    + RATIONALE_SECTIONS_MESSAGE,
                )
            ],
            id="a-section-name-must-be-alone-on-its-line",
        ),
        pytest.param(
            "# T\n\n## Rationale\n```\n### Synthesis\n",
            [
                (
                    4,
                    "fence-unclosed",
                    "the fenced block opened here with ``` is never closed; close it with a "
                    "``` line after its last line",
                ),
                (5, "action-plan-missing", ACTION_PLAN_MISSING),
                (
                    5,
                    "rationale-sections",
                    "the Rationale lacks '2. Justification', '3. Expected Outcome', "
                    "'4. State Dashboard'" + RATIONALE_SECTIONS_MESSAGE,
                ),
            ],
            id="unclosed",
        ),
        pytest.param(
            "# T\n\n## Rationale\n```\nState Dashboard\nExpected Outcome:\nJustification\n"
            "Synthesis\n```\n\n" + CONCLUDE,
            [
                (
                    5,
                    "rationale-order",
                    "the Rationale's sections are out of order (found State Dashboard, Expected "
                    "Outcome, Justification, Synthesis); expected Synthesis, Justification, "
                    "Expected Outcome, State Dashboard",
                )
            ],
            id="reversed",
        ),
    ],
)
def test_rationale_problems(text: str, expected: list[Diag]) -> None:
    assert _diags(text) == expected


@pytest.mark.parametrize(
    "heading",
    [
        "### 1. Synthesis",
        "**Synthesis:**",
        "**Synthesis**:",
        "  #### 1 Synthesis",
        "Synthesis",
        "1.Synthesis:",
        "SYNTHESIS",
        "# synthesis ",
        "\t**1. Synthesis** :",
    ],
)
def test_a_rationale_section_heading_may_be_written_many_ways(heading: str) -> None:
    body = "\n".join([heading, "Justification", "Expected Outcome", "State Dashboard"])
    text = f"# T\n\n## Rationale\n````\n{body}\n````\n\n{CONCLUDE}"
    assert _diags(text) == []


@pytest.mark.parametrize(
    "line", ["Synthesis of it all", "The Synthesis", "- Synthesis", "Synthesis: done", "Synth esis"]
)
def test_a_line_that_merely_mentions_a_section_does_not_count(line: str) -> None:
    body = "\n".join([line, "Justification", "Expected Outcome", "State Dashboard"])
    found = _diags(f"# T\n\n## Rationale\n````\n{body}\n````\n\n{CONCLUDE}")
    assert [d[1] for d in found] == ["rationale-sections"]
    assert found[0][2].startswith("the Rationale lacks '1. Synthesis'; it needs")


def test_a_section_named_twice_counts_once() -> None:
    body = "Synthesis\nSynthesis\nJustification\nExpected Outcome\nState Dashboard"
    assert _diags(f"# T\n\n## Rationale\n```\n{body}\n```\n\n{CONCLUDE}") == []


def test_an_unfenced_rationale_is_its_raw_lines() -> None:
    text = (
        "# T\n\n## Rationale\n### 1. Synthesis\nA\n\n- item\n\n### 2. Justification\nB\n"
        "### 3. Expected Outcome\nC\n### 4. State Dashboard\nD\n\n" + CONCLUDE
    )
    assert parse_plan(text).rationale == (
        "### 1. Synthesis\nA\n\n- item\n\n### 2. Justification\nB\n### 3. Expected Outcome\nC\n"
        "### 4. State Dashboard\nD"
    )


def _memos(body: str) -> list[Diag] | list[tuple[str, str, str | None]]:
    text = f"# T\n\n{RATIONALE}\n\n## Memos\n```\n{body}\n```\n\n{CONCLUDE}"
    plan, found = check_plan(text)
    if plan is None:
        return [(d.line, d.code, d.message) for d in found]
    return [(m.op, m.text, m.comment) for m in plan.memos]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("[+] a\n\n  [-] b  ", [("+", "a", None), ("-", "b", None)]),
        (
            "- [+] bullet\n* [-] star\n+ [+] plus",
            [("+", "bullet", None), ("-", "star", None), ("+", "plus", None)],
        ),
        ("[+]tight", [("+", "tight", None)]),
        ("[+] text # a comment  ", [("+", "text", "a comment")]),
        ("[+] text #", [("+", "text", None)]),
        ("[+] a\t#b # c", [("+", "a", "b # c")]),
        ("[+] issue#12", [("+", "issue#12", None)]),
        ("[+] âœ… done", [("+", "✅ done", None)]),
        (
            "[+] ok\nnot a memo\n[-]  \t\n[x] no\n[+] # only a comment",
            [
                (18, "memo-invalid", "a memo line must start with [+] or [-]; found 'not a memo'"),
                (19, "memo-empty", "the [-] memo has no text"),
                (20, "memo-invalid", "a memo line must start with [+] or [-]; found '[x] no'"),
            ],
        ),
        (
            "-[+] no space " + "y" * 70,
            [
                (
                    17,
                    "memo-invalid",
                    "a memo line must start with [+] or [-]; found '-[+] no space "
                    + "y" * 45
                    + "…'",
                )
            ],
        ),
    ],
)
def test_memos(body: str, expected: list[object]) -> None:
    assert _memos(body) == expected


def test_memos_after_a_closed_fence_are_stray_and_dropped() -> None:
    text = f"# T\n\n{RATIONALE}\n\n## Memos\n```\n[+] a\n```\nmore\n\n{CONCLUDE}"
    assert _diags(text) == [
        (
            19,
            "stray-content",
            "unexpected paragraph 'more' in the Memos section, which holds one fenced block "
            "(did a fence inside it close the block early? make its fences longer than any fence inside)",
        )
    ]


def test_memos_written_without_a_fence_and_an_empty_memos_section() -> None:
    text = f"# T\n\n{RATIONALE}\n\n## Memos\n[+] plain\n\n[-] second\n\n{CONCLUDE}"
    assert [(m.op, m.text) for m in parse_plan(text).memos] == [("+", "plain"), ("-", "second")]
    assert parse_plan(f"# T\n\n{RATIONALE}\n\n## Memos\n\n{CONCLUDE}").memos == ()


# --- the Action Plan and each action ------------------------------------------------------

EXPECTED_ONE_OF = (
    "expected one of CREATE, READ, EDIT, EXECUTE, RESEARCH, CHAT_WITH_USER, INVOKE, CONCLUDE, PRUNE"
)
UNCLOSED = "the fenced block opened here with {} is never closed; close it with a {} line after its last line"
NO_PAIRS = "EDIT needs at least one FIND:/REPLACE: pair (whole-file rewrites are not allowed)"
PATH = "- **File Path:** [a](/a)\n\n"


@pytest.mark.parametrize(
    ("actions", "expected"),
    [
        pytest.param(
            "",
            [
                (
                    16,
                    "action-plan-empty",
                    "the Action Plan has no actions; add at least one ### `ACTION`",
                )
            ],
            id="no-actions",
        ),
        pytest.param(
            "text\n\n- list\n\n### `CONCLUDE`\nx",
            [
                (
                    18,
                    "stray-content",
                    "unexpected paragraph 'text' before the first action (each action starts "
                    "with ### `TYPE`)",
                ),
                (
                    20,
                    "stray-content",
                    "unexpected list before the first action (each action starts with ### `TYPE`)",
                ),
            ],
            id="stray-before-the-first-action",
        ),
        pytest.param(
            "### `CREATE FILE`\n\n### `EXECUTE_NOW`\n\n### `READING`\n\n### ``\n\n### `EDIT: a.py`",
            [
                (
                    18,
                    "unknown-action",
                    f"unknown action '`CREATE FILE`'; {EXPECTED_ONE_OF}; the heading must hold "
                    "the action name only, e.g. ### `CREATE`",
                ),
                (
                    20,
                    "unknown-action",
                    f"unknown action '`EXECUTE_NOW`'; {EXPECTED_ONE_OF}; did you mean EXECUTE?",
                ),
                (22, "unknown-action", f"unknown action '`READING`'; {EXPECTED_ONE_OF}"),
                (24, "unknown-action", f"unknown action '``'; {EXPECTED_ONE_OF}"),
                (26, "unknown-action", f"unknown action '`EDIT: a.py`'; {EXPECTED_ONE_OF}"),
            ],
            id="unknown-actions",
        ),
        pytest.param(
            "### `CHAT NOW`",
            [
                (
                    18,
                    "unknown-action",
                    f"unknown action '`CHAT NOW`'; {EXPECTED_ONE_OF}; the heading must "
                    "hold the action name only, e.g. ### `CREATE`",
                )
            ],
            id="a-heading-starting-with-an-action-word",
        ),
        pytest.param(
            "### `CREATE`\n- **File Path:** [a](/a)\n\ntext\n```\nc\n```",
            [(21, "stray-content", "unexpected paragraph 'text' in CREATE")],
            id="create-text-before-its-block",
        ),
        pytest.param(
            "### `CREATE`\n- **File Path:** [a](/a)\n```\nc\n```\ntext\n```\nd\n```",
            [
                (
                    23,
                    "stray-content",
                    "unexpected paragraph 'text' in CREATE after its file content",
                ),
                (24, "stray-content", "unexpected fenced block in CREATE after its file content"),
            ],
            id="create-blocks-after-its-content",
        ),
        pytest.param(
            "### `CREATE`\n- **File Path:** [a](/a)\n~~~~\nc\n",
            [(20, "fence-unclosed", UNCLOSED.format("~~~~", "~~~~"))],
            id="create-unclosed",
        ),
        pytest.param(
            "### `CREATE`\n- **File Path:** [a](/a)",
            [(18, "create-no-content", "CREATE needs a fenced code block with its file content")],
            id="create-without-content",
        ),
        pytest.param(
            "### `CREATE`\n- ```\n  x\n  ```\n```\nc\n```",
            [
                (
                    18,
                    "field-missing",
                    "CREATE needs a '- **File Path:** …' item in its metadata list",
                ),
                (19, "stray-content", "unexpected list in CREATE"),
            ],
            id="a-list-that-is-not-metadata",
        ),
        pytest.param(
            "### `CREATE`\n1. **File Path:** [a](/a)\n```\nc\n```",
            [
                (
                    18,
                    "field-missing",
                    "CREATE needs a '- **File Path:** …' item in its metadata list",
                ),
                (19, "stray-content", "unexpected list in CREATE"),
            ],
            id="an-ordered-list-is-not-metadata",
        ),
        pytest.param(
            "### `CREATE`\n- **File Path:** [a](/a)\n-\n```\nc\n```",
            [(20, "metadata-invalid", "expected '**Key:** value' in the CREATE metadata list")],
            id="an-empty-metadata-item",
        ),
        pytest.param(
            "### `EXECUTE`\n```\n  \n```",
            [(18, "execute-no-command", "EXECUTE's command block is empty")],
            id="execute-blank-command",
        ),
        pytest.param(
            "### `EXECUTE`\n- **Description:** d\n  - sub\n```\nls\n```",
            [(20, "stray-content", "unexpected list inside the 'Description' field")],
            id="a-nested-list-in-a-plain-field",
        ),
        pytest.param(
            "### `EXECUTE`\n- **Description:** d\n- **Description:** e\n```\nls\n```",
            [
                (
                    20,
                    "field-duplicate",
                    "'Description' appears twice in this EXECUTE (first at line 19)",
                )
            ],
            id="a-field-twice",
        ),
        pytest.param(
            "### `READ`\n- **Resource:** [a](/a)\n```\nx\n```",
            [
                (
                    20,
                    "stray-content",
                    "unexpected fenced block in READ (it has only a metadata list)",
                )
            ],
            id="read-with-a-block",
        ),
        pytest.param(
            "### `PRUNE`\n- **Resource:** [a](/a)\n\nbecause",
            [
                (
                    21,
                    "stray-content",
                    "unexpected paragraph 'because' in PRUNE (it has only a metadata list)",
                )
            ],
            id="prune-with-text",
        ),
        pytest.param(
            "### `PRUNE`\n",
            [(18, "field-missing", "PRUNE needs a '- **Resource:** …' item in its metadata list")],
            id="prune-without-metadata",
        ),
        pytest.param(
            "### `PRUNE`\n- **Resource:** [a](/a)\n- **Color:** red",
            [(20, "unknown-field", "PRUNE has no field 'Color'; it takes Resource, Description")],
            id="an-unknown-field",
        ),
        pytest.param(
            "### `INVOKE`\nGo.",
            [(18, "field-missing", "INVOKE needs a '- **Agent:** …' item in its metadata list")],
            id="invoke-without-agent",
        ),
        pytest.param(
            "### `INVOKE`\n- **Agent:** **\n\nGo.",
            [(19, "agent-missing", "INVOKE: 'Agent' names no agent")],
            id="invoke-with-an-empty-agent",
        ),
        pytest.param(
            "### `RESEARCH`\n```\nq1\n```\ntext",
            [
                (
                    22,
                    "stray-content",
                    "unexpected paragraph 'text' in RESEARCH (each query is its own fenced block)",
                )
            ],
            id="research-with-text",
        ),
        pytest.param(
            "### `RESEARCH`\n```\nq1\n",
            [(19, "fence-unclosed", UNCLOSED.format("```", "```"))],
            id="research-unclosed",
        ),
        pytest.param(
            "### `RESEARCH`\n- **Description:** d",
            [(18, "research-no-queries", "RESEARCH needs one fenced block per query")],
            id="research-without-queries",
        ),
        pytest.param(
            "### `RESEARCH`\n```\nq\n```\n```\n \n```",
            [(22, "research-empty-query", "this query block is empty")],
            id="research-empty-query",
        ),
        pytest.param(
            "### `CHAT_WITH_USER`\nhello\n```\ncode\n",
            [(20, "fence-unclosed", UNCLOSED.format("```", "```"))],
            id="chat-unclosed",
        ),
        pytest.param(
            "### `CHAT_WITH_USER`\n\n### `CONCLUDE`\nx",
            [(18, "chat-empty", "CHAT_WITH_USER has no message")],
            id="chat-empty",
        ),
        pytest.param(
            "### `CREATE`\n- **File Path:** [a](/a)\n```\nc\n```\n\n### `CREATE`\n"
            "- **File Path:** [b](/b)\n\n### `CONCLUDE`\nx",
            [(24, "create-no-content", "CREATE needs a fenced code block with its file content")],
            id="only-the-bad-action-is-reported",
        ),
        # EDIT
        pytest.param(
            f"### `EDIT`\n{PATH}FIND:\n\nREPLACE:\n```\ny\n```",
            [
                (21, "edit-label-without-block", "FIND: has no fenced block"),
                (23, "edit-unpaired", "REPLACE: without a FIND: before it"),
            ],
            id="edit-a-label-without-its-block",
        ),
        pytest.param(
            f"### `EDIT`\n{PATH}FIND:\n```\na\n```\nFIND:\n```\nb\n```\nREPLACE:\n```\nc\n```",
            [(21, "edit-unpaired", "FIND: without its REPLACE: block")],
            id="edit-two-finds",
        ),
        pytest.param(
            f"### `EDIT`\n{PATH}FIND:\n```\na\n```\nREPLACE:\n```\nb\n```\nFIND:",
            [(29, "edit-label-without-block", "FIND: has no fenced block")],
            id="edit-a-label-at-the-end",
        ),
        pytest.param(
            f"### `EDIT`\n{PATH}FIND:\n```\na\n```\nREPLACE:\n```\nb\n",
            [(26, "fence-unclosed", UNCLOSED.format("```", "```"))],
            id="edit-unclosed",
        ),
        pytest.param(
            f"### `EDIT`\n{PATH}REPLACE:\n```\nb\n```",
            [(21, "edit-unpaired", "REPLACE: without a FIND: before it")],
            id="edit-replace-first",
        ),
        pytest.param(
            f"### `EDIT`\n{PATH}FIND:\n```\nb\n```",
            [(21, "edit-unpaired", "FIND: without its REPLACE: block")],
            id="edit-find-alone",
        ),
        pytest.param(
            f"### `EDIT`\n{PATH}hello",
            [
                (18, "edit-no-pairs", NO_PAIRS),
                (
                    21,
                    "stray-content",
                    "unexpected paragraph 'hello' in EDIT (only FIND:/REPLACE: pairs follow the metadata)",
                ),
            ],
            id="edit-text-only",
        ),
        pytest.param(
            f"### `EDIT`\n{PATH}```\nx\n```",
            [
                (
                    21,
                    "edit-unlabelled-block",
                    "a fenced block in EDIT must follow a FIND: or REPLACE: label",
                )
            ],
            id="edit-an-unlabelled-block",
        ),
        pytest.param(
            "### `EDIT`\nFIND:\n```\na\n```\nREPLACE:\n```\nb\n```",
            [(18, "field-missing", "EDIT needs a '- **File Path:** …' item in its metadata list")],
            id="edit-without-path",
        ),
        # paths, resources, env
        pytest.param(
            "### `CREATE`\n- **File Path:** \n```\nc\n```",
            [(19, "path-missing", "CREATE: 'File Path' names no path")],
            id="an-empty-path",
        ),
        pytest.param(
            "### `CREATE`\n- **File Path:** [x](/)\n```\nc\n```",
            [(19, "path-missing", "CREATE: 'File Path' names no path")],
            id="a-path-naming-the-root",
        ),
        pytest.param(
            "### `EXECUTE`\n- **cwd:** https://x.org\n```\nls\n```",
            [
                (
                    19,
                    "path-invalid",
                    "EXECUTE: 'cwd' must be a project path like [docs/a.md](/docs/a.md), not the "
                    "URL https://x.org",
                )
            ],
            id="a-url-as-cwd",
        ),
        pytest.param(
            "### `READ`\n- **Resource:** [x](/)",
            [(19, "resource-missing", "READ: 'Resource' names no path")],
            id="a-resource-naming-the-root",
        ),
        pytest.param(
            "### `READ`\n- **Resource:** ``",
            [(19, "resource-missing", "READ: 'Resource' names nothing")],
            id="an-empty-resource",
        ),
        pytest.param(
            "### `PRUNE`\n- **Resource:** ftp://x.org/f",
            [
                (
                    19,
                    "resource-invalid",
                    "PRUNE: a Resource is a project path [a/b](/a/b) or an http(s) URL; found "
                    "ftp://x.org/f",
                )
            ],
            id="another-scheme",
        ),
        pytest.param(
            "### `CONCLUDE`\n- **Handoff Resources:**\n  - > quote\n\nDone.",
            [(20, "resource-invalid", "CONCLUDE: expected a link")],
            id="a-handoff-item-that-is-not-a-link",
        ),
        pytest.param(
            "### `CONCLUDE`\n- **Handoff Resources:** `a.md`, mailto:x@y.org\n\nDone.",
            [(19, "resource-invalid", "CONCLUDE: not a project path: mailto:x@y.org")],
            id="a-handoff-that-is-not-a-path",
        ),
        pytest.param(
            '### `EXECUTE`\n- **env:** X\n  - `A`: "1"\n  - nothing\n  - 1BAD: x\n  - A: 2\n'
            "  - E: 1\n\n    more\n```\nls\n```",
            [
                (
                    19,
                    "env-invalid",
                    'env takes a nested list of `NAME`: "value" items, not a value on its line',
                ),
                (21, "env-invalid", 'expected an env item like `NAME`: "value"'),
                (22, "env-invalid", "'1BAD' is not a variable name"),
                (23, "env-invalid", "env sets 'A' twice"),
                (24, "env-invalid", 'expected an env item like `NAME`: "value"'),
            ],
            id="env-problems",
        ),
    ],
)
def test_action_problems(actions: str, expected: list[Diag]) -> None:
    assert _problems(actions) == expected


def _one(actions: str) -> dict[str, Any]:
    (only,) = _actions(actions)
    return only


def test_metadata_keys_in_every_accepted_spelling() -> None:
    assert _one(
        "### `EXECUTE`\n- **Description**: d\n- __Expected Outcome:__ e\n- **`cwd`:** src\n"
        '- Env:\n  - `A`: "1"\n  - B = \'two\'\n  - **C**: `3`\n  - D: "\n```\nls\n```'
    ) == {
        "type": "EXECUTE",
        "line": 18,
        "description": "d",
        "command": "ls",
        "expected_outcome": "e",
        "cwd": "src",
        "env": {"A": "1", "B": "two", "C": "3", "D": '"'},
    }


def test_an_optional_marker_is_dropped_from_a_value() -> None:
    assert (
        _one("### `EXECUTE`\n- **Description:** (Optional)  hi\n```\nls\n```")["description"]
        == "hi"
    )
    assert _one("### `EXECUTE`\n- **Description:** hi (optional)\n```\nls\n```")["description"] == (
        "hi (optional)"
    )


@pytest.mark.parametrize(
    ("field", "path"),
    [
        ("[a.py](/src/a.py)", "src/a.py"),
        ("`src/a.py`", "src/a.py"),
        ("  src/a.py  ", "src/a.py"),
        ("[**a.py**](/src/a.py)", "src/a.py"),
        ("(optional) [a](/a)", "a"),
    ],
)
def test_a_path_is_a_link_destination_or_the_bare_value(field: str, path: str) -> None:
    action = _one(f"### `CREATE`\n- **File Path:** {field}\n```\nc\n```")
    assert action["path"] == path


@pytest.mark.parametrize(
    ("field", "kind", "target"),
    [
        ("[a](/docs/a.md)", "file", "docs/a.md"),
        ("/docs/a.md", "file", "docs/a.md"),
        ("`docs/a.md`", "file", "docs/a.md"),
        ("HTTPS://Example.com/a", "url", "HTTPS://Example.com/a"),
        ("[site](http://example.com/x)", "url", "http://example.com/x"),
    ],
)
def test_a_resource_is_a_project_file_or_a_url(field: str, kind: str, target: str) -> None:
    action = _one(f"### `READ`\n- **Resource:** {field}")
    assert (action["resource_kind"], action["resource"]) == (kind, target)


def test_handoff_resources_on_the_line_and_nested() -> None:
    action = _one(
        "### `INVOKE`\n- **Agent:** `**Architect**`\n- **Description:** why\n"
        "- **Handoff Resources:** `x.md`, HTTP://a.org\n  - [a](/a.md)\n  - [b](https://x.org/b)\n"
        "  - `c.md`, d.md\n\nPlease do it.\n\n#### Notes\n- a\n"
    )
    assert action == {
        "type": "INVOKE",
        "line": 18,
        "description": "why",
        "agent": "Architect",
        "handoff_resources": ["x.md", "HTTP://a.org", "a.md", "https://x.org/b", "c.md", "d.md"],
        "message": "Please do it.\n\n#### Notes\n- a",
    }


def test_conclude_with_a_description_and_a_message() -> None:
    assert _one(
        "### `CONCLUDE`\n- **Description:** d\n- **Handoff Resources:** [a](/a.md)\n\nBye.  \n\n"
    ) == {
        "type": "CONCLUDE",
        "line": 18,
        "description": "d",
        "handoff_resources": ["a.md"],
        "message": "Bye.",
    }


def test_a_chat_has_no_metadata_its_list_is_the_message() -> None:
    assert _one("### `CHAT_WITH_USER`\n- **Description:** hi\n") == {
        "type": "CHAT_WITH_USER",
        "line": 18,
        "description": None,
        "message": "- **Description:** hi",
    }


def test_a_message_keeps_headings_of_any_level_that_are_not_actions() -> None:
    assert _one("### `CONCLUDE`\nx\n#### sub\ny\n\n## FIND\n\nmore âœ…")["message"] == (
        "x\n#### sub\ny\n\n## FIND\n\nmore ✅"
    )


def test_research_queries_are_trimmed_and_repaired() -> None:
    assert _one("### `RESEARCH`\n- **Description:** d\n```\n q1 âœ…\n```\n```\nq2\n```") == {
        "type": "RESEARCH",
        "line": 18,
        "description": "d",
        "queries": ["q1 ✅", "q2"],
    }


def test_edit_labels_in_every_accepted_form() -> None:
    action = _one(
        "### `EDIT`\n- **File Path:** [a](/a)\n- **Description:** two\n\n**FIND:**\n```\na\n```\n"
        "`REPLACE`\n```\nb\n```\n\n## find:\n```\nc\n```\n__replace__ :\n```\nd\n```\n"
        "#### **Find**\n```\ne\n```\n#### replace:\n```\nf\n```"
    )
    assert action["description"] == "two"
    assert action["edits"] == [
        {"find": "a", "replace": "b"},
        {"find": "c", "replace": "d"},
        {"find": "e", "replace": "f"},
    ]


# --- names --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "name", "kind"),
    [
        ("`chat with user`", "CHAT_WITH_USER", ActionType.CHAT_WITH_USER),
        ("**Read**", "READ", ActionType.READ),
        (" `create`: ", "CREATE", ActionType.CREATE),
        ("chat-with - user", "CHAT_WITH_USER", ActionType.CHAT_WITH_USER),
        ("`Execute`:", "EXECUTE", ActionType.EXECUTE),
        ("Create file", "CREATE_FILE", None),
        ("", "", None),
    ],
)
def test_action_names(heading: str, name: str, kind: ActionType | None) -> None:
    assert action_name(heading) == name
    assert action_type_of(heading) is kind


@pytest.mark.parametrize(
    ("heading", "section"),
    [
        ("Rationale", "Rationale"),
        ("`memos`", "Memos"),
        ("**Action_Plan**", "Action Plan"),
        ("action   plan", "Action Plan"),
        ("Plan", None),
        ("Action-Plan", None),
    ],
)
def test_section_names(heading: str, section: str | None) -> None:
    assert section_of(heading) == section


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("FIND:", True),
        ("`REPLACE:`", True),
        ("**find**:", True),
        ("  _Replace_ : ", True),
        ("FIND", True),
        ("FIND: this", False),
        ("FINDING:", False),
        ("the FIND:", False),
    ],
)
def test_edit_labels(text: str, label: bool) -> None:
    assert is_edit_label(text) is label


# --- how messages are worded --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "key"),
    [("File Path", "file path"), ("file_path", "file path"), ("  FILE \t PATH ", "file path")],
)
def test_norm_key(text: str, key: str) -> None:
    assert norm_key(text) == key


def test_suggest_names_the_closest_option_when_it_is_close_enough() -> None:
    options = ["Description", "File Path"]
    assert suggest("Descripton", options) == "; did you mean Description?"
    assert suggest("Path", options) == ""
    assert suggest("File Paht", options) == "; did you mean File Path?"


def test_clip_puts_text_on_one_line_and_cuts_it() -> None:
    assert clip("a\nb") == "a b"
    assert clip("x" * 60) == "x" * 60
    assert clip("x" * 61) == "x" * 59 + "…"
    assert clip("abcdef", 4) == "abc…"


@pytest.mark.parametrize(
    ("source", "description"),
    [
        ("Some words\n", "paragraph 'Some words'"),
        ("p" * 50 + "\n", f"paragraph '{'p' * 39}…'"),
        ("#### A heading\n", "heading '#### A heading'"),
        ("```\nx\n```\n", "fenced block"),
        ("- a\n", "list"),
        ("> quoted\n", "blockquote"),
        ("---\n", "hr"),
    ],
)
def test_describe_names_each_kind_of_block(source: str, description: str) -> None:
    (block,) = parse_document(source).blocks
    assert describe(block) == description


def test_the_checker_reports_with_lines_and_knows_the_last_line() -> None:
    checker = Checker(parse_document(""))
    assert checker.end() == 1
    assert checker.section_end([]) == 1
    checker = Checker(parse_document("# T\n\npara\n\n```\nx\n"))
    assert checker.end() == 6
    fence = checker.doc.blocks[2]
    assert checker.closed(fence) is False  # type: ignore[arg-type]
    assert checker.section_end(list(checker.doc.blocks)) == 6
    checker.stray(checker.doc.blocks[1], "here")
    assert checker.diags == [
        Diagnostic(5, "fence-unclosed", UNCLOSED.format("```", "```")),
        Diagnostic(3, "stray-content", "unexpected paragraph 'para' here"),
    ]


# --- found by a second mutation run -------------------------------------------------------


def test_a_message_runs_to_the_line_before_the_next_action() -> None:
    assert [
        a.get("message") for a in _actions("### `CHAT_WITH_USER`\nx\ny\n### `CONCLUDE`\nz")
    ] == [
        "x\ny",
        "z",
    ]


def test_the_last_actions_message_stops_where_the_action_plan_ends() -> None:
    text = _doc(rest="## Action Plan\n\n### `CONCLUDE`\nbye\n\n## Memos\n```\n[+] a\n```\n")
    plan = parse_plan(text)
    assert [action_to_dict(a)["message"] for a in plan.actions] == ["bye"]
    assert [m.text for m in plan.memos] == ["a"]


def test_a_text_without_a_title_or_sections_gets_every_missing_part() -> None:
    assert _diags("just text\n") == [
        (1, "action-plan-missing", ACTION_PLAN_MISSING),
        (
            1,
            "content-before-title",
            "unexpected paragraph 'just text' before the `# Title` heading",
        ),
        (1, "rationale-missing", RATIONALE_MISSING),
        (1, "title-missing", "the plan has no `# Title` heading"),
    ]


@pytest.mark.parametrize("section", ["## Notes", "## Rationale"])
def test_a_label_heading_after_a_section_that_is_not_read_is_not_a_label(section: str) -> None:
    found = _diags(_doc(rest=f"{section}\n\n## FIND:\n\n" + CONCLUDE))
    assert [(line, code) for line, code, _ in found][-1] == (17, "unknown-section")
    assert "'## FIND:'" in found[-1][2]


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (
            "#### " + "h" * 50,
            "unexpected heading '#### " + "h" * 39 + "…' in the plan header (only the metadata "
            "list follows the title)",
        ),
        (
            "\n    code",
            "unexpected code block in the plan header (only the metadata list follows the title)",
        ),
        (
            "\n<div>\nx\n</div>",
            "unexpected html block in the plan header (only the metadata list follows the title)",
        ),
    ],
)
def test_stray_blocks_are_named_by_their_kind(header: str, expected: str) -> None:
    found = _diags(f"# T\n{header}\n\n{RATIONALE}\n\n{CONCLUDE}")
    assert [message for _, _, message in found] == [expected]


def test_a_rationale_fence_followed_by_more_names_the_rationale() -> None:
    text = (
        "# T\n\n## Rationale\n```\nSynthesis\nJustification\nExpected Outcome\nState Dashboard\n"
        "```\nmore\n\n" + CONCLUDE
    )
    assert _diags(text) == [
        (
            10,
            "stray-content",
            "unexpected paragraph 'more' in the Rationale section, which holds one fenced block "
            "(did a fence inside it close the block early? make its fences longer than any fence inside)",
        )
    ]


@pytest.mark.parametrize(
    ("actions", "expected"),
    [
        pytest.param(
            "### `EDIT`\n- **File Path:** https://x.org/a\n\nFIND:\n```\na\n```\nREPLACE:\n```\nb\n```",
            [
                (
                    19,
                    "path-invalid",
                    "EDIT: 'File Path' must be a project path like [docs/a.md](/docs/a.md), not "
                    "the URL https://x.org/a",
                )
            ],
            id="edit-a-url-as-its-path",
        ),
        pytest.param(
            f"### `EDIT`\n{PATH}```\nx\n```\n\ntext",
            [
                (
                    21,
                    "edit-unlabelled-block",
                    "a fenced block in EDIT must follow a FIND: or REPLACE: label",
                ),
                (
                    25,
                    "stray-content",
                    "unexpected paragraph 'text' in EDIT (only FIND:/REPLACE: pairs follow the metadata)",
                ),
            ],
            id="edit-goes-on-after-an-unlabelled-block",
        ),
        pytest.param(
            "### `CREATE FILE NOW`",
            [
                (
                    18,
                    "unknown-action",
                    f"unknown action '`CREATE FILE NOW`'; {EXPECTED_ONE_OF}; the heading must "
                    "hold the action name only, e.g. ### `CREATE`",
                )
            ],
            id="an-action-word-then-more-words",
        ),
        pytest.param(
            "### `PRUNEX`\n- **Resource:** [a](/a)",
            [
                (
                    18,
                    "unknown-action",
                    f"unknown action '`PRUNEX`'; {EXPECTED_ONE_OF}; did you mean PRUNE?",
                )
            ],
            id="a-name-ending-in-x",
        ),
        pytest.param(
            "### `CREATE`\n- **Description:** d\n- nonsense\n- **File Path:** [a](/a)\n```\nc\n```",
            [
                (
                    20,
                    "metadata-invalid",
                    "expected '**Key:** value' in the CREATE metadata list; found 'nonsense'",
                )
            ],
            id="fields-after-a-bad-item-are-read",
        ),
        pytest.param(
            "### `EXECUTE`\n- **env:**\n\n  para\n\n  - A: 1\n  - 1BAD: 2\n```\nls\n```",
            [
                (21, "stray-content", "unexpected paragraph 'para' inside the 'env' field"),
                (24, "env-invalid", "'1BAD' is not a variable name"),
            ],
            id="env-list-after-a-paragraph",
        ),
        pytest.param(
            "### `EXECUTE`\n- **env:**\n  - A: 1\n  -\n  - B: 2\n```\nls\n```",
            [(21, "env-invalid", 'expected an env item like `NAME`: "value"')],
            id="env-an-empty-item",
        ),
        pytest.param(
            "### `EXECUTE`\n- **env:**\n  - ```\n    x\n    ```\n```\nls\n```",
            [(20, "env-invalid", 'expected an env item like `NAME`: "value"')],
            id="env-a-fenced-item",
        ),
        pytest.param(
            "### `CONCLUDE`\n- **Handoff Resources:**\n  - [a](/a)\n  -\n  - [b](/b)\n\nbye",
            [(21, "resource-invalid", "CONCLUDE: expected a link")],
            id="handoff-an-empty-item",
        ),
    ],
)
def test_more_action_problems(actions: str, expected: list[Diag]) -> None:
    assert _problems(actions) == expected


def test_names_and_values_starting_or_ending_with_x_are_kept_whole() -> None:
    actions = _actions(
        "### `EXECUTE`\n- **env:**\n  - XDG_CONFIG_HOME: XconfX\n  - Q: 'x'\n```\nls\n```\n\n"
        "### `CREATE`\n- **File Path:** `XMLParser.py`\n```\nc\n```\n\n"
        "### `READ`\n- **Resource:** `Xdocs/a.md`\n\n"
        "### `INVOKE`\n- **Agent:** `Xavier`\n- **Handoff Resources:** `XMLParser.py`, `Xdocs/a.md`\n\n"
        "Go."
    )
    assert actions[0]["env"] == {"XDG_CONFIG_HOME": "XconfX", "Q": "x"}
    assert actions[1]["path"] == "XMLParser.py"
    assert actions[2]["resource"] == "Xdocs/a.md"
    assert (actions[3]["agent"], actions[3]["handoff_resources"]) == (
        "Xavier",
        ["XMLParser.py", "Xdocs/a.md"],
    )


# --- a block that swallowed an action (swallowed.py) ------------------------------------
# A fenced block left open ends at a later block's closing fence; what the parser says
# about it, to the line and word.  The texts are the block alone: the plan around it
# changes only the line numbers.


def _swallowed(text: str) -> list[Diag]:
    return [(d.line, d.code, d.message) for d in swallowed_actions(parse_document(text))]


def _in_fence(title: str, heading: int, inner: int, closing: int, info: str = "shell") -> Diag:
    return (
        heading,
        "action-in-fence",
        f"'### {title}' is inside the ```python block opened at line 1, whose closing fence "
        f"(line {closing}) closes the ```{info} block of line {inner} instead: the block of "
        f"line 1 was probably never closed; close it before line "
        f"{heading}",
    )


def _ambiguous(inner: int, closing: int, info: str = "shell", outer: str = "python") -> Diag:
    return (
        inner,
        "fence-ambiguous",
        f"the ```{outer} block opened at line 1 holds this opening fence, whose closing fence "
        f"(line {closing}) closes the ```{info} block of line {inner} instead: either the "
        f"block of line 1 was never closed, or its fences are too short; close it before "
        f"line {inner}, or make its fences longer than any "
        f"run of ` inside",
    )


SWALLOWING = "```python\nx = 1\n\n### {}\n```shell\nls\n```\n"
"""An unclosed block, a heading on line 4, and an EXECUTE's block (lines 5 to 7)."""


@pytest.mark.parametrize(
    "heading",
    ["`EXECUTE` ##", "`EXECUTE`\t#", "`EXECUTE` #######", "`EXECUTE`"],
    ids=["closing-hashes", "after-a-tab", "longer-than-the-opening", "none"],
)
def test_a_swallowed_heading_is_named_without_its_closing_hashes(heading: str) -> None:
    assert _swallowed(SWALLOWING.format(heading)) == [_in_fence("`EXECUTE`", 4, 5, 7)]


@pytest.mark.parametrize(
    "heading",
    ["`EXECUTE`#", "`EXECUTE` X", "`EXECUTE` #X", "###", "`RUN`"],
    ids=[
        "hash-glued-to-the-name",
        "a-word-after",
        "a-word-after-a-hash",
        "only-hashes",
        "no-action",
    ],
)
def test_a_heading_that_names_no_action_leaves_the_block_ambiguous(heading: str) -> None:
    # CommonMark: a # run is a closing sequence only after a space or a tab
    assert _swallowed(SWALLOWING.format(heading)) == [_ambiguous(5, 7)]


def test_the_first_swallowed_action_is_the_one_reported() -> None:
    text = "```python\nx = 1\n\n### `READ`\n- **Resource:** [a](/a)\n\n### `EXECUTE`\n```shell\nls\n```\n"
    assert _swallowed(text) == [_in_fence("`READ`", 4, 8, 10)]


def test_a_heading_inside_an_inner_block_is_that_blocks_content() -> None:
    # the ~~~ block (lines 3 to 5) holds the heading: no action vanished
    text = "```python\nx = 1\n~~~\n### `EXECUTE`\n~~~\n```shell\nls\n```\n"
    assert _swallowed(text) == [_ambiguous(6, 8)]


def test_a_line_with_a_backtick_after_its_backtick_run_is_no_fence() -> None:
    text = "```python\nx = 1\n```ls``` lists files\n### `EXECUTE`\n```shell\nls\n```\n"
    assert _swallowed(text) == [_in_fence("`EXECUTE`", 4, 5, 7)]


def test_an_inner_block_closed_before_the_heading_hides_nothing() -> None:
    # the ~~~ run closes a block it opened at the same length; ``` inside it is content
    text = "```python\nx = 1\n~~~text\n```python\n~~~\n### `EXECUTE`\n```shell\nls\n```\n"
    assert _swallowed(text) == [_in_fence("`EXECUTE`", 6, 7, 9)]


def test_a_fence_of_the_other_character_does_not_close_an_inner_block() -> None:
    text = "```python\nx = 1\n### `EXECUTE`\n```shell\nls\n~~~\n```\n"
    assert _swallowed(text) == [_in_fence("`EXECUTE`", 3, 4, 7)]


def test_an_inner_tilde_block_that_stays_open_is_not_reported() -> None:
    # the closing ``` is inside the ~~~ block: not the sign of a swallowed action
    text = "```python\nx = 1\n~~~text\n### `EXECUTE`\n```shell\nls\n```\n"
    assert _swallowed(text) == []


def test_lines_are_counted_from_a_blank_first_line() -> None:
    assert _swallowed("```python\n\n### `EXECUTE`\n```shell\nls\n```\n") == [
        _in_fence("`EXECUTE`", 3, 4, 6)
    ]
    assert _swallowed("```python\n\n```text\nq\n```\n") == [_ambiguous(3, 5, info="text")]


def test_an_unclosed_research_query_gets_the_whole_fence_ambiguous_message() -> None:
    text = "```text\nfirst query\n\n```text\nsecond query\n```\n"
    assert _swallowed(text) == [_ambiguous(4, 6, info="text", outer="text")]
