"""Running one EXECUTE command: what it printed (capped), how it ended, where it ran.

The commands are the small shell lines models write (``pwd``, ``cat``, a loop that
prints too much, a test run that hangs); each runs for real in a temporary directory.
Nothing here waits a fixed time: a hanging command is ended by its timeout, and a
process is waited for with a generous deadline (tests/waiting.py).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from plankit.teddy.run import shell
from plankit.teddy.run.shell import CappedOutput, run_command
from tests.processes import recorded_pids, wait_gone
from tests.waiting import (
    group_alive,
    record_group,
    record_selector_waits,
    wait_for_group_end,
    wait_until,
)

LOTS = "head -c 5000 /dev/zero | tr '\\0' a; printf END"
"""5003 bytes on stdout: 5000 ``a`` and ``END``."""


def test_output_over_the_cap_keeps_its_start_and_its_end(tmp_path: Path) -> None:
    result = run_command(LOTS, cwd=tmp_path, cap=100)
    assert result.ok and result.stderr == ""
    assert result.stdout == "a" * 50 + "\n[… 4903 bytes cut …]\n" + "a" * 47 + "END"


def test_stderr_is_capped_on_its_own(tmp_path: Path) -> None:
    result = run_command(f"echo fine; ({LOTS}) >&2; exit 2", cwd=tmp_path, cap=10)
    assert (result.exit_code, result.ok) == (2, False)
    assert result.stdout == "fine\n"
    assert result.stderr == "aaaaa\n[… 4993 bytes cut …]\naaEND"


def test_output_of_exactly_the_cap_is_kept_whole(tmp_path: Path) -> None:
    result = run_command("printf '%s' 0123456789", cwd=tmp_path, cap=10)
    assert result.stdout == "0123456789"


def test_bytes_that_are_not_utf8_are_replaced_not_fatal(tmp_path: Path) -> None:
    result = run_command(r"printf 'caf\351\n'; printf '\377' >&2", cwd=tmp_path)
    assert (result.stdout, result.stderr) == ("caf\ufffd\n", "\ufffd")


def test_output_arriving_in_pieces_is_cut_where_the_cap_says() -> None:
    out = CappedOutput(6)  # keeps 3 bytes at the start and 3 at the end
    for chunk in (b"ab", b"cdefg", b"", b"h"):
        out.add(chunk)
    assert (bytes(out.head), bytes(out.tail), out.dropped) == (b"abc", b"fgh", 2)
    assert out.text() == "abc\n[… 2 bytes cut …]\nfgh"
    tiny = CappedOutput(0)  # a cap under two bytes still keeps one at each end
    tiny.add(b"xyz")
    assert tiny.text() == "x\n[… 1 bytes cut …]\nz"
    whole = CappedOutput(8)
    whole.add(b"12345")
    assert whole.text() == "12345" and whole.dropped == 0


def test_a_command_ended_by_a_signal_reports_it(tmp_path: Path) -> None:
    result = run_command("echo going; kill -TERM $$", cwd=tmp_path)
    assert (result.exit_code, result.stdout, result.ok) == (-15, "going\n", False)
    assert (result.timed_out, result.interrupted, result.stopped) == (False, False, 0)


def test_a_hanging_command_is_stopped_at_its_timeout_with_what_it_printed(
    tmp_path: Path,
) -> None:
    result = run_command(
        f"echo before; sleep 600; touch {tmp_path / 'late'}", cwd=tmp_path, timeout=1
    )
    assert result.timed_out and not result.interrupted and not result.ok
    assert (result.exit_code, result.stopped, result.stdout) == (None, 0, "before\n")
    assert not (tmp_path / "late").exists()


def test_the_command_runs_in_its_folder_with_no_input(tmp_path: Path) -> None:
    # `cat` would wait forever on an open terminal; stdin is closed, so it ends at once
    result = run_command("pwd; cat; echo read-nothing", cwd=tmp_path, timeout=60)
    assert result.ok and not result.timed_out and result.stopped == 0
    assert result.stdout == f"{tmp_path}\nread-nothing\n"


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash here")
def test_commands_run_under_bash_when_there_is_one(tmp_path: Path) -> None:
    assert shell.shell() == shutil.which("bash")
    result = run_command("[[ -n $BASH_VERSION ]] && echo bash", cwd=tmp_path)
    assert result.stdout == "bash\n"


def test_without_a_pidfd_the_end_of_the_command_is_still_noticed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # older kernels (before Linux 5.3) and other systems have no pidfd: polling it is
    monkeypatch.setattr(shell, "_pidfd", lambda pid: None)
    result = run_command("echo one; sleep 0.2; echo two >&2; exit 4", cwd=tmp_path, timeout=60)
    assert (result.exit_code, result.stdout, result.stderr) == (4, "one\n", "two\n")
    assert not result.timed_out


def test_without_the_supervisor_a_timeout_stops_the_whole_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell, "SUPERVISE", False)
    command = f"(sleep 600; touch {tmp_path / 'late'}) & echo $! > pid; echo started; wait"
    result = run_command(command, cwd=tmp_path, timeout=1)
    assert result.timed_out and (result.exit_code, result.stopped) == (None, 0)
    assert result.stdout == "started\n"
    pid = int((tmp_path / "pid").read_text())
    wait_until(lambda: not Path(f"/proc/{pid}").exists(), f"process {pid} to be gone")
    assert not (tmp_path / "late").exists()


def test_ctrl_c_while_the_command_runs_stops_it_and_keeps_its_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = tmp_path / "started"

    def pump_then_ctrl_c(proc: object, captures: object, deadline: float) -> None:
        wait_until(started.exists, "the command to start")
        raise KeyboardInterrupt  # as when the user presses Ctrl-C

    monkeypatch.setattr(shell, "_pump", pump_then_ctrl_c)
    command = f"echo working; touch {started}; sleep 600; touch {tmp_path / 'late'}"
    result = run_command(command, cwd=tmp_path, timeout=600)
    assert result.interrupted and not result.timed_out
    assert (result.exit_code, result.stopped) == (None, 0)
    assert result.stdout == "working\n"
    assert not (tmp_path / "late").exists()


def test_without_the_supervisor_a_command_deaf_to_sigterm_is_killed_at_its_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell, "SUPERVISE", False)
    group = tmp_path / "group"
    command = f"trap '' TERM; {record_group(group)}; echo waiting; sleep 600; touch late"
    result = run_command(command, cwd=tmp_path, timeout=1)
    assert result.timed_out and (result.exit_code, result.stdout) == (None, "waiting\n")
    wait_for_group_end(group)
    assert not (tmp_path / "late").exists()


def test_a_command_that_freezes_its_supervisor_is_still_stopped_at_its_timeout(
    tmp_path: Path,
) -> None:
    # `kill -STOP $PPID` stops the supervisor, which then can neither answer the
    # timeout's SIGTERM nor stop the shell: both are killed when its grace runs out
    group = tmp_path / "group"
    command = f"{record_group(group)}; kill -STOP $PPID; echo frozen; sleep 600; touch late"
    result = run_command(command, cwd=tmp_path, timeout=1)
    assert result.timed_out and (result.exit_code, result.stdout) == (None, "frozen\n")
    assert group.exists()
    wait_for_group_end(group)
    assert not (tmp_path / "late").exists()


def test_the_command_cannot_read_what_the_user_types_to_teddy(tmp_path: Path) -> None:
    # teddy's own input (the terminal where the user answers its questions) stays open
    read_end, write_end = os.pipe()
    saved = os.dup(0)
    try:
        os.write(write_end, b"y\n")  # an answer meant for teddy, typed ahead
        os.dup2(read_end, 0)
        result = run_command("cat; echo read-nothing", cwd=tmp_path, timeout=60)
        os.set_blocking(0, False)  # fails at once, rather than hangs, when it was read
        assert os.read(0, 100) == b"y\n"
    finally:
        os.dup2(saved, 0)
        for fd in (saved, read_end, write_end):
            os.close(fd)
    assert (result.stdout, result.timed_out) == ("read-nothing\n", False)


def test_a_cut_through_a_multibyte_character_is_replaced_not_fatal() -> None:
    out = CappedOutput(6)  # the cut falls inside the third "é" and the fourth
    out.add("ééééé".encode())
    assert out.text() == "é\ufffd\n[… 4 bytes cut …]\n\ufffdé"


def test_output_larger_than_a_pipe_holds_is_read_while_the_command_runs(
    tmp_path: Path,
) -> None:
    # a verbose build log: the command blocks on a full pipe unless it is read meanwhile
    command = "head -c 300000 /dev/zero | tr '\\0' x; echo; echo built"
    result = run_command(command, cwd=tmp_path, timeout=120, cap=20)
    assert result.ok and not result.timed_out
    assert result.stdout == "x" * 10 + "\n[… 299987 bytes cut …]\n" + "xxx\nbuilt\n"


def test_a_command_whose_folder_is_gone_fails_and_leaves_no_pipe_open(tmp_path: Path) -> None:
    before = sorted(os.listdir("/proc/self/fd"))
    with pytest.raises(FileNotFoundError):
        run_command("echo never", cwd=tmp_path / "removed")
    assert sorted(os.listdir("/proc/self/fd")) == before


def test_a_command_deaf_to_sigterm_is_stopped_whole_at_its_timeout_escapees_too(
    tmp_path: Path,
) -> None:
    # the supervisor needs its own grace to kill the shell and then the server that
    # escaped into a session of its own: teddy waits for it rather than cutting it short
    group, server = tmp_path / "group", tmp_path / "server"
    command = (
        f"setsid sh -c '{record_group(server)}; sleep 1234' & "
        f"trap '' TERM; {record_group(group)}; until [ -s {server} ]; do sleep 0.01; done; "
        "echo up; sleep 600"
    )
    result = run_command(command, cwd=tmp_path, timeout=1)
    assert result.timed_out and (result.exit_code, result.stdout) == (None, "up\n")
    assert group.exists() and server.exists()
    assert not group_alive(int(server.read_text()))
    wait_for_group_end(group)


def test_the_actions_env_is_laid_over_teddys_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANKIT_TEST_OUTER", "kept")
    monkeypatch.setenv("GREETING", "overridden")
    command = 'printf "%s %s" "$GREETING" "$PLANKIT_TEST_OUTER"'
    result = run_command(command, cwd=tmp_path, env={"GREETING": "hi"})
    assert result.ok and result.stdout == "hi kept"


@pytest.mark.parametrize("outer", [None, "C.UTF-8"])
def test_the_command_sees_teddys_lc_ctype_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outer: str | None
) -> None:
    # under LANG=C the supervisor's own Python sets LC_CTYPE (PEP 538); the command
    # must get teddy's environment, not the supervisor's
    monkeypatch.setenv("LANG", "C")
    monkeypatch.delenv("LC_ALL", raising=False)
    if outer is None:
        monkeypatch.delenv("LC_CTYPE", raising=False)
    else:
        monkeypatch.setenv("LC_CTYPE", outer)
    result = run_command('printf "%s" "${LC_CTYPE-unset}"', cwd=tmp_path)
    assert result.ok and result.stdout == (outer or "unset")


def test_a_process_left_running_in_the_background_is_stopped_and_counted(
    tmp_path: Path,
) -> None:
    result = run_command("sleep 600 & echo $! > bg; echo started", cwd=tmp_path)
    assert result.ok and result.stdout == "started\n"
    assert result.stopped == 1
    wait_gone(recorded_pids(tmp_path / "bg"))


def test_the_duration_is_the_time_the_command_took_from_teddys_side(tmp_path: Path) -> None:
    import time

    before = time.monotonic()
    result = run_command("echo hi", cwd=tmp_path)
    after = time.monotonic()
    assert result.duration is not None and 0 <= result.duration <= after - before


supervised = pytest.mark.skipif(not shell.SUPERVISE, reason="the supervisor runs on Linux only")


@supervised
def test_a_command_that_kills_its_supervisor_reports_the_kill(tmp_path: Path) -> None:
    # a model's `pkill -9 python` reaches the supervisor (a Python process) too: it ends
    # without reporting the command's exit, and the result says it was killed
    result = run_command("echo stopping; kill -KILL $PPID", cwd=tmp_path, timeout=60)
    assert (result.exit_code, result.stdout, result.stopped) == (-9, "stopping\n", 0)
    assert not result.ok and not result.timed_out


@supervised
def test_a_supervisor_killed_before_it_reported_anything_ends_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SIGKILL from outside (the OOM killer, a `kill -9` in another terminal) before the
    # supervisor has written a word to its status pipe: landing it in the new process
    # before it runs anything makes that moment certain
    import signal
    import subprocess

    popen = subprocess.Popen

    def sigkill() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    def killed_at_start(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        return popen(*args, preexec_fn=sigkill, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", killed_at_start)
    result = run_command(f"touch {tmp_path / 'ran'}", cwd=tmp_path, timeout=60)
    monkeypatch.undo()
    assert (result.exit_code, result.stdout, result.stderr, result.stopped) == (-9, "", "", 0)
    assert not result.ok and not result.timed_out
    assert not (tmp_path / "ran").exists()


def test_a_program_given_with_its_arguments_runs_without_a_shell(tmp_path: Path) -> None:
    # an ACP client's terminal/create: a program and its arguments, which no shell reads
    import subprocess

    printf = shutil.which("printf")
    assert printf is not None
    launch = shell.Launch("printf", program=[printf, "%s|", "$HOME", "a b", "*"])
    proc = subprocess.Popen(
        launch.argv,
        cwd=tmp_path,
        env=launch.environment({}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        pass_fds=launch.pass_fds,
    )
    launch.spawned(proc.pid)
    output, _ = proc.communicate(timeout=60)
    assert launch.finish(proc.returncode, stopped_early=False) == (0, 0)
    assert output == b"$HOME|a b|*|"


def test_a_quiet_command_is_waited_on_without_polling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a build or a test run that prints nothing for minutes: where there is a pidfd,
    # teddy sleeps until the command prints or ends, not waking twenty times a second
    own = shell._pidfd(os.getpid())
    if own is None:
        pytest.skip("this system has no pidfd")
    os.close(own)
    waits = record_selector_waits(monkeypatch)
    result = run_command("sleep 2", cwd=tmp_path)
    assert result.exit_code == 0
    # the end itself: the pidfd, and the pipes' end of file (a few wake-ups at most)
    assert 1 <= len(waits) <= 6, waits


def test_a_library_caller_gets_the_ten_minutes_a_plans_execute_gets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # run_command's own default is execute.timeout's (docs/teddy-sessions.md): the
    # deadline the output is read against is at most that far away
    import time

    from plankit.teddy.session.config import Config

    left: list[float] = []
    pump = shell._pump

    def recorded(proc: Any, captures: Any, deadline: float) -> None:
        left.append(deadline - time.monotonic())
        pump(proc, captures, deadline)

    monkeypatch.setattr(shell, "_pump", recorded)
    assert run_command("true", cwd=tmp_path).exit_code == 0
    assert Config().execute_timeout == 600
    assert len(left) == 1 and 0 < left[0] <= Config().execute_timeout


@pytest.mark.skipif(not shell.SUPERVISE, reason="the supervisor runs on Linux only")
def test_a_supervisor_that_does_not_end_is_killed_once_its_graces_and_two_seconds_are_over() -> (
    None
):
    # after its SIGTERM the supervisor gives the shell 2 s, then what it left 2 s; teddy
    # sends SIGKILL 2 s after that (docs/security.md), not before it could finish
    launch = shell.Launch("true")
    try:
        assert launch.grace == 6.0
    finally:
        launch.close()
