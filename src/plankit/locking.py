"""A cross-process lock on a lock file: held for a block, given up when its holder ends.

``with try_lock(path) as held:`` takes an exclusive ``flock`` on ``path`` (created when
missing, never followed when it is a symbolic link) and holds it until the block ends;
``held`` is False, and the block runs without the lock, when another process holds it
for longer than ``wait`` seconds. On a file system that has no such locks (some network
mounts) the block runs as if it held it, as the checklist stores' folder lock does. The
kernel releases a ``flock`` when the process that took it dies, however it dies, so a
killed holder never leaves a stale lock, and the lock file is left in place (removing it
would let two processes lock two different files of the same name).

This is what filelock's Unix lock does, so a process of an earlier release holding the
same file still excludes this one and the other way round; it costs one ``open`` and
one system call instead of filelock's import (a tenth of a short command's start-up).
Where ``fcntl`` is missing, filelock does the work.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator

POLL = 0.05
"""Seconds between two tries while waiting for a lock."""

_NO_FLOCK = (errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOLCK)
"""What ``flock`` says on a file system without such locks (some network mounts)."""


@contextlib.contextmanager
def try_lock(path: str | os.PathLike[str], wait: float = 0.0) -> Iterator[bool]:
    """Hold the exclusive lock of the file ``path`` for the block: True when held,
    False when another process kept it for ``wait`` seconds (the block then runs
    without it). Raises :class:`OSError` when the lock file cannot be opened."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        with _filelock(path, wait) as held:
            yield held
        return
    import time

    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(os.fspath(path), flags, 0o666)  # as any new file: 0666 & ~umask
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = True
                break
            except BlockingIOError:
                held = False
            except OSError as exc:
                if exc.errno not in _NO_FLOCK:
                    raise
                held = True  # a file system without flock: as everywhere else, go ahead
                break
            if time.monotonic() >= deadline:
                break
            time.sleep(POLL)
        yield held
    finally:
        os.close(fd)  # closing the only descriptor releases the lock


@contextlib.contextmanager
def _filelock(path: str | os.PathLike[str], wait: float) -> Iterator[bool]:  # pragma: no cover
    from filelock import FileLock, Timeout

    lock = FileLock(os.fspath(path), timeout=wait)
    try:
        lock.acquire()
    except Timeout:
        yield False
        return
    try:
        yield True
    finally:
        lock.release()
