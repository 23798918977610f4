"""The lock file of a TeDDy session: held by one process at a time, given up by a
process that dies, compatible with filelock's lock on the same file."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from filelock import FileLock

from plankit.locking import POLL, try_lock
from tests.waiting import wait_until

HOLDER = """
import sys, time
from plankit.locking import POLL, try_lock
with try_lock(sys.argv[1]) as held:
    assert held
    open(sys.argv[2], "w").close()
    sys.stdin.read()  # hold the lock until told to end, or until killed
"""


def _holder(tmp_path: Path) -> subprocess.Popen[str]:
    ready = tmp_path / "ready"
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path / ".lock"), str(ready)],
        stdin=subprocess.PIPE,
        text=True,
    )
    wait_until(ready.exists, "the other process to hold the lock")
    return process


def test_a_lock_held_by_another_process_is_refused_then_taken_when_it_dies(
    tmp_path: Path,
) -> None:
    holder = _holder(tmp_path)
    try:
        with try_lock(tmp_path / ".lock") as held:
            assert held is False
        with try_lock(tmp_path / ".lock", 0.2) as held:  # waiting does not steal it
            assert held is False
    finally:
        holder.kill()
        holder.wait()
    with try_lock(tmp_path / ".lock") as held:  # the kernel gave it up with the process
        assert held is True
    assert (tmp_path / ".lock").exists()  # left in place for the next holder


def test_a_waiting_lock_is_taken_once_the_holder_lets_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = FileLock(tmp_path / ".lock", timeout=0)
    other.acquire()
    pauses: list[float] = []
    real_sleep = time.sleep

    def pause(seconds: float) -> None:  # the holder lets go while the waiter pauses
        pauses.append(seconds)
        other.release()
        real_sleep(0)

    monkeypatch.setattr(time, "sleep", pause)
    with try_lock(tmp_path / ".lock", 60) as held:
        assert held is True
    assert pauses == [POLL]  # refused once, then taken at the next try


def test_the_lock_is_released_at_the_end_of_the_block_even_on_an_error(tmp_path: Path) -> None:
    def failing() -> None:
        with try_lock(tmp_path / ".lock") as held:
            assert held
            raise RuntimeError("the command failed")

    with pytest.raises(RuntimeError, match="the command failed"):
        failing()
    with FileLock(tmp_path / ".lock", timeout=0):  # free again: filelock takes it
        pass


def test_a_lock_held_through_filelock_excludes_it_and_the_other_way_round(
    tmp_path: Path,
) -> None:
    with FileLock(tmp_path / ".lock", timeout=0), try_lock(tmp_path / ".lock") as held:
        assert held is False
    with try_lock(tmp_path / ".lock") as held:
        assert held is True
        other = FileLock(tmp_path / ".lock", timeout=0)
        with pytest.raises(Exception, match="could not be acquired"):
            other.acquire()


def test_a_symbolic_link_in_place_of_the_lock_file_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (tmp_path / "session").mkdir()
    (tmp_path / "session" / ".lock").symlink_to(outside)
    with pytest.raises(OSError, match="Too many levels of symbolic links"):
        _enter(tmp_path / "session" / ".lock")
    assert not outside.exists()  # nothing created where the link points


def _enter(path: Path) -> None:
    with try_lock(path):
        pass


@pytest.mark.parametrize(
    ("error", "held"),
    [
        (errno.ENOLCK, True),  # a file system without flock: the block runs as if locked
        (errno.EOPNOTSUPP, True),
        (errno.EBADF, None),  # anything else is an error, not a lock held elsewhere
    ],
)
def test_what_a_failing_flock_means(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: int, held: bool | None
) -> None:
    import fcntl

    def failing(fd: int, operation: int) -> None:
        raise OSError(error, os.strerror(error))

    monkeypatch.setattr(fcntl, "flock", failing)
    if held is None:
        with pytest.raises(OSError, match=os.strerror(error)):
            _enter(tmp_path / ".lock")
        return
    with try_lock(tmp_path / ".lock", 60) as taken:
        assert taken is held
