"""Validation of plan directories: the spec example, one fixture per rule, all errors at once."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from plankit.agentflow.model import PlanDirError
from plankit.agentflow.validate import check_dir, check_dirs, load_plan

from .helpers import DATA, SPEC_EXAMPLE, task, write, write_plan

RULE_DIRS = sorted(p for p in (DATA / "rules").iterdir() if p.is_dir())


def _expected(name: str) -> list[dict[str, object]]:
    data = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    assert isinstance(data, list)
    return data


def test_the_spec_example_validates_into_the_model() -> None:
    plan = load_plan(str(SPEC_EXAMPLE))
    assert plan.title == "Add user authentication"
    assert "JWT-based authentication" in plan.body
    assert [t.id for t in plan.tasks] == ["create-schema", "implement-service", "wire-handler"]
    service = plan.task("implement-service")
    assert service.depends_on == ("create-schema",)
    assert service.agent == "claude-code"
    assert service.subtasks == (
        "Define service interface",
        "Implement SQLite store",
        "Add password hashing",
    )
    assert service.file == "tasks/02-implement-service.md"
    assert service.sort_index == 2
    assert "ValidateToken" in service.body
    assert plan.to_dict()["waves"] == [["create-schema"], ["implement-service"], ["wire-handler"]]


def test_every_rule_has_a_fixture() -> None:
    names = {p.name for p in RULE_DIRS}
    # symlink-outside is built at test time (tests/agentflow/test_hostile.py)
    assert names == {
        "plan-missing", "plan-frontmatter", "title-empty", "task-frontmatter", "unknown-field",
        "id-duplicate", "id-format", "depends-unknown", "depends-cycle",
        "sort-index-duplicate", "body-empty", "filename", "file-unreadable",
    }  # fmt: skip


@pytest.mark.parametrize("directory", RULE_DIRS, ids=lambda p: p.name)
def test_each_rule_fixture_fails_with_exactly_that_rule(directory: Path) -> None:
    plan, problems = check_dir(str(directory))
    assert plan is None
    assert {p.code for p in problems} == {directory.name}, [p.format() for p in problems]
    expected = _expected(f"rules/{directory.name}")
    assert len(problems) == len(expected)
    for problem, want in zip(problems, expected, strict=True):
        assert problem.file == os.path.join(str(directory), str(want["file"]))
        assert (problem.line or None) == want["line"]
        if "message_contains" in want:
            assert str(want["message_contains"]) in problem.message


def test_a_directory_with_many_errors_reports_all_of_them() -> None:
    directory = DATA / "many-errors"
    _, problems = check_dir(str(directory))
    got = sorted((p.code, os.path.relpath(p.file, directory), p.line or 0) for p in problems)
    want = sorted(
        (str(e["rule"]), str(e["file"]), int(str(e["line"] or 0))) for e in _expected("many-errors")
    )
    assert got == want


def test_errors_of_two_directories_are_reported_together(tmp_path: Path) -> None:
    one = write_plan(tmp_path / "one", tasks={"01-a.md": task("a", ["b"])})
    two = write_plan(tmp_path / "two", title="", tasks={"01-x.md": task("X")})
    good = write_plan(tmp_path / "good", tasks={"01-a.md": task("a")})
    plans, problems = check_dirs([str(one), str(two), str(good)])
    assert [p.path for p in plans] == [str(good)]
    assert sorted((Path(p.file).parent.name, p.code) for p in problems) == [
        ("tasks", "depends-unknown"),
        ("tasks", "id-format"),
        ("two", "title-empty"),
    ]
    assert {Path(p.file).parts[-3] for p in problems if p.code != "title-empty"} == {"one", "two"}


def test_load_plan_raises_with_every_problem(tmp_path: Path) -> None:
    directory = write_plan(tmp_path / "p", title=" ", tasks={"01-a.md": task("a", ["a"])})
    with pytest.raises(PlanDirError) as info:
        load_plan(str(directory))
    assert {p.code for p in info.value.problems} == {"title-empty", "depends-cycle"}
    assert "and 1 more" in str(info.value)


def test_an_empty_tasks_directory_is_valid(tmp_path: Path) -> None:
    directory = write_plan(tmp_path / "p")
    (directory / "tasks").mkdir()
    plan = load_plan(str(directory))
    assert plan.tasks == ()


def test_a_plan_without_tasks_directory_is_valid(tmp_path: Path) -> None:
    assert load_plan(str(write_plan(tmp_path / "p"))).tasks == ()


def test_bom_and_crlf_are_accepted_with_the_right_lines(tmp_path: Path) -> None:
    directory = tmp_path / "p"
    (directory / "tasks").mkdir(parents=True)
    (directory / "plan.md").write_bytes(
        b'\xef\xbb\xbf---\r\ntitle: "CRLF plan"\r\n---\r\n\r\nText.\r\n'
    )
    (directory / "tasks" / "01-a.md").write_bytes(
        b"\xef\xbb\xbf---\r\nid: a\r\ndepends_on: [b]\r\n---\r\n\r\nDo a.\r\n"
    )
    plan, problems = check_dir(str(directory))
    assert plan is None
    assert [(p.code, p.line) for p in problems] == [("depends-unknown", 3)]
    write(directory / "tasks" / "02-b.md", "---\r\nid: b\r\n---\r\nDo b.\r\n")
    plan = load_plan(str(directory))
    assert plan.title == "CRLF plan"
    assert [t.body.strip() for t in plan.tasks] == ["Do a.", "Do b."]
    assert "\r" not in plan.tasks[0].body


def test_flow_and_block_lists_read_the_same(tmp_path: Path) -> None:
    directory = write_plan(
        tmp_path / "p",
        tasks={
            "01-a.md": task("a"),
            "02-b.md": task("b"),
            "03-flow.md": (
                "---\nid: flow\ndepends_on: [a, b]\nsubtasks: [one, 'two, quoted']\n---\nX\n"
            ),
            "04-block.md": (
                "---\nid: block\ndepends_on:\n- a\n- b\n"
                "subtasks:\n  - one\n  - two, quoted\n---\nX\n"
            ),
        },
    )
    plan = load_plan(str(directory))
    assert plan.task("flow").depends_on == plan.task("block").depends_on == ("a", "b")
    assert plan.task("flow").subtasks == plan.task("block").subtasks == ("one", "two, quoted")


def test_a_task_depending_on_itself_is_a_cycle(tmp_path: Path) -> None:
    directory = write_plan(tmp_path / "p", tasks={"01-a.md": task("a", ["a"])})
    _, problems = check_dir(str(directory))
    assert [p.code for p in problems] == ["depends-cycle"]
    assert "a → a" in problems[0].message


def test_every_cycle_is_reported_once(tmp_path: Path) -> None:
    directory = write_plan(
        tmp_path / "p",
        tasks={
            "01-a.md": task("a", ["b"]),
            "02-b.md": task("b", ["a"]),
            "03-c.md": task("c", ["d"]),
            "04-d.md": task("d", ["e"]),
            "05-e.md": task("e", ["c", "a"]),
        },
    )
    _, problems = check_dir(str(directory))
    assert [p.message.split(";")[0] for p in problems] == [
        "dependency cycle: a → b → a",
        "dependency cycle: c → d → e → c",
    ]


def test_wrong_types_are_reported_with_a_fix(tmp_path: Path) -> None:
    directory = write_plan(
        tmp_path / "p",
        tasks={
            "01-a.md": "---\nid: [a]\nagent: [x]\nsubtasks: do it\n---\nX\n",
            "02-b.md": "---\nid: b\nsubtasks:\n  - Create: file\n  -\n---\nX\n",
        },
    )
    _, problems = check_dir(str(directory))
    messages = [(p.line, p.message) for p in problems]
    assert (2, "id must be text, not a list") in messages
    assert (3, "agent must be text, not a list") in messages
    assert any("subtasks must be a list" in m for _, m in messages)
    assert any("subtasks item 1 must be text, not a mapping (quote" in m for _, m in messages)
    assert any("subtasks item 2 is empty" in m for _, m in messages)
    assert {p.code for p in problems} == {"task-frontmatter"}


def test_missing_id_and_title_are_reported(tmp_path: Path) -> None:
    directory = tmp_path / "p"
    write(directory / "plan.md", "---\n---\nNarrative\n")
    write(directory / "tasks" / "01-a.md", "---\nagent: x\n---\nX\n")
    _, problems = check_dir(str(directory))
    assert sorted((p.code, p.message.split(";")[0]) for p in problems) == [
        ("task-frontmatter", "id is missing"),
        ("title-empty", "title is missing"),
    ]


def test_scalars_are_read_as_written(tmp_path: Path) -> None:
    directory = write_plan(
        tmp_path / "p",
        tasks={"01-a.md": "---\nid: 2024\nagent: yes\nsubtasks: [1.0, 'null']\n---\nX\n"},
    )
    plan = load_plan(str(directory))
    assert (plan.tasks[0].id, plan.tasks[0].agent) == ("2024", "yes")
    assert plan.tasks[0].subtasks == ("1.0", "null")


def test_hidden_files_in_tasks_are_ignored_but_subdirectories_are_not(tmp_path: Path) -> None:
    directory = write_plan(tmp_path / "p", tasks={"01-a.md": task("a")})
    write(directory / "tasks" / ".01-a.md.swp", "editor state")
    assert load_plan(str(directory)).tasks[0].id == "a"
    (directory / "tasks" / "archive").mkdir()
    _, problems = check_dir(str(directory))
    assert [p.code for p in problems] == ["filename"]


def test_a_missing_directory_is_reported(tmp_path: Path) -> None:
    _, problems = check_dir(str(tmp_path / "nope"))
    assert [(p.code, p.message) for p in problems] == [
        ("plan-missing", "no such directory; check the path")
    ]


def test_unknown_dependency_on_an_unreadable_task_is_not_reported(tmp_path: Path) -> None:
    # The broken file may be the task that is named: only its own error is reported.
    directory = write_plan(
        tmp_path / "p",
        tasks={"01-a.md": "---\nid: a\n  bad: [\n---\nX\n", "02-b.md": task("b", ["a"])},
    )
    _, problems = check_dir(str(directory))
    assert [p.code for p in problems] == ["task-frontmatter"]


def test_null_values_mean_absent(tmp_path: Path) -> None:
    directory = write_plan(
        tmp_path / "p",
        tasks={"01-a.md": "---\nid: a\ndepends_on: ~\nagent: null\nsubtasks:\n---\nX\n"},
    )
    only = load_plan(str(directory)).tasks[0]
    assert (only.depends_on, only.agent, only.subtasks) == ((), None, ())


def test_a_misnamed_task_is_still_checked_so_one_run_shows_everything(tmp_path: Path) -> None:
    directory = write_plan(
        tmp_path / "p",
        tasks={"01-a.md": task("a"), "1-api-docs.md": "---\nid: api-docs\ndepends-on: []\n---\n"},
    )
    write(directory / "tasks" / "notes.txt", "not read")
    _, problems = check_dir(str(directory))
    assert sorted((Path(p.file).name, p.code) for p in problems) == [
        ("1-api-docs.md", "body-empty"),
        ("1-api-docs.md", "filename"),
        ("1-api-docs.md", "sort-index-duplicate"),
        ("1-api-docs.md", "unknown-field"),
        ("notes.txt", "filename"),
    ]


def test_problems_come_in_the_order_of_the_files_across_read_batches(tmp_path: Path) -> None:
    # Task files are read in batches of about a MiB before they are parsed; a plan of
    # long task descriptions spans several, and each file's problems, found while
    # reading it or while parsing it, still come in the order of the listing.
    long = "Background, steps and how to check them.\n" * 9_000  # about 370 kB
    tasks: dict[str, str] = {}
    for n in range(1, 9):
        tasks[f"{n:02d}-step-{n}.md"] = task(f"step-{n}", [f"step-{n + 1}"], body=long)
    tasks["03_Notes.md"] = "---\nid: notes\nagent: [codex]\n---\nWrite the notes.\n"
    tasks["06-latin1.md"] = "placeholder"
    directory = write_plan(tmp_path / "p", tasks=tasks)
    (directory / "tasks" / "06-latin1.md").write_bytes(b"---\nid: caf\xe9\n---\nX\n")
    write(directory / "tasks" / "05 todo.txt", "not a task")
    write(directory / "tasks" / "09-last.md", "---\nid: last\nsubtasks: one\n---\nX\n")
    _, problems = check_dir(str(directory))
    listed = [(Path(p.file).name, p.code) for p in problems if p.code != "sort-index-duplicate"]
    assert listed == [
        ("03_Notes.md", "filename"),
        ("03_Notes.md", "task-frontmatter"),
        ("05 todo.txt", "filename"),
        ("06-latin1.md", "file-unreadable"),
        ("09-last.md", "task-frontmatter"),
        ("08-step-8.md", "depends-unknown"),
    ]
