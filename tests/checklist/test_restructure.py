"""Changing a plan's structure keeps its progress: steps and phases added, removed,
renamed and renumbered; questions answered; goal and Analysis rewritten; any status
set from the command line; the step in progress for an agent that resumes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from plankit.checklist import (
    MemorySheets,
    PlanManager,
    UnknownStepError,
    parse_plan,
    update_task_status,
)
from plankit.checklist import restructure as r
from plankit.checklist.errors import AmbiguousStepError
from plankit.checklist.lint import lint_plan
from plankit.checklist.render import STARTER_PLAN
from plankit.cli import cli
from plankit.errors import InputError

from .conftest import TODAY, Backend

PLAN = """# Plan: Q4

Goal: fill the summary

## Analysis

- Spreadsheet: Q4 Sales (ID: 1a2b)
- Key sheets: Orders, Summary
- Target ranges:
  - Read: Orders!A2:F500 (orders)
  - Write: Summary!B5:E20 (totals)
- Current state: 487 orders
- Dependencies: Inventory must be current

## Questions for User

- Include archived orders?
- Which date range?

### Phase 1: Collect
- [x] 1.1 Read Orders ✅ 2026-01-10
- [>] 1.2 Read Pricing — waiting for supplier data
- [ ] 1.3 Read Regions

### Phase 2: Process
- [/] 2.1 Totals
  - [x] 2.1.1 Per region ✅ 2026-01-11
  - [ ] 2.1.2 Per product
- [!] 2.2 Margins — check the formula
- [ ] 2.3 Growth

## Notes

- keep the ids
"""


def steps(text: str) -> list[tuple[str, str, str]]:
    """(step, status, title) of every task."""
    return [(t.step, t.status.value, t.title) for t in parse_plan(text).tasks]


def statuses_by_title(text: str) -> dict[str, tuple[str, str | None, str | None, str | None]]:
    return {
        t.title: (t.status.value, t.completed_date, t.blocked_reason, t.review_note)
        for t in parse_plan(text).tasks
    }


def test_adding_a_step_after_one_renumbers_what_follows_and_keeps_progress() -> None:
    text, step = r.add_step(PLAN, "Read Discounts", after="1.1")
    assert step == "1.2"
    assert steps(text)[:4] == [
        ("1.1", "done", "Read Orders"),
        ("1.2", "todo", "Read Discounts"),
        ("1.3", "blocked", "Read Pricing"),
        ("1.4", "todo", "Read Regions"),
    ]
    before, after = statuses_by_title(PLAN), statuses_by_title(text)
    assert {k: after[k] for k in before} == before  # dates, reasons, notes kept
    assert lint_plan(text) == []
    # only the task lines of phase 1 changed or appeared
    old_lines, new_lines = PLAN.split("\n"), text.split("\n")
    assert [ln for ln in new_lines if ln not in old_lines] == [
        "- [ ] 1.2 Read Discounts",
        "- [>] 1.3 Read Pricing — waiting for supplier data",
        "- [ ] 1.4 Read Regions",
    ]


def test_sub_steps_move_with_their_step() -> None:
    text, step = r.add_step(PLAN, "Clean", before="2.1")
    assert step == "2.1"
    assert [s for s, _, _ in steps(text)][3:] == ["2.1", "2.2", "2.2.1", "2.2.2", "2.3", "2.4"]
    text, step = r.add_step(text, "Per customer", after="2.2.1")
    assert step == "2.2.2"
    assert ("2.2.3", "todo", "Per product") in steps(text)
    assert "  - [ ] 2.2.2 Per customer" in text.split("\n")
    assert lint_plan(text) == []


def test_adding_at_the_end_of_a_phase_and_of_an_empty_phase() -> None:
    text, step = r.add_step(PLAN, "Read Calendar", phase=1)
    assert step == "1.4" and steps(text)[3] == ("1.4", "todo", "Read Calendar")
    text, number = r.add_phase(text, "Empty")
    text, step = r.add_step(text, "First of three", phase=number)
    assert step == "3.1" and ("3.1", "todo", "First of three") in steps(text)
    assert lint_plan(text) == []


def test_removing_a_step_closes_the_gap() -> None:
    text = r.remove_step(PLAN, "2.1")
    assert [s for s, _, _ in steps(text)] == ["1.1", "1.2", "1.3", "2.1", "2.2"]
    assert statuses_by_title(text)["Margins"] == ("review", None, None, "check the formula")
    assert "Per region" not in text  # the sub-steps went with it
    assert lint_plan(text) == []


def test_phases_added_renumber_the_phases_after_them() -> None:
    text, number = r.add_phase(PLAN, "Clean", ["Drop duplicates", "Fix dates"], after=1)
    assert number == 2
    plan = parse_plan(text)
    assert [(p.number, p.name) for p in plan.phases] == [
        (1, "Collect"),
        (2, "Clean"),
        (3, "Process"),
    ]
    assert [t.step for t in plan.phases[2].tasks] == ["3.1", "3.1.1", "3.1.2", "3.2", "3.3"]
    assert plan.phases[2].tasks[0].status == "doing"
    assert lint_plan(text) == []
    first, number = r.add_phase(PLAN, "Prepare", ["Open the file"], after=0)
    assert number == 1 and [p.name for p in parse_plan(first).phases] == [
        "Prepare",
        "Collect",
        "Process",
    ]
    last, number = r.add_phase(PLAN, "Report", ["Send it"])
    assert number == 3
    assert last.index("### Phase 3: Report") < last.index("## Notes")
    assert lint_plan(first) == [] and lint_plan(last) == []


def test_renaming_a_phase_keeps_its_steps() -> None:
    text = r.rename_phase(PLAN, 2, "Crunch the numbers")
    assert parse_plan(text).phases[1].name == "Crunch the numbers"
    assert steps(text) == steps(PLAN)


def test_answers_goal_and_analysis() -> None:
    text, question = r.answer_question(PLAN, 2, "the current quarter")
    assert question == "Which date range? — Answer: the current quarter"
    text, question = r.answer_question(text, "include arch", "no")
    text, _ = r.answer_question(text, 1, "yes after all")  # a new answer replaces the old
    plan = parse_plan(text)
    assert plan.questions == (
        "Include archived orders? — Answer: yes after all",
        "Which date range? — Answer: the current quarter",
    )
    assert plan.open_questions() == []
    text = r.set_goal(text, "Fill Summary!B5:E20\nwith the totals")
    assert parse_plan(text).goal == "Fill Summary!B5:E20 with the totals"
    text, fields = r.set_analysis(text, write=["Summary!B5:E20 (totals)", "Chart!A1 (data)"])
    analysis = parse_plan(text).analysis_fields
    assert analysis == fields
    assert analysis is not None
    assert analysis.spreadsheet == "Q4 Sales (ID: 1a2b)"
    assert analysis.read == ("Orders!A2:F500 (orders)",)
    assert analysis.write == ("Summary!B5:E20 (totals)", "Chart!A1 (data)")
    assert analysis.other == ("Dependencies: Inventory must be current",)
    assert steps(text) == steps(PLAN)
    assert lint_plan(text) == []


def test_analysis_is_added_when_missing() -> None:
    bare = "# Plan: B\n\nGoal: g\n\n### Phase 1: W\n- [ ] 1.1 A\n"
    text, _ = r.set_analysis(bare, spreadsheet="Book1", key_sheets=["Data"])
    assert "## Analysis\n\n- Spreadsheet: Book1\n- Key sheets: Data\n\n### Phase 1: W" in text
    assert parse_plan(text).analysis_fields.key_sheets == ("Data",)  # type: ignore[union-attr]


def test_analysis_fields_follow_the_spec() -> None:
    fields = parse_plan(PLAN).to_dict()["analysis_fields"]
    assert fields == {
        "spreadsheet": "Q4 Sales (ID: 1a2b)",
        "key_sheets": ["Orders", "Summary"],
        "target_ranges": {
            "read": ["Orders!A2:F500 (orders)"],
            "write": ["Summary!B5:E20 (totals)"],
        },
        "current_state": "487 orders",
        "other": ["Dependencies: Inventory must be current"],
    }
    starter = parse_plan(STARTER_PLAN).analysis_fields
    assert starter is not None and starter.spreadsheet == "" and starter.read == ()  # placeholders
    assert parse_plan("# Plan: x\n\n### Phase 1: A\n- [ ] 1.1 a\n").analysis_fields is None


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_line_endings_and_a_missing_final_newline_are_kept(eol: str) -> None:
    text = PLAN.rstrip("\n").replace("\n", eol)
    added, _ = r.add_step(text, "X", phase=2)
    assert eol + "- [ ] 2.4 X" in added
    phased, _ = r.add_phase(text, "Y", ["y"])
    assert "\n" not in phased.replace(eol, "")
    out = r.remove_step(r.rename_phase(added, 1, "Z"), "1.1")
    assert out.replace(eol, "").count("\n") == 0 and not out.endswith(eol)


def test_bad_positions_and_unknown_or_ambiguous_steps() -> None:
    with pytest.raises(InputError, match="say where the step goes"):
        r.add_step(PLAN, "x")
    with pytest.raises(InputError, match="say where the step goes"):
        r.add_step(PLAN, "x", after="1.1", phase=1)
    with pytest.raises(UnknownStepError, match="did you mean"):
        r.add_step(PLAN, "x", after="1.9")
    with pytest.raises(InputError, match="no Phase 7 in the plan"):
        r.add_step(PLAN, "x", phase=7)
    with pytest.raises(InputError, match="needs a text"):
        r.add_step(PLAN, "  ", phase=1)
    dup = PLAN.replace("1.3 Read Regions", "1.2 Read Regions")
    with pytest.raises(AmbiguousStepError):
        r.remove_step(dup, "1.2")
    with pytest.raises(InputError, match="no question 5"):
        r.answer_question(PLAN, 5, "x")
    with pytest.raises(InputError, match="matches no question"):
        r.answer_question(PLAN, "nothing like it", "x")


# --- PlanManager, on memory and on a real workbook --------------------------------------


def test_manager_edits_on_both_stores(backend: Backend) -> None:
    backend.seed("AGENT_BASE!C2", PLAN)
    manager = backend.manager()
    assert manager.current_task().step == "2.1"  # type: ignore[union-attr]
    task = manager.add_step("Read Discounts", after="1.1")
    assert (task.step, task.status.value, task.line) == ("1.2", "todo", 22)
    assert manager.remove_step("1.4").title == "Read Regions"
    phase = manager.add_phase("Report", ["Send it"], after=2)
    assert (phase.number, [t.step for t in phase.tasks]) == (3, ["3.1"])
    assert manager.rename_phase(1, "Gather").name == "Gather"
    assert manager.answer_question(1, "no").endswith("— Answer: no")
    assert manager.set_goal("new goal") == "new goal"
    assert manager.set_analysis(current_state="500 orders").current_state == "500 orders"
    assert manager.reopen_task("1.1").status == "todo"
    plan = parse_plan(backend.cell("AGENT_BASE!C2"))
    assert [t.step for t in plan.tasks] == [
        "1.1",
        "1.2",
        "1.3",
        "2.1",
        "2.1.1",
        "2.1.2",
        "2.2",
        "2.3",
        "3.1",
    ]
    assert plan.task("1.3").blocked_reason == "waiting for supplier data"  # type: ignore[union-attr]
    assert manager.lint() == []


def test_a_failed_edit_writes_nothing(backend: Backend) -> None:
    backend.seed("AGENT_BASE!C2", PLAN)
    before = backend.state()
    with pytest.raises(UnknownStepError):
        backend.manager().add_step("x", after="9.9")
    assert backend.state() == before


def test_current_task_is_none_without_a_step_in_progress() -> None:
    text = update_task_status(PLAN, "2.1", "done", today=TODAY)
    manager = PlanManager(MemorySheets({"AGENT_BASE!C2": text}))
    assert manager.current_task() is None
    assert PlanManager(MemorySheets()).current_task() is None


# --- the command line --------------------------------------------------------------------


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_cli_set_reopen_current_and_structure(tmp_path: Path) -> None:
    store = str(tmp_path / "plan.xlsx")
    assert run("checklist", "init", "--store", store).exit_code == 0

    def ok(*args: str) -> str:
        result = run("checklist", *args, "--store", store)
        assert result.exit_code == 0, result.output
        return result.stdout

    assert ok("set", "1.2", "blocked", "headers", "are", "merged").endswith(
        "— headers are merged\n"
    )
    assert ok("set", "1.2", "DOING").startswith("[/] 1.2 ")
    assert ok("current") == "1.2 Read headers from main data sheet to understand structure\n"
    assert ok("reopen", "1.2").startswith("[ ] 1.2 ")
    assert ok("add-step", "Check", "merged", "cells", "--after", "1.1") == (
        "[ ] 1.2 Check merged cells\n"
    )
    assert json.loads(ok("remove-step", "2.3", "--json"))["removed"]["step"] == "2.3"
    assert ok("add-phase", "Wrap up", "--step", "Send", "--step", "Archive").startswith(
        "Phase 3: Wrap up\n  [ ] 3.1 Send\n"
    )
    assert ok("rename-phase", "1", "Look", "around").startswith("Phase 1: Look around\n")
    assert ok("answer", "2", "a", "Q4", "report") == (
        "What is your goal for this session? — Answer: a Q4 report\n"
    )
    assert ok("goal", "Ship", "it") == "Goal: Ship it\n"
    fields = json.loads(ok("analysis", "--spreadsheet", "Q4.xlsx", "--read", "A!A1:B2", "--json"))
    assert fields["target_ranges"]["read"] == ["A!A1:B2"]
    shown = ok("show")
    assert "Phase 1: Look around  [0/4 done (0%) · 4 todo]" in shown
    assert "What is your goal" not in shown  # answered questions are not asked again
    assert run("checklist", "lint", "--store", store).exit_code == 0


def test_cli_set_refuses_an_unknown_status_and_a_missing_note(tmp_path: Path) -> None:
    store = str(tmp_path / "PLAN.md")
    run("checklist", "init", "--store", store)
    bad = run("checklist", "set", "1.1", "finished", "--store", store)
    assert bad.exit_code == 2 and "'finished' is not one of" in bad.output
    blocked = run("checklist", "set", "1.1", "blocked", "--store", store)
    assert blocked.exit_code == 1 and "needs a reason" in blocked.stderr
    nowhere = run("checklist", "add-step", "x", "--store", store)
    assert nowhere.exit_code == 1 and "say where the step goes" in nowhere.stderr


def test_renumber_fixes_duplicates_gaps_and_misplaced_steps() -> None:
    text = (
        "# Plan: R\n\n### Phase 1: A\n- [ ] 1.1 a\n- [x] 1.1 b ✅ 2026-01-02\n"
        "  - [ ] 1.1.1 s\n  - [>] 1.1.3 t — why\n- [ ] 2.5 c\n\n### Phase 3: B\n- [ ] 3.2 d\n"
    )
    codes = {d.code for d in lint_plan(text)}
    assert codes == {"duplicate-step", "numbering-gap", "step-phase-mismatch"}
    fixed = r.renumber(text)
    assert lint_plan(fixed) == []
    assert steps(fixed) == [
        ("1.1", "todo", "a"),
        ("1.2", "done", "b"),
        ("1.2.1", "todo", "s"),
        ("1.2.2", "blocked", "t"),
        ("1.3", "todo", "c"),
        ("2.1", "todo", "d"),
    ]
    assert "- [x] 1.2 b ✅ 2026-01-02\n" in fixed and "### Phase 2: B\n" in fixed
    assert r.renumber(fixed) == fixed
    manager = PlanManager(MemorySheets({"AGENT_BASE!C2": text}))
    assert [t.step for t in manager.renumber().tasks] == [
        "1.1",
        "1.2",
        "1.2.1",
        "1.2.2",
        "1.3",
        "2.1",
    ]
