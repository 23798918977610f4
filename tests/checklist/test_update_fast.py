"""The regex fast path of update_task_status (``plankit.checklist.scan``) against the
Markdown tree: on every generated plan, for every step, the fast path names the line
the tree names (or says it is unsure), and a cold update gives the same text as an
update through the tree."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from plankit.checklist import TaskStatus, locate, parse_plan, scan, structure, update_task_status
from plankit.checklist.errors import AmbiguousStepError
from plankit.checklist.render import STARTER_PLAN, render_new_plan
from plankit.checklist.structure import Structure, read_structure
from tests.profiles import examples

TODAY = dt.date(2026, 1, 15)
STEPS = ["1.1", "1.2", "1.10", "2.1", "2.1.1", "2.1.2", "1.1.1", "10.1", "3.1"]
STEP_IN_TEXT_RE = re.compile(r"\] (\d+\.\d+(?:\.\d+)?)")


def tree_line_start(text: str, step: str, found: Structure | None = None) -> int | None:
    """Where the tree says the update of ``step`` goes (None: no such task)."""
    found = found or read_structure(text)
    line = found.targets.get(step)
    return None if line is None else found.line_starts[line - 1]


def steps_of(text: str) -> list[str]:
    """Every step written in ``text`` (tasks or not), a few unknown ones, odd ones."""
    return sorted({*STEP_IN_TEXT_RE.findall(text), "9.9", "1", "1.1.1.1", "x.y", "1.1 A"})


def check(text: str) -> int:
    """Compare the fast path with the tree for every step; the number of answers."""
    answered = 0
    found = read_structure(text)
    for step in steps_of(text):
        fast = scan.task_line_start(text, step)
        if fast is scan.UNSURE:
            event("unsure")
            continue
        answered += 1
        event("answered")
        assert fast == tree_line_start(text, step, found), step
        # the phase it is in, as PlanManager's cold updates report the task
        placed = scan.task_in_phase(text, step)
        assert placed is not scan.UNSURE
        in_phase = found.phase_steps.get(step)
        assert (placed[1] if placed else None) == (in_phase[1] if in_phase else None), step
    return answered


def outcome(text: str, step: str, status: TaskStatus, note: str | None) -> object:
    """The updated text, or the lines named when the step is ambiguous."""
    try:
        return update_task_status(text, step, status, note, today=TODAY)
    except AmbiguousStepError as exc:
        return ("ambiguous", exc.lines)


def check_updates(text: str, status: TaskStatus, note: str | None) -> None:
    """A cold update (fast path) gives the text an update through the tree gives (or
    refuses the same ambiguous step)."""
    for step in steps_of(text):
        locate.clear()
        cold = outcome(text, step, status, note)
        locate.clear()
        locate.analyze(text)  # cached: the update below goes through the tree
        warm = outcome(text, step, status, note)
        assert cold == warm, step
    locate.clear()


# --- generated plans ---------------------------------------------------------------------

INDENTS = ["", "", "", " ", "  ", "  ", "   ", "    ", "     ", "      ", "        ", "\t"]
INDENTS += [" " * n for n in range(7, 13)]
TITLES = [
    "Read Orders!A2:F500 (ids)",
    "Import — then clean",
    "Load âœ… data",
    "x",
    "Title ✅ 2026-01-02",
    "Blocked thing — waiting on Bob",
    "Review â€” check this",
    "Issue #5 <b>bold</b> > 3",
    "A",
    "",
]


@st.composite
def task_line(draw: st.DrawFn, step: str | None = None, indent: str | None = None) -> str:
    if indent is None:
        indent = draw(st.sampled_from(INDENTS))
    if step is None:
        step = draw(st.sampled_from(STEPS))
    bullet = draw(st.sampled_from("--*+"))
    char = draw(st.sampled_from(" /xX>!?"))
    sep = draw(st.sampled_from([" ", " ", "  ", "\t"]))
    title = draw(st.sampled_from(TITLES))
    tail = draw(
        st.sampled_from(["", "", " ✅ 2026-01-10", " âœ… 2026-01-10", " — why", " â€” why"])
    )
    return f"{indent}{bullet} [{char}] {step}{sep}{title}{tail}"


HEADINGS = st.sampled_from(
    [
        "# Plan: Big", "# Other", "## Analysis", "## Questions for User", "## Notes",
        "## notes and more", "## NOTES ##", "## Other section", "##", "### Phase 1: Setup",
        "### Phase 2: Work ###", "### phase 3: lower", "### PHASE 10: Upper",
        "### Phase 2:", "### Phase two", "### phase x", "### Details", "#### Phase 1: Deep",
        "###### Six", "####### seven", "#5 not a heading", "### Phase 1: #", "#\tPhase",
        "### Phase\u00a01: odd space", "## \u00a0Notes",
    ]
)  # fmt: skip

OTHER_LINES = st.sampled_from(
    [
        "", "", "", "  ", "Goal: do it", "Some paragraph text", "  continued text",
        "    indented text", "- sub bullet", "  - nested bullet", "    - deeper bullet",
        "* star item", "1. ordered", "2) ordered", "   3. ordered", "-", "- ", "  -",
        "text with ``` inline", "- `code` item", "---", "***", "- - -", "===", "  ---",
        "> quote", "> - [ ] 1.1 quoted", "<div>", "</div>", "<!-- comment -->",
        "  # indented heading", "- # item heading", "[ref]: /url", "    code block",
        "\tx", "- > q", "- <b>", "  ```", "- ```", "1. - [ ] 2.1 nested in ordered",
        "- 1. x", "  - 1. x", "- * x", "-    wide item", "     - far item", "- [link](x) y",
        "  - [ref]: /u", "    ```", "   ~~~", "### phase x", "### Phase 3: Again",
        " " * 44 + "- deep", "- - - - - - - - - - - - - - - - - - - - - - - x",
    ]
)  # fmt: skip


@st.composite
def fence_block(draw: st.DrawFn) -> list[str]:
    char = draw(st.sampled_from("`~"))
    n = draw(st.integers(3, 5))
    info = draw(st.sampled_from(["", "python", "md", " x`y"]))
    inner = draw(st.lists(st.one_of(task_line(), HEADINGS, OTHER_LINES), max_size=4))
    closer = draw(
        st.sampled_from(
            [char * n, char * (n + 1), char * (n - 1), "~~~", "```"]
            + [" " * i + char * n for i in range(1, 5)]
        )
    )
    closed = draw(st.integers(0, 9)) > 0
    return [char * n + info, *inner, *([closer] if closed else [])]


LINE_SOUP = st.lists(
    st.one_of(
        task_line().map(lambda s: [s]),
        task_line().map(lambda s: [s]),
        HEADINGS.map(lambda s: [s]),
        OTHER_LINES.map(lambda s: [s]),
        fence_block(),
    ),
    max_size=30,
)


def join(blocks: list[list[str]], eol: str, final: bool) -> str:
    lines = [line for block in blocks for line in block]
    return eol.join(lines) + (eol if final and lines else "")


@settings(max_examples=examples(1500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(LINE_SOUP, st.sampled_from(["\n", "\r\n"]), st.booleans())
@example([["### Phase 1: W"], ["- a"], ["      - [ ] 1.1 x"]], "\n", True)
@example([["- a"], ["     - b"], ["    - [ ] 1.1 lazy"]], "\n", True)
@example([["### Phase 1: W"], ["-    a"], ["    - [ ] 1.1 lazy"]], "\n", True)
@example([["<div>"], ["```"], ["- [ ] 1.1 x"], ["```"]], "\n", False)
@example([["Notes"], ["---"], ["- [ ] 1.1 x"]], "\n", False)
@example([["### Phase 1: W"], ["- [ ] 1.1 "], ["- [ ] 1.1  "]], "\r\n", True)
@example([["### Phase 1: W"], ["- a"], ["  - 1. x"], ["          - [ ] 1.1 y"]], "\n", True)
def test_line_soup_agrees_with_the_tree(blocks: list[list[str]], eol: str, final: bool) -> None:
    check(join(blocks, eol, final))


@st.composite
def plan(draw: st.DrawFn) -> str:
    """A plan as people and agents write them: sections, phases of tasks with
    sub-steps and notes, fences holding task-like lines, Notes with task-like lines."""
    out = ["# Plan: Generated", "", "Goal: agree with the tree", ""]
    if draw(st.booleans()):
        out += ["## Analysis", "", "- Spreadsheet: S", "- [ ] 1.1 not a task", "  - Read: A", ""]
    if draw(st.booleans()):
        out += ["## Questions for User", "", "- [ ] 2.1 not a task either", ""]
    for p in range(1, draw(st.integers(1, 3)) + 1):
        out += [draw(st.sampled_from([f"### Phase {p}: Work", f"### Phase {p}: W ##"]))]
        if draw(st.booleans()):
            out.append("")
        for s in range(1, draw(st.integers(1, 4)) + 1):
            out.append(draw(task_line(f"{p}.{s}", "")))
            for sub in range(1, draw(st.integers(0, 2)) + 1):
                indent = draw(st.sampled_from(["  ", "  ", "   ", "    ", "\t", "     "]))
                out.append(draw(task_line(f"{p}.{s}.{sub}", indent)))
            extra = draw(
                st.sampled_from(
                    ["", "", "  - a detail", "  wrapped text", "", "```", "~~~~", "> q"]
                )
            )
            if extra in ("```", "~~~~"):
                out += [extra, f"- [ ] {p}.{s} fenced copy", extra]
            elif extra:
                out.append(extra)
            if draw(st.integers(0, 4)) == 0:
                out.append("")
        out.append("")
    if draw(st.booleans()):
        out += ["## Notes", "", "- [ ] 1.1 an idea, not a task", "Some note", ""]
        out += draw(st.lists(OTHER_LINES, max_size=3))
    if draw(st.booleans()):
        out += ["### Phase 9: After notes", "- [ ] 1.1 a later duplicate"]
    if draw(st.booleans()):  # a malformed phase heading: the task below it is loose
        at = draw(st.integers(0, len(out)))
        out[at:at] = ["### phase without number", "- [ ] 1.2 loose", "- [ ] 2.1 loose", ""]
    return "\n".join(out) + "\n"


@settings(max_examples=examples(400), deadline=None)
@given(plan(), st.sampled_from(["\n", "\r\n"]))
def test_generated_plans_agree_with_the_tree(text: str, eol: str) -> None:
    check(text.replace("\n", eol))


@settings(max_examples=examples(120), deadline=None)
@given(plan(), st.sampled_from(["\n", "\r\n"]), st.sampled_from(list(TaskStatus)))
def test_cold_updates_equal_tree_updates(text: str, eol: str, status: TaskStatus) -> None:
    check_updates(text.replace("\n", eol), status, "a — note")


@settings(max_examples=examples(300), deadline=None)
@given(LINE_SOUP, st.sampled_from(["\n", "\r\n"]), st.sampled_from(list(TaskStatus)))
def test_cold_updates_equal_tree_updates_on_line_soup(
    blocks: list[list[str]], eol: str, status: TaskStatus
) -> None:
    check_updates(join(blocks, eol, True), status, None)


# --- the fast path answers for ordinary plans ---------------------------------------------


def big_plan() -> str:
    lines = ["# Plan: Big", "", "Goal: g", "", "## Analysis", "", "- Spreadsheet: s", ""]
    for p in range(1, 41):
        lines += [f"### Phase {p}: P{p}", ""]
        for s in range(1, 11):
            lines.append(f"- [ ] {p}.{s} Read Orders{p}!A2:F{s}00 (order id, date)")
            if s % 3 == 0:
                lines.append(f"  - [x] {p}.{s}.1 Sub step ✅ 2026-01-02")
        lines += ["", "```text", f"- [ ] {p}.1 an example in a fence", "```", ""]
    lines += ["## Notes", "", "- [ ] 1.1 not a task", "> a quote in the notes", "<!-- x -->"]
    return "\n".join(lines) + "\n"


DOCS_EXAMPLE = """# Plan: Monthly Inventory Reconciliation

Goal: Reconcile warehouse inventory with sales data and flag discrepancies

## Analysis

- Spreadsheet: Inventory Management 2026
- Target ranges:
  - Read: Warehouse!A2:F500 (SKU, bin, qty on hand, last count, counter, notes)

### Phase 1: Data Collection
- [x] 1.1 Read Warehouse!A2:F500 (current stock by SKU) ✅ 2026-01-08
- [/] 1.2 Read Sales!A2:H1000 (January transactions)
  - [ ] 1.2.1 Check the POS upload is complete

### Phase 2: Calculation
- [!] 2.1 Flag variance > threshold in Staging!E2:E500 — please verify 5% is right
- [>] 2.2 Update Dashboard!A1:D10 (chart data) — waiting for the 2.1 review

## Notes

- SKU "WH-4521" has duplicate entries in Warehouse!A:A
"""


@pytest.mark.parametrize(
    "text",
    [
        big_plan(),
        big_plan().replace("\n", "\r\n"),
        STARTER_PLAN,
        DOCS_EXAMPLE,
        render_new_plan("T", "G", [{"name": "A", "steps": ["x", "y"]}]),
    ],
    ids=["big", "big-crlf", "starter", "docs", "rendered"],
)
def test_ordinary_plans_never_need_the_tree(text: str) -> None:
    steps = [t.step for t in parse_plan(text).tasks]
    assert steps
    found = read_structure(text)
    for step in [*steps, "9.9"]:
        fast = scan.task_line_start(text, step)
        assert fast is not scan.UNSURE, step
        assert fast == tree_line_start(text, step, found), step


def test_a_plan_manager_update_of_a_file_never_seen_does_not_parse(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from plankit.checklist import manager as manager_module
    from plankit.checklist.manager import PlanManager
    from plankit.checklist.stores.markdown_file import MarkdownFile

    text = big_plan()
    path = tmp_path / "PLAN.md"
    path.write_text(text, encoding="utf-8")
    expected = parse_plan(text).task("3.2")
    assert expected is not None
    locate.clear()

    def no_parse(_: str) -> object:
        raise AssertionError("the tree was used")

    monkeypatch.setattr(manager_module, "analyze", no_parse)
    monkeypatch.setattr(locate, "entry", no_parse)
    task = PlanManager(MarkdownFile(path), today=lambda: TODAY).complete_task("3.2")
    assert (task.step, task.line, task.phase, task.status) == (
        "3.2", expected.line, expected.phase, TaskStatus.DONE,
    )  # fmt: skip
    assert path.read_text(encoding="utf-8") == update_task_status(text, "3.2", "done", today=TODAY)


def test_a_cold_update_does_not_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    text = big_plan()

    def no_parse(_: str) -> object:
        raise AssertionError("the tree was used")

    locate.clear()
    monkeypatch.setattr(structure, "read_structure", no_parse)
    updated = update_task_status(text, "40.10", "done", today=TODAY)
    assert updated == text.replace(
        "- [ ] 40.10 Read Orders40!A2:F1000 (order id, date)",
        "- [x] 40.10 Read Orders40!A2:F1000 (order id, date) ✅ 2026-01-15",
    )
    assert update_task_status(text, "99.1", "done") is text
    assert update_task_status(text, "3.3.1", "doing", today=TODAY).count("- [/] 3.3.1") == 1


@pytest.mark.parametrize(
    "text",
    [
        "<div>\n\n### Phase 1: W\n- [ ] 1.1 a\n",  # an HTML block before
        "### Phase 1: W\n> - [ ] 1.1 quoted\n- [ ] 1.1 a\n",  # a block quote before
        "### Phase 1: W\n  ```\n- [ ] 1.1 a\n",  # an indented fence
        "Notes\n---\n- [ ] 1.1 a\n",  # a setext heading
        "### Phase 1: W\n  ## Notes\n- [ ] 1.1 a\n",  # an indented heading
        "### Phase\u00a01: W\n- [ ] 1.1 a\n",  # unusual whitespace in a heading
        "### Phase 1: W\n- a\n\n  - [ ] 1.1 after a blank\n",  # a loose list
        "### Phase 1: W\n1. a\n   - [ ] 1.1 under an ordered item\n",
        "### Phase 1: W\n- [ ] 1.1 a\r- [ ] 1.2 b\n",  # a lone CR
        "### Phase 1: W\n    - [ ] 1.1 indented code\n",  # under a heading
        "### Phase 1: W\n- a\n     - b\n          - c\n      - [ ] 1.1 code in a\n",
        "### Phase 1: W\n- a\n\n  - [ ] 1.1 unsure\n- [ ] 1.1 sure\n",  # which is first?
        "### Phase 1: W\n" + "".join("  " * d + "- x\n" for d in range(24)) + "- [ ] 1.1 a\n",
    ],
    ids=["html", "quote", "indented-fence", "setext", "indented-heading", "nbsp",
         "loose", "ordered", "lone-cr", "indented-code", "code-in-item", "unsure-first",
         "deep"],
)  # fmt: skip
def test_unusual_markdown_before_the_task_goes_to_the_tree(text: str) -> None:
    assert scan.task_line_start(text, "1.1") is scan.UNSURE
    check_updates(text, TaskStatus.DONE, None)


def test_unusual_markdown_after_the_last_candidate_does_not_matter() -> None:
    text = "### Phase 1: W\n- [ ] 1.1 a\n\n## Notes\n\n> quote\n<div>\n  # h\nx\n---\n"
    assert scan.task_line_start(text, "1.1") == text.index("- [ ] 1.1")
    assert scan.task_line_start(text, "1.2") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("### Phase 1: W\n- a\n      - [ ] 1.1 continuation\n", None),
        ("### Phase 1: W\n- a\n  - [ ] 1.1 nested\n", "  - [ ] 1.1"),
        ("### Phase 1: W\n- a\n   - b\n       - [ ] 1.1 nested\n", "       - [ ] 1.1"),
        ("### Phase 1: W\n- a\n   - b\n         - [ ] 1.1 continuation\n", None),
        ("### Phase 1: W\n  - [ ] 1.1 indented item\n", "  - [ ] 1.1"),
        ("### Phase 1: W\n- a\n  text\n  - [ ] 1.1 after text\n", "  - [ ] 1.1"),
        ("- [ ] 1.1 loose\n### Phase 1: W\n- [ ] 1.1 phase\n", "- [ ] 1.1 phase"),
        ("- [ ] 1.1 loose\n## Notes\n- [ ] 1.1 note\n", "- [ ] 1.1 loose"),
        ("### Phase 1: W\n### phase x\n- [ ] 1.1 loose\n", "- [ ] 1.1 loose"),
        ("### Phase 1: W\n### phase x\n- [ ] 1.1 a\n### Phase 2: V\n- [ ] 1.1 b\n", "- [ ] 1.1 b"),
        ("### Phase 1: W\n- a\n     - b\n      - [ ] 1.1 lazy\n", None),
        ("## Notes\n### phase x\n- [ ] 1.1 still notes\n", None),
        ("## Notes\n### Phase 1: W\n- [ ] 1.1 in a phase\n", "- [ ] 1.1 in a phase"),
        ("### Phase 1: W\n````\n```\n- [ ] 1.1 fenced\n````\n- [ ] 1.1 b\n", "- [ ] 1.1 b"),
        ("### Phase 1: W\n```a`b\n- [ ] 1.1 not fenced\n", "- [ ] 1.1 not fenced"),
        ("### Phase 1: W\n~~~\n- [ ] 1.1 unclosed\n", None),
    ],
)
def test_tricky_but_simple_cases(text: str, expected: str | None) -> None:
    want = None if expected is None else text.index(expected)
    got = scan.task_line_start(text, "1.1")
    assert got is not scan.UNSURE
    assert got == want == tree_line_start(text, "1.1")
