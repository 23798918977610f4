"""Reading text files with clear errors, and writing them atomically.

Every file plankit reads as a document goes through :func:`read_text`, which turns
the usual ways a file can be wrong (missing, a directory, too large, not UTF-8, NUL
bytes, empty) into an :class:`~plankit.errors.InputError` naming the file, the line
and the fix.  Every file plankit writes goes through :func:`write_bytes_atomic` (or
:func:`write_text_atomic` on top of it): a temporary file in the same directory,
flushed to disk, renamed over the target, then the directory flushed, so a crash
leaves either the old file or the new one, never half of one.  A writer that walked to
the directory itself (without following symbolic links) passes its descriptor.  The
temporary files are named by :func:`temp_name` and locked (``flock``) by their write
until it ends; :func:`stray_temp_files` finds those a killed write left behind, and
:func:`remove_abandoned_temp_files` removes them, never one a running write holds.
"""

from __future__ import annotations

import _thread
import contextlib
import errno
import os
import re
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING

from plankit import syncing
from plankit.errors import InputError

if TYPE_CHECKING:
    from pathlib import Path

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


_TEMP_ATTEMPTS = 100
TEMP_NAME_ROOM = 200
"""Characters of the target's name kept in a temporary file's name (NAME_MAX is 255)."""

TEMP_RE = re.compile(r"\A\.(?P<base>.+)\.[0-9a-f]{8}\.tmp\Z", re.DOTALL)
"""The name of an atomic write's temporary file: ``.{name}.{8 hex digits}.tmp``, the
name cut to :data:`TEMP_NAME_ROOM` characters."""

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


_PUBLISH_OPEN = os.name != "nt"
"""Whether a temporary file can be renamed while it is open (not on Windows)."""


def temp_name(base: str) -> str:
    """A fresh name for the temporary file of an atomic write of ``base``."""
    return f".{base[:TEMP_NAME_ROOM]}.{_token()}.tmp"


def _token() -> str:
    """Eight random hex digits."""
    return os.urandom(4).hex()


def is_temp_name(name: str, base: str | None = None) -> bool:
    """Whether ``name`` is an atomic write's temporary file (of ``base``, when given)."""
    found = TEMP_RE.match(name)
    return found is not None and (base is None or found["base"] == base[:TEMP_NAME_ROOM])


def _create_temp(directory: str, base: str, dir_fd: int | None) -> tuple[int, str]:
    """A new, empty file next to the target: its descriptor and its name (a path, or a
    bare name in ``dir_fd``).

    It is created with mode 0666 and the process umask applied by the kernel (as
    ``open(path, "w")`` would), so a new target gets the mode users expect; the umask is
    never changed, which other threads could observe.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC
    flags |= getattr(os, "O_BINARY", 0)
    for _ in range(_TEMP_ATTEMPTS):
        tmp = os.path.join(directory, temp_name(base))
        try:
            fd = os.open(tmp, flags, 0o666, dir_fd=dir_fd)
        except FileExistsError:
            continue
        # held until the write ends, so that it is never taken for a stray; a sweep
        # that took it first (and removes it) means: another name
        if _hold(fd) and os.fstat(fd).st_nlink > 0:
            return fd, tmp
        os.close(fd)
    raise FileExistsError(errno.EEXIST, f"no free temporary file name next to {base}")


def _hold(fd: int) -> bool:
    """Take the advisory lock (``flock``) of an open temporary file: held by the write
    that made it until the write ends, released by the kernel when its process dies.
    False when another process holds it; True where there are no such locks."""
    try:
        import fcntl
    except ImportError:  # no flock here: strays are recognised by name alone
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:  # a file system without flock: as above
        return True
    return True


def remove_abandoned_temp_files(directory: str | os.PathLike[str], base: str | None = None) -> int:
    """Remove the temporary files of atomic writes (of ``base``, when given) in
    ``directory`` that no running write holds: those a killed process left.  Symbolic
    links and other non-files are left alone.  How many were removed."""
    folder = os.fspath(directory)
    try:
        names = [name for name in os.listdir(folder) if is_temp_name(name, base)]
    except OSError:
        return 0
    removed = 0
    for name in names:
        path = os.path.join(folder, name)
        flags = os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = os.open(path, flags)
        except OSError:
            continue
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode) and _hold(fd):
                os.unlink(path)
                removed += 1
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed


def stray_temp_files(path: str | os.PathLike[str]) -> list[Path]:
    """The temporary files an interrupted atomic write of ``path`` may have left next to
    it (the names :func:`write_bytes_atomic` gives them), for crash recovery."""
    directory, base = os.path.split(os.path.abspath(os.fspath(path)))
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    from pathlib import Path

    return [Path(directory, name) for name in names if is_temp_name(name, base)]


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


def _existing_mode(target: str, dir_fd: int | None, *, exclusive: bool) -> int | None:
    """The permission bits of the file to be replaced, None when there is none."""
    try:
        # In a held directory nothing is followed; a path keeps its link's target's mode.
        st = os.stat(target, dir_fd=dir_fd, follow_symlinks=dir_fd is None)
    except FileNotFoundError:
        return None
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

    __slots__ = ("_dir_fd", "_directory", "_exclusive", "_fd", "_owned_dir", "_target", "_tmp")

    def __init__(
        self,
        fd: int,
        tmp: str,
        target: str,
        directory: str,
        dir_fd: int | None,
        *,
        exclusive: bool,
        owned_dir: bool = False,
    ) -> None:
        self._fd: int | None = fd
        self._tmp: str | None = tmp
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
) -> StagedWrite:
    """The first half of :func:`write_bytes_atomic`: ``data`` in a new temporary file
    next to ``path``, with the mode the target will have, not flushed and not renamed.
    With ``owned_dir``, the returned write closes ``dir_fd`` when it ends (also when
    this raises).  On failure nothing is left behind."""
    made: tuple[int, str] | None = None
    try:
        target = os.fspath(path)
        if dir_fd is None:
            directory, base = os.path.split(os.path.abspath(target))
        else:
            if not target or os.sep in target or (os.altsep and os.altsep in target):
                raise ValueError(f"with dir_fd, give a bare file name, not {target!r}")
            directory, base = "", target
        mode = _existing_mode(target, dir_fd, exclusive=exclusive)
        made = _create_temp(directory, base, dir_fd)  # known at once, to Ctrl-C too
        staged = StagedWrite(*made, target, directory, dir_fd, exclusive=exclusive)
    except BaseException:
        if made is not None:  # interrupted after the file was made
            own = [w for w in _unfinished() if (w._fd, w._tmp) == made]
            own[0].discard() if own else os.close(made[0])
            with contextlib.suppress(OSError):
                os.unlink(made[1], dir_fd=dir_fd)
        if owned_dir and dir_fd is not None:
            os.close(dir_fd)
        raise
    staged._owned_dir, (fd, tmp) = owned_dir, made
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

    The bytes go to a temporary file beside it (named by :func:`temp_name`), flushed
    to disk and renamed over ``path``; then the directory is flushed, so the rename
    survives a crash.  A reader sees the old file or the new one, never half of one.  An
    existing file keeps its permission bits, a new one gets 0666 less the umask.  On any
    failure the temporary file is removed, the target untouched, the error raised.

    With ``dir_fd``, ``path`` is a bare name in the directory that descriptor holds
    (a caller that walked there without following symbolic links), and no symbolic
    link is followed for it either.  With ``exclusive``, an existing file is never
    replaced: :class:`FileExistsError`, also when one appears during the write.
    """
    stage_bytes(path, data, dir_fd=dir_fd, exclusive=exclusive).commit()
