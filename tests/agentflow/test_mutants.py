"""Behaviour that mutation testing (``tools/mutate.py``) showed no test was holding:
the exact problems, hints and order that validation reports, and the edges of front
matter parsing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from plankit.agentflow.cli import cli
from plankit.agentflow.frontmatter import (
    MAX_FRONT_MATTER,
    Document,
    FrontMatterError,
    Map,
    Scalar,
    parse,
    split,
)
from plankit.agentflow.validate import check_dir, check_dirs

from .helpers import task, write_plan


def _problems(directory: Path) -> list[tuple[str, str | None, int | None, str]]:
    plan, problems = check_dir(str(directory))
    assert plan is None
    return [
        (p.code, Path(p.file).name if p.file else None, p.line or None, p.message) for p in problems
    ]


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
    assert messages[20:] == [
        f"depends_on names 'tsk-{i}', which is not the id of a task in this plan" for i in (20, 21)
    ]


# --- order of the report -------------------------------------------------------------------------


def test_problems_of_several_directories_come_sorted_by_file_then_line(tmp_path: Path) -> None:
    late = write_plan(
        tmp_path / "b-late",
        tasks={"01-a.md": task("a", ["x"]), "02-b.md": task("B_2")},
    )
    early = write_plan(tmp_path / "a-early", title="")
    _, problems = check_dirs([str(late), str(early)])
    assert [(Path(p.file).relative_to(tmp_path).as_posix(), p.line, p.code) for p in problems] == [
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


# --- front matter ---------------------------------------------------------------------------

LIMIT = MAX_FRONT_MATTER
TOO_LARGE = "at most 64 KiB is read (put long text in the Markdown body)"


def _split_error(text: str) -> tuple[str, int | None]:
    with pytest.raises(FrontMatterError) as caught:
        split(text)
    return caught.value.message, caught.value.line


def test_front_matter_just_over_the_limit_does_not_claim_to_be_the_limit() -> None:
    text = "---\na: " + "x" * (LIMIT - 3) + "\n---\nBody\n"  # one character too many
    assert _split_error(text) == (f"front matter is 65 KiB; {TOO_LARGE}", 1)


@pytest.mark.parametrize(
    ("size", "shown"),
    [(102_401, "101 KiB"), (999_999, "977 KiB"), (1_000_000, "1.0 MB"), (1_050_000, "1.1 MB")],
)
def test_the_size_of_unclosed_front_matter_is_shown_in_kib_or_mb(size: int, shown: str) -> None:
    assert _split_error("---\n" + "x" * size) == (
        f"front matter is {shown} and not closed; {TOO_LARGE}",
        1,
    )


def test_text_without_front_matter_is_all_body_from_line_one() -> None:
    assert split("# Title\n\nText\n") == Document(None, 1, "# Title\n\nText\n", 1)


def test_a_closing_line_at_the_very_end_of_the_file_closes_the_front_matter() -> None:
    assert split("---\nid: a\n---") == Document("id: a\n", 2, "", 4)


@pytest.mark.parametrize("text", ["---", "---  ", "---\n", "---\nid: a\n", "---\nid: a\n--- x\n"])
def test_unclosed_front_matter_says_how_to_close_it(text: str) -> None:
    assert _split_error(text) == ("front matter is not closed; add a line --- after it", 1)


def test_unclosed_front_matter_right_at_the_limit_is_reported_as_unclosed() -> None:
    assert _split_error("---\n" + "x" * (LIMIT - 1) + "\n") == (
        "front matter is not closed; add a line --- after it",
        1,
    )


def test_front_matter_exactly_at_the_limit_is_read() -> None:
    yaml = "a: " + "x" * (LIMIT - 4) + "\n"
    assert len(yaml) == LIMIT
    doc = split("---\n" + yaml + "---\nBody\n")
    assert (doc.front_matter, doc.body, doc.body_line) == (yaml, "Body\n", 4)


@pytest.mark.parametrize("over", [10, 70, 200])
def test_a_closing_line_found_past_the_limit_gives_the_size_not_unclosed(over: int) -> None:
    text = "---\na: " + "x" * (LIMIT - 4 + over) + "\n---\nBody\n"
    assert _split_error(text) == (f"front matter is 65 KiB; {TOO_LARGE}", 1)


def test_the_size_shown_is_the_front_matter_s_not_the_file_s() -> None:
    # 66 KiB of YAML exactly, then a long body
    text = "---\na: " + "x" * (66 * 1024 - 4) + "\n---\n" + "Body text\n" * 20_000
    assert _split_error(text) == (f"front matter is 66 KiB; {TOO_LARGE}", 1)


def test_a_closing_line_with_blanks_across_the_search_window_is_still_found() -> None:
    # the closing line starts 60 characters past the limit and its blanks run past the
    # end of the window searched first
    text = "---\na: " + "x" * (LIMIT - 4 + 59) + "\n---     \nBody\n"
    assert _split_error(text) == (f"front matter is 65 KiB; {TOO_LARGE}", 1)


def test_parse_refuses_yaml_over_the_limit_with_its_size() -> None:
    with pytest.raises(FrontMatterError) as caught:
        parse("a: " + "x" * (102_401 - 3), 2)
    assert (caught.value.message, caught.value.line) == (
        "front matter is 101 KiB; at most 64 KiB is read",
        2,
    )


# --- misnamed task files -----------------------------------------------------------------------


def test_a_task_file_without_a_number_comes_after_the_numbered_ones(tmp_path: Path) -> None:
    # "-draft.md" sorts before "01-a.md" by name; as a task it comes last
    directory = write_plan(
        tmp_path / "p", tasks={"01-a.md": task("same"), "-draft.md": task("same")}
    )
    problems = _problems(directory)
    assert [(rule, name) for rule, name, _, _ in problems] == [
        ("filename", "-draft.md"),
        ("id-duplicate", "-draft.md"),
    ]
    assert problems[1][3] == (
        "id 'same' is already used by tasks/01-a.md; ids must be unique within a plan"
    )


def test_parse_numbers_lines_from_one_by_default() -> None:
    assert parse("id: a\nagent: x\n") == Map(
        (("id", 1, Scalar("a", 1)), ("agent", 2, Scalar("x", 2))), 1
    )


def test_parse_reads_yaml_exactly_at_the_limit() -> None:
    yaml = "a: " + "x" * (LIMIT - 4) + "\n"
    node = parse(yaml)
    assert isinstance(node, Map)
    assert node.items[0][0] == "a"


@pytest.mark.parametrize("fast", [True, False])
def test_a_duplicate_key_is_refused_at_any_depth(fast: bool) -> None:
    for yaml, line in [
        ("id: a\nid: b\n", 3),
        ("a:\n  b: 1\n  b: 2\n", 4),
        ("a: [{b: 1, b: 2}]\n", 2),
    ]:
        with pytest.raises(FrontMatterError) as caught:
            parse(yaml, 2, fast=fast)
        assert caught.value.message.startswith("duplicate field"), yaml
        assert caught.value.line == line, yaml


def test_an_unreadable_task_does_not_hide_a_bad_id_in_a_later_one(tmp_path: Path) -> None:
    directory = write_plan(
        tmp_path / "p",
        tasks={"01-a.md": "no front matter\n", "02-b.md": task("Bad_Id"), "03-c.md": task("c")},
    )
    assert [(rule, name) for rule, name, _, _ in _problems(directory)] == [
        ("task-frontmatter", "01-a.md"),
        ("id-format", "02-b.md"),
    ]


@pytest.mark.parametrize(
    "yaml",
    [
        "a:\n - x\nb:\n - y\n",
        "a:\n  - x\nb:\n - y\n",
        "id: a\nX\n",
        "id: a\nXX: b\n",
        "id: a\n\u00a0\n",
    ],
)
def test_the_fast_path_and_the_full_parser_agree(yaml: str) -> None:
    def read(fast: bool) -> object:
        try:
            return parse(yaml, 2, fast=fast)
        except FrontMatterError as exc:
            return ("error", exc.line)

    assert read(True) == read(False)


@pytest.mark.parametrize("blanks", [0, 61, 62, 200])
def test_front_matter_at_the_limit_is_read_whatever_blanks_end_its_closing_line(
    blanks: int,
) -> None:
    yaml = "a: " + "x" * (LIMIT - 4) + "\n"
    doc = split("---\n" + yaml + "---" + " " * blanks + "\nBody\n")
    assert (doc.front_matter, doc.body) == (yaml, "Body\n")
