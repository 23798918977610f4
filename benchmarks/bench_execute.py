"""``teddy execute -y`` as a whole process ÷ a bare Python script doing the same writes.

Two plans, each run in session mode on a fresh project every round:

- 200 CREATE actions of small files (target ≤ 2);
- 200 EDIT actions, one per existing file, each with one FIND/REPLACE pair (target ≤ 3).

The baseline is a separate Python process that writes (or rewrites) the same 200 files
atomically with fsync: a temporary file in the same directory, flush, fsync, rename.
teddy does that too, with its journal flushed before each action's effect, plus parsing,
validation, the report and the next turn (docs/security.md, "What reaches the disk").
``--rounds N`` sets the rounds.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench import Result, log, report, require, rounds_from_argv
from plans import plan_of_actions

N = 200

BASELINE = r"""
import os, sys, tempfile
root, mode = sys.argv[1], sys.argv[2]
for i in range(int(sys.argv[3])):
    path = os.path.join(root, "src", f"mod{i:03d}", "values.py")
    if mode == "create":
        os.makedirs(os.path.dirname(path), exist_ok=True)
        text = f"VALUE = {i}\n"
    else:
        with open(path, encoding="utf-8") as f:
            text = f.read().replace(f"VALUE = {i}\n", f"VALUE = {i + 1}\n")
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))
    with os.fdopen(fd, "wb") as f:
        f.write(text.encode()); f.flush(); os.fsync(f.fileno())
    os.replace(tmp, path)
"""


def _plan(mode: str) -> str:
    actions = []
    for i in range(N):
        path = f"src/mod{i:03d}/values.py"
        if mode == "create":
            actions.append(
                f"### `CREATE`\n- **File Path:** [{path}](/{path})\n```python\nVALUE = {i}\n```"
            )
        else:
            actions.append(
                f"### `EDIT`\n- **File Path:** [{path}](/{path})\n\n`FIND:`\n```python\n"
                f"VALUE = {i}\n```\n`REPLACE:`\n```python\nVALUE = {i + 1}\n```"
            )
    body = "\n\n".join(actions)
    return plan_of_actions(f"{mode} {N} files", body)


def _existing(root: Path) -> None:
    for i in range(N):
        path = root / "src" / f"mod{i:03d}" / "values.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {i}\n")


def _teddy_project(base: Path, mode: str, teddy: str) -> Path:
    root = base / "teddy"
    root.mkdir()
    if mode == "edit":
        _existing(root)
    out = subprocess.run([teddy, "new", "bench"], cwd=root, capture_output=True, text=True)
    require(out.returncode == 0, out.stderr)
    turn = Path(out.stdout.strip()) / "01"
    (turn / "plan.md").write_text(_plan(mode))
    if mode == "edit":
        (turn / "turn.context").write_text("".join(f"src/mod{i:03d}/values.py\n" for i in range(N)))
    return root


def _time(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    out = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    require(out.returncode == 0, f"{argv[:3]} failed: {out.stderr[-800:]}")
    return elapsed


def _measure(mode: str, rounds: int, target: float) -> Result:
    teddy = str(Path(sys.executable).parent / "teddy")
    require(Path(teddy).exists(), "no teddy script next to this Python; pip install -e .")
    teddy_times: list[float] = []
    base_times: list[float] = []
    log(f"execute, {N} {mode.upper()} actions: {rounds} rounds …")
    for r in range(rounds + 1):  # the first round warms caches and is not counted
        with tempfile.TemporaryDirectory(prefix="plankit-exec-") as tmp:
            base = Path(tmp)
            project = _teddy_project(base, mode, teddy)
            plain = base / "plain"
            plain.mkdir()
            if mode == "edit":
                _existing(plain)
            order = [("teddy", project), ("plain", plain)]
            if r % 2:
                order.reverse()
            for name, where in order:
                if name == "teddy":
                    t = _time([teddy, "execute", "-y"], where)
                    if r:
                        teddy_times.append(t)
                else:
                    t = _time([sys.executable, "-c", BASELINE, str(where), mode, str(N)], where)
                    if r:
                        base_times.append(t)
            if mode == "create":
                require((project / "src/mod199/values.py").read_text() == "VALUE = 199\n", "create")
            else:
                require((project / "src/mod199/values.py").read_text() == "VALUE = 200\n", "edit")
            shutil.rmtree(base, ignore_errors=True)
    t, b = statistics.median(teddy_times), statistics.median(base_times)
    return Result(
        f"execute -y, {N} {mode.upper()} ÷ bare atomic writes",
        t / b,
        target,
        f"{t * 1e3:.0f} ms ÷ {b * 1e3:.0f} ms",
    )


def measure(rounds: int = 7) -> list[Result]:
    """Both ratios."""
    return [_measure("create", rounds, 2.0), _measure("edit", rounds, 3.0)]


if __name__ == "__main__":
    sys.exit(report(measure(rounds_from_argv(7))))
