"""update_task_status and add_note: the spec's status-update tests, and the promise
that only the target line changes, byte for byte."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plankit.checklist import TaskStatus, add_note, parse_plan, update_task_status
from plankit.checklist.structure import read_structure
from plankit.errors import InputError

TODAY = dt.date(2026, 1, 15)
BASE = """# Plan: Test

Goal: Test updates

### Phase 1: Work
- [ ] 1.1 First task
- [ ] 1.2 Second task
- [/] 1.3 In progress task
"""


def changed_lines(before: str, after: str) -> list[int]:
    a, b = before.split("\n"), after.split("\n")
    assert len(a) == len(b)
    return [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]


# --- the spec's tests -----------------------------------------------------------------


def test_updates_todo_to_doing() -> None:
    assert "- [/] 1.1 First task" in update_task_status(BASE, "1.1", "doing")


def test_updates_doing_to_done_with_date() -> None:
    updated = update_task_status(BASE, "1.3", "done")
    assert re.search(r"- \[x\] 1\.3 In progress task ✅ \d{4}-\d{2}-\d{2}", updated)
    assert f"✅ {dt.date.today().isoformat()}" in updated


def test_updates_to_blocked_with_reason() -> None:
    updated = update_task_status(BASE, "1.1", "blocked", "waiting for data")
    assert "- [>] 1.1 First task — waiting for data" in updated


def test_updates_to_review_with_note() -> None:
    updated = update_task_status(BASE, "1.2", "review", "check formula")
    assert "- [!] 1.2 Second task — check formula" in updated


def test_removes_blocked_reason_when_unblocking() -> None:
    updated = update_task_status("### Phase 1: Work\n- [>] 1.1 Task — old reason", "1.1", "doing")
    assert "- [/] 1.1 Task" in updated
    assert "old reason" not in updated


def test_replaces_existing_annotation_when_updating() -> None:
    updated = update_task_status("### Phase 1: Work\n- [x] 1.1 Task ✅ 2026-01-01", "1.1", "doing")
    assert updated == "### Phase 1: Work\n- [/] 1.1 Task"


def test_does_not_modify_other_tasks() -> None:
    updated = update_task_status(BASE, "1.1", "done")
    assert "- [ ] 1.2 Second task" in updated
    assert "- [/] 1.3 In progress task" in updated
    assert changed_lines(BASE, updated) == [5]


def test_task_not_found_returns_input_unchanged() -> None:
    assert update_task_status(BASE, "9.9", "done") is BASE


def test_multiple_blocked_reasons_keeps_last() -> None:
    updated = update_task_status("- [>] 1.1 Task — first reason", "1.1", "blocked", "second reason")
    assert updated == "- [>] 1.1 Task — second reason"


# --- line preservation --------------------------------------------------------------


def test_crlf_stays_crlf_and_only_the_line_changes() -> None:
    crlf = BASE.replace("\n", "\r\n")
    updated = update_task_status(crlf, "1.2", "done", today=TODAY)
    assert updated == crlf.replace("- [ ] 1.2 Second task", "- [x] 1.2 Second task ✅ 2026-01-15")
    assert updated.count("\r\n") == crlf.count("\r\n")


def test_mixed_endings_and_no_final_newline_are_kept() -> None:
    text = "# Plan: T\r\n### Phase 1: W\n- [ ] 1.1 A\r- [ ] 1.2 B"
    updated = update_task_status(text, "1.2", "doing")
    assert updated == "# Plan: T\r\n### Phase 1: W\n- [ ] 1.1 A\r- [/] 1.2 B"
    assert update_task_status(text, "1.1", "doing") == text.replace("- [ ] 1.1", "- [/] 1.1")


def test_bom_and_trailing_spaces_elsewhere_are_kept() -> None:
    text = "\ufeff# Plan: T  \n\n### Phase 1: W\t\n- [ ] 1.1 A\n- [ ] 1.2 B   \n\n\n"
    updated = update_task_status(text, "1.1", "review", "look")
    assert updated == text.replace("- [ ] 1.1 A", "- [!] 1.1 A — look")


def test_status_accepts_enum_and_plain_strings() -> None:
    a = update_task_status(BASE, "1.1", TaskStatus.DONE, today=TODAY)
    b = update_task_status(BASE, "1.1", "done", today=TODAY)
    c = update_task_status(BASE, "1.1", "DONE", today=TODAY)
    assert a == b == c
    with pytest.raises(InputError, match="unknown task status 'finished'"):
        update_task_status(BASE, "1.1", "finished")


def test_double_encoded_forms_are_accepted_and_written_clean() -> None:
    text = (
        "### Phase 1: W\n- [>] 1.1 Load âœ… â€” waiting\n- [x] 1.2 B âœ… 2026-01-02\n"
        "â€” other line\n"
    )
    updated = update_task_status(text, "1.1", "review", "check it")
    assert updated.split("\n")[1] == "- [!] 1.1 Load ✅ — check it"
    assert updated.split("\n")[2:] == text.split("\n")[2:]  # other lines keep their bytes
    again = update_task_status(text, "1.2", "review", "reopen")
    assert again.split("\n")[2] == "- [!] 1.2 B — reopen"


def test_em_dash_in_title_survives_every_transition() -> None:
    text = "### Phase 1: W\n- [ ] 1.1 Import — then clean\n"
    step1 = update_task_status(text, "1.1", "blocked", "no access")
    assert "- [>] 1.1 Import — then clean — no access" in step1
    step2 = update_task_status(step1, "1.1", "doing")
    assert "- [/] 1.1 Import — then clean\n" in step2
    step3 = update_task_status(step2, "1.1", "done", today=TODAY)
    assert "- [x] 1.1 Import — then clean ✅ 2026-01-15" in step3
    assert parse_plan(step3).phases[0].tasks[0].title == "Import — then clean"


def test_annotation_is_one_line_and_its_em_dashes_are_softened() -> None:
    updated = update_task_status(BASE, "1.1", "blocked", "waits for\nfinance — Q3\tdata  ")
    assert "- [>] 1.1 First task — waits for finance – Q3 data\n" in updated
    task = parse_plan(updated).phases[0].tasks[0]
    assert (task.title, task.blocked_reason) == ("First task", "waits for finance – Q3 data")


def test_done_task_keeps_its_date_when_completed_again() -> None:
    text = "### Phase 1: W\n- [x] 1.1 A ✅ 2025-12-24\n"
    assert update_task_status(text, "1.1", "done", today=TODAY) is text


def test_indented_sub_step_is_updated_in_place() -> None:
    text = "### Phase 2: W\n- [ ] 2.1 Parent\n  - [ ] 2.1.1 Child\n  - [ ] 2.1.10 Other child\n"
    updated = update_task_status(text, "2.1.1", "done", today=TODAY)
    assert updated == text.replace("  - [ ] 2.1.1 Child", "  - [x] 2.1.1 Child ✅ 2026-01-15")


def test_step_prefixes_do_not_match_longer_steps() -> None:
    text = "### Phase 1: W\n- [ ] 1.10 Tenth\n- [ ] 1.1 First\n"
    updated = update_task_status(text, "1.1", "doing")
    assert updated == "### Phase 1: W\n- [ ] 1.10 Tenth\n- [/] 1.1 First\n"


def test_fenced_and_notes_lookalikes_are_never_updated() -> None:
    text = (
        "### Phase 1: W\n```\n- [ ] 1.1 in a fence\n```\n- [ ] 1.1 Real\n\n"
        "## Notes\n- [ ] 1.2 idea\n"
    )
    updated = update_task_status(text, "1.1", "doing")
    assert updated == text.replace("- [ ] 1.1 Real", "- [/] 1.1 Real")
    assert update_task_status(text, "1.2", "doing") is text


def test_a_chain_of_updates_matches_parsing_from_scratch() -> None:
    text = BASE
    for step, status in [("1.1", "doing"), ("1.2", "blocked"), ("1.1", "done"), ("1.3", "review")]:
        text = update_task_status(text, step, status, "why", today=TODAY)
        fresh = read_structure(text)  # no cache
        assert parse_plan(text).to_dict() == parse_plan(text + "").to_dict()
        assert [s for p in fresh.phases for s in p.tasks] == [
            s for p in parse_plan(text).phases for s in [(t.line, t.step) for t in p.tasks]
        ]
    assert [t.status for t in parse_plan(text).tasks] == ["done", "blocked", "review"]


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.integers(min_value=1, max_value=3),
            st.integers(min_value=1, max_value=4),
            st.sampled_from(list(TaskStatus)),
            st.text(alphabet="ab —\n", max_size=6),
        ),
        max_size=12,
    ),
    newline=st.sampled_from(["\n", "\r\n"]),
)
def test_any_update_sequence_changes_only_target_lines(
    steps: list[tuple[int, int, TaskStatus, str]], newline: str
) -> None:
    lines = ["# Plan: P", "", "Goal: G"]
    for p in range(1, 4):
        lines += ["", f"### Phase {p}: Phase {p}"]
        lines += [f"- [ ] {p}.{s} Task {p}.{s} — part" for s in range(1, 5)]
    text = newline.join([*lines, "", "## Notes", "", "- [ ] 9.9 not a task", ""])
    for phase, step, status, note in steps:
        before = text
        text = update_task_status(text, f"{phase}.{step}", status, note, today=TODAY)
        a, b = before.split(newline), text.split(newline)
        assert len(a) == len(b)
        differ = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        assert all(f" {phase}.{step} " in b[i] for i in differ) and len(differ) <= 1
        task = parse_plan(text).task(f"{phase}.{step}")
        assert task is not None and task.status == status
        assert task.title == f"Task {phase}.{step} — part"
    assert parse_plan(text).to_dict() == parse_plan(text).to_dict()


# --- add_note ----------------------------------------------------------------------------


def test_add_note_appends_to_the_notes_section() -> None:
    text = "# Plan: T\n\n### Phase 1: W\n- [ ] 1.1 A\n\n## Notes\n\nFirst note\n"
    assert add_note(text, "second") == text + "- second\n"


def test_add_note_inserts_before_the_next_heading_and_keeps_crlf() -> None:
    text = "# Plan: T\r\n\r\n## Notes\r\n\r\n- one\r\n\r\n### Phase 1: W\r\n- [ ] 1.1 A\r\n"
    updated = add_note(text, "two\nlines")
    assert updated == text.replace("- one\r\n", "- one\r\n- two lines\r\n")
    assert parse_plan(updated).phases[0].tasks[0].step == "1.1"


def test_add_note_creates_the_section_when_missing() -> None:
    assert add_note("# Plan: T\n\n### Phase 1: W\n- [ ] 1.1 A", "hi") == (
        "# Plan: T\n\n### Phase 1: W\n- [ ] 1.1 A\n\n## Notes\n\n- hi\n"
    )


def test_add_note_to_an_empty_notes_section_at_the_end() -> None:
    assert add_note("# Plan: T\n\n## Notes", "hi") == "# Plan: T\n\n## Notes\n\n- hi"
    assert add_note("# Plan: T\n\n## Notes\n\n", "hi") == "# Plan: T\n\n## Notes\n\n- hi\n\n"
    assert parse_plan(add_note("# Plan: T\n\n## Notes\n", "hi")).notes == "- hi"


def test_add_note_refuses_an_empty_note() -> None:
    with pytest.raises(InputError, match="empty"):
        add_note("# Plan: T\n", "  \n ")


def test_an_older_text_can_still_be_updated_after_newer_ones() -> None:
    first = update_task_status(BASE, "1.1", "blocked", "a long reason that moves later lines")
    second = update_task_status(first, "1.2", "done", today=TODAY)
    # back to the first text: its cache entry must still describe it
    other = update_task_status(first, "1.3", "review", "look", today=TODAY)
    assert other.split("\n")[7] == "- [!] 1.3 In progress task — look"
    assert other.split("\n")[5] == "- [>] 1.1 First task — a long reason that moves later lines"
    assert second.split("\n")[6] == "- [x] 1.2 Second task ✅ 2026-01-15"
    # and from the original, as if nothing had happened
    assert update_task_status(BASE, "1.3", "done", today=TODAY).split("\n")[7] == (
        "- [x] 1.3 In progress task ✅ 2026-01-15"
    )


def test_updates_far_down_a_large_plan_after_many_edits() -> None:
    lines = ["# Plan: Big", ""]
    for p in range(1, 41):
        lines += [f"### Phase {p}: P{p}"] + [f"- [ ] {p}.{s} Task {p}.{s}" for s in range(1, 21)]
    text = "\r\n".join(lines) + "\r\n"
    for p in range(40, 0, -3):  # bottom up, then check every line is where it should be
        text = update_task_status(text, f"{p}.7", "blocked", "x" * p)
    for p in range(1, 41, 2):
        text = update_task_status(text, f"{p}.20", "done", today=TODAY)
    plan = parse_plan(text)
    statuses = {t.step: t.status for t in plan.tasks}
    assert all(statuses[f"{p}.7"] == "blocked" for p in range(40, 0, -3))
    assert all(statuses[f"{p}.20"] == "done" for p in range(1, 41, 2))
    assert sum(s != "todo" for s in statuses.values()) == 14 + 20
    assert text.count("\r\n") == len(lines)
