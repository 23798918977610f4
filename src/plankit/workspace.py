"""A project root and the paths inside it.

Two ways to use a root-relative path a plan names:

- :func:`resolve` checks it and says where it leads now (an absolute path, every
  symbolic link followed), refusing any path that could lead outside the project:
  absolute paths, ``~``, ``..`` components, NUL bytes, paths and names longer than the
  system takes, and symbolic links (at any depth) that point outside the root.  Its
  answer can go stale: another process may swap a directory for a symbolic link
  before the caller uses it.
- :func:`write_inside` and :func:`read_inside` check and act in one step: they walk
  the path from a descriptor of the root, one directory at a time, never following a
  symbolic link, and write (atomically) or read in the directory they hold, so nothing
  another process does meanwhile can send them outside.

:func:`protected_by` matches a root-relative path against glob rules (TeDDy's
``protected_paths``), :func:`protected_links` finds the files they protect, to know
them under another name (a hard link); :func:`is_temp_name` recognises the temporary files of an
interrupted atomic write.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path

from plankit import syncing
from plankit.errors import InputError
from plankit.textio import StagedWrite, stage_bytes, write_bytes_atomic
from plankit.write_temps import TEMP_RE as TEMP_RE  # the temporary names of atomic writes,
from plankit.write_temps import is_temp_name as is_temp_name  # for crash recovery and tests

TEDDY_DIR = ".teddy"
"""The directory that marks a TeDDy project root."""

MAX_PATH_BYTES = 4096
"""Longest path accepted, in UTF-8 bytes (Linux's PATH_MAX), root included."""
MAX_NAME_BYTES = 255
"""Longest file or directory name accepted, in UTF-8 bytes (NAME_MAX)."""
MAX_DEPTH = 128
"""Most components a path may have; real projects stay far below."""


class PathRefused(InputError):
    """A path that would leave the project root (or is not a path at all)."""


class LinkOnTheWay(PathRefused):
    """A symbolic link met by a walk that follows none (:func:`write_inside`,
    :func:`read_inside`): on the path, or as the file itself."""


def find_root(start: Path | None = None) -> Path | None:
    """The nearest directory at or above ``start`` that holds ``.teddy/``, like git."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / TEDDY_DIR).is_dir():
            return candidate
    return None


def _nbytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def shorten(path: str, limit: int = 100) -> str:
    """``path`` fit for a one-line message: cut in the middle past ``limit`` characters."""
    if len(path) <= limit:
        return path
    half = max(limit // 2 - 1, 1)
    return f"{path[:half]}…{path[-half:]} ({len(path):,} characters)"


def components(path: str) -> list[str]:
    """The names of root-relative ``path``, without empty and ``.`` components."""
    if os.sep != "/":
        path = path.replace(os.sep, "/")
    return [part for part in path.split("/") if part not in ("", ".")]


def check_path(path: str) -> tuple[str, str] | None:
    """Why ``path`` is not an acceptable root-relative path, as ``(code, message)``, or
    None when it is.  Codes: ``path-refused``, ``name-too-long``, ``path-too-deep``,
    ``path-too-long``."""
    if not path:
        return "path-refused", "the path is empty"
    if "\0" in path:
        return "path-refused", "the path contains a NUL byte"
    if path.startswith("~"):
        return "path-refused", "paths starting with ~ are refused; give a path inside the project"
    if path.startswith(("/", "\\")) or os.path.isabs(path) or (len(path) > 1 and path[1] == ":"):
        return (
            "path-refused",
            "absolute paths are refused; give a path relative to the project root",
        )
    names = path.replace("\\", "/").split("/")
    if ".." in names:
        return "path-refused", "'..' is refused; paths must stay inside the project"
    for name in names:
        if len(name) > MAX_NAME_BYTES // 4 and _nbytes(name) > MAX_NAME_BYTES:
            return (
                "name-too-long",
                f"a name in the path is {_nbytes(name):,} bytes long; file systems take "
                f"at most {MAX_NAME_BYTES} (NAME_MAX): use a shorter name",
            )
    depth = len(components(path))
    if depth > MAX_DEPTH:
        return (
            "path-too-deep",
            f"the path has {depth:,} components; at most {MAX_DEPTH} are accepted: "
            "use a shallower path",
        )
    if len(path) > MAX_PATH_BYTES // 4 and _nbytes(path) > MAX_PATH_BYTES:
        return (
            "path-too-long",
            f"the path is {_nbytes(path):,} bytes long; at most {MAX_PATH_BYTES:,} are "
            "accepted (PATH_MAX): use a shorter path",
        )
    return None


def check_relative(path: str) -> str | None:
    """Why ``path`` is not an acceptable root-relative path, or None when it is."""
    problem = check_path(path)
    return problem[1] if problem is not None else None


def _refuse(path: str, code: str, message: str) -> PathRefused:
    return PathRefused(message, code=code, path=shorten(path))


def _check_length(root: Path, path: str) -> None:
    if _nbytes(os.fspath(root)) + 1 + _nbytes(path) > MAX_PATH_BYTES:
        raise _refuse(
            path,
            "path-too-long",
            f"the path is too long: with the project root it passes {MAX_PATH_BYTES:,} "
            "bytes (PATH_MAX); use a shorter path",
        )


_REAL_ROOTS: dict[Path, Path] = {}


def real_root(root: Path) -> Path:
    """``root.resolve()``, remembered for an absolute ``root``: a turn checks every
    action's paths against the same project root, which need not be resolved each time."""
    if not root.is_absolute():
        return root.resolve()
    real = _REAL_ROOTS.get(root)
    if real is None:
        if len(_REAL_ROOTS) >= 64:
            _REAL_ROOTS.clear()
        real = _REAL_ROOTS[root] = root.resolve()
    return real


def _within(path: str, top: str) -> bool:
    """Whether absolute ``path`` is ``top`` or under it (both resolved), compared as text:
    as ``top in Path(path).parents`` says, without building a path per parent."""
    return path == top or path.startswith(top if top.endswith(os.sep) else top + os.sep)


def _walk_plain(top: str, names: list[str]) -> str | None:
    """What ``resolve`` gives for ``names`` under resolved ``top`` when none of them is a
    symbolic link, looking only below ``top`` and only down to the first name missing
    (nothing under it exists); None at a symbolic link, which ``Path.resolve`` follows."""
    if os.sep != "/":
        return None
    here = top.rstrip("/")
    for depth, name in enumerate(names):
        here = f"{here}/{name}"
        try:
            if stat.S_ISLNK(os.lstat(here).st_mode):
                return None
        except OSError:  # missing, or under a file: the rest is as written
            return "/".join([here, *names[depth + 1 :]])
    return here or "/"


def _checked_top(root: Path, path: str) -> Path:
    """The resolved ``root``, once root-relative ``path`` is known to be acceptable
    under it (:func:`check_path`, and not too long with the root): else
    :class:`PathRefused`."""
    problem = check_path(path)
    if problem is not None:
        raise _refuse(path, *problem)
    top = real_root(root)
    _check_length(top, path)
    return top


def resolve(root: Path, path: str) -> Path:
    """The absolute path of root-relative ``path``, guaranteed to be inside ``root``.

    Raises :class:`PathRefused` for a path that is absolute, starts with ``~``, has a
    ``..`` component or a NUL byte, is too long or too deep, or goes through a
    symbolic link leading out (or in a loop).
    """
    real_top = _checked_top(root, path)
    walked = _walk_plain(os.fspath(real_top), components(path))
    if walked is not None:
        return Path(walked)
    # resolve() follows every symlink that exists along the way; what does not exist
    # yet is appended as written (and has no '..' by the check above).
    try:
        real = (real_top / path).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop (3.11)
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "a symlink loop"
        raise _refuse(path, "path-refused", f"cannot be resolved ({why}); refused") from None
    if not _within(str(real), str(real_top)):
        raise _refuse(
            path,
            "path-refused",
            "goes through a symbolic link that leads outside the project; refused",
        )
    return real


def as_written(root: Path, path: str) -> Path:
    """Root-relative ``path`` under the resolved root, checked as :func:`resolve` checks
    it but with nothing looked up: what :func:`resolve` gives when no symbolic link is on
    the way.  For a walk that follows no link (:func:`stage_inside`), which refuses one
    with :class:`LinkOnTheWay`; the caller then resolves the path."""
    top = _checked_top(root, path)
    return Path(f"{os.fspath(top).rstrip('/')}/{'/'.join(components(path))}")


def relative_posix(path: Path, top: Path) -> str | None:
    """``path`` relative to ``top`` as a POSIX path (``.`` for ``top`` itself), or None
    when it is not under ``top``: ``path.relative_to(top).as_posix()`` without the
    objects it makes, for a write's every path (nothing is resolved)."""
    if os.sep != "/":
        try:
            return path.relative_to(top).as_posix()
        except ValueError:
            return None
    here, there = os.fspath(path), os.fspath(top).rstrip("/")
    if here == (there or "/"):
        return "."
    return here[len(there) + 1 :] if here.startswith(f"{there}/") else None


def relative(root: Path, path: Path) -> str:
    """``path`` (inside ``root``) as a root-relative POSIX path."""
    return path.resolve().relative_to(root.resolve()).as_posix()


def is_inside(root: Path, path: Path) -> bool:
    """Whether ``path`` (after following symlinks) lies inside ``root``."""
    real_root = root.resolve()
    real = Path(os.path.realpath(path))
    return real == real_root or real_root in real.parents


# -- checking and acting in one step -----------------------------------------------

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# O_PATH (Linux): walking a directory needs only search permission, as a path lookup does.
_WALK = _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC | getattr(os, "O_PATH", os.O_RDONLY)
HAVE_DIR_FD = (
    bool(_O_NOFOLLOW and _O_DIRECTORY)
    and {
        os.open,
        os.mkdir,
        os.stat,
        os.unlink,
        os.rename,
        os.link,
    }
    <= os.supports_dir_fd
)
"""Whether this platform can walk paths from directory descriptors (every POSIX
system); elsewhere :func:`write_inside` and :func:`read_inside` check, then act."""


def _symlink_refusal(path: str, shown: str) -> LinkOnTheWay:
    return LinkOnTheWay(
        f"'{shorten(shown)}' is a symbolic link (it may have been swapped in after the "
        "path was checked); writes and reads of plan targets never follow one: "
        "nothing was done",
        code="path-refused",
        path=shorten(path),
    )


def _fsync_dir(dir_fd: int) -> None:
    """Flush a directory that has just gained a subdirectory (or defer it: a directory
    is only ever made for a write into it, on the same file system, whose flush counts
    that file system among those synced)."""
    if syncing.deferred():
        return
    with contextlib.suppress(OSError):
        fd = os.open(".", os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC, dir_fd=dir_fd)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _open_dir(name: str, dir_fd: int, path: str, shown: str) -> int:
    try:
        return os.open(name, _WALK, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            raise _symlink_refusal(path, shown) from None
        raise NotADirectoryError(
            errno.ENOTDIR, f"'{shorten(shown)}' is a file, not a directory"
        ) from None


def _held_directory(
    root: Path, names: list[str], path: str, *, create: bool, root_fd: int | None = None
) -> int:
    """A descriptor of the directory that holds ``names[-1]``, reached from the root
    (``root_fd`` when the caller holds it open, else opened by name) one name at a time
    without following symbolic links (created when ``create``); the caller closes it."""
    fd = os.open(root, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC) if root_fd is None else root_fd
    try:
        for depth, name in enumerate(names[:-1], 1):
            shown = "/".join(names[:depth])
            try:
                step = _open_dir(name, fd, path, shown)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(name, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass  # made meanwhile by someone else: opened below like any other
                else:
                    _fsync_dir(fd)
                step = _open_dir(name, fd, path, shown)
            if fd != root_fd:
                os.close(fd)
            fd = step
    except BaseException:
        if fd != root_fd:
            os.close(fd)
        raise
    return os.dup(fd) if fd == root_fd else fd


def _names(root: Path, path: str) -> list[str]:
    problem = check_path(path)
    if problem is not None:
        raise _refuse(path, *problem)
    _check_length(Path(os.path.abspath(root)), path)
    names = components(path)
    if not names:
        raise _refuse(path, "path-refused", "names the project root itself, not a file")
    return names


def _refuse_target(st: os.stat_result, path: str, *, exclusive: bool) -> None:
    """Refuse an existing target (``st``, not followed) that is a symbolic link, a
    directory or another non-file (and, with ``exclusive``, any) before the write begins."""
    if stat.S_ISLNK(st.st_mode):
        raise _symlink_refusal(path, path)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory, not a file")
    if exclusive:
        raise FileExistsError(errno.EEXIST, "the file already exists")
    if not stat.S_ISREG(st.st_mode):
        raise OSError(errno.EINVAL, "is not a regular file")


def write_inside(root: Path, path: str, data: bytes, *, exclusive: bool = False) -> None:
    """Replace (or create) root-relative ``path`` with ``data``, checked and written in
    one step.

    The path is walked from a descriptor of ``root``, one directory at a time, with
    ``O_NOFOLLOW``: missing directories are created, a symbolic link anywhere on the
    way (or as the file itself) raises :class:`PathRefused`.  In the directory it holds,
    :func:`plankit.textio.write_bytes_atomic` (``dir_fd=``) writes a temporary file
    (``.{name}.{hex}.tmp``), flushes it to disk and renames it over the target; then the
    directory is flushed.  An existing file keeps
    its permission bits, a new one gets 0666 less the umask.  With ``exclusive``, an
    existing file is never replaced (:class:`FileExistsError`).  On any failure the
    temporary file is removed.  Other problems raise :class:`OSError`.
    """
    staged = stage_inside(root, path, data, exclusive=exclusive)
    if staged is None:
        _write_by_name(root, path, data, exclusive=exclusive)
    else:
        staged.commit()


def stage_inside(
    root: Path, path: str, data: bytes, *, exclusive: bool = False, root_fd: int | None = None
) -> StagedWrite | None:
    """The first half of :func:`write_inside`: the path walked and checked the same way,
    its directories made, ``data`` in a temporary file next to the target, which the
    returned write holds (with its directory) until it is published or discarded;
    nothing is flushed.  None where directories cannot be held by descriptor (the
    write then goes through :func:`write_inside`).  ``root_fd`` is a descriptor of
    ``root`` that the caller holds open: the walk starts from it (and leaves it open)
    instead of opening ``root`` by name."""
    names = _names(root, path)
    if not HAVE_DIR_FD:
        return None
    dir_fd = _held_directory(root, names, path, create=True, root_fd=root_fd)
    # the write holds the directory from here, and closes it however it ends
    return stage_bytes(
        names[-1],
        data,
        dir_fd=dir_fd,
        exclusive=exclusive,
        owned_dir=True,
        check=lambda st: _refuse_target(st, path, exclusive=exclusive),
    )


def read_inside(
    root: Path,
    path: str,
    *,
    check: Callable[[os.stat_result], None] | None = None,
    root_fd: int | None = None,
) -> bytes:
    """The bytes of root-relative ``path``, reached like :func:`write_inside` reaches it
    (no symbolic link followed: :class:`PathRefused`); a directory, a FIFO or a device
    raise :class:`OSError` instead of being read (or blocking); a missing file raises
    :class:`FileNotFoundError`.  ``check`` is given the file opened, before and after
    the read (it raises to refuse it: a protected file under another name)."""
    names = _names(root, path)
    flags = os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | getattr(os, "O_NONBLOCK", 0)
    if not HAVE_DIR_FD:  # checked, then opened by name
        return _read_open(os.open(resolve(root, path), flags & ~_O_NOFOLLOW), check)
    name = names[-1]
    dir_fd = _held_directory(root, names, path, create=False, root_fd=root_fd)
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _symlink_refusal(path, path) from None
        raise
    finally:
        os.close(dir_fd)
    return _read_open(fd, check)


def _read_open(fd: int, check: Callable[[os.stat_result], None] | None) -> bytes:
    """Read the regular file open as ``fd`` (closed after), ``check`` given it before and
    after the read."""
    with os.fdopen(fd, "rb") as handle:
        before = os.fstat(handle.fileno())
        if stat.S_ISDIR(before.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory, not a file")
        if not stat.S_ISREG(before.st_mode):
            raise OSError(errno.EINVAL, "is not a regular file")
        data = handle.read()
        if check is not None:
            check(before)
            check(os.fstat(handle.fileno()))
        return data


def _write_by_name(root: Path, path: str, data: bytes, *, exclusive: bool) -> None:
    """:func:`write_inside` where directory descriptors are missing: check, then write."""
    target = resolve(root, path)
    if exclusive and os.path.lexists(target):
        raise FileExistsError(errno.EEXIST, "the file already exists")
    target.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(target, data, exclusive=exclusive)
