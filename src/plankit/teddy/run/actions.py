"""Executing one action: what it does to the workspace and what the report says.

Each function takes the action and a :class:`Runtime` and returns an
:class:`~plankit.teddy.run.report.ActionResult`.  A failure is a result, not an exception;
Ctrl-C raises :class:`Interrupted` carrying the partial result.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from plankit.errors import InputError
from plankit.markdown.fences import fenced
from plankit.teddy.format.model import (
    Action,
    ChatWithUser,
    Conclude,
    Create,
    Edit,
    Execute,
    Invoke,
    Prune,
    Read,
    Research,
)
from plankit.teddy.run.approval import ChatResponder
from plankit.teddy.run.edits import EditFailed, edit_file_text, unified_diff
from plankit.teddy.run.protect import check_protected, hard_link_check
from plankit.teddy.run.report import ActionResult
from plankit.teddy.session.config import Config
from plankit.workspace import (
    HAVE_DIR_FD,
    LinkOnTheWay,
    PathRefused,
    as_written,
    read_inside,
    relative_posix,
    resolve,
    stage_inside,
    write_inside,
)

if TYPE_CHECKING:
    from plankit.teddy.run.research import SearchBackend
    from plankit.teddy.run.shell import CommandResult
    from plankit.textio import StagedWrite


class Files(Protocol):
    """Where actions read and write files (the local disk, or an ACP client's fs/*)."""

    def exists(self, path: Path) -> bool:
        """Whether ``path`` exists (a dangling symlink counts)."""
        ...

    def read_text(self, path: Path) -> str:
        """The file's text; FileNotFoundError, UnicodeDecodeError or OSError otherwise."""
        ...

    def write_text(self, path: Path, text: str) -> None:
        """Replace the file with ``text``, atomically, creating parent directories."""
        ...


class LocalFiles:
    """The local disk.  Each path is walked from ``root`` (the file system's root when
    None) one directory at a time, never through a symbolic link, and read or written
    in the directory reached (:func:`plankit.workspace.write_inside`), so a link another
    process swaps in after the path was checked cannot lead a write or read outside.
    Writes are atomic; the paths given are absolute (as :func:`resolve` returns them)."""

    def __init__(
        self, root: Path | None = None, read_check: Callable[[os.stat_result], None] | None = None
    ) -> None:
        self.root = root.resolve() if root is not None else None
        self.read_check = read_check
        """Given each file read, before and after (it raises to refuse the file)."""
        self._root_fd: int | None = None  # held by holding_root (only with a root)

    @contextlib.contextmanager
    def holding_root(self) -> Iterator[None]:
        """The root held open by one descriptor while the block runs (a group of
        writes, where no command runs between them): each path is walked from it,
        instead of from the root opened by name every time."""
        if self.root is None or self._root_fd is not None or not HAVE_DIR_FD:
            yield
            return
        self._root_fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            yield
        finally:
            fd, self._root_fd = self._root_fd, None
            os.close(fd)

    def _split(self, path: Path) -> tuple[Path, str]:
        if self.root is not None:
            rest = relative_posix(path, self.root)
            if rest is None:
                raise PathRefused(
                    "is outside the project root; refused", code="path-refused", path=str(path)
                )
            return self.root, rest
        if not path.is_absolute():
            return Path.cwd(), path.as_posix()
        anchor = Path(path.anchor)
        return anchor, path.relative_to(anchor).as_posix()

    def exists(self, path: Path) -> bool:
        return os.path.lexists(path)

    def read_text(self, path: Path) -> str:
        root, rest = self._split(path)
        return read_inside(root, rest, check=self.read_check, root_fd=self._root_fd).decode("utf-8")

    def write_text(self, path: Path, text: str) -> None:
        write_inside(*self._split(path), text.encode("utf-8"))

    def create_text(self, path: Path, text: str) -> None:
        """Like :meth:`write_text`, but never replaces a file (:class:`FileExistsError`),
        even one that appeared after :meth:`exists` was asked."""
        write_inside(*self._split(path), text.encode("utf-8"), exclusive=True)

    def stage_text(self, path: Path, text: str, *, exclusive: bool) -> StagedWrite | None:
        """The write of :meth:`write_text` (:meth:`create_text` with ``exclusive``) up to
        the flush before its rename (:func:`plankit.workspace.stage_inside`)."""
        root, rest = self._split(path)
        data = text.encode("utf-8")
        return stage_inside(root, rest, data, exclusive=exclusive, root_fd=self._root_fd)


class CommandRunner(Protocol):
    """Runs an EXECUTE command (locally, or in an ACP client's terminal)."""

    def __call__(
        self, command: str, *, cwd: Path, env: Mapping[str, str], timeout: float, cap: int
    ) -> CommandResult:
        """Run ``command``; Ctrl-C returns a result with ``interrupted=True``."""
        ...


def _local_runner() -> CommandRunner:
    from plankit.teddy.run.shell import run_command

    return run_command


class Progress(Protocol):
    """Follows execution: ``started`` before an action runs, ``finished`` after (or when
    it is skipped, with ``result.success`` None)."""

    def started(self, index: int, action: Action) -> None:
        """Action ``index`` (0-based) starts running."""
        ...

    def finished(self, index: int, result: ActionResult) -> None:
        """Action ``index`` ran (or was skipped); ``result`` says how it went."""
        ...


class Interrupted(Exception):
    """Ctrl-C while an action ran; ``result`` records what it had done."""

    def __init__(self, result: ActionResult) -> None:
        super().__init__("interrupted")
        self.result = result


@dataclass(slots=True)
class Runtime:
    """What actions need from the outside world."""

    root: Path
    """The project root."""
    config: Config
    """The user's settings."""
    chat: ChatResponder
    """Who answers CHAT_WITH_USER."""
    backend: Callable[[], SearchBackend] | None = None
    """The RESEARCH backend (built on first use from the config when None)."""
    files: Files = field(default_factory=LocalFiles)
    """Where files are read and written."""
    run: CommandRunner | None = None
    """Who runs EXECUTE commands (the local shell when None)."""
    progress: Progress | None = None
    """Told when each action starts and ends (a live display, an ACP client …)."""
    permit: Callable[[int, Action], str | None] | None = None
    """Asked before each approved action runs, with its 0-based position: None lets it
    run; a string skips it with that reason (``rejected by the user``) and execution
    goes on with the next action (an ACP client's per-action permission)."""
    fetch: Callable[[str], str] | None = None
    """Fetches a READ's URL when the action runs (None: :func:`fetch_url` without a
    cache); a session passes one that caches for the next ``input.md``."""
    _backend: SearchBackend | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if type(self.files) is LocalFiles and self.files.root is None:
            # walk from the project root; a protected file under another name is refused
            # when it is read, not only when its path was checked
            self.files = LocalFiles(self.root, hard_link_check(self.root, self.config))

    def search_backend(self) -> SearchBackend:
        """The RESEARCH backend, built once."""
        if self._backend is None:
            from plankit.teddy.run.research import load_backend  # a turn that searches

            factory = self.backend or (
                lambda: load_backend(self.config.research_backend, self.root)
            )
            self._backend = factory()
        return self._backend


def _ok(
    action: Action, started: float, details: str = "", notes: tuple[str, ...] = ()
) -> ActionResult:
    return ActionResult(action, True, None, True, time.monotonic() - started, details, None, notes)


def _failed(action: Action, started: float, why: str, details: str = "") -> ActionResult:
    return ActionResult(
        action, True, None, False, time.monotonic() - started, details, None, (why,)
    )


def file_text(content: str) -> str:
    """What CREATE writes: the fenced content, ending with a newline like any text file.

    A fenced block's content never includes the newline before its closing fence, so
    without this every created file would lack its final newline.  Empty content stays
    an empty file.
    """
    return content if not content or content.endswith("\n") else content + "\n"


def _target(rt: Runtime, path: str, *, read: bool) -> Path:
    """Where a CREATE or EDIT writes, refused when protected (validation checked it,
    this checks again right before the write)."""
    target = resolve(rt.root, path)
    check_protected(rt.root, path, rt.config, write=True, read=read, real=target)
    return target


EXISTS = "the file already exists; nothing was written"
"""Why a CREATE failed whose file exists (or appeared before the write ended)."""


def _put(
    rt: Runtime, target: Path, text: str, staged: list[StagedWrite] | None, *, new: bool
) -> None:
    """Write ``text`` to ``target``, or, given ``staged``, stage it there to be published
    later; with ``new``, never over an existing file (:class:`FileExistsError`)."""
    files = rt.files
    if not isinstance(files, LocalFiles):
        # a client's files have no exclusive write: asked first (the local write refuses)
        if new and files.exists(target):
            raise FileExistsError(str(target))
        files.write_text(target, text)
        return
    if staged is not None and (write := files.stage_text(target, text, exclusive=new)):
        staged.append(write)
    elif new:
        files.create_text(target, text)
    else:
        files.write_text(target, text)


def _create(
    action: Create, rt: Runtime, started: float, staged: list[StagedWrite] | None
) -> ActionResult:
    text = file_text(action.content)
    try:
        if isinstance(rt.files, LocalFiles) and HAVE_DIR_FD:
            # the walk follows no link: the path as written, resolved only when one is met
            written = as_written(rt.root, action.path)  # refused first as resolve refuses
            check_protected(rt.root, action.path, rt.config, write=True)
            try:
                _put(rt, written, text, staged, new=True)
            except LinkOnTheWay:
                _put(rt, _target(rt, action.path, read=False), text, staged, new=True)
        else:
            _put(rt, _target(rt, action.path, read=False), text, staged, new=True)
    except FileExistsError:
        return _failed(action, started, EXISTS)
    size = len(text.encode("utf-8"))
    lines = text.count("\n")
    noun = "line" if lines == 1 else "lines"
    return _ok(action, started, f"Wrote {lines} {noun} ({size} bytes).")


def _edit(
    action: Edit, rt: Runtime, started: float, staged: list[StagedWrite] | None
) -> ActionResult:
    target = _target(rt, action.path, read=True)
    try:
        original = rt.files.read_text(target)
    except FileNotFoundError:
        return _failed(action, started, "the file does not exist")
    except (OSError, UnicodeDecodeError) as exc:
        return _failed(action, started, f"the file cannot be read as UTF-8 text ({exc})")
    try:
        result = edit_file_text(original, action.edits)
    except EditFailed as exc:
        details = fenced(exc.detail, "diff") if exc.detail else ""
        return _failed(action, started, exc.message, details)
    _put(rt, target, result.output, staged, new=False)
    diff = unified_diff(action.path, result.before, result.after)
    return _ok(action, started, fenced(diff.rstrip("\n"), "diff"), result.notes)


def _execute(action: Execute, rt: Runtime, started: float) -> ActionResult:
    cwd = resolve(rt.root, action.cwd) if action.cwd else rt.root
    run = rt.run or _local_runner()
    result = run(
        action.command,
        cwd=cwd,
        env=dict(action.env),
        timeout=rt.config.execute_timeout,
        cap=rt.config.output_cap,
    )
    parts = ["**Command:**\n" + fenced(action.command, "shell")]
    if result.timed_out:
        parts.append(f"- **Exit code:** none (stopped after {rt.config.execute_timeout:g} s)")
    elif result.interrupted:
        parts.append("- **Exit code:** none (stopped by Ctrl-C)")
    else:
        parts.append(f"- **Exit code:** {result.exit_code}")
    for name, text in (("stdout", result.stdout), ("stderr", result.stderr)):
        if text:
            parts.append(f"**{name}:**\n" + fenced(text.rstrip("\n"), "text"))
    details = "\n\n".join(parts)
    duration = result.duration
    notes: tuple[str, ...] = ()
    if result.stopped:  # what it left running (a server started with &, a daemon)
        noun = "process" if result.stopped == 1 else "processes"
        notes = (f"stopped {result.stopped} background {noun} the command left running",)
    if result.interrupted:
        raise Interrupted(
            ActionResult(action, True, None, False, duration, details, None, ("interrupted",))
        )
    if result.ok:
        return ActionResult(action, True, None, True, duration, details, None, notes)
    why = (
        f"timed out after {rt.config.execute_timeout:g} s"
        if result.timed_out
        else f"exit code {result.exit_code}"
    )
    return ActionResult(action, True, None, False, duration, details, None, (why, *notes))


def _read(action: Read, rt: Runtime, started: float) -> ActionResult:
    if action.resource.kind == "url":
        from plankit.teddy.context.urls import FetchError, fetch_url

        url = action.resource.target
        try:
            text = rt.fetch(url) if rt.fetch is not None else fetch_url(url, None, root=rt.root)
        except FetchError as exc:
            return _failed(action, started, f"the URL cannot be fetched: {exc}")
        return _ok(
            action,
            started,
            f"Fetched ({len(text):,} characters); added to the next turn's context.",
        )
    target = resolve(rt.root, action.resource.target)
    check_protected(rt.root, action.resource.target, rt.config, read=True, real=target)
    if not rt.files.exists(target):
        return _failed(action, started, "the file does not exist")
    return _ok(action, started, "Added to the next turn's context.")


def _prune(action: Prune, rt: Runtime, started: float) -> ActionResult:
    return _ok(action, started, "Removed from the next turn's context.")


def _research(action: Research, rt: Runtime, started: float) -> ActionResult:
    try:
        backend = rt.search_backend()
    except InputError as exc:
        return _failed(action, started, exc.detail)
    sections: list[str] = []
    for query in action.queries:
        try:
            hits = backend.search(query, 8)
        except Exception as exc:  # a backend's network error must not crash the turn
            return _failed(action, started, f"the search for '{query}' failed: {exc}")
        lines = [f"#### {query}"]
        if not hits:
            lines.append("No results.")
        for hit in hits:
            title = hit.title.replace("[", "\\[").replace("]", "\\]") or hit.url
            snippet = " ".join(hit.snippet.split())
            lines.append(f"- [{title}](<{hit.url}>)" + (f": {snippet}" if snippet else ""))
        sections.append("\n".join(lines))
    return _ok(action, started, "\n\n".join(sections))


def _chat(action: ChatWithUser, rt: Runtime, started: float) -> ActionResult:
    question = "**Question:**\n" + fenced(action.message, "markdown")
    reply = rt.chat.reply(action.message)
    if reply is None:
        return _ok(
            action,
            started,
            question + "\n\nNo reply yet: the user answers in the next turn's message.",
        )
    return _ok(action, started, question + "\n\n**User reply:**\n" + fenced(reply, "text"))


def _handoff(action: Invoke | Conclude, rt: Runtime, started: float) -> ActionResult:
    what = (
        f"Control passes to {action.agent}."
        if isinstance(action, Invoke)
        else ("Control returns to the calling agent.")
    )
    return _ok(action, started, what)


def run_action(
    action: Action, rt: Runtime, staged: list[StagedWrite] | None = None
) -> ActionResult:
    """Execute ``action``; a problem is a failed result, Ctrl-C raises :class:`Interrupted`.

    Given ``staged`` (a CREATE or an EDIT on the local disk), the file's new bytes are
    only staged next to it, and the write is added to ``staged`` to be flushed and
    published by the caller (:mod:`plankit.teddy.run.batch`); the result says what the
    action will have done once it is."""
    started = time.monotonic()
    try:
        match action:
            case Create():
                return _create(action, rt, started, staged)
            case Edit():
                return _edit(action, rt, started, staged)
            case Execute():
                return _execute(action, rt, started)
            case Read():
                return _read(action, rt, started)
            case Prune():
                return _prune(action, rt, started)
            case Research():
                return _research(action, rt, started)
            case ChatWithUser():
                return _chat(action, rt, started)
            case Invoke() | Conclude():
                return _handoff(action, rt, started)
    except PathRefused as exc:
        return _failed(action, started, str(exc))
    except KeyboardInterrupt:
        raise Interrupted(_failed(action, started, "interrupted")) from None
    except OSError as exc:
        return _failed(action, started, f"{exc.strerror or exc}")
    raise AssertionError(f"unknown action {action!r}")  # pragma: no cover
