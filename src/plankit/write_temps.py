"""The temporary files of atomic writes: their names, the lock a running write holds on
its own, and the strays a killed write leaves behind.

:func:`plankit.textio.write_bytes_atomic` writes a file's new bytes to a temporary file
beside it, named ``.{name}.{8 hex digits}.tmp`` (:func:`temp_name`), made by
:func:`create_temp` and locked (``flock``) until the write ends.  A write killed
midway leaves its file behind, unlocked: :func:`stray_temp_files` finds those of a
target (crash recovery) and :func:`remove_abandoned_temp_files` removes those no
running write holds.  The random part of a name comes from a pool of bytes drawn from
the system 256 at a time, not one system call per name.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

_TEMP_ATTEMPTS = 100
TEMP_NAME_ROOM = 200
"""Characters of the target's name kept in a temporary file's name (NAME_MAX is 255)."""

TEMP_RE = re.compile(r"\A\.(?P<base>.+)\.[0-9a-f]{8}\.tmp\Z", re.DOTALL)
"""The name of an atomic write's temporary file: ``.{name}.{8 hex digits}.tmp``, the
name cut to :data:`TEMP_NAME_ROOM` characters."""

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def temp_name(base: str) -> str:
    """A fresh name for the temporary file of an atomic write of ``base``."""
    return f".{base[:TEMP_NAME_ROOM]}.{_token()}.tmp"


_RANDOM: list[bytes] = []  # random bytes not yet used: one system call per 64 names


def _token() -> str:
    """Eight random hex digits."""
    if not _RANDOM:
        _RANDOM.append(os.urandom(256))
    pool = _RANDOM.pop()
    if len(pool) > 4:
        _RANDOM.append(pool[4:])
    return pool[:4].hex()


if hasattr(os, "register_at_fork"):  # a child draws its own: no name shared with its parent
    os.register_at_fork(after_in_child=_RANDOM.clear)


def is_temp_name(name: str, base: str | None = None) -> bool:
    """Whether ``name`` is an atomic write's temporary file (of ``base``, when given)."""
    found = TEMP_RE.match(name)
    return found is not None and (base is None or found["base"] == base[:TEMP_NAME_ROOM])


def create_temp(directory: str, base: str, dir_fd: int | None) -> tuple[int, str, int]:
    """A new, empty file next to the target: its descriptor, its name (a path, or a
    bare name in ``dir_fd``) and its file system's device number.

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
        st = os.fstat(fd) if _hold(fd) else None
        if st is not None and st.st_nlink > 0:
            return fd, tmp, st.st_dev
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
