"""What a checkpoint costs: ``teddy execute -y`` of 200 EDITs with it ÷ without it.

The project is a git repository of 2,000 committed files (src/pkgNN/modNNN.py); the plan
edits 200 of them, one FIND/REPLACE pair each, in session mode.  *With*: the default,
a commit on ``refs/teddy/<session>/<turn>`` written by one ``git fast-import`` before the
first action, and the state after the turn recorded once it ends.  *Without*: the same
project with ``execute.checkpoint: false`` in ``.teddy/config.yaml``.  Both run as whole
processes on a fresh copy of the project each round, in alternating order (target
≤ 1.2: a checkpoint adds at most 20 %).

The same is measured without git (no ``.git`` in the copy), where the checkpoint is a
copy of the files end to end in one file of the turn directory, written atomically with
fsync (reported, same target).  ``--rounds N`` sets the rounds.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench import Result, log, report, require, rounds_from_argv
from plans import plan_of_actions

FILES = 2000
EDITS = 200
GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _rel(i: int) -> str:
    return f"src/pkg{i // 100:02d}/mod{i:04d}.py"


def _plan() -> str:
    actions = [
        f"### `EDIT`\n- **File Path:** [{_rel(i)}](/{_rel(i)})\n\n`FIND:`\n```python\n"
        f"VALUE = {i}\n```\n`REPLACE:`\n```python\nVALUE = {i + 1}\n```"
        for i in range(0, FILES, FILES // EDITS)
    ]
    body = "\n\n".join(actions)
    return plan_of_actions(f"Edit {EDITS} files", body)


def _git(root: Path, *args: str) -> None:
    out = subprocess.run(["git", *args], cwd=root, env=GIT_ENV, capture_output=True, text=True)
    require(out.returncode == 0, f"git {args[0]}: {out.stderr}")


def _template(base: Path, teddy: str, *, with_git: bool) -> Path:
    """The project: 2,000 files (committed when ``with_git``), a session whose turn 01
    holds the plan, and the 200 edited files in its context."""
    root = base / ("git" if with_git else "plain")
    for i in range(FILES):
        path = root / _rel(i)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'"""Module {i}."""\n\nVALUE = {i}\n', encoding="utf-8")
    if with_git:
        _git(root, "init", "-q")
        _git(root, "config", "user.name", "Bench")
        _git(root, "config", "user.email", "bench@example.invalid")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", "2,000 files")
    out = subprocess.run([teddy, "new", "bench"], cwd=root, capture_output=True, text=True)
    require(out.returncode == 0, out.stderr)
    turn = Path(out.stdout.strip()) / "01"
    (turn / "plan.md").write_text(_plan(), encoding="utf-8")
    context = "".join(_rel(i) + "\n" for i in range(0, FILES, FILES // EDITS))
    (turn / "turn.context").write_text(context, encoding="utf-8")
    return root


def _copy(template: Path, where: Path, *, checkpoint: bool) -> Path:
    shutil.copytree(template, where, symlinks=True)
    if not checkpoint:
        (where / ".teddy" / "config.yaml").write_text("execute:\n  checkpoint: false\n")
    return where


def _run(teddy: str, root: Path, *, checkpoint: bool) -> float:
    start = time.perf_counter()
    out = subprocess.run([teddy, "execute", "-y"], cwd=root, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    require(out.returncode == 0, f"teddy execute failed: {out.stderr[-800:]}")
    last = root / _rel(FILES - FILES // EDITS)
    require(f"VALUE = {FILES - FILES // EDITS + 1}\n" in last.read_text(), "the edits ran")
    manifests = list((root / ".teddy").glob("*/01/checkpoint.json"))
    require(bool(manifests) == checkpoint, "a checkpoint exactly when asked for")
    return elapsed


def _measure(teddy: str, template: Path, rounds: int, label: str) -> Result:
    times: dict[bool, list[float]] = {True: [], False: []}
    log(f"checkpoint, {EDITS} EDITs in {FILES} files ({label}): {rounds} rounds …")
    for r in range(rounds + 1):  # the first round warms caches and is not counted
        with tempfile.TemporaryDirectory(prefix="plankit-ckpt-") as tmp:
            order = [True, False] if r % 2 else [False, True]
            for checkpoint in order:
                where = _copy(template, Path(tmp) / str(checkpoint), checkpoint=checkpoint)
                elapsed = _run(teddy, where, checkpoint=checkpoint)
                if r:
                    times[checkpoint].append(elapsed)
    with_, without = statistics.median(times[True]), statistics.median(times[False])
    return Result(
        f"execute -y, {EDITS} EDITs in {FILES} files, checkpoint ÷ none ({label})",
        with_ / without,
        1.2,
        f"{with_ * 1e3:.0f} ms ÷ {without * 1e3:.0f} ms",
    )


def measure(rounds: int = 7) -> list[Result]:
    """The ratio in a git repository, then without git."""
    teddy = str(Path(sys.executable).parent / "teddy")
    require(Path(teddy).exists(), "no teddy script next to this Python; pip install -e .")
    require(shutil.which("git") is not None, "git is not installed")
    with tempfile.TemporaryDirectory(prefix="plankit-ckpt-template-") as tmp:
        results = []
        for with_git, label in ((True, "git"), (False, "copies, no git")):
            template = _template(Path(tmp), teddy, with_git=with_git)
            results.append(_measure(teddy, template, rounds, label))
        return results


if __name__ == "__main__":
    sys.exit(report(measure(rounds_from_argv(7))))
