"""Behaviour that mutation testing (``tools/mutate.py``) showed no test was holding:
how checkbox characters read, which task comes next, how a step is looked up, and
the exact errors for bad statuses and bad phases."""

from __future__ import annotations

import datetime as dt

import pytest

from plankit.checklist import (
    MemorySheets,
    PhaseInput,
    PlanManager,
    TaskStatus,
    UnknownStepError,
    add_note,
    parse_plan,
    update_task_status,
)
from plankit.errors import InputError

TODAY = dt.date(2026, 1, 15)

MIXED = """# Plan: Mixed

Goal: every status once

### Phase 1: Start

- [X] 1.1 Checked with a capital X
- [/] 1.2 Being worked on
- [>] 1.3 Waiting — the data
- [!] 1.4 Look at this — the totals
- [ ] 1.10 Tenth step

### Phase 2: Later

- [ ] 2.1 First todo of phase 2
"""


# --- checkbox characters ---------------------------------------------------------------


def test_capital_x_reads_as_done() -> None:
    plan = parse_plan(MIXED)
    task = plan.task("1.1")
    assert task is not None
    assert task.status is TaskStatus.DONE
    assert plan.progress.done == 1
    assert plan.progress.percent == 16  # 1 of 6 tasks


def test_capital_x_task_done_again_keeps_its_checkbox_and_gets_a_date() -> None:
    updated = update_task_status(MIXED, "1.1", "done", today=TODAY)
    assert "- [x] 1.1 Checked with a capital X ✅ 2026-01-15\n" in updated


def test_every_status_char_reads_back() -> None:
    plan = parse_plan(MIXED)
    assert [(t.step, t.status.value) for t in plan.tasks] == [
        ("1.1", "done"),
        ("1.2", "doing"),
        ("1.3", "blocked"),
        ("1.4", "review"),
        ("1.10", "todo"),
        ("2.1", "todo"),
    ]


# --- next task ---------------------------------------------------------------------------


def test_next_task_skips_done_doing_blocked_and_review_tasks() -> None:
    task = parse_plan(MIXED).next_task()
    assert task is not None
    assert (task.step, task.title) == ("1.10", "Tenth step")


def test_next_task_goes_on_to_the_next_phase() -> None:
    text = MIXED.replace("- [ ] 1.10 Tenth step", "- [x] 1.10 Tenth step ✅ 2026-01-01")
    task = parse_plan(text).next_task()
    assert task is not None
    assert task.step == "2.1"


def test_next_task_is_none_when_only_tasks_in_progress_are_left() -> None:
    text = "# Plan: P\n\nGoal: g\n\n### Phase 1: A\n\n- [/] 1.1 Going\n- [x] 1.2 Done\n"
    assert parse_plan(text).next_task() is None
    manager = PlanManager(MemorySheets(), today=lambda: TODAY)
    manager.create_plan("P", "g", [{"name": "A", "steps": ["Going"]}])
    manager.start_task("1.1")
    assert manager.get_next_task() is None


# --- looking a step up -------------------------------------------------------------------


def test_a_step_is_matched_whole_not_by_prefix() -> None:
    text = MIXED.replace("- [X] 1.1 Checked with a capital X\n", "")
    plan = parse_plan(text)
    assert plan.task("1.1") is None
    assert plan.task("1.") is None
    assert plan.task("10") is None
    task = plan.task("1.10")
    assert task is not None
    assert task.title == "Tenth step"


def test_starting_a_missing_step_does_not_start_a_longer_one() -> None:
    manager = PlanManager(MemorySheets(), today=lambda: TODAY)
    manager.create_plan("P", "g", [{"name": "A", "steps": [f"Step {i}" for i in range(1, 11)]}])
    started = manager.start_task("1.10")
    assert started.title == "Step 10"
    plan = manager.get_plan()
    assert plan is not None
    one = plan.task("1.1")
    assert one is not None
    assert (one.title, one.status) == ("Step 1", TaskStatus.TODO)
    with pytest.raises(UnknownStepError):
        manager.start_task("1.11")


# --- statuses given as text ----------------------------------------------------------------


def test_an_unknown_status_names_every_valid_one() -> None:
    text = "# Plan: P\n\nGoal: g\n\n### Phase 1: A\n\n- [ ] 1.1 Go\n"
    with pytest.raises(InputError) as caught:
        update_task_status(text, "1.1", "finished")
    assert str(caught.value) == (
        "unknown task status 'finished'; expected one of todo, doing, done, blocked, review"
    )
    assert caught.value.code == "unknown-status"


def test_a_status_in_any_case_with_spaces_is_accepted() -> None:
    text = "# Plan: P\n\nGoal: g\n\n### Phase 1: A\n\n- [ ] 1.1 Go\n"
    assert "- [/] 1.1 Go\n" in update_task_status(text, "1.1", " Doing ")


# --- phases given as data --------------------------------------------------------------------


def test_a_phase_given_a_list_of_steps_holds_a_tuple() -> None:
    phase = PhaseInput("Collect", ["Read the sheet", "Check it"])
    assert phase.steps == ("Read the sheet", "Check it")
    assert hash(phase) == hash(PhaseInput("Collect", ("Read the sheet", "Check it")))


@pytest.mark.parametrize(
    ("phase", "message"),
    [
        ("Collect", "a phase must be {'name': …, 'steps': […]}, not str"),
        (["Collect"], "a phase must be {'name': …, 'steps': […]}, not list"),
        ({"steps": ["a"]}, "a phase needs a 'name' (a string)"),
        ({"name": 7, "steps": ["a"]}, "a phase needs a 'name' (a string)"),
        ({"name": "Collect"}, "phase 'Collect' needs 'steps' (a list of strings)"),
        ({"name": "Collect", "steps": "a"}, "phase 'Collect' needs 'steps' (a list of strings)"),
        ({"name": "Collect", "steps": ["a", 3]}, "phase 'Collect': every step must be a string"),
        ({"name": "Collect", "steps": [None]}, "phase 'Collect': every step must be a string"),
    ],
)
def test_a_bad_phase_is_refused_with_what_to_give(phase: object, message: str) -> None:
    store = MemorySheets()
    manager = PlanManager(store, today=lambda: TODAY)
    with pytest.raises(InputError) as caught:
        manager.create_plan("P", "g", [phase])  # type: ignore[list-item]
    assert str(caught.value) == message
    assert caught.value.code == "phase-invalid"
    assert manager.get_plan() is None  # nothing written


def test_a_phase_with_a_tuple_of_steps_is_accepted() -> None:
    manager = PlanManager(MemorySheets(), today=lambda: TODAY)
    plan = manager.create_plan("P", "g", [{"name": "Collect", "steps": ("a", "b")}])
    assert [t.title for t in plan.tasks] == ["a", "b"]


# --- status updates ----------------------------------------------------------------------------

ONE_PHASE = "# Plan: P\n\nGoal: g\n\n### Phase 1: A\n\n"


def test_completing_a_todo_task_that_carries_an_old_date_gives_it_today() -> None:
    text = ONE_PHASE + "- [ ] 1.1 Check the totals ✅ 2025-12-01\n"
    updated = update_task_status(text, "1.1", "done", today=TODAY)
    assert updated == ONE_PHASE + "- [x] 1.1 Check the totals ✅ 2026-01-15\n"


def test_completing_a_done_task_again_keeps_its_date() -> None:
    text = ONE_PHASE + "- [x] 1.1 Check the totals ✅ 2025-12-01\n"
    assert update_task_status(text, "1.1", "done", today=TODAY) == text


@pytest.mark.parametrize(
    ("status", "placeholder"),
    [("blocked", "[>] 1.1 Read A — then B — (no reason given)"),
     ("review", "[!] 1.1 Read A — then B — (no note given)")],
)  # fmt: skip
def test_a_title_with_a_dash_keeps_it_when_no_note_is_given(status: str, placeholder: str) -> None:
    text = ONE_PHASE + "- [ ] 1.1 Read A — then B\n"
    updated = update_task_status(text, "1.1", status, today=TODAY)
    assert updated == ONE_PHASE + f"- {placeholder}\n"
    task = parse_plan(updated).task("1.1")
    assert task is not None
    assert task.title == "Read A — then B"


# --- notes -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "## Notes\n\n- Sheet is read-only\n"),
        ("# Plan: P", "# Plan: P\n\n## Notes\n\n- Sheet is read-only\n"),
        ("# Plan: P\n", "# Plan: P\n\n## Notes\n\n- Sheet is read-only\n"),
        ("# Plan: P\n\n", "# Plan: P\n\n## Notes\n\n- Sheet is read-only\n"),
        ("# Plan: P\r\n\r\n", "# Plan: P\r\n\r\n## Notes\r\n\r\n- Sheet is read-only\r\n"),
        ("# Plan: P\rGoal: g\r", "# Plan: P\rGoal: g\r\r## Notes\r\r- Sheet is read-only\r"),
        # the last line ends otherwise than the first: still exactly one blank line
        (
            "# Plan: P\r\nGoal: g\n",
            "# Plan: P\r\nGoal: g\n\r\n## Notes\r\n\r\n- Sheet is read-only\r\n",
        ),
    ],
)
def test_a_notes_section_is_added_after_one_blank_line(text: str, expected: str) -> None:
    assert add_note(text, "Sheet  is\tread-only") == expected


def test_an_empty_note_is_refused() -> None:
    with pytest.raises(InputError) as caught:
        add_note(ONE_PHASE, " \n\t ")
    assert str(caught.value) == "the note is empty; give the text to add"
    assert caught.value.code == "empty-note"


# --- questions ---------------------------------------------------------------------------------


def test_open_questions_leave_out_only_placeholders_and_answered_ones() -> None:
    text = (
        "# Plan: P\n\nGoal: g\n\n## Questions for User\n\n"
        "- [Any clarifying questions]\n"
        "- Which sheet holds the totals? — Answer: Sheet2\n"
        "- [Draft] is the header row 1?\n"
        "- Should dates be ISO?\n"
        "- Keep the old tab]\n\n"
        "### Phase 1: A\n\n- [ ] 1.1 Go\n"
    )
    assert parse_plan(text).open_questions() == [
        "[Draft] is the header row 1?",
        "Should dates be ISO?",
        "Keep the old tab]",
    ]


def test_updating_a_step_two_tasks_share_names_the_step_and_changes_nothing() -> None:
    text = ONE_PHASE + "- [ ] 1.1 First\n- [ ] 1.1 Second\n"
    with pytest.raises(InputError) as caught:
        update_task_status(text, "1.1", "done", today=TODAY)
    assert str(caught.value).startswith(
        "step '1.1' is ambiguous: the tasks on lines 7 and 8 all have that number; "
        "nothing was changed."
    )
    assert caught.value.code == "ambiguous-step"
