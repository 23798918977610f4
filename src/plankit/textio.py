"""Reading text files with clear errors, and writing them atomically.

Every file plankit reads as a document goes through :func:`read_text`, which turns
the usual ways a file can be wrong (missing, a directory, too large, not UTF-8, NUL
bytes, empty) into an :class:`~plankit.errors.InputError` naming the file, the line
and the fix.  Every file plankit writes goes through :func:`write_bytes_atomic` (or
:func:`write_text_atomic` on top of it): a temporary file in the same directory,
flushed to disk, renamed over the target, then the directory flushed, so a crash
leaves either the old file or the new one, never half of one.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass

from plankit.errors import InputError

MAX_TEXT_BYTES = 20 * 1024 * 1024
"""Largest document read (20 MiB); a plan anywhere near it is a mistake."""

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class TextFile:
    """A decoded text file."""

    text: str
    """The content, without a UTF-8 byte-order mark; line endings as in the file."""
    bom: bool
    """Whether the file started with a UTF-8 byte-order mark (kept on rewrite)."""


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def decode_text(data: bytes, *, path: str, allow_empty: bool = False) -> TextFile:
    """Decode ``data`` as UTF-8 text, or raise :class:`InputError` saying where it breaks."""
    bom = data.startswith(_BOM)
    if bom:
        data = data[len(_BOM) :]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = _line_of(data, exc.start)
        raise InputError(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "save the file as UTF-8",
            code="not-utf8",
            path=path,
            line=line,
        ) from None
    nul = text.find("\0")
    if nul >= 0:
        raise InputError(
            "contains a NUL byte; this looks like a binary file, not a text document",
            code="nul-byte",
            path=path,
            line=text.count("\n", 0, nul) + 1,
        )
    if not allow_empty and not text.strip():
        raise InputError("is empty; expected a Markdown document", code="empty", path=path)
    return TextFile(text, bom)


def read_text(
    path: str | os.PathLike[str],
    *,
    max_bytes: int = MAX_TEXT_BYTES,
    allow_empty: bool = False,
) -> TextFile:
    """Read a UTF-8 document, raising :class:`InputError` for every way it can be wrong."""
    name = os.fspath(path)
    try:
        st = os.stat(name)
    except FileNotFoundError:
        raise InputError("no such file; check the path", code="not-found", path=name) from None
    except OSError as exc:
        raise InputError(f"cannot be read ({exc.strerror})", code="unreadable", path=name) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError("is a directory; expected a Markdown file", code="is-directory", path=name)
    if st.st_size > max_bytes:
        raise InputError(
            f"is {st.st_size / 1_048_576:.1f} MiB; documents over "
            f"{max_bytes // 1_048_576} MiB are refused (is this the right file?)",
            code="too-large",
            path=name,
        )
    try:
        with open(name, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(f"cannot be read ({exc.strerror})", code="unreadable", path=name) from None
    if len(data) > max_bytes:  # grew since stat
        raise InputError(
            f"is over {max_bytes // 1_048_576} MiB; refused", code="too-large", path=name
        )
    return decode_text(data, path=name, allow_empty=allow_empty)


def write_text_atomic(path: str | os.PathLike[str], text: str, *, bom: bool = False) -> None:
    """Replace ``path`` with ``text`` (UTF-8, after a byte-order mark when ``bom``)
    atomically; see :func:`write_bytes_atomic`."""
    write_bytes_atomic(path, (_BOM if bom else b"") + text.encode("utf-8"))


_TEMP_ATTEMPTS = 100
_NAME_ROOM = 200
"""Characters of the target's name kept in the temporary file's name (NAME_MAX is 255)."""


def _create_temp(directory: str, base: str) -> tuple[int, str]:
    """A new, empty file next to the target: its descriptor and path.

    It is created with mode 0666 and the process umask applied by the kernel (as
    ``open(path, "w")`` would), so a new target gets the mode users expect; the umask is
    never changed, which other threads could observe.
    """
    import secrets

    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    for _ in range(_TEMP_ATTEMPTS):
        tmp = os.path.join(directory, f".{base[:_NAME_ROOM]}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary file name next to {base} in {directory}")


def _fsync_directory(directory: str) -> None:
    """Flush the directory entry of a rename to disk (where directories can be opened)."""
    try:
        dir_fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # a platform or file system without directory descriptors
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace (or create) ``path`` with ``data`` atomically.

    The bytes go to a temporary file in the same directory, which is flushed to disk
    (fsync) and renamed over ``path``; then the directory is flushed, so the rename
    itself survives a crash.  A reader sees the old file or the new one, never half of
    one.  An existing file keeps its permission bits; a new one gets 0666 less the
    umask.  On any failure the temporary file is removed and the target is untouched;
    the error (an :class:`OSError`) is raised to the caller.
    """
    target = os.fspath(path)
    directory, base = os.path.split(os.path.abspath(target))
    fd, tmp = _create_temp(directory, base)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            pass
        else:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)
