"""Section 7's ``(s)kip`` in a real terminal: a Skipped report, then a message is asked
for and the next turn is planned from it."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path

from tests.teddy.test_demo_and_console import BIN, _read_until
from tests.teddy.test_session_e2e import plan
from tests.waiting import DEADLINE


def test_skip_asks_for_a_message_and_plans_the_next_turn(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    subprocess.run([BIN / "teddy", "new", "skip"], cwd=project, check=True, capture_output=True)
    session = next((project / ".teddy").glob("*-skip"))
    create = "### `CREATE`\n- **File Path:** [{0}](/{0})\n```\nx\n```"
    (session / "01" / "plan.md").write_text(plan(create.format("first.txt")))
    answers = tmp_path / "answers"
    answers.mkdir()
    (answers / "01.md").write_text(plan(create.format("second.txt")))
    env = {
        **os.environ,
        "TEDDY_MODEL": "teddy-scripted",
        "TEDDY_SCRIPTED_RESPONSES": str(answers),
        "LLM_USER_PATH": str(tmp_path / "llm"),
    }
    main, child = pty.openpty()
    proc = subprocess.Popen(
        [BIN / "teddy", "execute"], cwd=project, stdin=child, stdout=child, stderr=child, env=env
    )
    os.close(child)
    try:
        _read_until(main, b"(q)uit \xe2\x80\xba")
        os.write(main, b"s\n")
        _read_until(main, b"ending with an empty line")
        os.write(main, b"Make second.txt instead\n\n")
        _read_until(main, None)
        assert proc.wait(timeout=DEADLINE) == 0
    finally:
        os.close(main)
    assert "Skipped" in (session / "01" / "report.md").read_text()
    assert not (project / "first.txt").exists()
    assert (session / "02" / "message.md").read_text() == "Make second.txt instead\n"
    assert "second.txt" in (session / "02" / "plan.md").read_text()
    assert not (session / "02" / "report.md").exists()  # planned, left for review
