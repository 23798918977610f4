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
from collections.abc import Callable
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


_Report = Callable[[Problem], object]
"""Where a problem found while reading a file goes (``append`` of a list)."""


def _inside(root: str, target: str) -> bool:
    return target == root or target.startswith(root.rstrip(os.sep) + os.sep)


def _safe_file(report: _Report, root: str, full: str, st: os.stat_result) -> str | None:
    """The real path of the plan file ``full`` that may be read, or ``None`` after
    reporting why not."""
    real = full
    if stat.S_ISLNK(st.st_mode):
        real = os.path.realpath(full)
        if not _inside(root, real):
            report(
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
            report(
                problem(
                    full, None, "file-unreadable", "is a broken symlink; replace it with the file"
                )
            )
            return None
    if stat.S_ISDIR(st.st_mode):
        report(problem(full, None, "file-unreadable", "is a directory; expected a Markdown file"))
        return None
    if not stat.S_ISREG(st.st_mode):
        report(
            problem(
                full, None, "file-unreadable", "is not a regular file; expected a Markdown file"
            )
        )
        return None
    if st.st_size > MAX_TEXT_BYTES:
        report(_too_large(full, st.st_size))
        return None
    return real


_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _read(report: _Report, real: str, full: str) -> str | None:
    """The text of the plan file at ``real`` (reported as ``full``), or ``None`` after
    reporting why it cannot be read."""
    data = _read_bytes(report, real, full)
    return None if data is None else _decoded(report, full, data)


def _read_bytes(report: _Report, real: str, full: str) -> bytes | None:
    """The bytes of the plan file at ``real`` (reported as ``full``), or ``None`` after
    reporting why it cannot be read.

    ``real`` is the file itself, never a symlink: a regular file of the listing, or
    where a link inside the directory was found to lead.  It is opened without
    following a symlink (one put there since is refused, not followed out of the
    directory) and without blocking (a FIFO put there is refused, never waited on).
    Its size is taken from the open file, so a file of any size costs one read of its
    own size.
    """
    try:
        fd = os.open(real, _OPEN_FLAGS)
    except OSError as exc:
        report(problem(full, None, "file-unreadable", f"cannot be read ({exc.strerror})"))
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            what = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            report(problem(full, None, "file-unreadable", f"is {what}; expected a Markdown file"))
            return None
        if st.st_size > MAX_TEXT_BYTES:
            report(_too_large(full, st.st_size))
            return None
        data = os.read(fd, st.st_size + 1)
        if len(data) != st.st_size:  # it grew or shrank since the fstat, or a short read
            data = _read_rest(fd, data, st.st_size)
    except OSError as exc:
        report(problem(full, None, "file-unreadable", f"cannot be read ({exc.strerror})"))
        return None
    finally:
        os.close(fd)
    if len(data) > MAX_TEXT_BYTES:
        report(problem(full, None, "file-unreadable", "grew too large while read"))
        return None
    return data


def _decoded(report: _Report, full: str, data: bytes) -> str | None:
    """The text of the plan file ``full`` read as ``data``, or ``None`` after reporting
    why it is not text."""
    try:
        text = decode_text(data, path=full, allow_empty=True).text
    except InputError as exc:
        report(problem(full, exc.line, "file-unreadable", exc.detail))
        return None
    return normalize_newlines(text)


def _read_rest(fd: int, data: bytes, size: int) -> bytes:
    """The whole of a file whose first read gave ``data`` instead of its ``size`` bytes:
    read on to its end, or one byte past :data:`MAX_TEXT_BYTES` when it grew."""
    chunks = [data]
    read = len(data)
    while chunks[-1] and size < read <= MAX_TEXT_BYTES:
        chunks.append(os.read(fd, MAX_TEXT_BYTES + 1 - read))  # it grew meanwhile
        read += len(chunks[-1])
    while chunks[-1] and read < size:  # a short read
        chunks.append(os.read(fd, size + 1 - read))
        read += len(chunks[-1])
    return b"".join(chunks)


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
    real = _safe_file(loaded.problems.append, root, full, st)
    text = _read(loaded.problems.append, real, full) if real is not None else None
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
    # The files are read in batches, then parsed: a system call between two parses
    # leaves the processor's caches cold for the next, a tenth of the time at 10,000
    # tasks. A batch keeps the problems found on the way in listing order, and is
    # parsed once it holds _BATCH_BYTES (so a plan of large files is not all held twice).
    batch: list[Problem | tuple[str, str, int | None, bytes]] = []
    held = 0
    for entry in entries:
        if entry.name.startswith("."):
            continue
        relative = f"tasks/{entry.name}"
        match = TASK_NAME.fullmatch(entry.name)
        full = entry.path
        index: int | None
        if match is None:
            batch.append(problem(full, None, "filename", _name_hint(entry.name)))
            if not entry.name.lower().endswith(".md"):
                continue
            # A misnamed Markdown file is still a task: check its content too, so that
            # one run reports everything to fix.
            digits = re.match(r"[0-9]+", entry.name)
            index = int(digits.group()) if digits and int(digits.group()) < 100 else None
        else:
            index = int(match.group(1))
        if entry.is_file(follow_symlinks=False):
            target: str | None = full  # a regular file, from the listing (no stat)
        else:
            target = _safe_file(batch.append, root, full, entry.stat(follow_symlinks=False))
        data = None if target is None else _read_bytes(batch.append, target, full)
        if data is not None:
            batch.append((relative, full, index, data))
            held += len(data)
            if held >= _BATCH_BYTES:
                _load_batch(loaded, batch, fast)
                batch.clear()
                held = 0
    _load_batch(loaded, batch, fast)


_BATCH_BYTES = 1 << 20
"""How many bytes of task files are read before they are parsed."""


def _load_batch(
    loaded: LoadedDir, batch: list[Problem | tuple[str, str, int | None, bytes]], fast: bool
) -> None:
    for item in batch:
        if not isinstance(item, tuple):
            loaded.problems.append(item)
            continue
        relative, full, index, data = item
        text = _decoded(loaded.problems.append, full, data)
        if text is not None:
            _load_task(loaded, text, relative, full, index, fast)


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
