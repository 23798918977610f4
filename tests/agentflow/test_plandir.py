"""Reading a plan directory: what each file that cannot be read is reported as, in full.

A user meets these lines when `agentctl plan validate` refuses a directory, so each
test holds the whole report (file, line, rule and message), not only the rule: the
message is what tells the user where to look and what to do.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from plankit.agentflow import plandir
from plankit.agentflow.plandir import LoadedDir, load_dir
from plankit.agentflow.validate import check_dir
from plankit.textio import MAX_TEXT_BYTES

from .helpers import task, write, write_plan


def _report(directory: Path) -> list[tuple[str, int, str, str]]:
    """What reading ``directory`` reported: (path relative to the directory, line,
    rule, message) of each problem, in order."""
    loaded = load_dir(str(directory))
    prefix = f"{directory}/"
    return [
        (p.file.removeprefix(prefix) if p.file else "", p.line, p.code, p.message)
        for p in loaded.problems
    ]


def _unreadable(file: str, message: str) -> tuple[str, int, str, str]:
    """The report of a whole file that could not be read."""
    return (file, 0, "file-unreadable", message)


def test_a_missing_directory_and_a_file_in_its_place(tmp_path: Path) -> None:
    missing = load_dir(str(tmp_path / "nope"))
    assert missing.exists is False
    assert [(p.file, p.code, p.message) for p in missing.problems] == [
        (str(tmp_path / "nope"), "plan-missing", "no such directory; check the path")
    ]
    write(tmp_path / "plan.md", "---\ntitle: X\n---\n")
    a_file = load_dir(str(tmp_path / "plan.md"))
    assert a_file.exists is False
    assert [(p.file, p.code, p.message) for p in a_file.problems] == [
        (str(tmp_path / "plan.md"), "plan-missing", "is a file; expected a plan directory")
    ]


def test_a_directory_whose_name_is_too_long_is_unreadable_with_the_reason(
    tmp_path: Path,
) -> None:
    loaded = load_dir(str(tmp_path / ("x" * 300)))
    assert loaded.exists is False
    assert [(p.file, p.code, p.message) for p in loaded.problems] == [
        (str(tmp_path / ("x" * 300)), "file-unreadable", "cannot be read (File name too long)")
    ]


def test_a_new_directory_is_empty_and_asks_for_nothing(tmp_path: Path) -> None:
    (tmp_path / "fresh" / "tasks").mkdir(parents=True)
    fresh = load_dir(str(tmp_path / "fresh"))
    assert fresh.exists and fresh.empty and fresh.problems == [] and fresh.plan is None
    (tmp_path / "bare").mkdir()
    assert load_dir(str(tmp_path / "bare")).empty


def test_a_tasks_folder_with_a_file_or_a_link_is_not_empty(tmp_path: Path) -> None:
    write(tmp_path / "one" / "tasks" / "01-a.md", task("a"))
    one = load_dir(str(tmp_path / "one"))
    assert not one.empty
    assert _report(tmp_path / "one")[0] == (
        "plan.md",
        0,
        "plan-missing",
        "plan.md is missing; write it with front matter (title) and the plan narrative",
    )
    (tmp_path / "linked").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "linked" / "tasks").symlink_to(tmp_path / "elsewhere")
    assert not load_dir(str(tmp_path / "linked")).empty
    (tmp_path / "filed").mkdir()
    write(tmp_path / "filed" / "tasks", "not a folder")
    filed = load_dir(str(tmp_path / "filed"))
    assert not filed.empty
    assert _report(tmp_path / "filed") == [
        (
            "plan.md",
            0,
            "plan-missing",
            "plan.md is missing; write it with front matter (title) and the plan narrative",
        ),
        ("tasks", 0, "filename", "tasks must be a directory of NN-slug.md files"),
    ]


def test_plan_md_that_is_not_a_file_inside_the_directory(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside" / "plan.md", '---\ntitle: "Secret"\n---\n')
    cases = {
        "link-out": f"is a symlink to {outside}, outside the plan directory; "
        "write the file itself inside the directory",
        "broken": "is a broken symlink; replace it with the file",
        "folder": "is a directory; expected a Markdown file",
        "fifo": "is not a regular file; expected a Markdown file",
    }
    (tmp_path / "link-out").mkdir()
    (tmp_path / "link-out" / "plan.md").symlink_to(outside)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "plan.md").symlink_to("drafts/plan.md")
    (tmp_path / "folder" / "plan.md").mkdir(parents=True)
    (tmp_path / "fifo").mkdir()
    os.mkfifo(tmp_path / "fifo" / "plan.md")
    for name, message in cases.items():
        rule = "symlink-outside" if name == "link-out" else "file-unreadable"
        write(tmp_path / name / "tasks" / "01-a.md", task("a"))
        loaded = load_dir(str(tmp_path / name))
        assert loaded.plan is None, name
        assert _report(tmp_path / name) == [("plan.md", 0, rule, message)], name


def test_plan_md_linked_to_a_file_inside_the_directory_is_read(tmp_path: Path) -> None:
    directory = tmp_path / "p"
    write(directory / "drafts" / "plan.md", '---\ntitle: "Linked"\n---\n\nWhy.\n')
    (directory / "plan.md").symlink_to("drafts/plan.md")
    loaded = load_dir(str(directory))
    assert loaded.problems == []
    assert loaded.plan is not None and loaded.plan.body == "\nWhy.\n"
    assert loaded.plan.fields is not None and loaded.plan.fields.title == "Linked"


def test_plan_md_without_front_matter_or_with_broken_yaml(tmp_path: Path) -> None:
    write(tmp_path / "none" / "plan.md", "# My plan\n\nSteps.\n")
    assert _report(tmp_path / "none") == [
        (
            "plan.md",
            1,
            "plan-frontmatter",
            'plan.md has no front matter; start it with the lines ---, title: "…", ---',
        )
    ]
    assert load_dir(str(tmp_path / "none")).plan == plandir.LoadedPlan(None, "")
    write(tmp_path / "bad" / "plan.md", '---\ntitle: "A plan\n---\nBody.\n')
    # the quote runs on to the end of the front matter, its closing line
    assert _report(tmp_path / "bad") == [
        ("plan.md", 3, "plan-frontmatter", "invalid YAML: found unexpected end of stream")
    ]


def test_task_files_that_are_not_files_inside_the_directory(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside" / "secret.md", task("secret"))
    directory = write_plan(tmp_path / "p", tasks={"01-a.md": task("a")})
    tasks = directory / "tasks"
    (tasks / "02-out.md").symlink_to(outside)
    (tasks / "03-broken.md").symlink_to("../drafts/gone.md")
    (tasks / "04-folder.md").mkdir()
    os.mkfifo(tasks / "05-fifo.md")
    write(directory / "drafts" / "folder" / "x.md", "x")
    (tasks / "06-linked-folder.md").symlink_to("../drafts/folder")
    write(directory / "drafts" / "b.md", task("b", ["a"]))
    (tasks / "07-linked.md").symlink_to("../drafts/b.md")
    assert _report(directory) == [
        (
            "tasks/02-out.md",
            0,
            "symlink-outside",
            f"is a symlink to {outside}, outside the plan directory; "
            "write the file itself inside the directory",
        ),
        _unreadable("tasks/03-broken.md", "is a broken symlink; replace it with the file"),
        _unreadable("tasks/04-folder.md", "is a directory; expected a Markdown file"),
        _unreadable("tasks/05-fifo.md", "is not a regular file; expected a Markdown file"),
        _unreadable("tasks/06-linked-folder.md", "is a directory; expected a Markdown file"),
    ]
    loaded = load_dir(str(directory))
    assert [(t.file, t.sort_index) for t in loaded.tasks] == [
        ("tasks/01-a.md", 1),
        ("tasks/07-linked.md", 7),
    ]
    assert loaded.tasks[1].fields is not None and loaded.tasks[1].fields.id == "b"


def test_a_tasks_folder_linked_out_of_the_directory_is_not_listed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside / "01-secret.md", task("secret"))
    directory = write_plan(tmp_path / "p")
    (directory / "tasks").symlink_to(outside)
    assert _report(directory) == [
        (
            "tasks",
            0,
            "symlink-outside",
            f"is a symlink to {outside}, outside the plan directory; "
            "make tasks/ a directory inside it",
        )
    ]
    assert load_dir(str(directory)).tasks == []


def test_a_tasks_folder_linked_inside_the_directory_is_read(tmp_path: Path) -> None:
    directory = write_plan(tmp_path / "p")
    write(directory / "work" / "01-a.md", task("a"))
    (directory / "tasks").symlink_to("work")
    loaded = load_dir(str(directory))
    assert loaded.problems == []
    assert [t.file for t in loaded.tasks] == ["tasks/01-a.md"]


def test_a_task_file_over_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    directory = write_plan(tmp_path / "p", tasks={"01-a.md": task("a")})
    with open(directory / "tasks" / "02-huge.md", "wb") as f:
        f.truncate(MAX_TEXT_BYTES + 1)  # sparse: nothing is written to the disk
    with open(directory / "tasks" / "03-at-limit.md", "wb") as f:
        f.write(b"---\nid: c\n---\n")
        f.truncate(MAX_TEXT_BYTES)
    report = _report(directory)
    assert report[0] == _unreadable(
        "tasks/02-huge.md", "is 20.0 MiB; plan files over 20 MiB are refused"
    )
    # the file at the limit is read: its NUL bytes are what is wrong with it
    assert report[1][0] == "tasks/03-at-limit.md" and "NUL" in report[1][3]


def test_a_linked_task_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    directory = write_plan(tmp_path / "p")
    with open(directory / "big.md", "wb") as f:
        f.truncate(MAX_TEXT_BYTES + 3 * 1024 * 1024)
    (directory / "tasks").mkdir()
    (directory / "tasks" / "01-a.md").symlink_to("../big.md")
    assert _report(directory) == [
        _unreadable("tasks/01-a.md", "is 23.0 MiB; plan files over 20 MiB are refused")
    ]


def test_a_task_file_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    directory = write_plan(tmp_path / "p")
    (directory / "tasks").mkdir()
    (directory / "tasks" / "01-a.md").write_bytes(b"---\nid: a\n---\n\nCaf\xe9 au lait.\n")
    ((file, line, rule, _),) = _report(directory)
    assert (file, line, rule) == ("tasks/01-a.md", 5, "file-unreadable")
    assert load_dir(str(directory)).tasks == []


def test_a_task_file_without_front_matter_or_with_broken_yaml(tmp_path: Path) -> None:
    directory = write_plan(
        tmp_path / "p",
        tasks={
            "01-plain.md": "# Set up the database\n\nCreate the tables.\n",
            "02-colon.md": "---\nid: colon\nagent: codex: fast\n---\nX\n",
        },
    )
    report = _report(directory)
    assert report[0] == (
        "tasks/01-plain.md",
        1,
        "task-frontmatter",
        "has no front matter; start the file with the lines ---, id: <task-id>, ---",
    )
    assert report[1] == (
        "tasks/02-colon.md",
        3,
        "task-frontmatter",
        "invalid YAML: mapping values are not allowed here",
    )
    loaded = load_dir(str(directory))
    assert [(t.file, t.sort_index, t.fields, t.body) for t in loaded.tasks] == [
        ("tasks/01-plain.md", 1, None, None),
        ("tasks/02-colon.md", 2, None, "X\n"),
    ]


def test_front_matter_that_never_closes_is_reported_with_no_body(tmp_path: Path) -> None:
    directory = write_plan(tmp_path / "p", tasks={"04-a.md": "---\nid: a\n\nNo closing line.\n"})
    assert _report(directory) == [
        (
            "tasks/04-a.md",
            1,
            "task-frontmatter",
            "front matter is not closed; add a line --- after it",
        )
    ]
    assert [(t.file, t.sort_index, t.fields, t.body) for t in load_dir(str(directory)).tasks] == [
        ("tasks/04-a.md", 4, None, None)
    ]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "1-setup.md",
            "'1-setup.md' breaks the naming rule; task files are named NN-slug.md "
            "(two digits, a hyphen, a kebab-case slug): rename it to 01-setup.md",
        ),
        (
            "01_Set Up DB.md",
            "'01_Set Up DB.md' breaks the naming rule; task files are named NN-slug.md "
            "(two digits, a hyphen, a kebab-case slug): rename it to 01-set-up-db.md",
        ),
        (
            "02-deploy.markdown",
            "'02-deploy.markdown' breaks the naming rule; task files are named NN-slug.md "
            "(two digits, a hyphen, a kebab-case slug): rename it to 02-deploy.md",
        ),
        (
            "03-notes.txt",
            "'03-notes.txt' is not a .md file; task files are named NN-slug.md "
            "(two digits, a hyphen, a kebab-case slug): rename it to 03-notes.md",
        ),
        (
            "04 todo",
            "'04 todo' is not a .md file; task files are named NN-slug.md "
            "(two digits, a hyphen, a kebab-case slug): rename it to 04-todo.md",
        ),
        (
            "setup.md",
            "'setup.md' does not start with a two-digit sort index; task files are named "
            "NN-slug.md (two digits, a hyphen, a kebab-case slug)",
        ),
        (
            "123-setup.md",
            "'123-setup.md' breaks the naming rule; task files are named NN-slug.md "
            "(two digits, a hyphen, a kebab-case slug)",
        ),
        (
            "05-.md",
            "'05-.md' breaks the naming rule; task files are named NN-slug.md "
            "(two digits, a hyphen, a kebab-case slug)",
        ),
        (
            "100-final.md",
            "'100-final.md' breaks the naming rule; task files are named NN-slug.md "
            "(two digits, a hyphen, a kebab-case slug)",
        ),
        (
            "99 Wrap up.md",
            "'99 Wrap up.md' breaks the naming rule; task files are named NN-slug.md "
            "(two digits, a hyphen, a kebab-case slug): rename it to 99-wrap-up.md",
        ),
        (
            "02-v1.2-upgrade.md",
            "'02-v1.2-upgrade.md' breaks the naming rule; task files are named NN-slug.md "
            "(two digits, a hyphen, a kebab-case slug): rename it to 02-v1-2-upgrade.md",
        ),
        (
            "03-Deploy (prod).md",
            "'03-Deploy (prod).md' breaks the naming rule; task files are named NN-slug.md "
            "(two digits, a hyphen, a kebab-case slug): rename it to 03-deploy-prod.md",
        ),
    ],
)
def test_a_misnamed_task_file_is_told_the_name_to_use(
    tmp_path: Path, name: str, message: str
) -> None:
    directory = write_plan(tmp_path / "p")
    write(directory / "tasks" / name, task("a"))
    assert _report(directory)[0] == (f"tasks/{name}", 0, "filename", message)


def test_a_misnamed_markdown_file_is_still_read_as_a_task(tmp_path: Path) -> None:
    directory = write_plan(
        tmp_path / "p",
        tasks={
            "1-setup.md": task("setup"),
            "123-big.md": task("big"),
            "100-final.md": task("final"),
            "Notes.MD": task("notes"),
            "07 todo.txt": task("todo"),
            ".draft.md": "not read at all",
        },
    )
    loaded = load_dir(str(directory))
    assert [(t.file, t.sort_index, t.fields.id if t.fields else None) for t in loaded.tasks] == [
        ("tasks/1-setup.md", 1, "setup"),
        ("tasks/100-final.md", None, "final"),
        ("tasks/123-big.md", None, "big"),
        ("tasks/Notes.MD", None, "notes"),
    ]
    assert [f for f, *_ in _report(directory)] == [
        "tasks/07 todo.txt",
        "tasks/1-setup.md",
        "tasks/100-final.md",
        "tasks/123-big.md",
        "tasks/Notes.MD",
    ]


@pytest.mark.parametrize(
    ("base", "expected"),
    [
        ("plans/p", "plans/p/tasks/01-a.md"),
        ("plans/p/", "plans/p/tasks/01-a.md"),
        ("", "tasks/01-a.md"),
    ],
)
def test_where_joins_the_directory_and_a_file(base: str, expected: str) -> None:
    assert LoadedDir(base).where("tasks/01-a.md") == expected


def _fake_fstat(monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    """os.fstat reports ``size`` for ``tasks/01-a.md``: what it says of a file that grows
    or shrinks between the fstat and the read."""
    real = os.fstat

    def fstat(fd: int) -> os.stat_result:
        st = real(fd)
        if not stat.S_ISREG(st.st_mode) or not os.readlink(f"/proc/self/fd/{fd}").endswith(
            "/tasks/01-a.md"
        ):
            return st
        fields = list(st)
        fields[6] = size
        return os.stat_result(fields)

    monkeypatch.setattr(os, "fstat", fstat)


def test_a_task_file_that_grows_while_read_is_read_to_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an agent appends to the file between the size being taken and the read
    text = task("a", body="Step one.\nStep two.\n" * 50)
    directory = write_plan(tmp_path / "p", tasks={"01-a.md": text})
    _fake_fstat(monkeypatch, 10)
    loaded = load_dir(str(directory))
    assert loaded.problems == []
    assert loaded.tasks[0].body == "\n" + "Step one.\nStep two.\n" * 50


@pytest.mark.parametrize(
    ("size", "said"),
    [
        (MAX_TEXT_BYTES + 10, 100),
        # the first read takes exactly the limit's bytes: one more is read to tell a
        # file at the limit from one that grew past it
        (MAX_TEXT_BYTES + 5, MAX_TEXT_BYTES - 1),
    ],
)
def test_a_task_file_that_grows_past_the_limit_while_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int, said: int
) -> None:
    directory = write_plan(tmp_path / "p", tasks={"01-a.md": task("a")})
    with open(directory / "tasks" / "01-a.md", "ab") as f:
        f.truncate(size)
    _fake_fstat(monkeypatch, said)
    assert _report(directory)[-1] == _unreadable("tasks/01-a.md", "grew too large while read")


def test_a_task_file_that_shrank_while_read_is_read_as_it_is_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = write_plan(tmp_path / "p", tasks={"01-a.md": task("a")})
    _fake_fstat(monkeypatch, 10_000)
    loaded = load_dir(str(directory))
    assert loaded.problems == [] and loaded.tasks[0].body == "\nDo it.\n"


def test_short_reads_are_read_on_to_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a network or FUSE file system may return fewer bytes than asked for
    text = task("a", ["b"], body="Migrate the tables, then check the counts.\n")
    directory = write_plan(tmp_path / "p", tasks={"01-a.md": text, "02-b.md": task("b")})
    real = os.read
    monkeypatch.setattr(os, "read", lambda fd, n: real(fd, min(n, 7)))
    loaded = load_dir(str(directory))
    assert loaded.problems == []
    assert [(t.fields.id if t.fields else None, t.body) for t in loaded.tasks] == [
        ("a", "\nMigrate the tables, then check the counts.\n"),
        ("b", "\nDo it.\n"),
    ]


def test_an_error_while_reading_is_reported_with_its_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = write_plan(tmp_path / "p", tasks={"01-a.md": task("a")})

    def failing(fd: int, n: int) -> bytes:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "read", failing)
    assert _report(directory) == [
        _unreadable("plan.md", "cannot be read (Input/output error)"),
        _unreadable("tasks/01-a.md", "cannot be read (Input/output error)"),
    ]


def test_a_task_file_replaced_by_a_link_after_the_listing_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the listing saw a regular file; by the time it is opened a link stands there
    outside = write(tmp_path / "outside" / "secret.md", task("secret"))
    directory = write_plan(tmp_path / "p", tasks={"01-a.md": task("a")})
    real_open = os.open

    def swap_then_open(path: str, flags: int, *args: int) -> int:
        if path.endswith("01-a.md"):
            os.remove(path)
            os.symlink(outside, path)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", swap_then_open)
    report = _report(directory)
    assert report == [
        _unreadable("tasks/01-a.md", "cannot be read (Too many levels of symbolic links)")
    ]


def test_check_dir_reports_the_unreadable_file_and_what_the_others_say(tmp_path: Path) -> None:
    directory = write_plan(tmp_path / "p", tasks={"01-a.md": task("a", ["b"])})
    (directory / "tasks" / "02-b.md").mkdir()
    _, problems = check_dir(str(directory))
    assert [(os.path.basename(p.file or ""), p.code) for p in problems] == [
        ("02-b.md", "file-unreadable"),
        ("01-a.md", "depends-unknown"),
    ]


def test_a_linked_task_file_at_the_size_limit_is_read_and_one_over_it_reported_in_mib(
    tmp_path: Path,
) -> None:
    directory = write_plan(tmp_path / "p")
    with open(directory / "at-limit.md", "wb") as f:
        f.truncate(MAX_TEXT_BYTES)
    with open(directory / "over.md", "wb") as f:
        f.truncate(26_266_829)  # 25.05 MiB and a little more
    (directory / "tasks").mkdir()
    (directory / "tasks" / "01-a.md").symlink_to("../at-limit.md")
    (directory / "tasks" / "02-b.md").symlink_to("../over.md")
    report = _report(directory)
    assert report[0][:3] == ("tasks/01-a.md", 1, "file-unreadable") and "NUL" in report[0][3]
    assert report[1] == _unreadable(
        "tasks/02-b.md", "is 25.1 MiB; plan files over 20 MiB are refused"
    )


def test_an_empty_task_file_is_told_to_start_with_front_matter(tmp_path: Path) -> None:
    directory = write_plan(tmp_path / "p")
    write(directory / "tasks" / "01-a.md", "")  # as `touch` leaves it
    assert _report(directory) == [
        (
            "tasks/01-a.md",
            1,
            "task-frontmatter",
            "has no front matter; start the file with the lines ---, id: <task-id>, ---",
        )
    ]


def test_plan_md_that_is_not_utf8_names_the_file_and_line(tmp_path: Path) -> None:
    directory = tmp_path / "p"
    directory.mkdir()
    (directory / "plan.md").write_bytes(b'---\ntitle: "Caf\xe9"\n---\n')
    ((file, line, rule, message),) = _report(directory)
    assert (file, line, rule) == ("plan.md", 2, "file-unreadable")
    assert "UTF-8" in message


def test_a_missing_title_or_id_is_reported_on_the_front_matters_first_line(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "p"
    write(directory / "plan.md", "---\nowner: ana\n---\n\nWhy.\n")
    write(directory / "tasks" / "01-a.md", "---\nagent: codex\n---\n\nDo it.\n")
    write(directory / "tasks" / "02-b.md", "---\nagent: codex\nsubtasks: [a, {b: c}]\n---\n\nX\n")
    # 01-a.md is read by the quick reading of a task's lines, 02-b.md by the parser
    missing_id = "id is missing; add id: <kebab-case-id>"
    assert _report(directory) == [
        ("plan.md", 2, "unknown-field", "unknown field 'owner'; the fields are: title"),
        ("plan.md", 2, "title-empty", 'title is missing; add title: "<short summary>"'),
        ("tasks/01-a.md", 2, "task-frontmatter", missing_id),
        ("tasks/02-b.md", 2, "task-frontmatter", missing_id),
        (
            "tasks/02-b.md",
            3,
            "task-frontmatter",
            "subtasks item 2 must be text, not a mapping (quote an item that contains ': ')",
        ),
    ]


def _swap_on_open(
    monkeypatch: pytest.MonkeyPatch, name: str, swap: Callable[[str], object]
) -> None:
    """Run ``swap`` on the path ending in ``name`` just before it is opened: what an
    agent rewriting the plan while it is validated can do between the look and the read."""
    real_open = os.open

    def open_after_swap(path: str, flags: int, *args: int) -> int:
        if path.endswith(name):
            swap(path)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", open_after_swap)


def _to_folder(path: str) -> None:
    os.remove(path)
    os.mkdir(path)


def _to_fifo(path: str) -> None:
    os.remove(path)
    os.mkfifo(path)


@pytest.mark.parametrize(
    ("swap", "message"),
    [
        (_to_folder, "is a directory; expected a Markdown file"),
        (_to_fifo, "is not a regular file; expected a Markdown file"),
    ],
)
def test_a_task_file_replaced_after_the_look_is_refused_when_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap: Callable[[str], None], message: str
) -> None:
    directory = write_plan(tmp_path / "p", tasks={"01-a.md": task("a")})
    write(directory / "drafts" / "b.md", task("b"))
    (directory / "tasks" / "02-b.md").symlink_to("../drafts/b.md")
    _swap_on_open(monkeypatch, "01-a.md", swap)
    assert _report(directory) == [("tasks/01-a.md", 0, "file-unreadable", message)]
    _swap_on_open(monkeypatch, "drafts/b.md", swap)
    # reported as the task file the user knows, not as where its link leads
    assert _report(directory)[-1] == ("tasks/02-b.md", 0, "file-unreadable", message)


def test_plan_md_replaced_by_a_link_out_after_the_look_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = write(tmp_path / "outside" / "plan.md", '---\ntitle: "Secret"\n---\n')
    directory = write_plan(tmp_path / "p", tasks={"01-a.md": task("a")})

    def link_out(path: str) -> None:
        os.remove(path)
        os.symlink(outside, path)

    _swap_on_open(monkeypatch, "p/plan.md", link_out)
    assert _report(directory) == [
        _unreadable("plan.md", "cannot be read (Too many levels of symbolic links)")
    ]
    # and where a task's link inside the directory leads
    write(directory / "drafts" / "b.md", task("b"))
    (directory / "tasks" / "02-b.md").symlink_to("../drafts/b.md")
    _swap_on_open(monkeypatch, "drafts/b.md", link_out)
    assert _report(directory)[-1] == _unreadable(
        "tasks/02-b.md", "cannot be read (Too many levels of symbolic links)"
    )


def test_a_tasks_folder_that_cannot_be_listed_is_reported_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the process is out of file descriptors: the folder is there, but cannot be opened
    directory = write_plan(tmp_path / "p", tasks={"01-a.md": task("a")})
    (tmp_path / "fresh" / "tasks").mkdir(parents=True)

    def no_descriptors(path: object) -> object:
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(os, "scandir", no_descriptors)
    assert _report(directory) == [_unreadable("tasks", "cannot be read (Too many open files)")]
    fresh = load_dir(str(tmp_path / "fresh"))
    assert not fresh.empty  # not known to be empty: plan.md is asked for
    assert [p.code for p in fresh.problems] == ["plan-missing", "file-unreadable"]


def test_a_tasks_link_that_loops_is_reported(tmp_path: Path) -> None:
    directory = write_plan(tmp_path / "p")
    (directory / "tasks").symlink_to("tasks")
    assert _report(directory) == [
        _unreadable("tasks", "cannot be read (Too many levels of symbolic links)")
    ]


def test_a_plan_directory_at_the_file_system_root_holds_every_path_under_it() -> None:
    # a container may mount the plan at /: its links inside it stay inside it
    assert plandir._inside("/", "/tasks/01-a.md")
    assert plandir._inside("/work/plan", "/work/plan/drafts/a.md")
    assert not plandir._inside("/work/plan", "/work/plan-old/a.md")
    assert plandir._inside("/work/plan", "/work/plan")
