"""``plankit checklist lint`` and the same findings in ``show``, ``next``, ``--json`` and
the MCP ``get_plan``: every way a plan can hide steps from its reader, and the
duplicate-step loop of the spec's agent workflow, which must end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from plankit.checklist import MemorySheets, PlanManager, parse_plan, update_task_status
from plankit.checklist.errors import AmbiguousStepError
from plankit.checklist.lint import lint_plan
from plankit.cli import cli

HEAD = "# Plan: Lint\n\nGoal: every step is read\n\n"


def codes(text: str) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in lint_plan(text)]


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


# --- the duplicate-step loop of the issue ----------------------------------------------

DUPLICATE = HEAD + "### Phase 1: Work\n- [ ] 1.1 A\n- [ ] 1.1 B\n- [ ] 1.2 C\n"


def test_the_agent_loop_on_duplicate_steps_ends_with_an_error_naming_the_lines() -> None:
    manager = PlanManager(MemorySheets({"AGENT_BASE!C2": DUPLICATE}))
    seen = []
    error: AmbiguousStepError | None = None
    for _ in range(10):  # the spec's loop: next → start → complete
        task = manager.get_next_task()
        assert task is not None
        seen.append(task.title)
        try:
            manager.start_task(task.step)
        except AmbiguousStepError as exc:
            error = exc
            break
        manager.complete_task(task.step)
    assert seen == ["A"]
    assert error is not None and error.lines == [6, 7]
    assert "lines 6 and 7" in str(error) and "\n" not in str(error)
    assert manager.get_plan().raw == DUPLICATE  # type: ignore[union-attr]


@pytest.mark.parametrize("status", ["doing", "done", "blocked", "review", "todo"])
def test_every_update_by_step_refuses_an_ambiguous_step(status: str) -> None:
    manager = PlanManager(MemorySheets({"AGENT_BASE!C2": DUPLICATE}))
    with pytest.raises(AmbiguousStepError, match="lines 6 and 7"):
        manager.set_task_status("1.1", status, "why")
    with pytest.raises(AmbiguousStepError):
        update_task_status(DUPLICATE, "1.1", status, "why")
    assert manager.complete_task("1.2").status == "done"  # other steps still update


def test_a_duplicate_in_a_fence_or_in_notes_is_not_ambiguous() -> None:
    text = (
        HEAD + "### Phase 1: W\n- [ ] 1.1 A\n\n```\n- [ ] 1.1 example\n```\n\n"
        "## Notes\n\n- [ ] 1.1 an idea\n"
    )
    assert "[/] 1.1 A" in update_task_status(text, "1.1", "doing")
    assert "duplicate-step" not in [c for _, c in codes(text)]


def test_lint_lists_the_duplicate() -> None:
    assert codes(DUPLICATE) == [(7, "duplicate-step")]
    assert "also on line 6" in lint_plan(DUPLICATE)[0].message


# --- plans that silently had zero tasks ----------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("## Phase 1: Setup\n- [ ] 1.1 A\n", [(5, "phase-heading-level"), (6, "outside-phase")]),
        ("#### Phase 2: Deep\n- [ ] 2.1 A\n", [(5, "phase-heading-level"), (6, "outside-phase")]),
        (
            "### Phase two: Words\n- [ ] 2.1 A\n",
            [(5, "phase-heading-format"), (6, "outside-phase")],
        ),
        ("### Phase 1 Setup\n- [ ] 1.1 A\n", [(5, "phase-heading-format"), (6, "outside-phase")]),
        ("### Phase 1: Work\n1. [ ] 1.4 Numbered\n", [(6, "task-not-read")]),
        ("### Phase 1: Work\n- [ ]  1.8 Two spaces\n", [(6, "task-not-read")]),
        ("### Phase 1: Work\n- [] 1.1 Empty box\n", [(6, "task-not-read")]),
        ("### Phase 1: Work\n-[ ] 1.1 No space\n", [(6, "task-not-read")]),
        ("### Phase 1: Work\n- [ ] Do it\n", [(6, "task-not-read")]),
        ("### Phase 1: Work\n- [ ] 1.1.1.1 Deep\n", [(6, "task-not-read")]),
        ("### Phase 1: Work\n- [ ] 1.1: Colon\n", [(6, "task-not-read")]),
        ("### Phase 1: Work\n- [ ] 1.1. Dot\n", [(6, "task-not-read")]),
        ("### Phase 1: Work\n- 1.1 No checkbox\n", [(6, "task-not-read")]),
        ("### Phase 1: Work\n> - [ ] 1.1 Quoted\n", [(6, "task-not-read")]),
        ("### Phase 1: Work\n\n    - [ ] 1.1 Indented code\n", [(7, "task-not-read")]),
        ("- [ ] 1.1 Before any phase\n", [(5, "outside-phase")]),
        ("## Notes\n\n- [ ] 1.1 In the notes\n", [(7, "outside-phase")]),
        ("```markdown\n### Phase 1: W\n- [ ] 1.1 Fenced\n```\n", []),
        ("### Phase 1: Work\n", []),
    ],
)
def test_plans_with_zero_tasks_say_why(body: str, expected: list[tuple[int, str]]) -> None:
    text = HEAD + body
    assert parse_plan(text).tasks == ()
    assert codes(text) == [(0, "no-tasks"), *expected]


def test_each_reason_is_named() -> None:
    text = HEAD + (
        "### Phase 1: Work\n"
        "1. [ ] 1.1 Numbered\n"
        "- [ ]  1.2 Two spaces\n"
        "- [ ] Do it\n"
        "- [ ] 1.1.1.1 Deep\n"
        "- [ ] 1.3 Fine\n"
        "> - [ ] 1.4 Quoted\n"
    )
    messages = {d.line: d.message for d in lint_plan(text)}
    assert "numbered list item (`1.`)" in messages[6]
    assert "2 spaces between `]` and the step" in messages[7]
    assert "no step number" in messages[8]
    assert "4 levels" in messages[9]
    assert "block quote" in messages[11]


def test_a_checklist_in_notes_without_step_numbers_is_fine() -> None:
    text = HEAD + "### Phase 1: W\n- [ ] 1.1 A\n\n## Notes\n\n- [ ] ask Bob\n- [x] sent\n"
    assert codes(text) == []


def test_numbering() -> None:
    text = HEAD + (
        "### Phase 1: A\n- [ ] 1.1 a\n- [ ] 1.3 c\n- [ ] 2.1 wrong phase\n"
        "  - [ ] 1.3.2 sub\n\n"
        "### Phase 3: C\n- [ ] 3.2 b\n- [ ] 3.1 a\n\n"
        "### Phase 3: again\n- [ ] 3.3 x\n"
    )
    found = codes(text)
    assert (7, "numbering-gap") in found  # 1.3 follows 1.1
    assert (8, "step-phase-mismatch") in found
    assert (9, "numbering-gap") in found  # 1.3.2 without 1.3.1
    assert (11, "numbering-gap") in found  # Phase 3 follows Phase 1
    assert (12, "numbering-gap") in found  # steps start at 3.2
    assert (13, "numbering-gap") in found  # 3.1 after 3.2
    assert (15, "duplicate-phase") in found
    messages = " | ".join(d.message for d in lint_plan(text))
    assert "1.3 follows 1.1 (no 1.2)" in messages
    assert "Phase 3 follows Phase 1 (no Phase 2)" in messages


def test_a_clean_plan_has_no_findings() -> None:
    from plankit.checklist.render import STARTER_PLAN

    assert lint_plan(STARTER_PLAN) == []
    assert lint_plan(DUPLICATE.replace("1.1 B", "1.2 B").replace("1.2 C", "1.3 C")) == []


def test_a_byte_order_mark_keeps_the_title_and_the_lines() -> None:
    text = "\ufeff" + HEAD + "### Phase 1: W\n- [ ] 1.1 A\n"
    plan = parse_plan(text)
    assert plan.title == "Lint" and plan.goal == "every step is read"
    assert plan.tasks[0].line == 6
    assert lint_plan(text) == []
    updated = update_task_status(text, "1.1", "done")
    assert updated.startswith("\ufeff# Plan: Lint") and "- [x] 1.1 A ✅" in updated


# --- the command line --------------------------------------------------------------------


@pytest.fixture
def plan_file(tmp_path: Path) -> Path:
    path = tmp_path / "PLAN.md"
    path.write_text(HEAD + "## Phase 1: Setup\n- [ ] 1.1 A\n", encoding="utf-8")
    return path


def test_lint_command_exits_1_and_names_file_and_line(plan_file: Path) -> None:
    result = run("checklist", "lint", "--store", str(plan_file))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{plan_file}: no-tasks the plan has no task that can be read")
    assert lines[1].startswith(f"{plan_file}:5: phase-heading-level '## Phase 1: Setup'")
    data = json.loads(run("checklist", "lint", "--json", "--store", str(plan_file)).stdout)
    assert [(w["code"], w["line"]) for w in data["warnings"]] == [
        ("no-tasks", None),
        ("phase-heading-level", 5),
        ("outside-phase", 6),
    ]


def test_lint_command_exits_0_on_a_clean_plan(tmp_path: Path) -> None:
    store = str(tmp_path / "plan.xlsx")
    assert run("checklist", "init", "--store", store).exit_code == 0
    result = run("checklist", "lint", "--store", store)
    assert result.exit_code == 0 and result.stdout == ""
    assert "every step is read (6 steps)" in result.stderr


def test_next_does_not_say_done_when_no_step_was_read(plan_file: Path) -> None:
    result = run("checklist", "next", "--store", str(plan_file))
    assert result.exit_code == 1
    assert "no todo step was read, but the plan has problems" in result.stderr
    assert "phase-heading-level" in result.stderr
    data = json.loads(run("checklist", "next", "--json", "--store", str(plan_file)).stdout)
    assert [e["code"] for e in data["errors"]][:2] == ["no-tasks", "phase-heading-level"]


def test_show_and_json_carry_the_warnings(plan_file: Path) -> None:
    shown = run("checklist", "show", "--store", str(plan_file))
    assert shown.exit_code == 0
    assert "Overall: 0/0 done (0%)" in shown.stdout
    assert f"warning: {plan_file}:5: phase-heading-level" in shown.stderr
    data = json.loads(run("checklist", "show", "--json", "--store", str(plan_file)).stdout)
    assert [w["code"] for w in data["warnings"]] == [
        "no-tasks",
        "phase-heading-level",
        "outside-phase",
    ]


def test_start_on_a_duplicate_is_one_line_and_exit_1(tmp_path: Path) -> None:
    path = tmp_path / "PLAN.md"
    path.write_text(DUPLICATE, encoding="utf-8")
    result = run("checklist", "start", "1.1", "--store", str(path))
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and "lines 6 and 7" in result.stderr
    assert path.read_text(encoding="utf-8") == DUPLICATE


def test_mcp_get_plan_lists_the_warnings() -> None:
    from plankit.checklist.mcp_tools import plan_text

    text = plan_text(parse_plan(DUPLICATE))
    assert "line 7: duplicate-step step 1.1 is also on line 6" in text
