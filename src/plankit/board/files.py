"""How the board reads a file: never blocking, never through a link, never too much.

Every file the board reads (a turn's ``plan.md``, ``report.md``, ``meta.yaml`` and
``message.md``, ``.teddy/memos.yaml``, a checklist, an agentflow plan, its task files
and ``state.json``, an ACP transcript) goes through :func:`read_file`.  The file is
opened with ``O_NONBLOCK`` and ``O_NOFOLLOW`` and checked on the opened descriptor, so a
named pipe, a socket, a device or a directory put where a file is expected is refused
at once (a FIFO opened for reading would otherwise wait for a writer for ever, and with
it every request after it), and so is a symbolic link swapped in after the walk.  A
file is read up to :data:`MAX_TEXT` bytes and no further, however much it grows.  What
was refused comes back as one line the page shows beside the plan.
"""

from __future__ import annotations

import datetime as _dt
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_TEXT = 2_000_000
"""Files larger than this are not read by the board (a plan is never that big)."""

_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NOCTTY", 0)
)


@dataclass(frozen=True, slots=True)
class FileText:
    """A file as the board read it: its text, or why it was not read."""

    text: str | None
    """The content (undecodable bytes replaced), or None: missing or refused."""
    problem: str | None = None
    """Why the file was not read (None when it was, or when there is no file)."""


def what_it_is(mode: int) -> str:
    """A file type in words (for a file that is not a regular one)."""
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def _not_a_file(mode: int) -> str:
    return f"is {what_it_is(mode)}, not a regular file; the board reads files only"


def too_large(size: int) -> str:
    """Why a file of ``size`` bytes is not read."""
    return (
        f"is {size / 1_000_000:.1f} MB, over the board's {MAX_TEXT // 1_000_000} MB limit "
        "(a plan is never that big: is it the right file?)"
    )


def read_file(path: Path, limit: int = MAX_TEXT, *, head: bool = False) -> FileText:
    """``path``'s text, read as described in the module documentation; ``head``: its
    first ``limit`` bytes, however big it is."""
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        return FileText(None)
    except OSError as exc:
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            mode = stat.S_IFREG
        if stat.S_ISLNK(mode):
            return FileText(None, "is a symbolic link; the board does not follow links")
        if not stat.S_ISREG(mode):  # a socket cannot be opened at all
            return FileText(None, _not_a_file(mode))
        return FileText(None, f"cannot be read ({exc.strerror})")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return FileText(None, _not_a_file(st.st_mode))
        if st.st_size > limit and not head:
            return FileText(None, too_large(st.st_size))
        chunks: list[bytes] = []
        size = 0
        while size < limit + (not head):
            chunk = os.read(fd, min(1 << 20, limit + (not head) - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:  # it grew since it was opened
            return FileText(None, too_large(size))
        return FileText(b"".join(chunks).decode("utf-8", "replace"))
    except OSError as exc:
        return FileText(None, f"cannot be read ({exc.strerror})")
    finally:
        os.close(fd)


def read_small(path: Path) -> str | None:
    """``path``'s text, or None when it is missing or refused (see :func:`read_file`)."""
    return read_file(path).text


def iso(seconds: float) -> str:
    """A time stamp as the API gives it: ``2026-03-04T09:12:44Z``."""
    return _dt.datetime.fromtimestamp(seconds, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def mtime(path: Path) -> float:
    """When ``path`` last changed (0 when it is gone); a link is not followed."""
    try:
        return os.lstat(path).st_mtime
    except OSError:
        return 0.0


def error(code: str, message: str, file: str | None) -> dict[str, Any]:
    """A diagnostic in plankit's shared shape."""
    return {"code": code, "message": message, "line": None, "file": file}


def file_error(name: str, found: FileText) -> list[dict[str, Any]]:
    """The diagnostic for a file that was refused (none when it was read or missing)."""
    if found.problem is None:
        return []
    return [error("file-refused", f"{name.rsplit('/', 1)[-1]} {found.problem}", name)]
