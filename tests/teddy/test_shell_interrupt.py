"""Ctrl-C at any step of running an EXECUTE's command stops the command: also when it
lands before teddy is back from starting it (on a busy machine the command can be well
under way by then)."""

from __future__ import annotations

from pathlib import Path

import pytest

from plankit.teddy.run import shell
from tests.processes import gone
from tests.waiting import wait_until


@pytest.mark.parametrize("where", ["spawned", "capture"])
def test_ctrl_c_right_after_the_command_started_stops_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    command = "echo $$ > pid; sleep 600"
    real_spawned, real_capture = shell.Launch.spawned, shell._Capture.__init__
    interrupted: list[bool] = []

    def written() -> bool:  # the whole line: `>` makes the file before echo writes to it
        pid = tmp_path / "pid"
        return pid.is_file() and pid.read_text().endswith("\n")

    def ctrl_c_once() -> None:
        # the command runs meanwhile: wait until it has written its pid, then interrupt
        wait_until(written, "the command to start", seconds=120)
        if not interrupted:
            interrupted.append(True)
            raise KeyboardInterrupt

    def spawned(self: shell.Launch, pid: int) -> None:
        if where == "spawned":
            ctrl_c_once()
        real_spawned(self, pid)

    def capture(self: object, *args: object, **kwargs: object) -> None:
        if where == "capture":
            ctrl_c_once()
        real_capture(self, *args, **kwargs)

    monkeypatch.setattr(shell.Launch, "spawned", spawned)
    monkeypatch.setattr(shell._Capture, "__init__", capture)
    result = shell.run_command(command, cwd=tmp_path, timeout=600)
    assert interrupted == [True]
    assert result.interrupted and result.exit_code is None
    pid = int((tmp_path / "pid").read_text())
    wait_until(lambda: gone(pid), "the interrupted command to stop", seconds=120)
