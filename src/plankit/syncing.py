"""Fewer flushes to disk: a turn's writes share a file system sync.

An atomic write (:func:`plankit.textio.write_bytes_atomic`) on its own flushes the
temporary file's data (fsync) before renaming it over the target, then flushes the
directory so the rename survives a power cut; a new directory is flushed into its
parent the same way, and TeDDy's journal is flushed before each action.  For a turn of
200 CREATEs that is 800 flushes, each of which waits for the disk.

Inside :func:`shared_syncs` (``teddy execute`` runs a turn's actions in one) those
flushes are gathered on Linux: the journal entry of an action and a write's temporary
file are written without a flush of their own, and :func:`barrier`, called just before
a rename, flushes the whole file system once (``syncfs(2)``).  That one call puts on
disk, before the rename, everything the separate flushes did: the journal's ``start``
entries, the new bytes, the new directories and every earlier rename of the turn.  A
run of file writes staged together (:mod:`plankit.teddy.run.batch`) shares one such
call; other actions make one each.  The last renames are flushed when the block ends,
before the report is written.  ext4, XFS and btrfs commit such a flush as one
transaction, so a power cut leaves either all of it or none.

Where there is no ``syncfs`` (other systems) or it fails, nothing is gathered: every
flush happens where it did before.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

__all__ = ["barrier", "deferred", "gathering", "shared_syncs", "watch"]


@dataclass
class _Shared:
    """The file systems (a descriptor on each) whose sync is gathered, and whether
    anything written since the last sync still waits for one."""

    syncfs: Callable[[int], int]
    devices: dict[int, int] = field(default_factory=dict)
    pending: bool = False

    def watch(self, fd: int, device: int | None = None) -> None:
        """Count the file system of ``fd`` (``device``, when known) among those synced."""
        if device is None:
            device = os.fstat(fd).st_dev
        if device not in self.devices:
            self.devices[device] = os.dup(fd)

    def sync(self) -> None:
        for fd in self.devices.values():
            if self.syncfs(fd) != 0:
                raise OSError(f"syncfs failed: {os.strerror(_errno())}")
        self.pending = False

    def close(self) -> None:
        for fd in self.devices.values():
            os.close(fd)
        self.devices.clear()


_ACTIVE: ContextVar[_Shared | None] = ContextVar("plankit_shared_syncs", default=None)


def _errno() -> int:
    import ctypes

    return ctypes.get_errno()


def _syncfs() -> Callable[[int], int] | None:
    """libc's ``syncfs``, where there is one (Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        function = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int]
    function.restype = ctypes.c_int
    return function


@contextlib.contextmanager
def shared_syncs(*anchors: int) -> Iterator[bool]:
    """Gather the flushes of the writes made inside the block (see the module
    documentation); ``anchors`` are descriptors on the file systems written to (the
    project, the journal's folder).  Yields whether flushes are gathered."""
    if _ACTIVE.get() is not None:
        yield True
        return
    syncfs = _syncfs()
    if syncfs is None:
        yield False
        return
    shared = _Shared(syncfs)
    try:
        for fd in anchors:
            shared.watch(fd)
        # a first sync: what was written before the block is on disk like before
        shared.sync()
    except OSError:
        shared.close()
        yield False
        return
    token = _ACTIVE.set(shared)
    try:
        yield True
    finally:
        _ACTIVE.reset(token)
        try:
            if shared.pending:
                shared.sync()
        finally:
            shared.close()


def gathering() -> bool:
    """Whether flushes are gathered here (inside :func:`shared_syncs`, where it works)."""
    return _ACTIVE.get() is not None


def deferred(fd: int | None = None) -> bool:
    """Whether a flush of ``fd`` (a file or directory just written) may wait for the
    next :func:`barrier`: True inside :func:`shared_syncs`, where it is then counted."""
    shared = _ACTIVE.get()
    if shared is None:
        return False
    if fd is not None:
        shared.watch(fd)
    shared.pending = True
    return True


def watch(fd: int, device: int) -> None:
    """Inside :func:`shared_syncs`, count the file system ``device`` (which ``fd`` is
    on) among those the shared syncs flush; outside it, nothing."""
    shared = _ACTIVE.get()
    if shared is not None:
        shared.watch(fd, device)


def barrier(fd: int) -> None:
    """Everything written so far, ``fd``'s data included, reaches the disk before this
    returns: one file system sync inside :func:`shared_syncs`, ``fsync(fd)`` outside."""
    shared = _ACTIVE.get()
    if shared is None:
        os.fsync(fd)
        return
    shared.watch(fd)
    shared.sync()
