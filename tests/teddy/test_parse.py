"""The TeDDy plan parser: golden plans, every diagnostic, and the rules of the format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plankit.errors import PlanError
from plankit.teddy.format.model import (
    ActionType,
    ChatWithUser,
    Conclude,
    Create,
    Edit,
    Execute,
    Invoke,
    Read,
    Resource,
    plan_to_dict,
)
from plankit.teddy.format.parse import RATIONALE_SECTIONS, check_plan, parse_plan

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "plans"

VALID = sorted((DATA / "valid").glob("*.md"))
INVALID = sorted((DATA / "invalid").glob("*.md"))
EXAMPLES = [
    ROOT / "examples" / f"{name}.md"
    for name in ("finisher-agent-research", "add-health-endpoint", "conclude-root-cause")
]


def _text(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


RATIONALE = "\n".join(
    ["## Rationale", "```text"]
    + [f"### {i}. {name}\nx" for i, name in enumerate(RATIONALE_SECTIONS, 1)]
    + ["```"]
)


def plan_text(actions: str, *, title: str = "# A plan", memos: str = "") -> str:
    memo_part = f"## Memos\n```\n{memos}\n```\n\n" if memos else ""
    return (
        f"{title}\n- **Status:** Green\n\n{RATIONALE}\n\n{memo_part}## Action Plan\n\n{actions}\n"
    )


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_plan_matches_its_golden_json(path: Path) -> None:
    plan, diagnostics = check_plan(_text(path))
    assert diagnostics == []
    assert plan is not None
    expected = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    assert plan_to_dict(plan) == expected


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_bundled_examples_parse(path: Path) -> None:
    plan = parse_plan(_text(path))
    expected = json.loads((DATA / "examples" / f"{path.stem}.json").read_text(encoding="utf-8"))
    assert plan_to_dict(plan) == expected


def _expected_errors(path: Path) -> list[tuple[int, str]]:
    rows = path.with_suffix(".errors").read_text(encoding="utf-8").split("\n")
    pairs = [row.split(" ", 1) for row in rows if row.strip()]
    return sorted((int(line), code) for line, code in pairs)


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_invalid_plan_reports_every_problem(path: Path) -> None:
    plan, diagnostics = check_plan(_text(path))
    assert plan is None
    assert sorted((d.line, d.code) for d in diagnostics) == _expected_errors(path)
    for diag in diagnostics:
        assert diag.message and "\n" not in diag.message
    with pytest.raises(PlanError) as info:
        parse_plan(_text(path))
    assert list(info.value.diagnostics) == sorted(diagnostics)


def test_spec_example_fields() -> None:
    plan = parse_plan(_text(EXAMPLES[0]))
    assert plan.title == 'Research and Propose a New "Finisher" Agent Role'
    assert plan.metadata == (
        ("Status", "Green 🟢"),
        ("Plan Type", "Exploration"),
        ("Agent", "Pathfinder"),
    )
    assert plan.agent == "Pathfinder"
    assert plan.meta("plan type") == "Exploration"
    assert [a.type for a in plan.actions] == [
        ActionType.RESEARCH,
        ActionType.CREATE,
        ActionType.EDIT,
        ActionType.CHAT_WITH_USER,
        ActionType.INVOKE,
    ]
    assert [a.line for a in plan.actions] == [33, 42, 55, 75, 80]
    invoke = plan.actions[-1]
    assert isinstance(invoke, Invoke)
    assert invoke.agent == "Architect"
    assert invoke.message == "Handoff to Architect to begin implementation of the approved brief."


def test_fenced_content_is_exactly_between_the_fences() -> None:
    text = plan_text(
        "### `CREATE`\n- **File Path:** [a.txt](/a.txt)\n````\n\n  first\nlast  \n\n````"
    )
    create = parse_plan(text).actions[0]
    assert isinstance(create, Create)
    assert create.content == "\n  first\nlast  \n"


def test_memo_comment_needs_whitespace_before_hash() -> None:
    text = plan_text("### `CONCLUDE`\nDone.", memos="[+] Prefer C# here # why\n[-] old#fact")
    memos = parse_plan(text).memos
    assert [(m.op, m.text, m.comment) for m in memos] == [
        ("+", "Prefer C# here", "why"),
        ("-", "old#fact", None),
    ]


def test_double_encoding_is_repaired_outside_file_content() -> None:
    text = plan_text(
        "### `EXECUTE`\n- **Description:** Run it â€” now\n```shell\necho 'âœ…'\n```",
        title="# Plan âœ…",
    )
    plan = parse_plan(text)
    assert plan.title == "Plan ✅"
    execute = plan.actions[0]
    assert isinstance(execute, Execute)
    assert execute.description == "Run it — now"
    assert execute.command == "echo 'âœ…'"


def test_chat_message_keeps_its_markdown_and_nested_headings() -> None:
    message = (
        "Two options:\n\n#### Option A\n- fast\n- risky\n\n```text\n### `CREATE`\n```\n\nWhich one?"
    )
    plan = parse_plan(plan_text(f"### `CHAT_WITH_USER`\n{message}\n\n### `CONCLUDE`\nBye."))
    chat = plan.actions[0]
    assert isinstance(chat, ChatWithUser)
    assert chat.message == message
    assert isinstance(plan.actions[1], Conclude)


def test_conclude_with_a_list_message_is_not_metadata() -> None:
    plan = parse_plan(plan_text("### `CONCLUDE`\n- finished the RCA\n- attached the spike"))
    conclude = plan.actions[0]
    assert isinstance(conclude, Conclude)
    assert conclude.handoff_resources == ()
    assert conclude.message == "- finished the RCA\n- attached the spike"


def test_edit_pairs_are_kept_in_order() -> None:
    pairs = "\n\n".join(
        f"`FIND:`\n```\nfind {i}\n```\n`REPLACE:`\n```\nreplace {i}\n```" for i in range(5)
    )
    plan = parse_plan(plan_text(f"### `EDIT`\n- **File Path:** [a](/a)\n\n{pairs}"))
    edit = plan.actions[0]
    assert isinstance(edit, Edit)
    assert [(e.find, e.replace) for e in edit.edits] == [
        (f"find {i}", f"replace {i}") for i in range(5)
    ]


def test_read_resource_kinds() -> None:
    plan = parse_plan(
        plan_text(
            "### `READ`\n- **Resource:** [a](/docs/a.md)\n\n"
            "### `READ`\n- **Resource:** [site](http://example.com/x)\n\n"
            "### `READ`\n- **Resource:** `docs/bare.md`"
        )
    )
    resources = [a.resource for a in plan.actions if isinstance(a, Read)]
    assert resources == [
        Resource("file", "docs/a.md"),
        Resource("url", "http://example.com/x"),
        Resource("file", "docs/bare.md"),
    ]


def test_ten_thousand_actions_parse() -> None:
    actions = "\n\n".join(
        f"### `CREATE`\n- **File Path:** [f{i}.txt](/f{i}.txt)\n```\ncontent {i}\n```"
        for i in range(10_000)
    )
    plan = parse_plan(plan_text(actions))
    assert len(plan.actions) == 10_000
    last = plan.actions[-1]
    assert isinstance(last, Create)
    assert (last.path, last.content) == ("f9999.txt", "content 9999")


def test_deeply_nested_lists_are_reported_not_dropped() -> None:
    nested = "\n".join("  " * depth + "- level" for depth in range(200))
    plan, diagnostics = check_plan(plan_text("### `CONCLUDE`\n" + nested))
    assert plan is None
    assert "nesting-too-deep" in {d.code for d in diagnostics}


def test_deeply_nested_quotes_are_reported() -> None:
    plan, diagnostics = check_plan(plan_text("### `CONCLUDE`\n" + ">" * 5000 + " deep"))
    assert plan is None
    assert "nesting-too-deep" in {d.code for d in diagnostics}


def test_empty_text_is_one_diagnostic() -> None:
    for text in ("", "   \n\n\t\n"):
        plan, diagnostics = check_plan(text)
        assert plan is None
        assert [(d.line, d.code) for d in diagnostics] == [(1, "plan-empty")]


def test_a_rationale_fence_closed_early_is_an_error_not_merged_text() -> None:
    text = (
        "# T\n\n## Rationale\n```text\n### 1. Synthesis\nA traceback:\n```\nboom\n```\n"
        "### 2. Justification\nj\n### 3. Expected Outcome\ne\n### 4. State Dashboard\nd\n```\n\n"
        "## Action Plan\n\n### `CONCLUDE`\nDone.\n"
    )
    plan, diagnostics = check_plan(text)
    assert plan is None
    assert [(d.line, d.code) for d in diagnostics] == [(8, "stray-content"), (9, "stray-content")]
    assert "make its fences longer than any fence inside" in diagnostics[0].message
    assert "teddy preprocess" not in diagnostics[0].message  # `teddy parse` says it, when true


def test_an_unfenced_rationale_may_hold_code_blocks() -> None:
    text = (
        "# T\n\n## Rationale\n### 1. Synthesis\nA traceback:\n\n```\nboom\n```\n\n"
        "### 2. Justification\nj\n### 3. Expected Outcome\ne\n### 4. State Dashboard\nd\n\n"
        "## Action Plan\n\n### `CONCLUDE`\nDone.\n"
    )
    plan = parse_plan(text)
    assert "```\nboom\n```" in plan.rationale


def test_a_leading_byte_order_mark_is_ignored() -> None:
    text = EXAMPLES[0].read_text(encoding="utf-8")
    assert parse_plan("\ufeff" + text) == parse_plan(text)
