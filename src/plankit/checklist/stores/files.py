"""What the file stores share: the cross-process lock and the checks before a write."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from typing import Generic, Protocol, TypeVar

from plankit.checklist.errors import StoreError

DEFAULT_LOCK_TIMEOUT = 10.0
"""Seconds to wait for another process to finish with a file before giving up."""


_POLL = 0.01
"""Seconds between two tries for a lock another process holds."""


@contextlib.contextmanager
def file_lock(path: str, timeout: float) -> Iterator[None]:
    """Hold the cross-process lock of ``path``: an exclusive ``flock`` on the folder
    that holds it.

    The lock is on the folder itself, so no lock file is ever left beside the user's
    files (a ``.PLAN.md.lock`` would show in every ``git status``), and it holds across
    the rename that replaces the file, which a lock on the file's own inode would not.
    Writes to two files of one folder wait for each other; each is a single short
    read-and-write.  The kernel releases the lock when the holder ends, however it ends.

    When the folder cannot be opened (it does not exist, or cannot be read) the block
    runs without the lock: reads find no file, and a write fails with a clear error.
    No folder is ever created.
    """
    import fcntl
    import time

    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        yield
        return
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise StoreError(
                        f"{path} is locked by another process (waited {timeout:g} s for the "
                        f"lock on its folder {folder}); try again when it has finished",
                        code="locked",
                    ) from None
                time.sleep(_POLL)
            except OSError:  # a file system without flock: go ahead, as without a folder
                break
        yield
    finally:
        os.close(fd)  # releases the lock


def check_writable(path: str) -> None:
    """Raise :class:`StoreError` when ``path`` must not be replaced: it is read-only, or
    Excel has it open (its ``~$`` owner file is there)."""
    directory, base = os.path.split(os.path.abspath(path))
    for owner in {f"~${base}", f"~${base[2:]}"}:
        if os.path.exists(os.path.join(directory, owner)):
            raise StoreError(
                f"{path} is open in Excel ({owner} exists); close it in Excel and try "
                f"again (if Excel is not running, delete {owner})",
                code="locked",
            )
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    if st is not None and (
        not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
        or not os.access(path, os.W_OK)
    ):
        raise StoreError(
            f"{path} is read-only; make it writable (chmod u+w) and try again; nothing was changed",
            code="read-only",
        )


def write_error(path: str, exc: OSError) -> StoreError:
    """A :class:`StoreError` for a failed write of ``path``."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        return StoreError(
            f"cannot write {path}: the folder {folder} does not exist (plankit does not "
            "create folders); check the path",
            code="no-folder",
        )
    reason = exc.strerror or str(exc)
    return StoreError(
        f"cannot write {path} ({reason}); check that its folder is writable; nothing was changed",
        code="write-failed",
    )


class FileSession(Protocol):
    """One locked read of a file store: the four cell operations, then ``commit``."""

    def list_sheets(self) -> list[str]: ...
    def create_sheet(self, name: str) -> None: ...
    def get_cell(self, ref: str) -> str: ...
    def set_cell(self, ref: str, value: str) -> None: ...
    def commit(self) -> None:
        """Write the file once, if anything changed."""
        ...


S = TypeVar("S", bound=FileSession)


class LockedFileStore(Generic[S]):
    """A store kept in one local file: every call takes the file's cross-process lock,
    reads the file once, and writes it once at the end if anything changed (so a
    PlanManager's read-update-write is one :meth:`transaction`)."""

    path: str
    """The file."""
    lock_timeout: float
    """Seconds to wait for another process's lock."""

    def _session(self) -> S:
        """A session over the file as it is now (the lock is held)."""
        raise NotImplementedError

    @contextlib.contextmanager
    def transaction(self) -> Iterator[S]:
        """Lock, read once, and write once at the end if anything changed."""
        with file_lock(self.path, self.lock_timeout):
            session = self._session()
            yield session
            session.commit()

    def where(self, ref: str) -> str:
        """How messages name the cell ``ref``: the file and the cell, and whether the
        file is missing."""
        missing = "" if os.path.lexists(self.path) else " (the file does not exist; check the path)"
        return f"{self.path}, {ref}{missing}"

    def list_sheets(self) -> list[str]:
        """The sheets ([] when the file does not exist yet); read without the lock, so a
        reader never waits for a writer (writers replace the file in one rename)."""
        return self._session().list_sheets()

    def create_sheet(self, name: str) -> None:
        """Create a sheet (and the file, if needed)."""
        with self.transaction() as s:
            s.create_sheet(name)

    def get_cell(self, ref: str) -> str:
        """A cell's text ('' when empty or missing); read without the lock, as
        :meth:`list_sheets`."""
        return self._session().get_cell(ref)

    def set_cell(self, ref: str, value: str) -> None:
        """Write a cell."""
        with self.transaction() as s:
            s.set_cell(ref, value)
