"""Hostile input: symlinks out, code-running YAML tags, alias bombs, huge front matter."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from plankit.agentflow.control import ControlPlane
from plankit.agentflow.model import PlanDirError
from plankit.agentflow.records import ControlError
from plankit.agentflow.validate import check_dir
from tests.waiting import DEADLINE

from .helpers import task, write, write_plan
from .test_workflow import agentctl_path

BILLION_LAUGHS = """---
id: lol
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
subtasks: [*h,*h,*h,*h,*h,*h,*h,*h,*h]
---

Boom.
"""


def _only(directory: Path) -> tuple[str, int | None, str]:
    # how quickly: benchmarks/bench_agentflow.py times these refusals against ordinary plans
    _, problems = check_dir(str(directory))
    assert len(problems) == 1, [p.format() for p in problems]
    return problems[0].code, problems[0].line or None, problems[0].message


def test_a_task_symlink_out_of_the_directory_is_refused_without_reading_it(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    fifo = outside / "secret.md"
    os.mkfifo(fifo)  # opening it to read would block: the check must not open it
    directory = write_plan(tmp_path / "plan", tasks={"01-a.md": task("a")})
    (directory / "tasks" / "02-leak.md").symlink_to(fifo)
    result = subprocess.run(
        [agentctl_path(), "plan", "validate", str(directory)],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert result.returncode == 1
    assert f"tasks/02-leak.md: symlink-outside is a symlink to {fifo}, outside" in result.stderr


def test_plan_md_and_tasks_symlinked_out_are_refused(tmp_path: Path) -> None:
    outside = write_plan(tmp_path / "elsewhere", tasks={"01-a.md": task("a")})
    directory = tmp_path / "plan"
    (directory).mkdir()
    (directory / "plan.md").symlink_to(outside / "plan.md")
    (directory / "tasks").symlink_to(outside / "tasks", target_is_directory=True)
    _, problems = check_dir(str(directory))
    assert sorted((Path(p.file).name, p.code) for p in problems) == [
        ("plan.md", "symlink-outside"),
        ("tasks", "symlink-outside"),
    ]


def test_a_symlink_inside_the_directory_is_fine(tmp_path: Path) -> None:
    directory = write_plan(tmp_path / "plan")
    write(directory / "drafts" / "a.md", task("a"))
    (directory / "tasks").mkdir()
    (directory / "tasks" / "01-a.md").symlink_to(Path("..") / "drafts" / "a.md")
    plan, problems = check_dir(str(directory))
    assert problems == [] and plan is not None and plan.tasks[0].id == "a"


def test_a_fifo_in_tasks_is_refused_not_opened(tmp_path: Path) -> None:
    directory = write_plan(tmp_path / "plan")
    (directory / "tasks").mkdir()
    os.mkfifo(directory / "tasks" / "01-a.md")
    assert _only(directory)[0] == "file-unreadable"


@pytest.mark.parametrize(
    "tag",
    [
        "!!python/object/apply:os.system ['touch {marker}']",
        "!!python/object/new:os.system ['touch {marker}']",
        "!!python/name:os.system",
        "!!python/object:subprocess.Popen {{args: ['touch', '{marker}']}}",
    ],
)
def test_python_tags_are_refused_and_never_run(tmp_path: Path, tag: str) -> None:
    marker = tmp_path / "pwned"
    directory = write_plan(
        tmp_path / "plan",
        tasks={"01-a.md": f"---\nid: a\nagent: {tag.format(marker=marker)}\n---\n\nX\n"},
    )
    rule, line, message = _only(directory)
    assert (rule, line) == ("task-frontmatter", 3)
    assert "YAML tags such as !!python/" in message and "are not allowed" in message
    assert not marker.exists()


def test_a_billion_laughs_alias_bomb_is_refused_quickly(tmp_path: Path) -> None:
    directory = write_plan(tmp_path / "plan", tasks={"01-lol.md": BILLION_LAUGHS})
    rule, line, message = _only(directory)
    assert (rule, line) == ("task-frontmatter", 3)
    assert "anchors (&name) and aliases (*name) are not allowed" in message


def test_ten_megabytes_of_front_matter_is_refused_quickly(tmp_path: Path) -> None:
    filler = "subtasks:\n" + "  - " + "x" * 76 + "\n"
    text = "---\nid: big\n" + filler * (10_000_000 // len(filler)) + "---\n\nBody.\n"
    directory = write_plan(tmp_path / "plan", tasks={"01-big.md": text})
    rule, line, message = _only(directory)
    assert (rule, line) == ("task-frontmatter", 1)
    assert message.startswith("front matter is 10.0 MB; at most 64 KiB is read")


def test_unclosed_huge_front_matter_and_huge_files_are_refused_quickly(tmp_path: Path) -> None:
    directory = write_plan(tmp_path / "plan", tasks={"01-a.md": "---\n" + "a: b\n" * 2_000_000})
    assert "and not closed" in _only(directory)[2]
    (directory / "tasks" / "01-a.md").write_bytes(b"---\n" + b"x" * (21 * 1024 * 1024))
    rule, _, message = _only(directory)
    assert rule == "file-unreadable" and "MiB are refused" in message


def test_deep_nesting_is_refused_without_recursion(tmp_path: Path) -> None:
    text = "---\nid: a\nsubtasks: " + "[" * 30_000 + "]" * 30_000 + "\n---\nX\n"
    directory = write_plan(tmp_path / "plan", tasks={"01-a.md": text})
    rule, _, message = _only(directory)
    assert rule == "task-frontmatter" and "nested more than 16 levels" in message


def test_binary_files_are_refused(tmp_path: Path) -> None:
    directory = write_plan(tmp_path / "plan")
    (directory / "tasks").mkdir()
    (directory / "tasks" / "01-a.md").write_bytes(b"---\nid: a\n---\n\x00\x01\x02")
    rule, _, message = _only(directory)
    assert rule == "file-unreadable" and "NUL byte" in message


def test_commit_refuses_hostile_plans_and_records_nothing(home: Path) -> None:
    control = ControlPlane()
    context = control.start_session()
    write_plan(Path(context.current.plan_dir), tasks={"01-lol.md": BILLION_LAUGHS})
    with pytest.raises(PlanDirError) as info:
        control.commit(context.session.session_id)
    assert [p.code for p in info.value.problems] == ["task-frontmatter"]
    with pytest.raises(ControlError):
        control.show(context.session.session_id)


@pytest.mark.parametrize("agent_session_id", ["", "two\nlines", "x" * 201])
def test_bad_agent_session_ids_are_refused(home: Path, agent_session_id: str) -> None:
    with pytest.raises(ControlError) as info:
        ControlPlane().start_session(agent_session_id)
    assert info.value.rule == "session-invalid"
    assert not (home / "plans").exists() or not any((home / "plans").iterdir())
