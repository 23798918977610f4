"""Without the supervisor (systems other than Linux): what a command leaves in its
process group is stopped, counted, given its grace on SIGTERM, and killed when it
ignores it, whether the command ended by itself or at its timeout.

Each command writes the process ids it leaves behind to a file; a process is proven
gone by ``os.kill(pid, 0)`` raising ProcessLookupError, waited for with a generous
deadline (tests/waiting.py), never after a fixed sleep.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from plankit.teddy.run import shell
from tests.processes import recorded_pids, wait_gone
from tests.waiting import record_selector_waits, wait_until

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")


@pytest.fixture
def hangup_default() -> Iterator[None]:
    """SIGHUP at its default for the processes the test starts: run under ``nohup`` (a
    background CI job) they would ignore it, and a hangup sent by mistake would pass."""
    before = signal.signal(signal.SIGHUP, signal.SIG_DFL)
    yield
    signal.signal(signal.SIGHUP, before)


def test_without_the_supervisor_every_leftover_of_the_group_is_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cleanup: list[int]
) -> None:
    # a dev server and its file watcher, both started in the background
    monkeypatch.setattr(shell, "SUPERVISE", False)
    command = "sleep 1234 & echo $! >> pids; sleep 1235 & echo $! >> pids; echo serving"
    result = shell.run_command(command, cwd=tmp_path)
    cleanup.extend(recorded_pids(tmp_path / "pids"))
    assert (result.exit_code, result.stdout, result.stopped) == (0, "serving\n", 2)
    wait_gone(recorded_pids(tmp_path / "pids"))


def test_without_the_supervisor_a_command_that_leaves_nothing_stops_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell, "SUPERVISE", False)
    result = shell.run_command("ls; echo listed", cwd=tmp_path)
    assert (result.exit_code, result.stdout, result.stopped) == (0, "listed\n", 0)


@pytest.mark.parametrize("ps", ["missing", "refusing -A"])
def test_without_a_usable_ps_the_leftovers_are_stopped_and_counted_as_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cleanup: list[int], ps: str
) -> None:
    # a slim system with no `ps`, or a BusyBox one that knows no `-A`: the group cannot
    # be counted, only found to exist
    monkeypatch.setattr(shell, "SUPERVISE", False)
    path = os.environ["PATH"]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if ps == "refusing -A":
        fake = bin_dir / "ps"
        fake.write_text("#!/bin/sh\necho \"ps: invalid option -- 'A'\" >&2\nexit 1\n")
        fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))  # teddy's own PATH, where ps is looked for
    command = "sleep 1234 & echo $! >> pids; sleep 1235 & echo $! >> pids"
    result = shell.run_command(command, cwd=tmp_path, env={"PATH": path})
    cleanup.extend(recorded_pids(tmp_path / "pids"))
    assert (result.exit_code, result.stopped) == (0, 1)
    wait_gone(recorded_pids(tmp_path / "pids"))


def test_without_the_supervisor_a_leftover_that_ignores_sigterm_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cleanup: list[int]
) -> None:
    monkeypatch.setattr(shell, "SUPERVISE", False)
    command = "sh -c 'trap \"\" TERM; while :; do sleep 1; done' & echo $! > pids"
    result = shell.run_command(command, cwd=tmp_path)
    cleanup.extend(recorded_pids(tmp_path / "pids"))
    assert result.exit_code == 0 and result.stopped >= 1
    wait_gone(recorded_pids(tmp_path / "pids"))


def test_without_the_supervisor_a_leftover_has_time_to_clean_up_on_sigterm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cleanup: list[int], hangup_default: None
) -> None:
    # a server that takes a moment to shut down and removes its lock file last
    monkeypatch.setattr(shell, "SUPERVISE", False)
    server = 'trap "sleep 0.3; rm server.lock; exit 0" TERM; touch server.lock; while :; do sleep 0.1; done'
    command = f"sh -c '{server}' & echo $! > pids; until [ -e server.lock ]; do sleep 0.01; done"
    result = shell.run_command(command, cwd=tmp_path)
    cleanup.extend(recorded_pids(tmp_path / "pids"))
    assert result.exit_code == 0 and result.stopped >= 1
    assert not (tmp_path / "server.lock").exists()  # it ran its trap before the SIGKILL


def test_without_the_supervisor_a_leftover_shutting_down_is_looked_at_every_20_ms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cleanup: list[int]
) -> None:
    # its end is not a child's end that can be waited for: the group is looked at
    # between short naps, so the action ends soon after the leftover does
    monkeypatch.setattr(shell, "SUPERVISE", False)
    naps: list[float] = []

    def nap(seconds: float) -> None:
        naps.append(seconds)
        time.sleep(seconds)

    monkeypatch.setattr(shell, "time", types.SimpleNamespace(monotonic=time.monotonic, sleep=nap))
    server = 'trap "sleep 0.3; exit 0" TERM; touch up; while :; do sleep 0.1; done'
    command = f"sh -c '{server}' & echo $! > pids; until [ -e up ]; do sleep 0.01; done"
    result = shell.run_command(command, cwd=tmp_path)
    cleanup.extend(recorded_pids(tmp_path / "pids"))
    assert result.exit_code == 0 and result.stopped >= 1
    assert naps and max(naps) <= 0.02, naps


def test_without_a_pidfd_the_end_of_a_quiet_command_is_looked_for_every_50_ms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # older kernels and macOS: nothing wakes teddy when the shell ends, so it looks
    monkeypatch.setattr(shell, "_pidfd", lambda pid: None)
    waits = record_selector_waits(monkeypatch)
    result = shell.run_command("sleep 0.3", cwd=tmp_path)
    assert result.exit_code == 0
    assert waits and all(w is not None and w <= 0.05 for w in waits), waits


def test_without_the_supervisor_a_timeout_also_stops_a_leftover_deaf_to_sigterm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cleanup: list[int]
) -> None:
    # the SIGTERM sent to the group at the timeout ends the shell, not this watcher
    monkeypatch.setattr(shell, "SUPERVISE", False)
    watcher = "sh -c 'trap \"\" TERM; while :; do sleep 1; done' & echo $! > pids"
    result = shell.run_command(f"{watcher}; sleep 600", cwd=tmp_path, timeout=1)
    cleanup.extend(recorded_pids(tmp_path / "pids"))
    assert result.timed_out and (result.exit_code, result.stopped) == (None, 0)
    wait_gone(recorded_pids(tmp_path / "pids"))


def test_without_the_supervisor_or_a_pidfd_a_process_holding_the_output_delays_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cleanup: list[int]
) -> None:
    # macOS has neither: the end of the shell is noticed by polling, not by the end of
    # its output, which a quiet dev server started in the background keeps open
    # (were it taken for the end, teddy would sit there until the ten-minute timeout)
    monkeypatch.setattr(shell, "SUPERVISE", False)
    monkeypatch.setattr(shell, "_pidfd", lambda pid: None)
    results: list[shell.CommandResult] = []

    def run() -> None:
        results.append(shell.run_command("sleep 1234 & echo $! > pids", cwd=tmp_path))

    threading.Thread(target=run, daemon=True).start()
    wait_until(lambda: (tmp_path / "pids").exists(), "the server to start")
    cleanup.extend(recorded_pids(tmp_path / "pids"))
    wait_until(lambda: results, "the end of the shell to be noticed")
    [result] = results
    assert not result.timed_out
    assert (result.exit_code, result.stdout, result.stopped) == (0, "", 1)
    wait_gone(recorded_pids(tmp_path / "pids"))


def test_without_the_supervisor_output_closed_early_is_not_read_again_while_the_command_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a command that closes its output and goes on working: teddy takes the end of each
    # pipe once, instead of reading it again and again until the command ends
    monkeypatch.setattr(shell, "SUPERVISE", False)
    ends: list[int] = []
    read = os.read

    def reading(fd: int, size: int) -> bytes:
        data = read(fd, size)
        if not data and not os.get_blocking(fd):  # the end of a pipe teddy reads
            ends.append(fd)
            if len(set(ends)) == 2:
                (tmp_path / "go").touch()  # both ended: the command may finish
        return data

    monkeypatch.setattr(os, "read", reading)
    command = "exec >&- 2>&-; until [ -e go ]; do sleep 0.01; done"
    result = shell.run_command(command, cwd=tmp_path, timeout=60)
    monkeypatch.undo()
    assert result.exit_code == 0 and not result.timed_out
    assert len(ends) == 2 and len(set(ends)) == 2  # each end read once
