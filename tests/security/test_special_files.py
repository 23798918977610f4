"""Every file TeDDy reads may be a FIFO, a device, a huge file or not text: the command
ends with one clear line (or carries on without that file), never waits for ever,
never reads gigabytes, never shows a traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from plankit.teddy.context.urls import cache_path
from tests.security.helpers import TEDDY, plan, read, start_session

Where = Callable[[Path, Path], Path]
PLACES: dict[str, tuple[Where, list[str]]] = {
    "config.yaml": (lambda root, turn: root / ".teddy" / "config.yaml", ["context"]),
    "memos.yaml": (lambda root, turn: root / ".teddy" / "memos.yaml", ["context"]),
    "memos.yaml (execute)": (
        lambda root, turn: root / ".teddy" / "memos.yaml",
        ["execute", "-y", "--no-replan"],
    ),
    "global.context": (lambda root, turn: root / ".teddy" / "global.context", ["context"]),
    "session.context": (lambda root, turn: turn.parent / "session.context", ["context"]),
    "turn.context": (lambda root, turn: turn / "turn.context", ["context"]),
    "plan.md": (lambda root, turn: turn / "plan.md", ["execute", "-y", "--no-replan"]),
    "meta.yaml": (lambda root, turn: turn / "meta.yaml", ["execute", "-y", "--no-replan"]),
    "journal.jsonl": (lambda root, turn: turn / "journal.jsonl", ["context"]),
    "message.md": (lambda root, turn: turn / "message.md", ["plan"]),
    "system_prompt.xml": (lambda root, turn: turn / "system_prompt.xml", ["plan", "-m", "go"]),
    "URL cache": (
        lambda root, turn: cache_path(turn.parent / ".cache" / "urls", URL),
        ["context"],
    ),
    "prompt override": (
        lambda root, turn: root / ".teddy" / "prompts" / "architect.xml",
        ["execute", "-y", "--no-replan"],
    ),
}
URL = "https://docs.example.com/guide"
INVOKE = "### `INVOKE`\n- **Agent:** Architect\n\nPlease design it."


def make(path: Path, kind: str) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        with open(path, "wb") as handle:
            handle.truncate(8 * 1024**3)  # sparse: nothing is written


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "8-gib"])
@pytest.mark.parametrize("place", list(PLACES))
def test_a_hostile_file_ends_in_one_line(tmp_path: Path, place: str, kind: str) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "notes.txt").write_text("notes\n")
    turn = start_session(root)
    the_plan = plan(INVOKE if place == "prompt override" else read("notes.txt"), "[+] Be brief.")
    if PLACES[place][1][0] != "plan":
        (turn / "plan.md").write_text(the_plan)
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([the_plan] * 4))
    where, command = PLACES[place]
    if place == "URL cache":
        (root / ".teddy" / "global.context").write_text(URL + "\n")
    make(where(root, turn), kind)
    env = {**os.environ, "TEDDY_MODEL": "teddy-scripted", "TEDDY_SCRIPTED_RESPONSES": str(answers)}
    result = subprocess.run(
        [TEDDY, *command],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,  # a reader that waits on the FIFO, or reads /dev/zero, never ends
        check=False,
    )
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    assert result.returncode in (0, 1), output
    if result.returncode == 1:
        assert result.stderr.strip(), output
        assert result.stderr.strip().splitlines()[-1].startswith("teddy: "), output
