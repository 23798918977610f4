"""A project holding every kind of plan, and a running board over it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from plankit.agentflow.control import ControlPlane
from tests.terminal import as_foreground_job
from tests.waiting import DEADLINE, wait_until

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

CHECKLIST = """# Plan: Ship the release

Goal: ship version 2

### Phase 1: Build
- [x] 1.1 Write the code ✅ 2026-11-20
- [/] 1.2 Test it
- [ ] 1.3 Fix what the tests find

### Phase 2: Release
- [ ] 2.1 Tag the release
"""

ACP_TRANSCRIPT = (
    '{"from": "agent", "message": {"jsonrpc": "2.0", "method": "session/update", "params": '
    '{"sessionId": "s", "update": {"sessionUpdate": "plan", "entries": ['
    '{"content": "Read the code", "status": "completed", "priority": "high"}, '
    '{"content": "Change it", "status": "in_progress", "priority": "medium"}], '
    '"_meta": {"plankit": {"title": "An ACP run"}}}}}}\n'
)


def make_project(root: Path) -> Path:
    """A TeDDy session (one executed turn, one awaiting), a PLAN.md, an agentflow plan
    directory and an ACP transcript."""
    root.mkdir(parents=True)
    env = {**os.environ, "TEDDY_SESSION": ""}
    out = subprocess.run(
        [BIN / "teddy", "new", "board"], cwd=root, capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    session = Path(out.stdout.strip())
    (session / "01" / "plan.md").write_text((ROOT / "examples" / "demo" / "turn-01.md").read_text())
    (root / "src").mkdir()
    (root / "src" / "greetings.py").write_text("def greet():\n    return 'hi'\n")
    (root / "README.md").write_text("# Demo\n")
    done = subprocess.run(
        [BIN / "teddy", "execute", "-y"], cwd=root, capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    (root / "PLAN.md").write_text(CHECKLIST)
    shutil.copytree(ROOT / "examples" / "agentflow" / "auth", root / "plans" / "auth")
    (root / ".plankit" / "acp").mkdir(parents=True)
    (root / ".plankit" / "acp" / "run-1.jsonl").write_text(ACP_TRANSCRIPT)
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


class Board:
    """``plankit board`` running in a subprocess."""

    def __init__(self, root: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [BIN / "plankit", "board", str(root), "--port", "0", "--no-open", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=as_foreground_job,  # Ctrl-C reaches it however the suite started
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        assert self.url.startswith("http://"), self.proc.stderr.read() if self.proc.stderr else ""

    def get(self, path: str, **headers: str) -> tuple[int, bytes]:
        import urllib.error
        import urllib.request

        base = self.url.split("?")[0]
        request = urllib.request.Request(base + path, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=DEADLINE) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()
        except urllib.error.URLError:
            return 0, b""  # not listening (yet)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=DEADLINE)


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[ControlPlane]:
    """An agentflow control plane (SQLite) of the test's own, for the board to read."""
    made = ControlPlane(tmp_path / "agentflow")
    yield made
    made.close()


@pytest.fixture
def board(project: Path) -> Iterator[Board]:
    running = Board(project)
    wait_until(lambda: running.get("api/plans")[0] == 200, "the board to answer")
    yield running
    running.stop()
