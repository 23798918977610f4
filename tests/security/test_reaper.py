"""The supervisor below each EXECUTE command (``plankit.teddy.run.reaper``), in this
process.

teddy starts it as a script (``python -I -S reaper.py …``); the tests of
``test_leftover_processes.py`` go through that road.  Here its functions run in the test
process itself, so that a change to them shows: ``main`` forks the command from here,
makes this process the subreaper of what the command leaves behind and sets its signal
handlers.  The ``supervisor`` fixture puts all of that back after each test.  A process
is proven gone by ``os.kill(pid, 0)`` failing, waited for with a generous deadline.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from plankit.teddy.run import reaper
from tests.processes import gone, recorded_pids, wait_gone
from tests.waiting import wait_until

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the reaper is Linux only")

PR_GET_PDEATHSIG = 2
PR_GET_CHILD_SUBREAPER = 37
SHELL = "/bin/sh"


def _prctl(option: int, value: int) -> None:
    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _prctl_get(option: int) -> int:
    out = ctypes.c_int(-1)
    ctypes.CDLL(None, use_errno=True).prctl(option, ctypes.byref(out), 0, 0, 0)
    return out.value


@pytest.fixture
def supervisor(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Undo what ``reaper.main`` does to the process that runs it; kill the process ids
    the test appends to the list if it failed before they were stopped."""
    handlers = {sig: signal.getsignal(sig) for sig in (*reaper._STOPS, signal.SIGALRM)}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, set())
    monkeypatch.delenv("LC_CTYPE", raising=False)  # restored afterwards, whatever main sets
    pids: list[int] = []
    try:
        yield pids
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        _prctl(reaper.PR_SET_PDEATHSIG, 0)
        _prctl(reaper.PR_SET_CHILD_SUBREAPER, 0)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        reaper.reap()


def _main(argv: list[str]) -> int:
    """``reaper.main(argv)`` in a forked child, as teddy runs it in a process of its own:
    the stop signals the tests' commands send their supervisor never reach the test
    runner, and a ``main`` that went wrong (the command exec'd in its place) cannot take
    the test runner's process with it.  Only while mutmut learns which tests call which
    functions (no mutant is active then) does it run here, where mutmut can see it."""
    if os.environ.get("MUTANT_UNDER_TEST") == "stats":
        return reaper.main(argv)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = reaper.main(argv)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _supervise(command: str, cwd: Path, lc_ctype: str = "-") -> dict[str, int]:
    """Run ``command`` in ``cwd`` under ``reaper.main``; the numbers of its status pipe:
    ``pid``, ``exit`` and ``stopped``."""
    read_end, write_end = os.pipe()
    command = f"cd {shlex.quote(str(cwd))} || exit 99; {command}"
    try:
        assert _main(["reaper.py", str(write_end), lc_ctype, SHELL, "-c", command]) == 0
    finally:
        os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        words = pipe.read().decode().split()
    assert words[0::2] == ["pid", "exit", "stopped"], words
    return dict(zip(words[0::2], map(int, words[1::2]), strict=True))


def _wait_for_file(path: Path) -> str:
    wait_until(lambda: path.exists() and path.read_text().endswith("\n"), f"{path.name}")
    return path.read_text()


# --- main: the command, its exit status, what it leaves behind ---------------------------


def test_a_background_process_is_stopped_once_the_shell_exits(
    tmp_path: Path, supervisor: list[int]
) -> None:
    status = _supervise("sleep 1234 & echo $! > pids", tmp_path)
    supervisor.extend(recorded_pids(tmp_path / "pids"))
    assert (status["exit"], status["stopped"]) == (0, 1)
    assert status["pid"] not in recorded_pids(tmp_path / "pids")  # the shell's, not the leftover's
    wait_gone(recorded_pids(tmp_path / "pids"))


def test_processes_that_left_their_session_are_stopped_too(
    tmp_path: Path, supervisor: list[int]
) -> None:
    # a daemon's double fork: the middle process exits, the grandchild lives on
    command = (
        "(setsid sleep 1234 & echo $! >> pids) ; nohup sleep 1234 >/dev/null 2>&1 & echo $! >> pids"
    )
    status = _supervise(command, tmp_path)
    supervisor.extend(recorded_pids(tmp_path / "pids"))
    assert (status["exit"], status["stopped"]) == (0, 2)
    wait_gone(recorded_pids(tmp_path / "pids"))


def test_the_exit_status_of_the_command_is_passed_on(tmp_path: Path, supervisor: list[int]) -> None:
    status = _supervise("exit 3", tmp_path)
    assert (status["exit"], status["stopped"]) == (3, 0)
    status = _supervise("kill -KILL $$", tmp_path)
    assert (status["exit"], status["stopped"]) == (-signal.SIGKILL, 0)


def test_the_pid_written_is_the_shells(tmp_path: Path, supervisor: list[int]) -> None:
    status = _supervise("echo $$ > shell", tmp_path)
    assert status["pid"] == int((tmp_path / "shell").read_text())
    assert status["exit"] == 0


def test_the_command_runs_in_a_session_of_its_own_with_default_signals(
    tmp_path: Path, supervisor: list[int]
) -> None:
    # a session and group of its own; nothing blocked or ignored that the supervisor set up
    # the masks are read by the shell itself: while it forks a program, it blocks
    # every signal for a moment, and the program could see that
    command = (
        "while read -r key value; do case $key in SigBlk:|SigIgn:) echo $key$value;; esac; "
        "done < /proc/$$/status > signals; ps -o sid= -o pgid= -p $$ > ids"
    )
    status = _supervise(command, tmp_path)
    shell = status["pid"]
    assert (tmp_path / "ids").read_text().split() == [str(shell), str(shell)]
    masks = dict(line.split(":") for line in (tmp_path / "signals").read_text().splitlines())
    blocked, ignored = int(masks["SigBlk"], 16), int(masks["SigIgn"], 16)
    assert blocked == 0
    for sig in reaper._STOPS:
        assert not ignored & (1 << (sig - 1)), f"{sig!r} ignored in the command"


def test_the_status_pipe_is_not_left_open_in_the_command(
    tmp_path: Path, supervisor: list[int]
) -> None:
    # a command holding the pipe would keep teddy reading until it ended
    read_end, write_end = os.pipe()
    command = f"ls /proc/$$/fd > {shlex.quote(str(tmp_path / 'fds'))}"
    try:
        _main(["reaper.py", str(write_end), "-", SHELL, "-c", command])
    finally:
        os.close(write_end)
        os.close(read_end)
    assert str(write_end) not in (tmp_path / "fds").read_text().split()


def test_a_command_that_cannot_run_says_so(
    tmp_path: Path, supervisor: list[int], capfd: pytest.CaptureFixture[str]
) -> None:
    read_end, write_end = os.pipe()
    missing = str(tmp_path / "no-such-shell")
    try:
        _main(["reaper.py", str(write_end), "-", missing, "-c", "true"])
    finally:
        os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        words = pipe.read().decode().split()
    assert words[2:] == ["exit", "127", "stopped", "0"]
    assert f"cannot run {missing}: No such file or directory\n" in capfd.readouterr().err


@pytest.mark.parametrize(
    ("given", "seen"),
    [("-", "unset"), ("=C.UTF-8", "[C.UTF-8]"), ("=", "[]")],
    ids=["unset", "set", "empty"],
)
def test_the_command_sees_lc_ctype_as_the_caller_meant_it(
    tmp_path: Path, supervisor: list[int], monkeypatch: pytest.MonkeyPatch, given: str, seen: str
) -> None:
    # this process's LC_CTYPE is not the caller's: Python may have set it (PEP 538)
    monkeypatch.setenv("LC_CTYPE", "POSIX")
    command = 'if [ "${LC_CTYPE+set}" ]; then echo "[$LC_CTYPE]"; else echo unset; fi > seen'
    _supervise(command, tmp_path, given)
    assert (tmp_path / "seen").read_text() == seen + "\n"


def test_a_leftover_ignoring_sigterm_is_killed_after_the_grace(
    tmp_path: Path, supervisor: list[int]
) -> None:
    command = (
        "setsid sh -c 'trap \"\" TERM; echo $$ > pids; while :; do sleep 1; done' "
        "</dev/null >/dev/null 2>&1 & until [ -s pids ]; do sleep 0.01; done"
    )
    started = time.monotonic()
    status = _supervise(command, tmp_path)
    supervisor.extend(recorded_pids(tmp_path / "pids"))
    assert status["exit"] == 0 and status["stopped"] >= 1
    wait_gone(recorded_pids(tmp_path / "pids"))
    assert time.monotonic() - started >= reaper.GRACE  # SIGTERM was tried first


# --- a stop signal sent to the supervisor (teddy's timeout, Ctrl-C, teddy's death) ----


def test_sigterm_to_the_supervisor_stops_the_command_and_its_children(
    tmp_path: Path, supervisor: list[int]
) -> None:
    command = "sleep 1234 & echo $! > pids; kill -TERM $PPID; wait"
    status = _supervise(command, tmp_path)
    supervisor.extend(recorded_pids(tmp_path / "pids"))
    assert (status["exit"], status["stopped"]) == (-signal.SIGTERM, 0)
    wait_gone(recorded_pids(tmp_path / "pids"))


@pytest.mark.parametrize("sig", ["INT", "HUP"])
def test_ctrl_c_or_a_hangup_stops_the_command_the_same_way(
    tmp_path: Path, supervisor: list[int], sig: str
) -> None:
    status = _supervise(f"kill -{sig} $PPID; sleep 1234", tmp_path)
    assert status["exit"] == -signal.SIGTERM


def test_after_a_stop_signal_the_leftovers_grace_runs_from_the_signal(
    tmp_path: Path, supervisor: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the shell takes half a second to shut down: what it leaves gets the rest of the
    # 2 s that SIGTERM started, not 2 s more (teddy kills the supervisor 6 s after it)
    real = reaper.stop_leftovers
    left = tmp_path / "left"

    def recorded(term_until: float) -> int:
        left.write_text(f"{term_until - time.monotonic()}\n")  # in the supervisor
        return real(term_until)

    monkeypatch.setattr(reaper, "stop_leftovers", recorded)
    command = "trap 'sleep 0.5; exit 0' TERM; kill -TERM $PPID; while :; do sleep 0.1; done"
    status = _supervise(command, tmp_path)
    assert (status["exit"], status["stopped"]) == (0, 0)
    assert float(left.read_text()) <= reaper.GRACE - 0.4


def test_a_command_ignoring_sigterm_is_killed_after_the_grace(
    tmp_path: Path, supervisor: list[int]
) -> None:
    command = "trap '' TERM; kill -TERM $PPID; while :; do sleep 1; done"
    status = _supervise(command, tmp_path)
    assert status["exit"] == -signal.SIGKILL


# --- the pieces ----------------------------------------------------------------------


def test_the_supervisor_becomes_the_reaper_of_orphans(supervisor: list[int]) -> None:
    assert reaper.become_subreaper() is True
    assert _prctl_get(PR_GET_CHILD_SUBREAPER) == 1
    # an orphan: its parent, a shell, exits at once and leaves it to this process
    out = subprocess.run(
        [SHELL, "-c", "sleep 1234 >/dev/null 2>&1 & echo $!"], capture_output=True, text=True
    )
    orphan = int(out.stdout)
    supervisor.append(orphan)
    assert orphan in reaper.children()


def test_the_supervisor_gets_sigterm_when_teddy_dies(supervisor: list[int]) -> None:
    reaper.follow_parent()
    assert _prctl_get(PR_GET_PDEATHSIG) == signal.SIGTERM


def _spawn(supervisor: list[int], *argv: str, **options: object) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(argv, **options)  # type: ignore[call-overload]
    supervisor.append(process.pid)
    return process


def _children_file() -> list[int]:
    me = os.getpid()
    with open(f"/proc/{me}/task/{me}/children", "rb") as f:
        return sorted(int(pid) for pid in f.read().split())


def test_children_are_this_processs_children(supervisor: list[int]) -> None:
    first = _spawn(supervisor, "sleep", "1234")
    second = _spawn(supervisor, "sleep", "1234", start_new_session=True)
    found = reaper.children()
    assert {first.pid, second.pid} <= set(found)
    assert sorted(found) == _children_file()


def test_children_are_found_without_the_children_file(
    tmp_path: Path, supervisor: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # kernels built without CONFIG_PROC_CHILDREN have no task/*/children: /proc is
    # scanned, and a command named with spaces and parentheses must not fool it
    odd = tmp_path / "sl ) eep ("
    odd.symlink_to(
        Path(
            subprocess.run(
                ["sh", "-c", "command -v sleep"], capture_output=True, text=True
            ).stdout.strip()
        )
    )
    first = _spawn(supervisor, str(odd), "1234")
    second = _spawn(supervisor, "sleep", "1234", start_new_session=True)
    real = _children_file()
    real_open = open

    def no_children_file(name: object, *args: object, **kwargs: object) -> object:
        if str(name).endswith("/children"):
            raise FileNotFoundError(name)
        if name == "/proc/1/stat":  # as if it ended while /proc was scanned
            raise ProcessLookupError(name)
        return real_open(name, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(reaper, "open", no_children_file, raising=False)
    found = reaper.children()
    assert {first.pid, second.pid} <= set(found)
    assert sorted(found) == real


def test_reap_collects_ended_children_without_waiting_for_running_ones(
    supervisor: list[int],
) -> None:
    running = _spawn(supervisor, "sleep", "1234")
    ended = _spawn(supervisor, "true")
    wait_until(lambda: _zombie(ended.pid), "the ended child to be a zombie")
    reaper.reap()
    assert gone(ended.pid)  # collected: no zombie left
    assert not gone(running.pid)
    running.kill()
    running.wait()
    reaper.reap()  # no child at all: returns


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()[0] == b"Z"
    except OSError:
        return False


def test_signal_quietly_signals_a_process_or_its_group(supervisor: list[int]) -> None:
    leader = _spawn(supervisor, SHELL, "-c", "sleep 1234 & wait", start_new_session=True)
    reaper.signal_quietly(leader.pid, signal.SIGKILL, group=True)
    assert leader.wait() == -signal.SIGKILL
    wait_until(lambda: not _group_has(leader.pid), "the whole group to be gone")
    alone = _spawn(supervisor, "sleep", "1234")
    reaper.signal_quietly(alone.pid, signal.SIGTERM)
    assert alone.wait() == -signal.SIGTERM
    # it is gone now: signalling it again is no error, alone or as a group
    reaper.signal_quietly(alone.pid, signal.SIGTERM)
    reaper.signal_quietly(alone.pid, signal.SIGTERM, group=True)


def _group_has(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_stop_leftovers_stops_each_generation_and_counts_them(
    tmp_path: Path, supervisor: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    waits: list[float] = []
    sigtimedwait = signal.sigtimedwait

    def recorded(signals: list[int], timeout: float) -> object:
        waits.append(timeout)
        return sigtimedwait(signals, timeout)

    monkeypatch.setattr(signal, "sigtimedwait", recorded)
    assert reaper.become_subreaper()
    # a child with a child of its own: stopping the first orphans the second
    parent = _spawn(
        supervisor,
        SHELL,
        "-c",
        f"sleep 1234 & echo $! > {shlex.quote(str(tmp_path / 'grandchild'))}; wait",
        start_new_session=True,
    )
    grandchild = int(_wait_for_file(tmp_path / "grandchild"))
    supervisor.append(grandchild)
    assert reaper.stop_leftovers(time.monotonic() + reaper.GRACE) == 2
    assert reaper.children() == []
    # the orphan's end sends the supervisor no SIGCHLD: it looks again within 20 ms
    assert waits and max(waits) <= 0.02, waits
    wait_gone([parent.pid, grandchild])


def test_stop_leftovers_kills_at_once_after_the_term_deadline(
    tmp_path: Path, supervisor: list[int]
) -> None:
    stubborn = _spawn(
        supervisor,
        SHELL,
        "-c",
        f"trap '' TERM; echo ready > {shlex.quote(str(tmp_path / 'ready'))}; while :; do sleep 1; done",
    )
    _wait_for_file(tmp_path / "ready")
    assert reaper.stop_leftovers(time.monotonic()) == 1
    wait_gone([stubborn.pid])


def test_stop_leftovers_with_nothing_left_stops_nothing(supervisor: list[int]) -> None:
    assert reaper.stop_leftovers(time.monotonic() + reaper.GRACE) == 0


def test_a_leftover_ignoring_sigterm_is_killed_after_a_stop_signal(
    tmp_path: Path, supervisor: list[int]
) -> None:
    # it outlives the shell: the supervisor kills it once the grace is over; a command
    # that was stopped reports no leftovers of its own
    command = "trap '' TERM; sleep 1234 & echo $! > pids; trap - TERM; kill -TERM $PPID; wait"
    status = _supervise(command, tmp_path)
    supervisor.extend(recorded_pids(tmp_path / "pids"))
    assert (status["exit"], status["stopped"]) == (-signal.SIGTERM, 0)
    wait_gone(recorded_pids(tmp_path / "pids"))


def test_every_process_of_the_command_gets_sigterm_to_clean_up(
    tmp_path: Path, supervisor: list[int]
) -> None:
    # a worker below a parent that stays on after SIGTERM still gets it at once (the
    # signal goes to the whole process group), and can remove its lock file before it
    # ends, instead of being killed once its parent is
    worker = "trap 'rm -f lock; exit' TERM; touch lock; while :; do sleep 1; done"
    parent = (
        f"trap : TERM; sh -c {shlex.quote(worker)} & while kill -0 $! 2>/dev/null; do wait; done"
    )
    command = (
        f"sh -c {shlex.quote(parent)} & until [ -e lock ]; do sleep 0.01; done; "
        "kill -TERM $PPID; wait"
    )
    status = _supervise(command, tmp_path)
    assert status["exit"] == -signal.SIGTERM
    assert not (tmp_path / "lock").exists()


def _running(pid: int) -> bool:
    """Alive and not a zombie (init may not have reaped an orphan yet)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


def test_without_the_subreaper_the_commands_group_is_still_stopped(
    tmp_path: Path, supervisor: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a kernel without PR_SET_CHILD_SUBREAPER: orphans go to init, out of reach; what
    # stayed in the command's process group is stopped all the same
    monkeypatch.setattr(reaper, "become_subreaper", lambda: False)
    status = _supervise("sleep 1234 & echo $! > pids", tmp_path)
    supervisor.extend(recorded_pids(tmp_path / "pids"))
    assert (status["exit"], status["stopped"]) == (0, 0)
    (leftover,) = recorded_pids(tmp_path / "pids")
    wait_until(lambda: not _running(leftover), f"process {leftover} to end")


def test_without_prctl_the_supervisor_is_no_subreaper(
    supervisor: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_libc(*args: object, **kwargs: object) -> None:
        raise OSError("no C library here")

    monkeypatch.setattr(ctypes, "CDLL", no_libc)
    assert reaper.become_subreaper() is False
    reaper.follow_parent()  # nothing to do, and no error
    monkeypatch.undo()
    assert _prctl_get(PR_GET_CHILD_SUBREAPER) == 0
    assert _prctl_get(PR_GET_PDEATHSIG) == 0


def test_a_leftover_is_asked_to_stop_once_while_it_shuts_down(
    tmp_path: Path, supervisor: list[int]
) -> None:
    # a second SIGTERM often means "stop now, skip the clean-up"
    script = (
        "trap 'echo term >> terms; stop=1' TERM; echo ready > ready; "
        'while [ -z "$stop" ]; do sleep 0.05; done; sleep 0.5; echo done > finished'
    )
    _spawn(supervisor, SHELL, "-c", script, cwd=tmp_path)
    _wait_for_file(tmp_path / "ready")
    assert reaper.stop_leftovers(time.monotonic() + 60) == 1
    assert (tmp_path / "finished").read_text() == "done\n"
    assert (tmp_path / "terms").read_text() == "term\n"
