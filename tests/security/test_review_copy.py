"""``(r)eview`` hands the previewer a read-only copy, never the real plan.md.

An editor that saves (or a previewer that writes to whatever it is given) could
otherwise change plan.md while the plan in memory runs, and the "immutable" plan and
its report would disagree.
"""

from __future__ import annotations

import io
import os
import pty
import select
import stat
import subprocess
import time
from pathlib import Path

from plankit.teddy.format.parse import parse_plan
from plankit.teddy.review.console import ConsoleApprover
from plankit.teddy.run.approval import Decision
from tests.security.helpers import TEDDY, create, plan, start_session, teddy
from tests.waiting import DEADLINE

# Records what it was given (path, mode), then does its worst to it.
HOSTILE_PREVIEWER = """#!/bin/sh
printf '%s\\n' "$1" >> "{log}"
stat -c '%a' "$1" >> "{log}"
chmod u+w "$1" 2>/dev/null
printf '\\n### `EXECUTE`\\n```shell\\ntouch pwned\\n```\\n' >> "$1"
"""


def _previewer(tmp_path: Path) -> tuple[Path, Path]:
    log = tmp_path / "previewer.log"
    script = tmp_path / "preview.sh"
    script.write_text(HOSTILE_PREVIEWER.format(log=log))
    script.chmod(0o755)
    return script, log


def test_the_previewer_gets_a_read_only_copy_outside_the_project(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    plan_file = project / "plan.md"
    text = plan(create("a.txt", "hello"))
    plan_file.write_text(text)
    script, log = _previewer(tmp_path)
    out = io.StringIO()
    approver = ConsoleApprover(
        str(script), stdin=io.StringIO("r\nq\n"), stdout=out, require_tty=False, root=project
    )
    assert approver.review(parse_plan(text), plan_file) is Decision.QUIT

    given, mode = log.read_text().splitlines()
    assert Path(given) != plan_file
    assert not Path(given).resolve().is_relative_to(project.resolve())
    assert mode == "444"
    assert plan_file.read_text() == text  # untouched
    assert not Path(given).exists()  # the copy is gone once the review ends
    assert "read-only copy: changes made there are not used" in out.getvalue()


def test_a_hostile_previewer_changes_nothing_that_runs(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    turn = start_session(project)
    text = plan(create("a.txt", "hello"))
    (turn / "plan.md").write_text(text)
    script, log = _previewer(tmp_path)
    (project / ".teddy" / "config.yaml").write_text(f"preview_command: {script}\n")
    before = os.stat(turn / "plan.md")

    # The console tier needs a terminal: (r)eview, then (a)pprove.
    main, child = pty.openpty()
    proc = subprocess.Popen(
        [TEDDY, "execute"], cwd=project, stdin=child, stdout=child, stderr=child
    )
    os.close(child)
    os.write(main, b"r\na\n")
    seen = _drain(main)
    assert proc.wait(timeout=DEADLINE) == 0, seen.decode(errors="replace")
    os.close(main)

    after = os.stat(turn / "plan.md")
    assert (turn / "plan.md").read_text() == text
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert stat.S_IMODE(after.st_mode) == stat.S_IMODE(before.st_mode)
    assert (project / "a.txt").read_text() == "hello\n"
    assert not (project / "pwned").exists()
    report = (turn / "report.md").read_text()
    assert "EXECUTE" not in report and "touch pwned" not in report
    assert len(log.read_text().splitlines()) == 2  # the previewer did run
    teddy(project, "context")  # the session goes on


def _drain(fd: int) -> bytes:
    """Everything the terminal shows until every writer has closed it."""
    seen = b""
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # closed: teddy is gone and all was read
                return seen
            if not chunk:
                return seen
            seen += chunk
    raise AssertionError(f"teddy never finished; the terminal showed {seen!r}")
