"""Run one EXECUTE command and leave no process of it behind (Linux).

:mod:`plankit.teddy.run.shell` starts this file as a script, in a session of its own::

    python -I -S reaper.py STATUS_FD LC_CTYPE SHELL -c COMMAND

It makes itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``): a process the
command starts stays its descendant even when its parent exits (``cmd &`` after the
shell ends, a double fork, ``setsid``, ``nohup``), becoming its child instead of
init's.  It runs the shell in a new session and, once the shell has exited, stops
every process still running: SIGTERM, then SIGKILL after a grace period, one
generation at a time (only its own children are signalled, and those cannot be
reaped by anyone else, so a process id is never reused under its hand).
SIGTERM, SIGINT or SIGHUP sent to it stop the shell the same way, and so does the
death of its parent (``PR_SET_PDEATHSIG``): a teddy killed with SIGKILL leaves no
command running.

On ``STATUS_FD`` it writes ``pid N`` once the shell is started and
``exit CODE stopped COUNT`` at the end (``CODE`` negative for a signal, like
:attr:`subprocess.Popen.returncode`; ``COUNT`` the processes still running when the
shell ended).  ``LC_CTYPE`` is the variable as the caller meant it (``-`` unset,
``=VALUE`` set): Python may have changed it at start-up (PEP 538), and the command
must see the caller's environment, not this interpreter's.

Standard library only: it runs with ``-I -S``, outside any virtual environment.
"""

from __future__ import annotations

import os
import signal
import sys
import time

GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL."""
GIVE_UP = 10.0
"""Seconds of SIGKILL after which a process that still does not end is left alone."""
PR_SET_CHILD_SUBREAPER = 36
PR_SET_PDEATHSIG = 1
_STOPS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants; whether it worked."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def follow_parent() -> None:
    """Get SIGTERM when the parent (teddy) dies, even by SIGKILL, so that the command is
    stopped with it instead of running on unsupervised."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):
        return


def children() -> list[int]:
    """The process ids of this process's children (zombies included)."""
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children", "rb") as f:
            return [int(pid) for pid in f.read().split()]
    except OSError:
        pass
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # it ended while we looked
            continue
        # pid (comm) state ppid …; comm may hold spaces and parentheses
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == me:
            found.append(int(name))
    return found


def reap() -> None:
    """Collect every child that has ended."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def signal_quietly(pid: int, sig: int, *, group: bool = False) -> None:
    """Send ``sig`` to ``pid`` (its process group when ``group``), if it is still there."""
    try:
        if group:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def stop_leftovers(term_until: float) -> int:
    """Stop every process still running below this one; how many there were.

    Each round signals this process's children (SIGTERM until ``term_until``, SIGKILL
    after); the children of a stopped one then become children of this process, and
    the next round signals them.
    """
    signalled: set[int] = set()
    killing_since: float | None = None
    while True:
        reap()
        kids = children()
        if not kids:
            return len(signalled)
        now = time.monotonic()
        if now < term_until:
            for pid in kids:
                if pid not in signalled:
                    signal_quietly(pid, signal.SIGTERM)
        else:
            killing_since = killing_since or now
            if now - killing_since > GIVE_UP:
                return len(signalled)  # unkillable (stuck in the kernel): left alone
            for pid in kids:
                signal_quietly(pid, signal.SIGKILL)
        signalled.update(kids)
        # wake at the next child's end, or soon for the orphans it leaves behind
        signal.sigtimedwait([signal.SIGCHLD], 0.02)


def main(argv: list[str]) -> int:
    """Run the command of ``argv`` (see the module documentation)."""
    status = int(argv[1])
    lc_ctype, command = argv[2], argv[3:]
    if lc_ctype == "-":
        os.environ.pop("LC_CTYPE", None)
    else:
        os.environ["LC_CTYPE"] = lc_ctype.removeprefix("=")
    parent = os.getppid()
    has_reaper = become_subreaper()
    blocked = {signal.SIGCHLD, *_STOPS}
    signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    follow_parent()
    if os.getppid() != parent:  # teddy died before we asked to follow it
        return 0
    shell = os.fork()
    if shell == 0:  # the command: default signals, its own session, the caller's env
        try:
            for sig in _STOPS:
                signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, set())
            os.close(status)
            os.setsid()
            os.execve(command[0], command, os.environ)
        except OSError as exc:
            os.write(2, f"cannot run {command[0]}: {exc.strerror}\n".encode())
        finally:
            os._exit(127)
    stop_at: list[float] = []

    def kill_all(sig: int) -> None:
        signal_quietly(shell, sig, group=True)
        signal_quietly(shell, sig)
        for pid in children():
            signal_quietly(pid, sig)

    def on_stop(signum: int, frame: object) -> None:
        if not stop_at:
            stop_at.append(time.monotonic())
            kill_all(signal.SIGTERM)
            signal.setitimer(signal.ITIMER_REAL, GRACE)

    def on_alarm(signum: int, frame: object) -> None:
        kill_all(signal.SIGKILL)

    for sig in _STOPS:
        signal.signal(sig, on_stop)
    signal.signal(signal.SIGALRM, on_alarm)
    os.write(status, f"pid {shell}\n".encode())
    signal.pthread_sigmask(signal.SIG_UNBLOCK, set(_STOPS))  # SIGCHLD stays blocked
    while True:  # reap orphans as they end, until the shell itself does
        pid, wait_status = os.waitpid(-1, 0)
        if pid == shell:
            code = os.waitstatus_to_exitcode(wait_status)
            break
    term_until = (stop_at[0] if stop_at else time.monotonic()) + GRACE
    stopped = stop_leftovers(term_until)
    if not has_reaper:  # orphans went to init: stop the command's process group at least
        signal_quietly(shell, signal.SIGTERM, group=True)
    signal.setitimer(signal.ITIMER_REAL, 0)
    os.write(status, f"exit {code} stopped {0 if stop_at else stopped}\n".encode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
