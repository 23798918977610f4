"""The README's demo session, and the tier-1 console approval (also in a real pty)."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from plankit.teddy.format.parse import parse_plan
from plankit.teddy.review.console import PROMPT, ConsoleApprover, ConsoleChat, summary
from plankit.teddy.run.approval import Decision
from tests.waiting import DEADLINE

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PLAN = parse_plan((ROOT / "examples" / "demo" / "turn-02.md").read_text(encoding="utf-8"))


def test_demo_script_runs_a_two_turn_session(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "DEMO_DIR": str(tmp_path / "demo")}
    result = subprocess.run(
        ["bash", str(ROOT / "examples" / "demo" / "run.sh")],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr.count("Completed 🟢") == 2
    assert '+def greet(name, word="Hello"):' in result.stdout
    assert "Ran 3 tests" in result.stdout and "\nOK\n" in result.stdout
    assert (tmp_path / "demo" / "src" / "farewells.py").is_file()
    assert not (ROOT / "examples" / "demo" / "project" / "src" / "farewells.py").exists()


def test_summary_counts_memos_and_actions() -> None:
    text = summary(PLAN)
    assert (
        text.splitlines()[0]
        == '▶ Reviewing Plan: "Add a greeting word to greet and a farewell helper"'
    )
    assert (
        "  [+] ADD:    Library functions keep their old behaviour as the default. # Agreed for greet's new argument."
        in text
    )
    assert "  - CREATE:  2 files" in text
    assert "  - EDIT:    1 file" in text
    assert "  - EXECUTE: 1 command" in text


@pytest.mark.parametrize(
    ("answers", "decision"),
    [("a\n", Decision.APPROVE), ("s\n", Decision.SKIP), ("q\n", Decision.QUIT), ("", Decision.QUIT),
     ("x\nm\nA\n", Decision.APPROVE)],
)  # fmt: skip
def test_console_answers(answers: str, decision: Decision) -> None:
    out = io.StringIO()
    approver = ConsoleApprover(stdin=io.StringIO(answers), stdout=out, require_tty=False)
    assert approver.review(PLAN, None) is decision
    shown = out.getvalue()
    assert PROMPT in shown
    if answers.startswith("x"):
        assert "Please answer a, r, m, s or q." in shown
        assert "(m)odify needs the interactive checklist" in shown


def test_review_shows_the_plan_in_the_configured_previewer(tmp_path: Path) -> None:
    seen = tmp_path / "seen.txt"
    previewer = tmp_path / "preview.sh"
    previewer.write_text(f'#!/bin/sh\ncp "$1" {seen}\n')
    previewer.chmod(0o755)
    plan_file = ROOT / "examples" / "demo" / "turn-02.md"
    approver = ConsoleApprover(
        str(previewer), stdin=io.StringIO("r\nq\n"), stdout=io.StringIO(), require_tty=False
    )
    assert approver.review(PLAN, plan_file) is Decision.QUIT
    assert seen.read_text() == plan_file.read_text()


def test_chat_reply_ends_at_an_empty_line() -> None:
    chat = ConsoleChat(stdin=io.StringIO("first line\nsecond\n\nignored\n"), stdout=io.StringIO())
    assert chat.reply("Which option?") == "first line\nsecond"


def _read_until(fd: int, needle: bytes | None, seconds: float = DEADLINE) -> bytes:
    """Read the terminal until ``needle`` shows, or with None until it is closed."""
    seen = b""
    deadline = time.monotonic() + seconds
    while needle is None or needle not in seen:
        if time.monotonic() > deadline:
            raise AssertionError(f"never saw {needle!r}; got {seen!r}")
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen += os.read(fd, 4096)
            except OSError:  # closed: every writer is gone and all was read
                break
    return seen


def test_console_tier_in_a_real_terminal(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    subprocess.run([BIN / "teddy", "new", "tty"], cwd=project, check=True, capture_output=True)
    turn = next((project / ".teddy").glob("*-tty")) / "01"
    (turn / "plan.md").write_text(
        (ROOT / "examples" / "demo" / "turn-01.md")
        .read_text()
        .replace("[src/greetings.py](/src/greetings.py)", "[notes.md](/notes.md)")
        .replace("[README.md](/README.md)", "[notes.md](/notes.md)")
    )
    (project / "notes.md").write_text("notes\n")
    main, child = pty.openpty()
    proc = subprocess.Popen(
        [BIN / "teddy", "execute"], cwd=project, stdin=child, stdout=child, stderr=child
    )
    os.close(child)
    try:
        screen = _read_until(main, b"(q)uit \xe2\x80\xba")
        assert b'Reviewing Plan: "Read the greetings module before changing it"' in screen
        assert b"  - READ: 2 resources" in screen
        os.write(main, b"a\n")
        _read_until(main, None)  # drained as it runs, so it never blocks on a full terminal
        assert proc.wait(timeout=DEADLINE) == 0
    finally:
        os.close(main)
    assert "Completed 🟢" in (turn / "report.md").read_text()
