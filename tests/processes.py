"""Processes a test started and must see stopped: their recorded ids, whether they are
gone, and a fixture that kills them if the test failed before they were stopped."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.waiting import wait_until


def recorded_pids(path: Path) -> list[int]:
    """The process ids a command wrote to ``path``, separated by blanks."""
    return [int(word) for word in path.read_text().split()]


def gone(pid: int) -> bool:
    """Whether no process has the id ``pid`` any more."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def wait_gone(pids: list[int]) -> None:
    """Wait until every process of ``pids`` (at least one) is gone."""
    assert pids, "the command recorded no process"
    for pid in pids:
        wait_until(lambda pid=pid: gone(pid), f"process {pid} to be gone")


@pytest.fixture
def cleanup() -> Iterator[list[int]]:
    """Process ids to kill when a test fails before they are stopped."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
