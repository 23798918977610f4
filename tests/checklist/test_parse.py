"""parse_plan: the spec's parser, regex and edge-case tests, and what the Markdown
foundation adds (fences, Notes, sub-steps, double encoding, em dashes in titles)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plankit.checklist import Plan, TaskStatus, parse_plan
from plankit.checklist.plan import PHASE_LINE_RE, TASK_LINE_RE

SAMPLE = """# Plan: Test Plan

Goal: Test the parser

## Analysis

- Spreadsheet: Test Sheet
- Key sheets: Data, Output
- Target ranges:
  - Read: Data!A2:C10 (id, name, value)
  - Write: Output!A2:B10 (id, result)

## Questions for User

- Question one?
- Question two?

### Phase 1: Setup
- [ ] 1.1 Read Data!A2:C10 (source data)
- [/] 1.2 Validate Data!A:A (id column)

### Phase 2: Process
- [x] 2.1 Calculate Output!B2:B10 (results) ✅ 2026-01-10
- [>] 2.2 Write Output!A2:A10 (ids) — waiting for validation
- [!] 2.3 Check Output!C2:C10 (flags) — verify threshold

## Notes

Test notes here
"""


@pytest.fixture
def sample() -> Plan:
    return parse_plan(SAMPLE)


# --- the spec's parser tests ------------------------------------------------------------


def test_parses_title(sample: Plan) -> None:
    assert sample.title == "Test Plan"


def test_parses_goal(sample: Plan) -> None:
    assert sample.goal == "Test the parser"


def test_parses_analysis_section(sample: Plan) -> None:
    assert sample.analysis is not None
    assert "Test Sheet" in sample.analysis
    assert "Data!A2:C10" in sample.analysis


def test_parses_questions(sample: Plan) -> None:
    assert sample.questions is not None
    assert len(sample.questions) == 2
    assert sample.questions[0] == "Question one?"


def test_parses_phases(sample: Plan) -> None:
    assert len(sample.phases) == 2
    assert sample.phases[0].name == "Setup"
    assert sample.phases[1].name == "Process"


def test_parses_tasks_within_phases(sample: Plan) -> None:
    assert len(sample.phases[0].tasks) == 2
    assert len(sample.phases[1].tasks) == 3


def test_parses_task_status(sample: Plan) -> None:
    p1, p2 = sample.phases
    assert [t.status for t in p1.tasks] == ["todo", "doing"]
    assert [t.status for t in p2.tasks] == ["done", "blocked", "review"]
    assert p2.tasks[0].status is TaskStatus.DONE


def test_parses_step_numbers(sample: Plan) -> None:
    assert sample.phases[0].tasks[0].step == "1.1"
    assert sample.phases[0].tasks[1].step == "1.2"
    assert sample.phases[1].tasks[0].step == "2.1"


def test_parses_completion_date(sample: Plan) -> None:
    assert sample.phases[1].tasks[0].completed_date == "2026-01-10"


def test_parses_blocked_reason(sample: Plan) -> None:
    assert sample.phases[1].tasks[1].blocked_reason == "waiting for validation"
    assert sample.phases[1].tasks[1].review_note is None


def test_parses_review_note(sample: Plan) -> None:
    assert sample.phases[1].tasks[2].review_note == "verify threshold"
    assert sample.phases[1].tasks[2].blocked_reason is None


def test_parses_notes_section(sample: Plan) -> None:
    assert sample.notes == "Test notes here"


def test_extracts_task_title_without_annotations(sample: Plan) -> None:
    done = sample.phases[1].tasks[0]
    assert done.title == "Calculate Output!B2:B10 (results)"
    assert "✅" not in done.title
    assert sample.phases[1].tasks[1].title == "Write Output!A2:A10 (ids)"


def test_handles_empty_plan() -> None:
    plan = parse_plan("")
    assert plan.title == ""
    assert plan.phases == ()
    assert plan.raw == ""


def test_plan_with_no_questions_section() -> None:
    plan = parse_plan("# Plan: Minimal\n\nGoal: Test\n\n### Phase 1: Only\n- [ ] 1.1 Task one\n")
    assert plan.questions is None
    assert plan.analysis is None
    assert plan.phases[0].tasks[0].title == "Task one"


def test_task_lines_are_1_based_lines_of_the_markdown(sample: Plan) -> None:
    lines = SAMPLE.split("\n")
    for task in sample.tasks:
        assert f"{task.step} " in lines[task.line - 1]
    assert sample.phases[0].tasks[0].line == 19


# --- the spec's regex tests, as behaviour of the parser ---------------------------------


def _only_task(line: str):  # type: ignore[no-untyped-def]
    plan = parse_plan(f"# Plan: T\n\n### Phase 1: Work\n{line}\n")
    tasks = plan.phases[0].tasks
    return tasks[0] if tasks else None


def test_matches_basic_task() -> None:
    m = TASK_LINE_RE.fullmatch("- [ ] 1.1 Simple task")
    assert m is not None
    assert (m.group(3), m.group(4), m.group(6)) == (" ", "1.1", "Simple task")
    task = _only_task("- [ ] 1.1 Simple task")
    assert (task.status, task.step, task.title) == ("todo", "1.1", "Simple task")


def test_matches_task_with_sheet_reference() -> None:
    line = "- [x] 2.3 Read Data!A2:B10 (columns) ✅ 2026-01-10"
    m = TASK_LINE_RE.fullmatch(line)
    assert m is not None
    assert m.group(4) == "2.3"
    assert m.group(6) == "Read Data!A2:B10 (columns) ✅ 2026-01-10"
    task = _only_task(line)
    assert task.title == "Read Data!A2:B10 (columns)"
    assert task.completed_date == "2026-01-10"


def test_matches_sub_sub_step() -> None:
    m = TASK_LINE_RE.fullmatch("- [/] 1.2.3 Nested task")
    assert m is not None and m.group(4) == "1.2.3"
    assert _only_task("- [/] 1.2.3 Nested task").step == "1.2.3"


@pytest.mark.parametrize(
    ("char", "status"),
    [(" ", "todo"), ("/", "doing"), ("x", "done"), (">", "blocked"), ("!", "review")],
)
def test_matches_all_status_characters(char: str, status: str) -> None:
    m = TASK_LINE_RE.fullmatch(f"- [{char}] 1.1 Task")
    assert m is not None and m.group(3) == char
    assert _only_task(f"- [{char}] 1.1 Task").status == status


@pytest.mark.parametrize(
    "line",
    ["- [ ] 1 No decimal", "- [ ] Task no number", "[ ] 1.1 No dash", "- [x]1.1 No space"],
)
def test_does_not_match_invalid_formats(line: str) -> None:
    assert TASK_LINE_RE.fullmatch(line) is None
    assert _only_task(line) is None


def test_matches_phase_header() -> None:
    m = PHASE_LINE_RE.fullmatch("### Phase 1: Setup")
    assert m is not None and m.groups() == ("1", "Setup")
    plan = parse_plan("### Phase 1: Setup\n- [ ] 1.1 A\n")
    assert (plan.phases[0].number, plan.phases[0].name) == (1, "Setup")


def test_matches_multi_word_phase_name() -> None:
    m = PHASE_LINE_RE.fullmatch("### Phase 2: Data Processing and Validation")
    assert m is not None and m.group(2) == "Data Processing and Validation"
    plan = parse_plan("### Phase 2: Data Processing and Validation\n")
    assert plan.phases[0].name == "Data Processing and Validation"
    assert plan.phases[0].number == 2


@pytest.mark.parametrize("line", ["## Phase 1: Wrong", "#### Phase 1: Wrong"])
def test_does_not_match_wrong_heading_level(line: str) -> None:
    assert PHASE_LINE_RE.fullmatch(line) is None
    assert parse_plan(f"{line}\n- [ ] 1.1 Task\n").phases == ()


# --- the spec's edge cases ----------------------------------------------------------


def test_special_characters_in_titles() -> None:
    plan = parse_plan(
        "# Plan: Test\nGoal: Test\n### Phase 1: Work\n"
        "- [ ] 1.1 Task with \"quotes\" and 'apostrophes'\n"
        "- [ ] 1.2 Task with $pecial ch@racters!\n"
        "- [ ] 1.3 Task with émojis 🎉"
    )
    titles = [t.title for t in plan.phases[0].tasks]
    assert "quotes" in titles[0] and "'apostrophes'" in titles[0]
    assert "$pecial" in titles[1]
    assert titles[2] == "Task with émojis 🎉"


def test_very_long_task_title() -> None:
    long_title = "A" * 500
    plan = parse_plan(f"# Plan: Test\nGoal: Test\n### Phase 1: Work\n- [ ] 1.1 {long_title}")
    assert plan.phases[0].tasks[0].title == long_title


def test_plan_with_only_analysis_section() -> None:
    plan = parse_plan(
        "# Plan: Analysis Only\nGoal: Test\n\n## Analysis\n\n"
        "- Spreadsheet: Test\n- Key sheets: Data"
    )
    assert plan.title == "Analysis Only"
    assert plan.analysis is not None and "Test" in plan.analysis
    assert plan.phases == ()


def test_preserves_raw_markdown_exactly() -> None:
    original = (
        "# Plan: Test\n\nGoal: Test goal\n\n### Phase 1: Work\n- [ ] 1.1 Task\n\n"
        "## Notes\n\nSome notes"
    )
    assert parse_plan(original).raw == original
    crlf = original.replace("\n", "\r\n")
    plan = parse_plan(crlf)
    assert plan.raw == crlf
    assert plan.notes == "Some notes"
    assert plan.phases[0].tasks[0].title == "Task"


# --- what the Markdown foundation adds ---------------------------------------------------


def test_task_like_line_in_a_fence_is_not_a_task() -> None:
    plan = parse_plan(
        "# Plan: T\n\n### Phase 1: Work\n- [ ] 1.1 Real\n\n```markdown\n- [ ] 1.2 In a fence\n```\n"
        "\n~~~\n- [x] 1.3 In a tilde fence\n~~~\n- [ ] 1.4 Real again\n"
    )
    assert [t.step for t in plan.tasks] == ["1.1", "1.4"]


def test_task_like_line_in_notes_is_not_a_task() -> None:
    plan = parse_plan(
        "# Plan: T\n\n### Phase 1: Work\n- [ ] 1.1 Real\n\n## Notes\n\n- [ ] 1.2 An idea\n"
    )
    assert [t.step for t in plan.tasks] == ["1.1"]
    assert "- [ ] 1.2 An idea" in plan.notes


def test_heading_like_line_in_a_fence_starts_nothing() -> None:
    plan = parse_plan(
        "# Plan: T\n\n### Phase 1: Work\n- [ ] 1.1 A\n\n```\n### Phase 2: Fake\n## Notes\n```\n"
        "- [ ] 1.2 B\n"
    )
    assert [p.name for p in plan.phases] == ["Work"]
    assert [t.step for t in plan.tasks] == ["1.1", "1.2"]
    assert plan.notes == ""


def test_indented_sub_steps_are_tasks_of_their_phase() -> None:
    plan = parse_plan(
        "# Plan: T\n\n### Phase 2: Work\n- [ ] 2.1 Parent\n  - [x] 2.1.1 Child ✅ 2026-01-02\n"
        "    - [ ] 2.1.2 Deeper child\n- [ ] 2.2 Next\n"
    )
    tasks = plan.phases[0].tasks
    assert [(t.step, t.phase) for t in tasks] == [
        ("2.1", 2),
        ("2.1.1", 2),
        ("2.1.2", 2),
        ("2.2", 2),
    ]
    assert tasks[1].status == "done" and tasks[1].title == "Child"


def test_double_encoded_marks_are_read() -> None:
    plan = parse_plan(
        "# Plan: T\n\n### Phase 1: Work\n- [x] 1.1 Done âœ… 2026-01-10\n"
        "- [>] 1.2 Stuck â€” waiting for data\n"
    )
    done, blocked = plan.phases[0].tasks
    assert (done.title, done.completed_date) == ("Done", "2026-01-10")
    assert (blocked.title, blocked.blocked_reason) == ("Stuck", "waiting for data")


def test_em_dash_in_a_title_is_kept() -> None:
    plan = parse_plan(
        "# Plan: T\n\n### Phase 1: Work\n- [ ] 1.1 Import — then clean up\n"
        "- [>] 1.2 Export — CSV only — waiting for access\n"
    )
    todo, blocked = plan.phases[0].tasks
    assert todo.title == "Import — then clean up"
    assert blocked.title == "Export — CSV only"
    assert blocked.blocked_reason == "waiting for access"


def test_tasks_before_any_phase_are_not_plan_tasks() -> None:
    plan = parse_plan("# Plan: T\n\n- [ ] 1.1 Loose\n\n### Phase 1: Work\n- [ ] 1.1 Real\n")
    assert [(t.step, t.title) for t in plan.tasks] == [("1.1", "Real")]


def test_progress_counts() -> None:
    plan = parse_plan(SAMPLE)
    assert plan.progress.to_dict() == {
        "todo": 1,
        "doing": 1,
        "done": 1,
        "blocked": 1,
        "review": 1,
        "total": 5,
        "percent": 20,
    }
    assert plan.phases[1].progress.done == 1
    assert plan.next_task() is not None and plan.next_task().step == "1.1"  # type: ignore[union-attr]


# --- golden plans: tests/data/checklist/plans/NAME.md → NAME.json -------------------------

PLANS = sorted((Path(__file__).resolve().parents[1] / "data" / "checklist" / "plans").glob("*.md"))


@pytest.mark.parametrize("path", PLANS, ids=[p.stem for p in PLANS])
def test_golden_plan(path: Path) -> None:
    text = path.read_bytes().decode("utf-8")
    expected = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    assert parse_plan(text).to_dict(raw=False) == expected


def test_golden_plans_exist() -> None:
    assert len(PLANS) >= 4


def test_models_accept_plain_status_strings() -> None:
    from plankit.checklist import PlanTask

    task = PlanTask(line=3, phase=1, step="1.1", status="done", title="A")  # type: ignore[arg-type]
    assert task.status is TaskStatus.DONE
    assert task.to_dict()["status"] == "done"
