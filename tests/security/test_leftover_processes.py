"""Every process an EXECUTE starts is gone when the action ends.

``sleep 1234 &``, ``(sleep 1234 &)``, ``setsid sleep 1234 &`` and ``nohup sleep 1234 &``
used to outlive the action and teddy itself, and a daemon holding stdout delayed the
turn.  Each command here writes the process ids it leaves behind to a file; a process
is proven gone by ``os.kill(pid, 0)`` raising ProcessLookupError, waited for with a
generous deadline, never after a fixed sleep.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from plankit.teddy.format.model import Execute
from plankit.teddy.run import shell
from plankit.teddy.run.actions import Runtime, run_action
from plankit.teddy.run.approval import ScriptedChat
from plankit.teddy.session.config import Config
from tests.processes import recorded_pids, wait_gone
from tests.teddy.test_session_e2e import plan, start_session, teddy
from tests.waiting import wait_until

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")

FORMS = {
    "background": "sleep 1234 & echo $! >> pids",
    "subshell": "(sleep 1234 & echo $! >> pids)",
    "setsid": "setsid sleep 1234 & echo $! >> pids",
    "nohup": "nohup sleep 1234 & echo $! >> pids",
}


def _running(pid: int) -> bool:
    """Alive and not a zombie (a killed process whose parent has not reaped it yet)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            return f.read().rpartition(")")[2].split()[0] not in ("Z", "X")
    except OSError:
        return False


def _execute(root: Path, command: str) -> tuple[bool | None, tuple[str, ...], str]:
    rt = Runtime(root, Config(), ScriptedChat([]))
    result = run_action(Execute(command), rt)
    return result.success, result.notes, result.details


@pytest.mark.parametrize("form", list(FORMS))
def test_each_form_of_leftover_is_stopped_when_the_action_ends(
    tmp_path: Path, form: str, cleanup: list[int]
) -> None:
    success, notes, _ = _execute(tmp_path, FORMS[form])
    cleanup.extend(recorded_pids(tmp_path / "pids"))
    assert success
    assert notes == ("stopped 1 background process the command left running",)
    wait_gone(recorded_pids(tmp_path / "pids"))


def test_all_four_are_gone_when_teddy_execute_ends(tmp_path: Path, cleanup: list[int]) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    turn = start_session(root) / "01"
    command = "; ".join(FORMS.values()) + "; echo started"
    (turn / "plan.md").write_text(plan(f"### `EXECUTE`\n```shell\n{command}\n```"))
    teddy(root, "execute", "-y")
    pids = recorded_pids(root / "pids")
    cleanup.extend(pids)
    assert len(pids) == 4
    wait_gone(pids)
    report = (turn / "report.md").read_text()
    assert "stopped 4 background processes the command left running" in report
    assert "started" in report


def test_a_daemon_holding_stdout_delays_nothing_and_is_stopped(
    tmp_path: Path, cleanup: list[int]
) -> None:
    # the daemon would write its marker after 30 s; the action must not wait for it
    daemon = "setsid sh -c 'echo $$ > daemon; sleep 30; echo late; touch marker' &"
    command = f"{daemon} until [ -s daemon ]; do sleep 0.01; done; echo main done"
    result = shell.run_command(command, cwd=tmp_path, timeout=600)
    pid = int((tmp_path / "daemon").read_text())
    cleanup.append(pid)
    assert result.exit_code == 0 and result.stdout == "main done\n"
    assert result.stopped == 2  # the daemon's shell and its sleep
    assert not (tmp_path / "marker").exists()  # returned long before the daemon's 30 s
    wait_gone([pid])  # and the marker will never come


def test_the_exit_status_and_output_are_kept(tmp_path: Path, cleanup: list[int]) -> None:
    result = shell.run_command(
        "echo out; echo err >&2; sleep 1234 & echo $! > pids; exit 3", cwd=tmp_path
    )
    cleanup.extend(recorded_pids(tmp_path / "pids"))
    assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert result.stopped == 1
    wait_gone(recorded_pids(tmp_path / "pids"))


def test_a_leftover_that_ignores_sigterm_is_killed(tmp_path: Path, cleanup: list[int]) -> None:
    command = (
        "setsid sh -c 'trap \"\" TERM; echo $$ > pids; while :; do sleep 1; done' "
        "</dev/null >/dev/null 2>&1 & until [ -s pids ]; do sleep 0.01; done"
    )
    result = shell.run_command(command, cwd=tmp_path)
    cleanup.extend(recorded_pids(tmp_path / "pids"))
    assert result.exit_code == 0 and result.stopped >= 1
    wait_gone(recorded_pids(tmp_path / "pids"))


def test_a_timeout_stops_what_escaped_the_process_group(tmp_path: Path, cleanup: list[int]) -> None:
    command = "setsid sleep 1234 & echo $! > pids; sleep 1234"
    result = shell.run_command(command, cwd=tmp_path, timeout=1)
    cleanup.extend(recorded_pids(tmp_path / "pids"))
    assert result.timed_out and result.exit_code is None
    wait_gone(recorded_pids(tmp_path / "pids"))


def test_the_command_sees_the_environment_it_was_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the supervisor is a Python process; Python sets LC_CTYPE in a C locale (PEP 538)
    for name in ("LC_ALL", "LC_CTYPE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "C")
    monkeypatch.setenv("PYTHONPATH", "/nowhere")
    printed = "echo ${LC_CTYPE-unset} $PYTHONPATH $ADDED"
    result = shell.run_command(printed, cwd=tmp_path, env={"ADDED": "yes"})
    assert result.stdout == "unset /nowhere yes\n"
    monkeypatch.setenv("LC_CTYPE", "C")
    assert shell.run_command(printed, cwd=tmp_path).stdout == "C /nowhere\n"


def test_without_the_supervisor_the_group_is_stopped_and_nothing_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cleanup: list[int]
) -> None:
    # elsewhere than Linux: the process group is stopped; a daemon in a session of its
    # own survives, and holding stdout it must still not keep the action waiting
    monkeypatch.setattr(shell, "SUPERVISE", False)
    daemon = "setsid sh -c 'echo $$ > daemon; sleep 1234; touch marker' &"
    command = f"sleep 1234 & echo $! > pids; {daemon} until [ -s daemon ]; do sleep 0.01; done"
    result = shell.run_command(command, cwd=tmp_path)
    pid = int((tmp_path / "daemon").read_text())
    cleanup.extend([*recorded_pids(tmp_path / "pids"), pid])
    assert result.exit_code == 0 and result.stopped == 1
    assert _running(pid)  # the action returned although the daemon holds stdout
    os.killpg(pid, signal.SIGKILL)
    wait_until(lambda: not _running(pid), "the daemon to end")
    (leftover,) = recorded_pids(tmp_path / "pids")
    wait_until(lambda: not _running(leftover), f"process {leftover} to end")
    assert not (tmp_path / "marker").exists()


def test_teddy_acp_running_commands_locally_stops_leftovers_too(
    tmp_path: Path, cleanup: list[int]
) -> None:
    from plankit.acp.runners import run_locally

    async def run() -> shell.CommandResult:
        return await run_locally(
            FORMS["setsid"] + "; echo done",
            cwd=tmp_path,
            env={},
            timeout=600,
            cap=1000,
            cancel=asyncio.Event(),
        )

    result = asyncio.run(run())
    cleanup.extend(recorded_pids(tmp_path / "pids"))
    assert (result.exit_code, result.stdout, result.stopped) == (0, "done\n", 1)
    wait_gone(recorded_pids(tmp_path / "pids"))
