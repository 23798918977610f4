"""kill -9 of ``teddy execute -y`` at random points: no torn file, no stray temporary
file, no stuck session, and a report that tells the truth about what ran.

Each round copies a prepared project, starts ``teddy execute -y`` on a plan of 30
actions (CREATE, EDIT and EXECUTE of ten files; a file's CREATE and the previous
file's EDIT run as one group that shares a flush), kills it with SIGKILL after a random
delay between zero and a little more than a whole run, then lets the next command
(``teddy context``, or the library's ``recover_session``) finish the turn.  Whatever the
kill point, the files, the report and the session must agree.  The number of rounds is
``PLANKIT_KILL_ROUNDS`` (default 100).
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from plankit.teddy.run.recovery import recover_session
from plankit.teddy.session.layout import find_session
from tests.teddy.test_session_e2e import plan
from tests.terminal import as_foreground_job
from tests.waiting import wait_until

TEDDY = str(Path(sys.executable).parent / "teddy")
FILES = 10
ROUNDS = int(os.environ.get("PLANKIT_KILL_ROUNDS", "100"))


def created(i: int) -> str:
    return "".join(f"line {n} of f{i}\n" for n in range(1, 40))


def edited(i: int) -> str:
    return created(i).replace(f"line 1 of f{i}\n", f"edited {i}\n")


def _order() -> list[tuple[str, int]]:
    """The plan's actions as (kind, file number): each file's CREATE comes right before
    the EDIT of the file before it, so that the two run as one group sharing a flush
    (plankit.teddy.run.batch), and the kills land inside groups too."""
    order = [("create", 1)]
    for i in range(1, FILES + 1):
        if i < FILES:
            order.append(("create", i + 1))
        order += [("edit", i), ("execute", i)]
    return order


ORDER = _order()
KINDS = ("create", "edit", "execute")


def the_plan() -> str:
    actions = []
    for kind, i in ORDER:
        if kind == "create":
            actions.append(
                f"### `CREATE`\n- **File Path:** [f{i}.txt](/f{i}.txt)\n```text\n{created(i)}```"
            )
        elif kind == "edit":
            actions.append(
                f"### `EDIT`\n- **File Path:** [f{i}.txt](/f{i}.txt)\n"
                f"#### `FIND:`\n```text\nline 1 of f{i}\n```\n"
                f"#### `REPLACE:`\n```text\nedited {i}\n```"
            )
        else:
            actions.append(f"### `EXECUTE`\n```shell\nprintf '%s\\n' {i} >> log.txt\n```")
    return plan("\n\n".join(actions))


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("template") / "proj"
    root.mkdir()
    out = subprocess.run(
        [TEDDY, "new", "crash"], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    (Path(out.strip()) / "01" / "plan.md").write_text(the_plan(), encoding="utf-8")
    return root


def _states(report: str) -> list[str]:
    """Per action, in order: success, failure, cut (running when killed), not-run."""
    out = []
    for section in re.split(r"\n(?=### \d+\. `)", report.split("## 4. Action Log", 1)[1])[1:]:
        if "teddy stopped while this action ran" in section:
            out.append("cut")
        elif "Execution:** Success" in section:
            out.append("success")
        elif "Execution:** Failure" in section:
            out.append("failure")
        else:
            assert "execution was interrupted" in section, section
            out.append("not-run")
    return out


def _check_files(root: Path, states: list[str] | None) -> None:
    log = (root / "log.txt").read_text() if (root / "log.txt").exists() else ""
    logged = [int(x) for x in log.split()]
    assert logged == sorted(set(logged)), log  # never twice, in order
    for i in range(1, FILES + 1):
        path = root / f"f{i}.txt"
        text = path.read_text() if path.exists() else None
        assert text in (None, created(i), edited(i)), f"torn f{i}.txt: {text!r}"
        if states is None:  # the plan never began: nothing may have happened
            assert text is None and not logged
            continue
        create, edit, execute = (states[ORDER.index((kind, i))] for kind in KINDS)
        if create == "success":
            assert text is not None
        if create == "not-run":
            assert text is None
        if edit == "success":
            assert text == edited(i)
        if edit == "not-run":
            assert text != edited(i)
        if execute == "success":
            assert i in logged
        if execute == "not-run":
            assert i not in logged
    strays = [p for p in root.rglob("*.tmp") if ".teddy" not in p.parts]
    assert strays == [], strays


def _start(root: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [TEDDY, "execute", "-y"],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=as_foreground_job,  # Ctrl-C acts however the suite was started
    )


def _logged(root: Path) -> int:
    try:
        return len((root / "log.txt").read_text().split())
    except FileNotFoundError:
        return 0


def _round(
    template: Path,
    where: Path,
    delay: float,
    via_cli: bool,
    interrupt_after: int | None = None,
) -> str:
    """One round; with ``interrupt_after`` a Ctrl-C instead of a kill, once that many
    EXECUTEs have run (0: at once), and nothing run after it but the checks."""
    root = where / "proj"
    shutil.copytree(template, root, symlinks=True)
    proc = _start(root)
    interrupt = interrupt_after is not None
    if interrupt_after is not None:  # Ctrl-C: teddy must write the report itself
        wait_until(
            lambda: _logged(root) >= interrupt_after or proc.poll() is not None,
            f"{interrupt_after} commands to run",
            seconds=300,
        )
        os.killpg(proc.pid, signal.SIGINT)
        code = proc.wait(timeout=300)
        assert code in (0, 130, -signal.SIGINT), f"teddy ended with {code} on Ctrl-C"
    else:
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the command and anything it started
            proc.wait(timeout=60)
    session = find_session(root, None)
    if interrupt:
        pass
    elif via_cli:
        subprocess.run(
            [TEDDY, "context"], cwd=root, capture_output=True, text=True, timeout=120, check=True
        )
    else:
        recover_session(session)
    first = session.turn("01")
    latest = session.latest()
    if not first.report_path.exists():
        # killed before the plan began: the turn is untouched and still runs whole
        assert latest.name == "01"
        _check_files(root, None)
        return "before"
    assert latest.name == "02", "the session must move on to a fresh turn"
    assert not latest.report_path.exists()
    journal = (first.path / "journal.jsonl").read_text()
    assert journal.rstrip().endswith('"}') and '"event": "closed"' in journal
    report = first.report_path.read_text()
    states = _states(report)
    assert len(states) == 3 * FILES
    _check_files(root, states)
    context = (latest.path / "turn.context").read_text()
    assert ".teddy/" in context and "report.md" in context  # the report is in the next turn
    if "cut" in states or "not-run" in states:
        assert "execution was interrupted" in report
        return "mid"
    return "after"


def test_kill_at_random_points(template: Path, tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    started = time.monotonic()
    whole = _round(template, tmp_path / "whole", delay=600, via_cli=False)
    assert whole == "after"
    duration = time.monotonic() - started  # a whole run, to spread the kill points over
    rng = random.Random(20261124)
    delays = [rng.uniform(0.0, duration * 1.2) for _ in range(ROUNDS)]

    def one(n: int) -> str:
        try:
            return _round(template, tmp_path / f"r{n}", delays[n], via_cli=n % 10 == 0)
        finally:  # a killed command may still be writing: leave what cannot go yet
            shutil.rmtree(tmp_path / f"r{n}", ignore_errors=True)

    with ThreadPoolExecutor(max_workers=3) as pool:  # rounds are independent projects
        outcomes = list(pool.map(one, range(ROUNDS)))
    seen = {kind: outcomes.count(kind) for kind in ("before", "mid", "after")}
    print(f"kill rounds: {ROUNDS}, outcomes: {seen}")
    assert sum(seen.values()) == ROUNDS
    assert seen["mid"] > 0  # the kills did land inside turns


def test_ctrl_c_at_random_points_always_writes_the_report(template: Path, tmp_path: Path) -> None:
    """Ctrl-C after a random number of the plan's commands (none: at once): teddy
    stops, and the report it writes itself (no recovery runs) agrees with the files."""
    rng = random.Random(44)
    points = [0, *(rng.randint(1, FILES - 3) for _ in range(11))]
    outcomes = [
        _round(template, tmp_path / f"i{n}", 0.0, False, interrupt_after=point)
        for n, point in enumerate(points)
    ]
    print(f"Ctrl-C points: {points}, outcomes: {outcomes}")
    # A Ctrl-C that did nothing would let every turn run to its end.  Points before
    # the last commands leave several actions to cut, so nearly every round ends mid-
    # turn; on a loaded machine a turn may outrun the poll that triggers its Ctrl-C,
    # so one round ended by the Ctrl-C is what is required.
    assert "mid" in outcomes, outcomes


def test_a_turn_killed_before_it_began_runs_again_whole(template: Path, tmp_path: Path) -> None:
    root = tmp_path / "proj"
    shutil.copytree(template, root, symlinks=True)
    proc = subprocess.Popen([TEDDY, "execute", "-y"], cwd=root, start_new_session=True)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    subprocess.run([TEDDY, "context"], cwd=root, capture_output=True, timeout=120, check=True)
    done = subprocess.run(
        [TEDDY, "execute", "-y"], cwd=root, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    _check_files(root, ["success"] * (3 * FILES))
    assert (root / "log.txt").read_text().split() == [str(i) for i in range(1, FILES + 1)]


def test_a_killed_teddy_leaves_no_command_running(template: Path, tmp_path: Path) -> None:
    """kill -9 of teddy alone (not its process group): the EXECUTE it was running, and
    what that command started in the background, stop with it."""
    root = tmp_path / "proj"
    shutil.copytree(template, root, symlinks=True)
    [session] = [p for p in (root / ".teddy").iterdir() if p.is_dir()]
    (session / "01" / "plan.md").write_text(
        plan("### `EXECUTE`\n```shell\nsleep 600 & echo $! > bg; echo $$ > sh; wait\n```"),
        encoding="utf-8",
    )
    proc = subprocess.Popen(
        [TEDDY, "execute", "-y"], cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wait_until(lambda: (root / "bg").is_file() and (root / "sh").is_file(), "the command")
    pids = [int((root / name).read_text()) for name in ("sh", "bg")]
    started = {pid: _stat(pid) for pid in pids}
    proc.kill()
    proc.wait(timeout=60)

    def running() -> list[str]:
        """The ``/proc/PID/stat`` of each process of the command still running: not
        ended, not a zombie, and not a new process that took the id of one."""
        left = []
        for pid in pids:
            now = _stat(pid)
            if now and now.split()[1] != "Z" and _start_time(now) == _start_time(started[pid]):
                left.append(now)
        return left

    try:
        wait_until(lambda: not running(), "the killed teddy's command to stop", seconds=60)
    except AssertionError as exc:
        raise AssertionError(f"{exc}: still running: {running()}") from None


def _stat(pid: int) -> str:
    """``/proc/PID/stat`` after the command's name (which may hold blanks), or ''."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return f"{pid} {text[text.rfind(')') + 2 :]}"


def _start_time(stat: str) -> str:
    """When the process of a :func:`_stat` line started (field 22 of the whole line)."""
    return stat.split()[20] if stat else ""
