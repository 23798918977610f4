"""PlanManager: the spec's integration tests, run against MemorySheets and again
against a real xlsx workbook (read back with python-calamine), plus what we added."""

from __future__ import annotations

import re

import pytest

from plankit.checklist import (
    NoPlanError,
    NotAPlanError,
    PhaseInput,
    PlanManager,
    UnknownStepError,
)
from plankit.checklist.render import PLAN_MARKER
from tests.checklist.conftest import Backend

C1, C2 = "AGENT_BASE!C1", "AGENT_BASE!C2"


# --- init_plan ---------------------------------------------------------------------------


def test_init_creates_agent_base_sheet_if_missing(backend: Backend) -> None:
    backend.set_sheets([])
    backend.manager().init_plan()
    assert "AGENT_BASE" in backend.created_sheets()


def test_init_writes_plan_marker_to_c1(backend: Backend) -> None:
    backend.set_sheets([])
    backend.manager().init_plan()
    assert backend.cell(C1) == "PLAN.md Contents"


def test_init_writes_starter_plan_to_c2(backend: Backend) -> None:
    backend.set_sheets([])
    backend.manager().init_plan()
    content = backend.cell(C2)
    assert "# Plan: Getting Started" in content
    assert "### Phase 1: Orientation" in content


def test_init_returns_existing_plan_if_already_initialized(backend: Backend) -> None:
    backend.set_sheets(["AGENT_BASE"])
    backend.seed(C1, "PLAN.md Contents")
    backend.seed(C2, "# Plan: Existing\nGoal: Test\n### Phase 1: Work\n- [ ] 1.1 Task")
    assert backend.manager().init_plan().title == "Existing"


def test_init_is_idempotent(backend: Backend) -> None:
    backend.set_sheets(["AGENT_BASE"])
    backend.seed(C1, "PLAN.md Contents")
    original = (
        "# Plan: My Plan\nGoal: Keep this\n### Phase 1: Important\n"
        "- [x] 1.1 Done task ✅ 2026-01-01"
    )
    backend.seed(C2, original)
    manager = backend.manager()
    for _ in range(3):
        manager.init_plan()
    content = backend.cell(C2)
    assert "# Plan: My Plan" in content
    assert "Done task" in content
    assert content == original


def test_init_initializes_if_c1_marker_is_missing(backend: Backend) -> None:
    backend.set_sheets(["AGENT_BASE"])
    backend.seed(C1, "")
    backend.manager().init_plan()
    assert backend.cell(C1) == "PLAN.md Contents"
    assert "Getting Started" in backend.cell(C2)


def test_init_initializes_if_c1_has_wrong_content(backend: Backend) -> None:
    backend.set_sheets(["AGENT_BASE"])
    backend.seed(C1, "Something else")
    backend.manager().init_plan()
    assert backend.cell(C1) == "PLAN.md Contents"


def test_init_handles_errors_gracefully(backend: Backend) -> None:
    backend.set_sheets([])
    backend.fail_next("Network error")
    before = backend.state()
    plan = backend.manager().init_plan()
    assert plan.title == "Initialization Error"
    assert "error" in plan.notes
    assert plan.analysis is not None and "Error:" in plan.analysis
    assert backend.state() == before


def test_starter_plan_has_all_required_sections(backend: Backend) -> None:
    backend.set_sheets([])
    plan = backend.manager().init_plan()
    assert plan.title == "Getting Started with Sheet Agent"
    assert "Learn the basic tools" in plan.goal
    assert plan.analysis is not None
    assert plan.questions is not None
    assert len(plan.phases) >= 2
    assert "starter plan" in plan.notes


# --- init_plan: our additions ------------------------------------------------------------


def test_init_adopts_a_plan_already_in_the_cell_without_overwriting(backend: Backend) -> None:
    backend.seed(C2, "# Plan: Mine\n### Phase 1: W\n- [ ] 1.1 A\n")
    plan = backend.manager().init_plan()
    assert plan.title == "Mine"
    assert backend.cell(C2) == "# Plan: Mine\n### Phase 1: W\n- [ ] 1.1 A\n"
    assert backend.cell(C1) == PLAN_MARKER


def test_init_never_overwrites_text_that_is_not_a_plan(backend: Backend) -> None:
    backend.seed(C2, "quarterly numbers, do not touch")
    plan = backend.manager().init_plan()
    assert plan.title == "Initialization Error"
    assert "does not hold a PLAN.md plan" in (plan.analysis or "")
    assert backend.cell(C2) == "quarterly numbers, do not touch"
    with pytest.raises(NotAPlanError):
        backend.manager().init_plan(raise_errors=True)


def test_init_with_raise_errors_raises_the_store_error(backend: Backend) -> None:
    from plankit.checklist import StoreError

    backend.set_sheets([])
    backend.fail_next("Network error")
    with pytest.raises(StoreError):
        backend.manager().init_plan(raise_errors=True)


# --- get_plan / get_next_task / get_review_tasks -------------------------------------------


def test_get_plan_returns_none_when_cell_is_empty(backend: Backend) -> None:
    backend.seed(C2, "")
    assert backend.manager().get_plan() is None


def test_get_plan_returns_none_when_there_is_no_sheet(backend: Backend) -> None:
    backend.set_sheets([])
    assert backend.manager().get_plan() is None
    assert backend.manager().get_next_task() is None
    assert backend.manager().get_review_tasks() == []


def test_get_plan_returns_parsed_plan(backend: Backend) -> None:
    backend.seed(C2, "# Plan: Test\nGoal: Testing\n### Phase 1: Work\n- [ ] 1.1 Do something")
    plan = backend.manager().get_plan()
    assert plan is not None
    assert plan.title == "Test"
    assert len(plan.phases) == 1


def test_get_plan_on_garbage_is_a_clear_error(backend: Backend) -> None:
    backend.seed(C2, "=SUM(A1:A9) and some words")
    with pytest.raises(NotAPlanError, match=r"AGENT_BASE!C2 does not hold a PLAN.md plan"):
        backend.manager().get_plan()


def test_get_next_task_returns_first_todo(backend: Backend) -> None:
    backend.seed(
        C2,
        "# Plan: Test\nGoal: Test\n### Phase 1: Done\n- [x] 1.1 Complete ✅ 2026-01-01\n"
        "### Phase 2: Pending\n- [ ] 2.1 Next task\n- [ ] 2.2 After that",
    )
    nxt = backend.manager().get_next_task()
    assert nxt is not None
    assert (nxt.step, nxt.title, nxt.phase) == ("2.1", "Next task", 2)


def test_get_next_task_returns_none_when_all_done(backend: Backend) -> None:
    backend.seed(
        C2, "# Plan: Test\nGoal: Test\n### Phase 1: Done\n- [x] 1.1 Complete ✅ 2026-01-01"
    )
    assert backend.manager().get_next_task() is None


def test_get_next_task_skips_blocked_and_review(backend: Backend) -> None:
    backend.seed(
        C2,
        "# Plan: Test\nGoal: Test\n### Phase 1: Mixed\n- [>] 1.1 Blocked — reason\n"
        "- [!] 1.2 Review — note\n- [ ] 1.3 Available",
    )
    nxt = backend.manager().get_next_task()
    assert nxt is not None and nxt.step == "1.3"


def test_get_review_tasks_returns_all_review_tasks(backend: Backend) -> None:
    backend.seed(
        C2,
        "# Plan: Test\nGoal: Test\n### Phase 1: Work\n- [!] 1.1 Review one — check this\n"
        "- [ ] 1.2 Normal task\n### Phase 2: More\n- [!] 2.1 Review two — verify that",
    )
    reviews = backend.manager().get_review_tasks()
    assert [t.step for t in reviews] == ["1.1", "2.1"]
    assert [t.review_note for t in reviews] == ["check this", "verify that"]


def test_get_review_tasks_empty_when_none(backend: Backend) -> None:
    backend.seed(C2, "# Plan: Test\nGoal: Test\n### Phase 1: Work\n- [ ] 1.1 Normal task")
    assert backend.manager().get_review_tasks() == []


# --- create_plan --------------------------------------------------------------------------


def test_create_plan_with_correct_structure(backend: Backend) -> None:
    backend.manager().create_plan(
        "New Plan",
        "Achieve something",
        [
            {"name": "Setup", "steps": ["Step A", "Step B"]},
            {"name": "Execute", "steps": ["Step C"]},
        ],
    )
    content = backend.cell(C2)
    for expected in (
        "# Plan: New Plan",
        "Goal: Achieve something",
        "### Phase 1: Setup",
        "- [ ] 1.1 Step A",
        "- [ ] 1.2 Step B",
        "### Phase 2: Execute",
        "- [ ] 2.1 Step C",
    ):
        assert expected in content


def test_create_plan_includes_analysis_template(backend: Backend) -> None:
    backend.manager().create_plan("Test", "Goal", [PhaseInput("Work", ["Task"])])
    content = backend.cell(C2)
    for expected in ("## Analysis", "- Spreadsheet:", "- Key sheets:", "- Target ranges:"):
        assert expected in content


def test_create_plan_sets_up_sheet_and_marker_so_init_keeps_it(backend: Backend) -> None:
    backend.set_sheets([])
    manager = backend.manager()
    manager.create_plan("Kept", "Stay", [PhaseInput("Work", ["Task"])])
    assert backend.cell(C1) == PLAN_MARKER
    assert manager.init_plan().title == "Kept"
    assert "# Plan: Kept" in backend.cell(C2)


@pytest.mark.parametrize(
    ("title", "goal", "phases", "message"),
    [
        ("", "g", [{"name": "P", "steps": ["s"]}], "needs a title"),
        ("t", " ", [{"name": "P", "steps": ["s"]}], "needs a goal"),
        ("t", "g", [], "at least one phase"),
        ("t", "g", [{"name": "P", "steps": []}], "has no steps"),
        ("t", "g", [{"name": "P", "steps": ["ok", "  "]}], "step 1.2 of phase 'P' is empty"),
        ("t", "g", [{"name": "P"}], "needs 'steps'"),
        ("t", "g", [{"steps": ["s"]}], "needs a 'name'"),
    ],
)
def test_create_plan_rejects_bad_input_and_writes_nothing(
    backend: Backend, title: str, goal: str, phases: list[dict[str, object]], message: str
) -> None:
    from plankit.errors import InputError

    backend.seed(C2, "# Plan: Before\n### Phase 1: W\n- [ ] 1.1 A")
    with pytest.raises(InputError, match=re.escape(message)):
        backend.manager().create_plan(title, goal, phases)  # type: ignore[arg-type]
    assert backend.cell(C2) == "# Plan: Before\n### Phase 1: W\n- [ ] 1.1 A"


# --- start / complete / block / review ------------------------------------------------------

ONE_TASK = "# Plan: Test\nGoal: Test\n### Phase 1: Work\n- [/] 1.1 The task"


def test_start_task_updates_to_doing(backend: Backend) -> None:
    backend.seed(C2, "# Plan: Test\nGoal: Test\n### Phase 1: Work\n- [ ] 1.1 The task")
    task = backend.manager().start_task("1.1")
    assert "- [/] 1.1 The task" in backend.cell(C2)
    assert (task.status, task.title, task.line) == ("doing", "The task", 4)


def test_start_task_throws_when_no_plan(backend: Backend) -> None:
    backend.seed(C2, "")
    with pytest.raises(NoPlanError, match="No plan"):
        backend.manager().start_task("1.1")


def test_complete_task_updates_to_done_with_date(backend: Backend) -> None:
    backend.seed(C2, ONE_TASK)
    task = backend.manager().complete_task("1.1")
    assert re.search(r"- \[x\] 1\.1 The task ✅ \d{4}-\d{2}-\d{2}", backend.cell(C2))
    assert backend.cell(C2).endswith("- [x] 1.1 The task ✅ 2026-01-15")
    assert task.completed_date == "2026-01-15"


def test_block_task_updates_to_blocked_with_reason(backend: Backend) -> None:
    backend.seed(C2, ONE_TASK)
    task = backend.manager().block_task("1.1", "need approval")
    assert "- [>] 1.1 The task — need approval" in backend.cell(C2)
    assert task.blocked_reason == "need approval"


def test_review_task_updates_to_review_with_note(backend: Backend) -> None:
    backend.seed(C2, ONE_TASK)
    task = backend.manager().review_task("1.1", "please check formula")
    assert "- [!] 1.1 The task — please check formula" in backend.cell(C2)
    assert task.review_note == "please check formula"


@pytest.mark.parametrize("method", ["start_task", "complete_task", "block_task", "review_task"])
def test_unknown_step_is_a_clear_error_and_nothing_is_written(
    backend: Backend, method: str
) -> None:
    plan = "# Plan: T\n### Phase 1: W\n- [ ] 1.1 A\n- [ ] 1.2 B\n### Phase 2: X\n- [ ] 2.1 C\n"
    backend.seed(C2, plan)
    manager = backend.manager()
    args = ("1.9",) if method in ("start_task", "complete_task") else ("1.9", "why")
    with pytest.raises(UnknownStepError) as caught:
        getattr(manager, method)(*args)
    message = str(caught.value)
    assert "no task '1.9'" in message
    assert "known steps: 1.1, 1.2, 2.1" in message
    assert "did you mean 1.2?" in message or "did you mean 1.1?" in message
    assert backend.cell(C2) == plan


def test_loose_task_outside_phases_is_unknown_to_the_manager(backend: Backend) -> None:
    backend.seed(C2, "# Plan: T\n\n- [ ] 7.1 Loose\n\n### Phase 1: W\n- [ ] 1.1 A\n")
    with pytest.raises(UnknownStepError):
        backend.manager().start_task("7.1")


def test_full_workflow_round_trip(backend: Backend) -> None:
    manager = backend.manager()
    manager.create_plan(
        "Q4 report",
        "Fill Summary",
        [PhaseInput("Collect", ["Read A", "Read B"]), PhaseInput("Write", ["Write C"])],
    )
    while (task := manager.get_next_task()) is not None:
        manager.start_task(task.step)
        if task.step == "1.2":
            manager.review_task(task.step, "check B")
        else:
            manager.complete_task(task.step)
    plan = manager.get_plan()
    assert plan is not None
    assert [t.status for t in plan.tasks] == ["done", "review", "done"]
    assert [t.step for t in manager.get_review_tasks()] == ["1.2"]
    assert manager.append_note("B  needs\n a second look ") == "B needs a second look"
    assert manager.get_plan().notes == "- B needs a second look"  # type: ignore[union-attr]


def test_append_note_needs_a_plan(backend: Backend) -> None:
    with pytest.raises(NoPlanError):
        backend.manager().append_note("hello")


def test_set_task_status_back_to_todo(backend: Backend) -> None:
    backend.seed(C2, ONE_TASK)
    task = backend.manager().set_task_status("1.1", "todo")
    assert task.status == "todo"
    assert backend.cell(C2).endswith("- [ ] 1.1 The task")


def test_manager_rejects_a_plan_cell_in_row_one() -> None:
    from plankit.checklist import MemorySheets
    from plankit.errors import InputError

    with pytest.raises(InputError, match="below row 1"):
        PlanManager(MemorySheets(), "AGENT_BASE!C1")
    with pytest.raises(InputError, match="no sheet"):
        PlanManager(MemorySheets(), "C2")


def test_other_cell_keeps_its_marker_above(backend: Backend) -> None:
    manager = backend.manager("'Plan sheet'!B5")
    manager.init_plan(raise_errors=True)
    assert backend.cell("'Plan sheet'!B4") == PLAN_MARKER
    assert "Getting Started" in backend.cell("'Plan sheet'!B5")
    assert backend.cell(C2) == ""


def test_memory_store_refuses_a_plan_over_50000_characters() -> None:
    from plankit.checklist import CellTooLargeError, MemorySheets

    store = MemorySheets({"AGENT_BASE!C2": "# Plan: Small\n### Phase 1: W\n- [ ] 1.1 A\n"})
    manager = PlanManager(store)
    with pytest.raises(CellTooLargeError, match="more than the 50,000"):
        manager.create_plan("Big", "Too big", [PhaseInput("W", ["s" * 1000] * 51)])
    with pytest.raises(CellTooLargeError):
        manager.block_task("1.1", "r" * 50_000)
    assert store.snapshot()["AGENT_BASE!C2"] == "# Plan: Small\n### Phase 1: W\n- [ ] 1.1 A\n"
    assert store.writes == []


def test_memory_fail_next_operation_fails_exactly_one_call() -> None:
    from plankit.checklist import MemorySheets, StoreError

    store = MemorySheets(sheets=["AGENT_BASE"])
    store.fail_next_operation("boom")
    with pytest.raises(StoreError, match="boom"):
        store.list_sheets()
    assert store.list_sheets() == ["AGENT_BASE"]
    with pytest.raises(StoreError, match="no sheet named 'Other'"):
        store.set_cell("Other!A2", "x")


def test_a_failed_write_inside_a_transaction_changes_nothing() -> None:
    from plankit.checklist import MemorySheets, StoreError

    store = MemorySheets(sheets=[])
    manager = PlanManager(store)
    # list_sheets, create_sheet, get_cell(C1), set_cell(C1) succeed; set_cell(C2) fails
    store.fail_next_operation("disk full", after=4)
    with pytest.raises(StoreError, match="disk full"):
        manager.create_plan("T", "G", [PhaseInput("W", ["a"])])
    assert store.list_sheets() == []
    assert store.snapshot() == {} and store.created_sheets == [] and store.writes == []
