"""Reading text files with clear errors, and writing them atomically.

Every file plankit reads as a document goes through :func:`read_text`, which turns
the usual ways a file can be wrong (missing, a directory, too large, not UTF-8, NUL
bytes, empty) into an :class:`~plankit.errors.InputError` naming the file, the line
and the fix.  Every file plankit writes goes through :func:`write_bytes_atomic` (or
:func:`write_text_atomic` on top of it): a temporary file in the same directory,
flushed to disk, renamed over the target, then the directory flushed, so a crash
leaves either the old file or the new one, never half of one.  A writer that walked to
the directory itself (without following symbolic links) passes its descriptor.  The
temporary files, and the strays a killed write leaves, are :mod:`plankit.write_temps`'s.
"""

from __future__ import annotations

import _thread
import contextlib
import errno
import os
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING

from plankit import syncing
from plankit.errors import InputError
from plankit.write_temps import create_temp

if TYPE_CHECKING:
    from collections.abc import Callable

    _Check = Callable[[os.stat_result], None]

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
    try:  # utf-8-sig drops the BOM without a copy of the bytes (a plan can be 10 MB)
        text = data.decode("utf-8-sig" if bom else "utf-8")
    except UnicodeDecodeError as exc:
        # exc.object holds the bytes decoded: those after the BOM, when there is one
        at = exc.start
        raise InputError(
            f"not UTF-8 text (byte 0x{exc.object[at]:02x} at offset {at}); save the file as UTF-8",
            code="not-utf8",
            path=path,
            line=_line_of(exc.object, at),
        ) from None
    nul = text.find("\0")
    if nul >= 0:
        raise InputError(
            "contains a NUL byte; this looks like a binary file, not a text document",
            code="nul-byte",
            path=path,
            line=text.count("\n", 0, nul) + 1,
        )
    if not allow_empty and (not text or text.isspace()):  # no stripped copy of the text
        raise InputError("is empty; expected a Markdown document", code="empty", path=path)
    return TextFile(text, bom)


def read_bytes_limited(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """The bytes of the regular file at ``path`` (a symbolic link is followed), never
    more than ``max_bytes``.

    The file is opened without blocking and checked on the descriptor opened, so a FIFO,
    a socket or a device (``/dev/zero``) is refused instead of waited on or read for
    ever, even one swapped in after a check by name.  Raises :class:`OSError`:
    :class:`FileNotFoundError`, :class:`IsADirectoryError`, ``EINVAL`` for a file that is
    not a regular file, ``EFBIG`` for one over ``max_bytes``; ``strerror`` says which,
    in words."""
    flags = os.O_RDONLY | _O_CLOEXEC | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(os.fspath(path), flags)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory")
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, a socket or a device)")
        if st.st_size > max_bytes:
            raise OSError(errno.EFBIG, f"{_size(st.st_size)}, over the {_size(max_bytes)} limit")
        chunks: list[bytes] = []
        left = max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1024 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    if left <= 0:  # it grew since the fstat
        raise OSError(errno.EFBIG, f"over the {_size(max_bytes)} limit")
    return b"".join(chunks)


def _size(n: int) -> str:
    return f"{n / 1_048_576:,.1f} MiB" if n >= 1_048_576 else f"{n:,} bytes"


def read_text(
    path: str | os.PathLike[str],
    *,
    max_bytes: int = MAX_TEXT_BYTES,
    allow_empty: bool = False,
) -> TextFile:
    """Read a UTF-8 document, raising :class:`InputError` for every way it can be wrong
    (a FIFO or a device is refused, never waited on)."""
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
        data = read_bytes_limited(name, max_bytes)
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            raise InputError(
                f"is over {max_bytes // 1_048_576} MiB; refused", code="too-large", path=name
            ) from None
        if exc.errno == errno.EINVAL:
            raise InputError(
                "is not a regular file (a FIFO, a socket or a device); refused",
                code="not-a-file",
                path=name,
            ) from None
        raise InputError(f"cannot be read ({exc.strerror})", code="unreadable", path=name) from None
    return decode_text(data, path=name, allow_empty=allow_empty)


def write_text_atomic(path: str | os.PathLike[str], text: str, *, bom: bool = False) -> None:
    """Replace ``path`` with ``text`` (UTF-8, after a byte-order mark when ``bom``)
    atomically; see :func:`write_bytes_atomic`."""
    write_bytes_atomic(path, (_BOM if bom else b"") + text.encode("utf-8"))


_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


_PUBLISH_OPEN = os.name != "nt"
"""Whether a temporary file can be renamed while it is open (not on Windows)."""


def _fsync_directory(directory: str, dir_fd: int | None) -> None:
    """Flush the directory entry of a rename to disk (where directories can be opened);
    inside :func:`plankit.syncing.shared_syncs`, at the next shared sync."""
    if syncing.deferred():
        return
    try:
        fd = os.open(directory or ".", os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC, dir_fd=dir_fd)
    except OSError:  # a platform or file system without directory descriptors
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def _existing_mode(
    target: str, dir_fd: int | None, *, exclusive: bool, check: _Check | None = None
) -> int | None:
    """The permission bits of the file to be replaced, None when there is none; ``check``
    is given what is there first."""
    try:
        # In a held directory nothing is followed; a path keeps its link's target's mode.
        st = os.stat(target, dir_fd=dir_fd, follow_symlinks=dir_fd is None)
    except FileNotFoundError:
        return None
    if check is not None:
        check(st)
    if exclusive:
        raise FileExistsError(errno.EEXIST, "the file already exists", target)
    if stat.S_ISLNK(st.st_mode):  # replaced, not followed: its 0777 is no file's mode
        return None
    return stat.S_IMODE(st.st_mode)


def _publish(tmp: str, target: str, dir_fd: int | None, *, exclusive: bool) -> None:
    """Give the finished temporary file its real name."""
    if not exclusive:
        os.replace(tmp, target, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        return
    try:  # a hard link never replaces: a file that appeared meanwhile is kept
        os.link(tmp, target, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
        # A file system without hard links: check, then rename.
        _existing_mode(target, dir_fd, exclusive=True)
        os.replace(tmp, target, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        return
    os.unlink(tmp, dir_fd=dir_fd)


_LOCAL = _thread._local()


def _unfinished() -> set[StagedWrite]:  # this thread's writes neither published nor discarded
    if not hasattr(_LOCAL, "writes"):
        _LOCAL.writes = set()
    return _LOCAL.writes  # type: ignore[no-any-return]


def discard_unfinished() -> None:
    """Discard this thread's staged writes that are neither published nor discarded (a
    Ctrl-C between a write's staging and its owner's record of it)."""
    for write in list(_unfinished()):
        write.discard()


class StagedWrite:
    """A file's new bytes, written in full to a temporary file next to it (held open
    and locked), not yet renamed over the target: :meth:`publish` does that,
    :meth:`discard` removes them.  :func:`stage_bytes` makes one."""

    __slots__ = (
        "_dir_fd",
        "_directory",
        "_exclusive",
        "_fd",
        "_owned_dir",
        "_target",
        "_tmp",
        "device",
    )

    def __init__(
        self,
        fd: int,
        tmp: str,
        device: int,
        target: str,
        directory: str,
        dir_fd: int | None,
        *,
        exclusive: bool,
        owned_dir: bool = False,
    ) -> None:
        self._fd: int | None = fd
        self._tmp: str | None = tmp
        self.device = device
        """The file system the file is written on (its ``st_dev``)."""
        self._target, self._directory = target, directory
        self._dir_fd, self._exclusive, self._owned_dir = dir_fd, exclusive, owned_dir
        _unfinished().add(self)

    @property
    def fd(self) -> int:
        """The temporary file, open (to flush it)."""
        if self._fd is None:
            raise ValueError("the staged write is over")
        return self._fd

    @property
    def target(self) -> str:
        """The file the write replaces or creates (a bare name beside a ``dir_fd``)."""
        return self._target

    def publish(self) -> None:
        """Rename the temporary file over the target (with ``exclusive``, never over an
        existing file: :class:`FileExistsError`), then flush the directory.  The bytes
        must be on disk first (:func:`plankit.syncing.barrier`).  On failure the
        temporary file is removed and the error raised."""
        fd, tmp = self.fd, self._tmp
        assert tmp is not None  # a write not over has its temporary file
        try:
            if _PUBLISH_OPEN:  # renamed while its lock is held: never swept meanwhile
                _publish(tmp, self._target, self._dir_fd, exclusive=self._exclusive)
            self._fd = None
            os.close(fd)
            if not _PUBLISH_OPEN:
                _publish(tmp, self._target, self._dir_fd, exclusive=self._exclusive)
            _fsync_directory(self._directory, self._dir_fd)
        except BaseException:
            self.discard()
            raise
        self._release()

    def commit(self) -> None:
        """Flush the bytes to disk (:func:`plankit.syncing.barrier`), then
        :meth:`publish`; on failure the temporary file is removed."""
        try:
            syncing.barrier(self.fd)
        except BaseException:
            self.discard()
            raise
        self.publish()

    def discard(self) -> None:
        """Remove the temporary file: the target stays as it is.  Nothing once the
        write is over (published or discarded)."""
        if self._tmp is None:
            return
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(self._tmp, dir_fd=self._dir_fd)
        self._release()

    def _release(self) -> None:
        _unfinished().discard(self)
        self._tmp = None
        if self._owned_dir and self._dir_fd is not None:
            os.close(self._dir_fd)
            self._dir_fd = None


def stage_bytes(
    path: str | os.PathLike[str],
    data: bytes,
    *,
    dir_fd: int | None = None,
    exclusive: bool = False,
    owned_dir: bool = False,
    check: _Check | None = None,
) -> StagedWrite:
    """The first half of :func:`write_bytes_atomic`: ``data`` in a new temporary file
    next to ``path``, with the mode the target will have, not flushed and not renamed.
    With ``owned_dir``, the returned write closes ``dir_fd`` when it ends (also when
    this raises).  ``check`` is given the target's ``stat`` (not followed in ``dir_fd``)
    when there is one, and raises to refuse it.  On failure nothing is left behind."""
    made: tuple[int, str, int] | None = None
    try:
        target = os.fspath(path)
        if dir_fd is None:
            directory, base = os.path.split(os.path.abspath(target))
        else:
            if not target or os.sep in target or (os.altsep and os.altsep in target):
                raise ValueError(f"with dir_fd, give a bare file name, not {target!r}")
            directory, base = "", target
        mode = _existing_mode(target, dir_fd, exclusive=exclusive, check=check)
        made = create_temp(directory, base, dir_fd)  # known at once, to Ctrl-C too
        staged = StagedWrite(*made, target, directory, dir_fd, exclusive=exclusive)
    except BaseException:
        if made is not None:  # interrupted after the file was made
            own = [w for w in _unfinished() if (w._fd, w._tmp) == made[:2]]
            own[0].discard() if own else os.close(made[0])
            with contextlib.suppress(OSError):
                os.unlink(made[1], dir_fd=dir_fd)
        if owned_dir and dir_fd is not None:
            os.close(dir_fd)
        raise
    staged._owned_dir, (fd, tmp, _) = owned_dir, made
    try:
        if mode is not None and os.chmod in os.supports_fd:
            os.chmod(fd, mode)
        elif mode is not None:
            os.chmod(tmp, mode, dir_fd=dir_fd)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except BaseException:
        staged.discard()
        raise
    return staged


def write_bytes_atomic(
    path: str | os.PathLike[str],
    data: bytes,
    *,
    dir_fd: int | None = None,
    exclusive: bool = False,
) -> None:
    """Replace (or create) ``path`` with ``data`` atomically.

    The bytes go to a temporary file beside it (named by
    :func:`plankit.write_temps.temp_name`), flushed to disk and renamed over ``path``;
    then the directory is flushed, so the rename survives a crash.  A reader sees the
    old file or the new one, never half of one.  An existing file keeps its permission
    bits, a new one gets 0666 less the umask.  On any failure the temporary file is
    removed, the target untouched, the error raised.

    With ``dir_fd``, ``path`` is a bare name in the directory that descriptor holds
    (a caller that walked there without following symbolic links), and no symbolic
    link is followed for it either.  With ``exclusive``, an existing file is never
    replaced: :class:`FileExistsError`, also when one appears during the write.
    """
    stage_bytes(path, data, dir_fd=dir_fd, exclusive=exclusive).commit()
