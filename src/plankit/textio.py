"""Reading text files with clear errors, and writing them atomically.

Every file plankit reads as a document goes through :func:`read_text`, which turns
the usual ways a file can be wrong (missing, a directory, too large, not UTF-8, NUL
bytes, empty) into an :class:`~plankit.errors.InputError` naming the file, the line
and the fix.  Every file plankit writes goes through :func:`write_text_atomic`: a
temporary file in the same directory, flushed to disk, then renamed over the target,
so a crash leaves either the old file or the new one, never half of one.
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
    """Replace ``path`` with ``text`` (UTF-8) atomically, keeping the file's permissions."""
    import tempfile

    target = os.fspath(path)
    data = (_BOM if bom else b"") + text.encode("utf-8")
    directory = os.path.dirname(target) or "."
    base = os.path.basename(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, os.stat(target).st_mode & 0o7777)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
