"""parse(render(plan)) == plan for every valid plan, and parsing never crashes."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from plankit.teddy.format.model import Create, Plan
from plankit.teddy.format.parse import check_plan, parse_plan
from plankit.teddy.format.render import render_plan
from tests.profiles import examples
from tests.teddy.strategies import plans

SETTINGS = settings(
    max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@SETTINGS
@given(plans)
def test_render_then_parse_gives_the_same_plan(plan: Plan) -> None:
    text = render_plan(plan)
    assert parse_plan(text) == plan


@SETTINGS
@given(plans)
def test_rendered_plans_are_stable(plan: Plan) -> None:
    text = render_plan(plan)
    assert render_plan(parse_plan(text)) == text


def test_render_uses_a_fence_longer_than_any_backtick_run() -> None:
    plan = Plan(
        "T",
        (),
        "### 1. Synthesis\n### 2. Justification\n### 3. Expected Outcome\n### 4. State Dashboard",
        (),
        (Create("a.md", "```\n`````\n```"),),
    )
    text = render_plan(plan)
    assert "``````markdown\n```\n`````\n```\n``````" in text
    assert parse_plan(text) == plan


plan_lines = st.sampled_from(
    [
        "# Title", "## Rationale", "## Memos", "## Action Plan", "### `CREATE`", "### `EDIT`",
        "### READ", "### `BOGUS`", "#### FIND:", "`FIND:`", "REPLACE:", "- **File Path:** [a](/a)",
        "- **Resource:** [u](https://x.y)", "- **env:**", "    - `A`: \"b\"", "- **Agent:** X",
        "```", "````", "```text", "~~~", "[+] memo # c", "[-] old", "text", "", "  ", "> quote",
        "<div>", "1. item", "- [ ] x", "\t- tab", "    code", "ðŸŸ¢ âœ…", "-", "***", "Setext\n===",
    ]
)  # fmt: skip


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(plan_lines, max_size=40).map("\n".join))
@example("")
@example("# T\n## Action Plan\n### `EDIT`\n`FIND:`\n```\n")
def test_parsing_any_text_returns_a_plan_or_diagnostics(text: str) -> None:
    plan, diagnostics = check_plan(text)
    assert (plan is None) == bool(diagnostics)
    for diag in diagnostics:
        assert diag.line >= 0 and diag.code and diag.message


@settings(max_examples=examples(300), deadline=None)
@given(st.text(max_size=300))
def test_parsing_arbitrary_unicode_never_raises(text: str) -> None:
    plan, diagnostics = check_plan(text)
    assert (plan is None) == bool(diagnostics)
