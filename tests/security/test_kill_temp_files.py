"""kill -9 while TeDDy writes one of its own files (report.md, input.md, meta.yaml,
message.md, turn.context, memos.yaml): the next command finishes the turn and no
temporary file of that write is left in the session's folders or in .teddy/.

Each case runs the real `teddy` in a process whose ``os.fsync`` stops, for good, once
the temporary file of the chosen write is flushed: the process is killed with SIGKILL
at that point, the temporary file on disk.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from plankit.textio import write_text_atomic
from plankit.write_temps import TEMP_RE
from tests.security.helpers import plan, read, start_session, teddy
from tests.waiting import wait_until

STOP_AT = r"""
import os, sys, time
want, signal_file = sys.argv[1], sys.argv[2]
real_fsync = os.fsync

def fsync(fd):
    real_fsync(fd)
    try:
        name = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return
    if name.startswith("." + want + ".") and name.endswith(".tmp"):
        # the name appears whole or not at all: a test that sees the file may kill at once
        with open(signal_file + ".part", "w") as out:
            out.write(name)
        os.rename(signal_file + ".part", signal_file)
        time.sleep(3600)

os.fsync = fsync
from plankit.teddy.cli import main
sys.argv = ["teddy", *sys.argv[3:]]
main()
"""

MEMO_PLAN = plan(read("notes.txt"), memos="[+] Keep replies short.")


def strays(root: Path) -> list[str]:
    return sorted(
        str(Path(d, n).relative_to(root))
        for d, _, names in os.walk(root / ".teddy")
        for n in names
        if TEMP_RE.match(n)
    )


def kill_while_writing(root: Path, file: str, *args: str, env: dict[str, str]) -> None:
    signal_file = root.parent / "stopped"
    proc = subprocess.Popen(
        [sys.executable, "-c", STOP_AT, file, str(signal_file), *args],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until(lambda: signal_file.exists() or proc.poll() is not None, f"the write of {file}")
        assert signal_file.exists(), proc.stderr.read() if proc.stderr else ""
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert any(Path(s).name == signal_file.read_text() for s in strays(root)), strays(root)


@pytest.mark.parametrize(
    ("file", "command"),
    [
        ("report.md", ["execute", "-y", "--no-replan"]),
        ("meta.yaml", ["execute", "-y", "--no-replan"]),
        ("turn.context", ["execute", "-y", "--no-replan"]),
        ("memos.yaml", ["execute", "-y", "--no-replan"]),
        ("input.md", ["context"]),
        ("message.md", ["plan", "-m", "read the notes"]),
    ],
)
@pytest.mark.parametrize("next_command", ["context", "execute"])
def test_no_temporary_file_is_left_after_kill_9_and_recovery(
    tmp_path: Path, file: str, command: list[str], next_command: str
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "notes.txt").write_text("notes\n")
    turn = start_session(root)
    if command[0] != "plan":
        (turn / "plan.md").write_text(MEMO_PLAN)
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([MEMO_PLAN] * 4))
    env = {**os.environ, "TEDDY_MODEL": "teddy-scripted", "TEDDY_SCRIPTED_RESPONSES": str(answers)}
    kill_while_writing(root, file, *command, env=env)

    if next_command == "context":
        teddy(root, "context")
    else:  # finishes the turn, or executes the plan a `teddy plan` left
        teddy(root, "execute", "-y", "--no-replan", check=None)
    assert strays(root) == []
    if command[0] == "execute":  # the turn was finished: its report is whole
        assert "## 4. Action Log" in (turn / "report.md").read_text()


def test_a_temporary_file_a_running_write_holds_is_not_swept(tmp_path: Path) -> None:
    # a write that is still running (here: stopped in its fsync, alive) keeps its file
    from plankit.write_temps import remove_abandoned_temp_files

    target = tmp_path / "report.md"
    signal_file = tmp_path / "stopped"
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            STOP_AT.replace(
                'from plankit.teddy.cli import main\nsys.argv = ["teddy", *sys.argv[3:]]\nmain()',
                "from plankit.textio import write_text_atomic\n"
                "write_text_atomic(sys.argv[3], 'report')",
            ),
            "report.md",
            str(signal_file),
            str(target),
        ],
        stderr=subprocess.PIPE,
    )
    try:
        wait_until(lambda: signal_file.exists() or writer.poll() is not None, "the write")
        assert signal_file.exists(), writer.stderr.read() if writer.stderr else ""
        assert remove_abandoned_temp_files(tmp_path) == 0
        assert (tmp_path / signal_file.read_text()).exists()
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=60)
    assert remove_abandoned_temp_files(tmp_path) == 1  # its process is gone: a stray
    write_text_atomic(target, "whole\n")
    assert sorted(os.listdir(tmp_path)) == ["report.md", "stopped"]
