"""A project as users leave it after real work: a TeDDy session of many turns with a
failed action, a rejected plan, an INVOKE and its CONCLUDE (made by ``teddy execute``,
not written by hand), and, beside it, symbolic links and special files where plans
could be (added by tests/board/test_rich.py).  The board must show each failure with
its reason and follow no link."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.board.conftest import BIN, make_project
from tests.teddy.test_session_e2e import plan

TURNS = [
    # (plan title, agent, actions)
    (
        "Write the config",
        "Developer",
        "### `CREATE`\n- **File Path:** [config.txt](/config.txt)\n```\nport = 80\n```\n\n"
        "### `EXECUTE`\n- **Description:** Check the port is free.\n```shell\n"
        "echo 'port 80 is taken' >&2; exit 3\n```",
    ),
    (
        "Write the config again",
        "Developer",
        "### `CREATE`\n- **File Path:** [config.txt](/config.txt)\n```\nport = 8080\n```",
    ),
    (
        "Ask the debugger",
        "Developer",
        "### `INVOKE`\n- **Agent:** Debugger\n\nFind why port 80 is taken.",
    ),
    (
        "Found it",
        "Debugger",
        "### `CONCLUDE`\n- **Handoff Resources:**\n  - [config.txt](/config.txt)\n\n"
        "A web server of the system holds port 80.",
    ),
    (
        "Use port 8080",
        "Developer",
        "### `EDIT`\n- **File Path:** [config.txt](/config.txt)\n\n#### `FIND:`\n```\nport = 80\n```\n"
        "#### `REPLACE:`\n```\nport = 8080\n```",
    ),
    ("Done", "Developer", "### `CONCLUDE`\nThe server listens on port 8080."),
]


def make_rich_project(root: Path) -> Path:
    """:func:`make_project`, plus a session ``work`` of the turns above, each run with
    ``teddy execute -y`` (links and special files are added by the tests: a copy of
    the tree would not keep them)."""
    make_project(root)
    env = {**os.environ, "TEDDY_SESSION": "work"}
    new = subprocess.run(
        [BIN / "teddy", "new", "work"], cwd=root, capture_output=True, text=True, env=env
    )
    assert new.returncode == 0, new.stderr
    session = Path(new.stdout.strip())
    for title, agent, actions in TURNS:
        turn = sorted(p for p in session.iterdir() if p.name.isdigit())[-1]
        (turn / "plan.md").write_text(
            plan(actions, title=title).replace(
                "- **Status:** Green 🟢", f"- **Status:** Green 🟢\n- **Agent:** {agent}"
            )
        )
        subprocess.run(
            [BIN / "teddy", "execute", "-y"], cwd=root, capture_output=True, text=True, env=env
        )
    return root
