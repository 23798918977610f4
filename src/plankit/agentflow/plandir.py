"""Reading a plan directory from disk, file by file, collecting every problem.

Only ``plan.md`` and the files in ``tasks/`` are read.  A file is read only when it is
a regular file inside the directory: a symlink that leads out of it, a FIFO or a
directory in place of a file is reported, never opened.  Hidden files (a name starting
with ``.``) in ``tasks/`` are ignored; any other file whose name is not ``NN-slug.md``
is an error.  What is found is returned as :class:`LoadedDir` for
:mod:`plankit.agentflow.validate` to check across files.
"""

from __future__ import annotations

import operator
import os
import re
import stat
from dataclasses import dataclass, field

from plankit.agentflow.fields import (
    PlanFields,
    TaskFields,
    quick_task_fields,
    read_plan_fields,
    read_task_fields,
)
from plankit.agentflow.frontmatter import FrontMatterError, normalize_newlines, parse, split
from plankit.agentflow.model import Problem, problem
from plankit.errors import InputError
from plankit.textio import MAX_TEXT_BYTES, decode_text

TASK_NAME = re.compile(r"([0-9]{2})-([a-z0-9]+(?:-[a-z0-9]+)*)\.md", re.ASCII)
"""A task file name, ``NN-slug.md`` (the spec's ``^\\d{2}-[a-z0-9]+(-[a-z0-9]+)*\\.md$``)."""


@dataclass(slots=True)
class LoadedPlan:
    """``plan.md`` as read."""

    fields: PlanFields | None
    """Its front matter fields, or ``None`` when the front matter could not be read."""
    body: str
    """The narrative."""


@dataclass(slots=True)
class LoadedTask:
    """One task file as read."""

    file: str
    """Path relative to the plan directory, ``tasks/NN-slug.md``."""
    sort_index: int | None
    """The ``NN`` of the name (``None`` for a misnamed file without one)."""
    fields: TaskFields | None
    """Its front matter fields, or ``None`` when the front matter could not be read."""
    body: str | None
    """The Markdown description, or ``None`` when the file could not be split."""


@dataclass(slots=True)
class LoadedDir:
    """Everything read from one plan directory, and the problems found on the way."""

    path: str
    """The directory as given."""
    exists: bool = True
    """False when the directory itself is missing or not a directory."""
    empty: bool = False
    """True when the directory has no entries, or only an empty ``tasks/``."""
    plan: LoadedPlan | None = None
    """``plan.md``, or ``None`` when it is missing or unreadable."""
    tasks: list[LoadedTask] = field(default_factory=list)
    """Task files with a valid name, in name order."""
    problems: list[Problem] = field(default_factory=list)
    """Problems found while reading."""

    def where(self, relative: str) -> str:
        """The path of a file of this directory, for reports."""
        # os.path.join's result for a relative name, without its checks (one call per
        # problem, and a plan of 10,000 tasks can have as many)
        base = os.fspath(self.path)
        if not base or base.endswith("/"):
            return base + relative
        return f"{base}/{relative}"


def load_dir(path: str, *, fast: bool = True) -> LoadedDir:
    """Read the plan directory at ``path``; never raises for bad content."""
    loaded = LoadedDir(path)
    try:
        entries = os.listdir(path)
    except FileNotFoundError:
        loaded.exists = False
        loaded.problems.append(
            problem(path, None, "plan-missing", "no such directory; check the path")
        )
        return loaded
    except NotADirectoryError:
        loaded.exists = False
        loaded.problems.append(
            problem(path, None, "plan-missing", "is a file; expected a plan directory")
        )
        return loaded
    except OSError as exc:
        loaded.exists = False
        loaded.problems.append(
            problem(path, None, "file-unreadable", f"cannot be read ({exc.strerror})")
        )
        return loaded
    loaded.empty = not entries or (entries == ["tasks"] and _empty_tasks(path))
    root = os.path.realpath(path)
    _load_plan(loaded, root, fast)
    _load_tasks(loaded, root, fast)
    return loaded


def _empty_tasks(path: str) -> bool:
    """Whether ``path/tasks`` is a directory (not a symlink) without entries, as a
    freshly allocated plan directory has."""
    tasks = os.path.join(path, "tasks")
    try:
        if not stat.S_ISDIR(os.lstat(tasks).st_mode):
            return False
        with os.scandir(tasks) as entries:
            return next(entries, None) is None
    except OSError:
        return False


def _inside(root: str, target: str) -> bool:
    return target == root or target.startswith(root.rstrip(os.sep) + os.sep)


def _safe_file(loaded: LoadedDir, root: str, relative: str, st: os.stat_result) -> str | None:
    """The real path of a plan file that may be read, or ``None`` after reporting why not."""
    full = loaded.where(relative)
    real = full
    if stat.S_ISLNK(st.st_mode):
        real = os.path.realpath(full)
        if not _inside(root, real):
            loaded.problems.append(
                problem(
                    full,
                    None,
                    "symlink-outside",
                    f"is a symlink to {real}, outside the plan directory; "
                    "write the file itself inside the directory",
                )
            )
            return None
        try:
            st = os.stat(real)
        except OSError:
            loaded.problems.append(
                problem(
                    full, None, "file-unreadable", "is a broken symlink; replace it with the file"
                )
            )
            return None
    if stat.S_ISDIR(st.st_mode):
        loaded.problems.append(
            problem(full, None, "file-unreadable", "is a directory; expected a Markdown file")
        )
        return None
    if not stat.S_ISREG(st.st_mode):
        loaded.problems.append(
            problem(
                full, None, "file-unreadable", "is not a regular file; expected a Markdown file"
            )
        )
        return None
    if st.st_size > MAX_TEXT_BYTES:
        loaded.problems.append(_too_large(full, st.st_size))
        return None
    return real


_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def _read(loaded: LoadedDir, real: str, full: str, *, no_follow: bool = False) -> str | None:
    """The text of the plan file at ``real`` (reported as ``full``), or ``None`` after
    reporting why it cannot be read.

    The file is opened without blocking (a FIFO put in its place is refused, never
    waited on) and, with ``no_follow``, without following a symlink; its size is taken
    from the open file, so a file of any size costs one read of its own size.
    """
    try:
        fd = os.open(real, _OPEN_FLAGS | (os.O_NOFOLLOW if no_follow else 0))
    except OSError as exc:
        loaded.problems.append(
            problem(full, None, "file-unreadable", f"cannot be read ({exc.strerror})")
        )
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            what = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            loaded.problems.append(
                problem(full, None, "file-unreadable", f"is {what}; expected a Markdown file")
            )
            return None
        if st.st_size > MAX_TEXT_BYTES:
            loaded.problems.append(_too_large(full, st.st_size))
            return None
        chunks = [os.read(fd, st.st_size + 1)]
        size = len(chunks[0])
        while chunks[-1] and size <= MAX_TEXT_BYTES and size > st.st_size:
            chunks.append(os.read(fd, MAX_TEXT_BYTES + 1 - size))  # it grew meanwhile
            size += len(chunks[-1])
        while chunks[-1] and size < st.st_size:  # a short read
            chunks.append(os.read(fd, st.st_size + 1 - size))
            size += len(chunks[-1])
    except OSError as exc:
        loaded.problems.append(
            problem(full, None, "file-unreadable", f"cannot be read ({exc.strerror})")
        )
        return None
    finally:
        os.close(fd)
    data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    if len(data) > MAX_TEXT_BYTES:
        loaded.problems.append(problem(full, None, "file-unreadable", "grew too large while read"))
        return None
    try:
        text = decode_text(data, path=full, allow_empty=True).text
    except InputError as exc:
        loaded.problems.append(problem(full, exc.line, "file-unreadable", exc.detail))
        return None
    return normalize_newlines(text)


def _too_large(full: str, size: int) -> Problem:
    return problem(
        full,
        None,
        "file-unreadable",
        f"is {size / 1_048_576:.1f} MiB; plan files over {MAX_TEXT_BYTES // 1_048_576} MiB "
        "are refused",
    )


def _load_plan(loaded: LoadedDir, root: str, fast: bool) -> None:
    full = loaded.where("plan.md")
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        if not loaded.empty:
            loaded.problems.append(
                problem(
                    full,
                    None,
                    "plan-missing",
                    "plan.md is missing; write it with front matter (title) and the plan narrative",
                )
            )
        return
    real = _safe_file(loaded, root, "plan.md", st)
    text = _read(loaded, real, full) if real is not None else None
    if text is None:
        return
    rule = "plan-frontmatter"
    try:
        doc = split(text)
        if doc.front_matter is None:
            raise FrontMatterError(
                'plan.md has no front matter; start it with the lines ---, title: "…", ---', 1
            )
        node = parse(doc.front_matter, doc.yaml_line, fast=fast)
    except FrontMatterError as exc:
        loaded.problems.append(problem(full, exc.line, rule, exc.message))
        loaded.plan = LoadedPlan(None, "")
        return
    fields = read_plan_fields(node, doc.yaml_line)
    loaded.problems.extend(problem(full, i.line, i.rule, i.message) for i in fields.issues)
    loaded.plan = LoadedPlan(fields, doc.body)


_NAME = operator.attrgetter("name")


def _load_tasks(loaded: LoadedDir, root: str, fast: bool) -> None:
    tasks_dir = loaded.where("tasks")
    try:
        st = os.lstat(tasks_dir)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        real = os.path.realpath(tasks_dir)
        if not _inside(root, real):
            loaded.problems.append(
                problem(
                    tasks_dir,
                    None,
                    "symlink-outside",
                    f"is a symlink to {real}, outside the plan directory; "
                    "make tasks/ a directory inside it",
                )
            )
            return
    try:
        entries = sorted(os.scandir(tasks_dir), key=_NAME)
    except NotADirectoryError:
        loaded.problems.append(
            problem(tasks_dir, None, "filename", "tasks must be a directory of NN-slug.md files")
        )
        return
    except OSError as exc:
        loaded.problems.append(
            problem(tasks_dir, None, "file-unreadable", f"cannot be read ({exc.strerror})")
        )
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        relative = f"tasks/{entry.name}"
        match = TASK_NAME.fullmatch(entry.name)
        index: int | None
        if match is None:
            loaded.problems.append(
                problem(loaded.where(relative), None, "filename", _name_hint(entry.name))
            )
            if not entry.name.lower().endswith(".md"):
                continue
            # A misnamed Markdown file is still a task: check its content too, so that
            # one run reports everything to fix.
            digits = re.match(r"[0-9]+", entry.name)
            index = int(digits.group()) if digits and int(digits.group()) < 100 else None
        else:
            index = int(match.group(1))
        if entry.is_file(follow_symlinks=False):
            # A regular file (from the directory listing, no stat): opened without
            # following a symlink, in case one replaced it since.
            text = _read(loaded, entry.path, entry.path, no_follow=True)
        else:
            target = _safe_file(loaded, root, relative, entry.stat(follow_symlinks=False))
            text = None if target is None else _read(loaded, target, entry.path)
        if text is not None:
            _load_task(loaded, text, relative, entry.path, index, fast)


def _load_task(
    loaded: LoadedDir, text: str, relative: str, full: str, index: int | None, fast: bool
) -> None:
    rule = "task-frontmatter"
    try:
        doc = split(text)
    except FrontMatterError as exc:
        loaded.problems.append(problem(full, exc.line, rule, exc.message))
        loaded.tasks.append(LoadedTask(relative, index, None, None))
        return
    if doc.front_matter is None:
        message = "has no front matter; start the file with the lines ---, id: <task-id>, ---"
        loaded.problems.append(problem(full, 1, rule, message))
        loaded.tasks.append(LoadedTask(relative, index, None, None))
        return
    # The usual valid front matter is read straight from its lines; the rest is parsed
    # into a tree, whose fields are checked and explained.
    fields = quick_task_fields(doc.front_matter, doc.yaml_line) if fast else None
    if fields is None:
        try:
            node = parse(doc.front_matter, doc.yaml_line, fast=fast)
        except FrontMatterError as exc:
            loaded.problems.append(problem(full, exc.line, rule, exc.message))
            loaded.tasks.append(LoadedTask(relative, index, None, doc.body))
            return
        fields = read_task_fields(node, doc.yaml_line)
        loaded.problems.extend(problem(full, i.line, i.rule, i.message) for i in fields.issues)
    loaded.tasks.append(LoadedTask(relative, index, fields, doc.body))


def _name_hint(name: str) -> str:
    """Explain a bad task file name, suggesting a good one when there is an obvious one."""
    stem, dot, ext = name.rpartition(".")
    base = stem if dot else name
    ext = ext if dot else ""
    match = re.fullmatch(r"([0-9]+)[-_ .]*(.*)", base)
    expected = "task files are named NN-slug.md (two digits, a hyphen, a kebab-case slug)"
    if match is None:
        return f"{name!r} does not start with a two-digit sort index; {expected}"
    number, rest = match.groups()
    slug = re.sub(r"[^a-z0-9]+", "-", rest.lower()).strip("-")
    if int(number) > 99 or not slug:
        return f"{name!r} breaks the naming rule; {expected}"
    suggestion = f"{int(number):02d}-{slug}.md"
    if ext.lower() not in ("md", "markdown"):
        return f"{name!r} is not a .md file; {expected}: rename it to {suggestion}"
    return f"{name!r} breaks the naming rule; {expected}: rename it to {suggestion}"
