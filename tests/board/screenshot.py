"""The README's picture of the board: a realistic project, the board over it, Chromium.

    .venv/bin/python -m tests.board.screenshot docs/board.png

The project (in a temporary directory) holds the demo's TeDDy session with both turns
executed, a release checklist part done with a blocked step and one for review, an
agentflow plan of eight tasks with their states, and a ``plankit acp run --board``
transcript of TeDDy executing a plan.  The picture shows the list and the agentflow
plan's dependency graph; the header names the project ``~/src/shop`` rather than its
temporary directory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.board.conftest import BIN, ROOT, Board
from tests.waiting import wait_until

CHECKLIST = """# Plan: Release 2.0

Goal: ship version 2.0 with the new greeting options

### Phase 1: Prepare
- [x] 1.1 Freeze the feature list ✅ 2026-03-02
- [x] 1.2 Update the changelog ✅ 2026-03-03
- [x] 1.3 Bump the version in pyproject.toml ✅ 2026-03-03

### Phase 2: Verify
- [x] 2.1 Run the test suite on every supported Python ✅ 2026-03-04
- [/] 2.2 Try the wheel in a fresh virtual environment
- [!] 2.3 Check the README example still works — is the new keyword documented?
- [>] 2.4 Sign the release artefacts — waiting for the new signing key

### Phase 3: Publish
- [ ] 3.1 Tag the release
- [ ] 3.2 Upload to the package index
- [ ] 3.3 Announce it
"""

TASKS = {  # id: (depends_on, agent, state)
    "schema": ([], "claude-code", "done"),
    "api-types": (["schema"], None, "done"),
    "service": (["schema"], "claude-code", "done"),
    "handlers": (["service", "api-types"], "codex", "claimed"),
    "web-client": (["api-types"], "codex", "claimed"),
    "login-page": (["web-client"], None, "pending"),
    "e2e-tests": (["handlers", "login-page"], None, "pending"),
    "docs": (["handlers"], None, "pending"),
}


def make_project(root: Path) -> Path:
    env = {**os.environ, "TEDDY_SESSION": ""}

    def run(*command: str | Path) -> str:
        done = subprocess.run(command, cwd=root, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(map(str, command))} failed: {done.stderr}")
        return done.stdout

    shutil.copytree(ROOT / "examples" / "demo" / "project", root)
    session = Path(run(BIN / "teddy", "new", "greetings").strip())
    for turn in ("01", "02"):
        shutil.copy(ROOT / "examples" / "demo" / f"turn-{turn}.md", session / turn / "plan.md")
        run(BIN / "teddy", "execute", "-y")
    (root / "PLAN.md").write_text(CHECKLIST, encoding="utf-8")
    flow = root / "plans" / "accounts"
    (flow / "tasks").mkdir(parents=True)
    (flow / "plan.md").write_text(
        '---\ntitle: "User accounts: sign-up and login"\n---\n\n'
        "Accounts in the service, the API and the web client.\n",
        encoding="utf-8",
    )
    for n, (task, (deps, agent, _)) in enumerate(TASKS.items(), 1):
        meta = f"id: {task}\ndepends_on: [{', '.join(deps)}]\n"
        meta += f"agent: {agent}\n" if agent else ""
        body = f"Do the {task.replace('-', ' ')} part and test it.\n"
        (flow / "tasks" / f"{n:02d}-{task}.md").write_text(f"---\n{meta}---\n\n{body}")
    states = {task: state for task, (_, _, state) in TASKS.items()}
    (flow / "state.json").write_text(json.dumps(states, indent=1), encoding="utf-8")
    shutil.copytree(ROOT / "examples" / "agentflow" / "login-page", root / "plans" / "login-page")
    (root / "fix.md").write_text(
        (ROOT / "examples" / "demo" / "turn-01.md").read_text(encoding="utf-8")
    )
    run(BIN / "plankit", "acp", "run", "--board", "--approve-all", "--", BIN / "teddy", "acp",
        "/execute fix.md")  # fmt: skip
    (root / "fix.md").unlink()
    return root


def take(out: Path) -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="board-shot-") as tmp:
        root = make_project(Path(tmp) / "shop")
        board = Board(root)
        try:
            wait_until(lambda: board.get("api/plans")[0] == 200, "the board to answer")
            with sync_playwright() as playwright:
                context = playwright.chromium.launch_persistent_context(
                    str(Path(tmp) / "profile"),
                    executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                          "--disable-component-update", "--disable-sync", "--no-first-run"],
                    headless=True,
                    viewport={"width": 1440, "height": 800},
                )  # fmt: skip
                page = context.new_page()
                page.goto(board.url)
                page.wait_for_selector("body[data-live=on]", timeout=60_000)
                page.locator('.card[data-id="agentflow:plans/accounts"]').click()
                page.wait_for_selector("#detail svg.graph g[data-task]", timeout=60_000)
                page.locator('#detail li[data-task="handlers"] summary').click()
                page.evaluate("document.getElementById('root').textContent = '~/src/shop'")
                out.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(out))
                context.close()
        finally:
            board.stop()


if __name__ == "__main__":
    take(Path(sys.argv[1] if len(sys.argv) > 1 else "build/screenshots/board.png"))
