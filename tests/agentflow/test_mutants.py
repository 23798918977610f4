"""Behaviour that mutation testing (``tools/mutate.py``) showed no test was holding:
the exact problems, hints and order that validation reports, and the edges of front
matter parsing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from plankit.agentflow.cli import cli
from plankit.agentflow.validate import check_dir, check_dirs

from .helpers import task, write_plan


def _problems(directory: Path) -> list[tuple[str, str | None, int | None, str]]:
    plan, problems = check_dir(str(directory))
    assert plan is None
    return [(p.rule, Path(p.file).name if p.file else None, p.line, p.message) for p in problems]


# --- an empty directory ----------------------------------------------------------------


def test_an_empty_directory_is_invalid_with_one_problem_that_says_what_to_write(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "empty"
    directory.mkdir()
    assert _problems(directory) == [
        (
            "plan-missing",
            "plan.md",
            None,
            "the plan directory is empty; write plan.md (and tasks/NN-slug.md files)",
        )
    ]


def test_agentctl_refuses_an_empty_directory(tmp_path: Path) -> None:
    directory = tmp_path / "empty"
    directory.mkdir()
    result = CliRunner().invoke(cli, ["plan", "validate", str(directory)])
    assert result.exit_code == 1
    assert "plan-missing the plan directory is empty" in result.stderr


# --- ids -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("task_id", "hint"),
    [
        ("load_data", "; try 'load-data'"),
        ("LoadData", "; try 'load-data'"),
        ("Load Data!", "; try 'load-data'"),
        ("load--data", "; try 'load-data'"),
        ("-load-data", "; try 'load-data'"),
        ("CSV2JSON", "; try 'csv2-json'"),
        ("___", ""),
        ("données", "; try 'donn-es'"),
    ],
)
def test_an_id_that_is_not_kebab_case_is_refused_with_a_fix(
    tmp_path: Path, task_id: str, hint: str
) -> None:
    directory = write_plan(tmp_path / "p", tasks={"01-a.md": task(json.dumps(task_id))})
    assert _problems(directory) == [
        (
            "id-format",
            "01-a.md",
            2,
            f"id {task_id!r} is not kebab-case (lowercase letters and digits joined by "
            f"single hyphens){hint}",
        )
    ]


@pytest.mark.parametrize("task_id", ["a", "load-data", "step-2", "2024", "a-b-c-1"])
def test_kebab_case_ids_are_accepted(tmp_path: Path, task_id: str) -> None:
    directory = write_plan(tmp_path / "p", tasks={"01-a.md": task(task_id)})
    plan, problems = check_dir(str(directory))
    assert problems == []
    assert plan is not None
    assert plan.tasks[0].id == task_id


def test_a_duplicate_id_names_the_file_that_has_it_first(tmp_path: Path) -> None:
    directory = write_plan(tmp_path / "p", tasks={"01-a.md": task("same"), "02-b.md": task("same")})
    assert _problems(directory) == [
        (
            "id-duplicate",
            "02-b.md",
            2,
            "id 'same' is already used by tasks/01-a.md; ids must be unique within a plan",
        )
    ]


# --- unknown dependencies ---------------------------------------------------------------------


def test_an_unknown_dependency_close_to_an_id_gets_a_did_you_mean(tmp_path: Path) -> None:
    # difflib's similarity of the two ids is exactly the cut-off, 0.6
    directory = write_plan(
        tmp_path / "p",
        tasks={"01-a.md": task("parse-info"), "02-b.md": task("b", ["parse-data"])},
    )
    assert _problems(directory) == [
        (
            "depends-unknown",
            "02-b.md",
            3,
            "depends_on names 'parse-data', which is not the id of a task in this plan; "
            "did you mean 'parse-info'?",
        )
    ]


def test_an_unknown_dependency_far_from_every_id_gets_no_guess(tmp_path: Path) -> None:
    # similarity 12/21, just under the cut-off
    directory = write_plan(
        tmp_path / "p",
        tasks={"01-a.md": task("deploy-to-stage"), "02-b.md": task("b", ["deploy"])},
    )
    assert _problems(directory) == [
        (
            "depends-unknown",
            "02-b.md",
            3,
            "depends_on names 'deploy', which is not the id of a task in this plan",
        )
    ]


def test_only_the_first_twenty_unknown_dependencies_get_a_guess(tmp_path: Path) -> None:
    deps = [f"tsk-{i:02d}" for i in range(22)]
    directory = write_plan(
        tmp_path / "p", tasks={"01-a.md": task("task-00"), "02-b.md": task("b", deps)}
    )
    messages = [message for _, _, _, message in _problems(directory)]
    assert len(messages) == 22
    assert all(m.endswith("did you mean 'task-00'?") for m in messages[:20])
    assert not any("did you mean" in m for m in messages[20:])


# --- order of the report -------------------------------------------------------------------------


def test_problems_of_several_directories_come_sorted_by_file_then_line(tmp_path: Path) -> None:
    late = write_plan(
        tmp_path / "b-late",
        tasks={"01-a.md": task("a", ["x"]), "02-b.md": task("B_2")},
    )
    early = write_plan(tmp_path / "a-early", title="")
    _, problems = check_dirs([str(late), str(early)])
    assert [(Path(p.file).relative_to(tmp_path).as_posix(), p.line, p.rule) for p in problems] == [
        ("a-early/plan.md", 2, "title-empty"),
        ("b-late/tasks/01-a.md", 3, "depends-unknown"),
        ("b-late/tasks/02-b.md", 2, "id-format"),
    ]
    result = CliRunner().invoke(cli, ["plan", "validate", "--json", str(late), str(early)])
    assert result.exit_code == 1
    reported = json.loads(result.stdout)["errors"]
    assert [(Path(e["file"]).name, e["line"]) for e in reported] == [
        ("plan.md", 2),
        ("01-a.md", 3),
        ("02-b.md", 2),
    ]


# --- the other rules' messages ------------------------------------------------------------------


def test_a_shared_sort_index_and_an_empty_body_say_how_to_fix_them(tmp_path: Path) -> None:
    directory = write_plan(
        tmp_path / "p",
        tasks={
            "01-b.md": task("b"),
            "01-a.md": task("a"),
            "02-c.md": task("c", body="  \n\n"),
        },
    )
    assert _problems(directory) == [
        (
            "sort-index-duplicate",
            "01-b.md",
            None,
            "sort index 01 is also used by tasks/01-a.md; give each task file its own NN prefix",
        ),
        (
            "body-empty",
            "02-c.md",
            None,
            "the task has no description; write what to do and how to tell it is done "
            "after the front matter",
        ),
    ]


def test_a_task_depending_on_itself_is_named_with_the_fix(tmp_path: Path) -> None:
    directory = write_plan(tmp_path / "p", tasks={"01-a.md": task("a", ["a"])})
    assert _problems(directory) == [
        (
            "depends-cycle",
            "01-a.md",
            3,
            "task 'a' depends on itself: a → a; remove one of these dependencies",
        )
    ]


def test_a_cycle_through_a_duplicate_id_points_at_the_file_with_the_edge(tmp_path: Path) -> None:
    directory = write_plan(
        tmp_path / "p",
        tasks={
            "01-a.md": task("a"),
            "02-a.md": task("a", ["b"]),
            "03-b.md": task("b", ["a"]),
        },
    )
    assert _problems(directory) == [
        (
            "id-duplicate",
            "02-a.md",
            2,
            "id 'a' is already used by tasks/01-a.md; ids must be unique within a plan",
        ),
        (
            "depends-cycle",
            "02-a.md",
            3,
            "dependency cycle: a → b → a; remove one of these dependencies",
        ),
    ]


def test_a_valid_plan_lists_its_tasks_by_sort_index_with_their_fields(tmp_path: Path) -> None:
    directory = write_plan(
        tmp_path / "p",
        tasks={
            "10-last.md": "---\nid: last\ndepends_on: [first, middle]\nagent: codex\n"
            "subtasks: [one, two]\n---\nFinish.\n",
            "02-middle.md": task("middle", ["first"]),
            "01-first.md": task("first"),
        },
    )
    plan, problems = check_dir(str(directory))
    assert problems == []
    assert plan is not None
    assert [(t.id, t.sort_index, t.file) for t in plan.tasks] == [
        ("first", 1, "tasks/01-first.md"),
        ("middle", 2, "tasks/02-middle.md"),
        ("last", 10, "tasks/10-last.md"),
    ]
    last = plan.tasks[2]
    assert (last.depends_on, last.agent, last.subtasks) == (
        ("first", "middle"),
        "codex",
        ("one", "two"),
    )
    assert last.body.strip() == "Finish."
