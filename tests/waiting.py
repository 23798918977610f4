"""Waiting in tests: on a condition, never for a fixed time.

A test that sleeps "long enough" for a process to start or a screen to draw fails on a
busy machine and wastes time on an idle one. These helpers poll a condition until it
holds and fail with what was awaited when a generous deadline passes; the deadline only
bounds a test that is already failing, so it can be long.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

DEADLINE = 60.0
"""Seconds before a wait gives up: far beyond what any condition needs on a busy machine."""


def wait_until(condition: Callable[[], object], what: str, seconds: float = DEADLINE) -> None:
    """Poll ``condition`` until it is true; fail saying ``what`` never happened."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {seconds:g} s for {what}; it never happened")
        time.sleep(0.02)


async def until(condition: Callable[[], object], what: str, seconds: float = DEADLINE) -> None:
    """:func:`wait_until` for a coroutine: polls without blocking the event loop."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {seconds:g} s for {what}; it never happened")
        await asyncio.sleep(0.02)


def record_group(path: Path) -> str:
    """A shell line that writes the shell's process id, which is its process group id
    when the command runs in a session of its own, to ``path`` (atomically)."""
    return f"echo $$ > {path}.part && mv {path}.part {path}"


def group_alive(pgid: int) -> bool:
    """Whether any process of group ``pgid`` is still running (zombies do not count:
    a process killed but not yet reaped can do nothing more)."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="utf-8", errors="replace") as f:
                stat = f.read()
        except OSError:  # it ended while we looked
            continue
        # pid (comm) state ppid pgrp …; comm may hold spaces and parentheses
        fields = stat.rpartition(")")[2].split()
        if len(fields) >= 3 and int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return True
    return False


def wait_for_group_end(path: Path, seconds: float = DEADLINE) -> None:
    """Wait until the process group recorded in ``path`` (:func:`record_group`) has no
    running process. Nothing to wait for when the command never got to record it."""
    if path.exists():
        pgid = int(path.read_text(encoding="utf-8"))
        wait_until(lambda: not group_alive(pgid), f"process group {pgid} to end", seconds)


def record_selector_waits(monkeypatch: Any) -> list[float | None]:
    """The timeout of every ``selectors.DefaultSelector().select`` from now on (until
    ``monkeypatch`` is undone): how often a loop wakes, counted instead of timed."""
    import selectors

    waits: list[float | None] = []

    class Recording(selectors.DefaultSelector):  # type: ignore[misc,valid-type]
        def select(self, timeout: float | None = None) -> list[Any]:
            waits.append(timeout)
            return super().select(timeout)

    monkeypatch.setattr(selectors, "DefaultSelector", Recording)
    return waits
