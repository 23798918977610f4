"""A 10 MB-class plan with one fence that never closes reads as the whole-text parse reads it.

The Markdown tree cuts such a fence out to the end of the text instead of handing the
whole text to markdown-it-py; the diagnostics must stay those of reading the whole text:
one ``fence-unclosed`` where the fence opens, and nothing invented after it (everything
after is the fence's content).  The same plans, small, are also checked against a tree
built from markdown-it-py's tokens of the whole text.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plankit.teddy.format.parse as parse_package
from plankit.errors import Diagnostic
from plankit.markdown.tree import Document, _Builder, _markdown_it, normalize
from plankit.teddy.format.model import ChatWithUser, Create, Memo, Plan
from plankit.teddy.format.parse import RATIONALE_SECTIONS, check_plan
from plankit.teddy.format.parse.checker import norm_key
from plankit.teddy.format.parse.sections import _RATIONALE_HEAD_RE
from plankit.teddy.format.render import render_plan

RATIONALE = "\n\n".join(f"### {i}. {s}\nWhy." for i, s in enumerate(RATIONALE_SECTIONS, 1))


def _content(n: int) -> str:
    lines = [f"def handler_{n}_{i}(event: dict[str, object]) -> list[str]:" for i in range(12)]
    body = "\n".join(f"{line}\n    return [str(event.get('k{i}'))]" for i, line in enumerate(lines))
    return body + "\n\n# " + "padding " * 300


def plan_text(actions: int) -> str:
    """A valid plan of CREATE actions (about 3.4 kB each) and a closing CHAT_WITH_USER."""
    steps = [Create(f"src/mod_{n}.py", _content(n), f"Module {n}.") for n in range(actions)]
    plan = Plan(
        "A large plan",
        (("Status", "Green 🟢"),),
        RATIONALE,
        (Memo("+", "keep the handlers small", None),),
        (*steps, ChatWithUser("All done?")),
    )
    return render_plan(plan)


def unclosed_in_the_middle(text: str) -> tuple[str, int]:
    """The plan with the opening fence of the middle CREATE's content made too long to
    close, and that fence's line."""
    openers = [m.start() for m in re.finditer(r"^```python$", text, re.MULTILINE)]
    at = openers[len(openers) // 2]
    return text[:at] + "``````````" + text[at + 3 :], text.count("\n", 0, at) + 1


def truncated(text: str) -> tuple[str, int]:
    """The plan cut off inside its last CREATE's content (a model's answer cut short)."""
    at = text.rindex("```python\n")
    return text[: at + len("```python\ndef handler")], text.count("\n", 0, at) + 1


def rationale_unclosed(text: str) -> tuple[str, int]:
    """The plan with its Rationale fence made too long to close."""
    at = text.index("```text\n")
    return text[:at] + "``````````" + text[at + 3 :], text.count("\n", 0, at) + 1


def unclosed(line: int, ticks: int) -> Diagnostic:
    return Diagnostic(
        line,
        "fence-unclosed",
        f"the fenced block opened here with {'`' * ticks} is never closed; "
        f"close it with a {'`' * ticks} line after its last line",
    )


@pytest.fixture(scope="module")
def large() -> str:
    text = plan_text(3_000)
    assert len(text.encode()) > 10_000_000
    return text


def test_the_large_plan_is_valid(large: str) -> None:
    plan, diagnostics = check_plan(large)
    assert diagnostics == []
    assert plan is not None and len(plan.actions) == 3_001


def test_an_unclosed_fence_in_the_middle_is_its_only_diagnostic(large: str) -> None:
    text, line = unclosed_in_the_middle(large)
    assert check_plan(text) == (None, [unclosed(line, 10)])


def test_a_plan_cut_off_inside_a_fence_reports_that_fence(large: str) -> None:
    text, line = truncated(large)
    assert check_plan(text) == (None, [unclosed(line, 3)])


def test_an_unclosed_rationale_swallows_the_action_plan(large: str) -> None:
    text, line = rationale_unclosed(large)
    last = text.count("\n")
    missing = Diagnostic(
        last,
        "action-plan-missing",
        "the plan has no '## Action Plan' section; add it with at least one action",
    )
    assert check_plan(text) == (None, [unclosed(line, 10), missing])


def _whole_text_document(text: str) -> Document:
    """The tree markdown-it-py's tokens of the whole text give, with no fast path."""
    src = normalize(text)
    builder = _Builder({})
    blocks = builder.build(_markdown_it().parse(src))
    return Document(src, tuple(blocks), builder.too_deep)


@pytest.mark.parametrize("variant", [unclosed_in_the_middle, truncated, rationale_unclosed])
def test_small_variants_read_as_the_whole_text_parse(
    variant: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert callable(variant)
    text, _ = variant(plan_text(40))
    fast = check_plan(text)
    monkeypatch.setattr(parse_package, "parse_document", _whole_text_document)
    assert check_plan(text) == fast
    assert fast[1]  # the variant is broken


# The Rationale's section-heading pattern as first written, with backtracking
# quantifiers: the possessive one must find the same headings with the same names.
REFERENCE_HEAD_RE = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*)?(?:\*\*)?[ \t]*(?:\d+\.?[ \t]*)?(?P<name>[A-Za-z][A-Za-z ]*?)"
    r"[ \t]*(?:\*\*)?[ \t]*:?[ \t]*(?:\*\*)?[ \t]*$",
    re.MULTILINE,
)
HEAD_PIECES = st.sampled_from(
    [" ", "  ", "\t", "#", "###", "#######", "*", "**", "1", "2.", ".", ":", "a", "Synthesis",
     "State", " Dashboard", "Expected  Outcome", "x", "\n", "_", "-", "é", "`"]
)  # fmt: skip


@settings(max_examples=2000, deadline=None)
@given(st.lists(HEAD_PIECES, max_size=14).map("".join))
def test_rationale_headings_are_found_as_before(text: str) -> None:
    def found(pattern: re.Pattern[str]) -> list[tuple[int, int, str]]:
        return [(m.start(), m.end(), norm_key(m.group("name"))) for m in pattern.finditer(text)]

    assert found(_RATIONALE_HEAD_RE) == found(REFERENCE_HEAD_RE)
