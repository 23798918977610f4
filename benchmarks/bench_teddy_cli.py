"""plankit's ``teddy execute -y`` ÷ teddy-cli's (the original TeDDy) on one 1,000-action plan.

The plan has 1,000 CREATE actions of files of about a kilobyte each (a plan of about
1.2 MB), each in a directory of its own; both tools run it in stateless mode (``teddy
execute plan.md -y``) on a fresh copy of the same empty project, in interleaved rounds,
as whole processes.  Target ≤ 1/3: plankit at least three times as fast.

Each process starts after a ``sync``, with nothing left for the disk from the run before
it.  A file system sync writes out everything pending on that file system, whoever wrote
it; without the ``sync`` plankit's would also write out the ~1,000 files teddy-cli left in
memory a moment before (and the previous round's deletions), and the ratio would measure
the order of the rounds, not plankit.  teddy-cli's own files still reach the disk after
its process ends, outside its time: that is what not flushing buys it.

plankit keeps its durability here: every action's bytes reach the disk before the file
takes its name, with one file system sync per run of up to 128 writes (docs/security.md,
"What reaches the disk").  teddy-cli 0.2.1 writes its files without flushing them.

Two more processes are references, in the detail.  One makes the same directories and
files with plain writes (no check, no temporary file, no flush): what the file
system's ~2,000 creations cost a naive writer.  plankit, which opens each directory once
and writes through it, has measured faster than it on a quiet disk.  The other does
only what plankit's durability needs and nothing else (no plan, no check, no report):
each directory opened once, each file's bytes in a temporary file beside it, one
``syncfs`` per 128 files before they take their names by a hard link, as plankit's
grouped writes do.  It is the floor of this goal: plankit can come no closer to
teddy-cli than that process does.

teddy-cli is not a dependency of plankit.  ``python benchmarks/bench_teddy_cli.py
--install`` puts teddy-cli 0.2.1 from PyPI in a virtual environment of its own under
``build/teddy-cli/``; ``TEDDY_CLI=/path/to/teddy`` names another install.  Without one
the benchmark reports nothing and says how to install it.  ``--rounds N`` sets the
rounds.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench import ROOT, Result, log, report, require, rounds_from_argv
from plans import plan_of_actions

N = 1000
VERSION = "0.2.1"
VENV = ROOT / "build" / "teddy-cli"


def teddy_cli() -> Path | None:
    """teddy-cli's ``teddy`` script: $TEDDY_CLI, else the one ``--install`` made."""
    named = os.environ.get("TEDDY_CLI")
    if named:
        return Path(named)
    script = VENV / "bin" / "teddy"
    return script if script.exists() else None


def install() -> Path:
    """teddy-cli from PyPI, in its own virtual environment under build/."""
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    pip = [str(VENV / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, f"teddy-cli=={VERSION}"], check=True)
    return VENV / "bin" / "teddy"


def _files() -> dict[str, str]:
    """The plan's files: path → content."""
    files = {}
    for i in range(N):
        body = "\n".join(
            f"def handle_{i}_{k}(request):\n    return {{'status': {200 + k}, 'id': {i}}}\n"
            for k in range(12)
        )
        files[f"pkg/mod{i:04d}/handlers.py"] = body
    return files


def _plan() -> str:
    actions = [
        f"### `CREATE`\n- **File Path:** [{path}](/{path})\n```python\n{body}```"
        for path, body in _files().items()
    ]
    return plan_of_actions(f"create {N} modules", "\n\n".join(actions))


FLOOR = """
import json, os
for path, body in json.load(open("files.json")).items():
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(body)
"""
"""The plain writer: a bare Python process making the same directories and files, plainly
(no check, no temporary file, no flush).  Most of its run is the file system's own work,
the ~2,000 directory and file creations."""


DURABLE = """
import ctypes, json, os
syncfs = ctypes.CDLL(None, use_errno=True).syncfs
root = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
syncfs(root)
staged = []
def publish():
    syncfs(root)
    for dfd, tmp, name in staged:
        os.link(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        os.unlink(tmp, dir_fd=dfd)
        os.close(dfd)
    staged.clear()
for i, (path, body) in enumerate(json.load(open("files.json")).items()):
    *folders, name = path.split("/")
    dfd = os.dup(root)
    for folder in folders:
        try:
            os.mkdir(folder, dir_fd=dfd)
        except FileExistsError:
            pass
        sub = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dfd)
        os.close(dfd)
        dfd = sub
    tmp = f".{name}.{i:08x}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666, dir_fd=dfd)
    os.write(fd, body.encode())
    os.close(fd)
    staged.append((dfd, tmp, name))
    if len(staged) == 128:
        publish()
publish()
syncfs(root)
"""
"""The durable floor: only what plankit's durability needs (see the module docstring)."""


def _time(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    out = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    require(out.returncode == 0, f"{argv[0]} failed: {out.stderr[-800:]}")
    require((cwd / f"pkg/mod{N - 1:04d}/handlers.py").is_file(), f"{argv[0]}: files missing")
    return elapsed


def measure(rounds: int = 3) -> list[Result]:
    """plankit ÷ teddy-cli, or nothing when teddy-cli is not installed."""
    theirs = teddy_cli()
    if theirs is None:
        log("teddy-cli is not installed: python benchmarks/bench_teddy_cli.py --install")
        return []
    ours = str(Path(sys.executable).parent / "teddy")
    require(Path(ours).exists(), "no teddy script next to this Python; pip install -e .")
    text = _plan()
    log(f"1,000-action plan ({len(text) / 1e6:.1f} MB) vs teddy-cli: {rounds} rounds …")
    times: dict[str, list[float]] = {"plankit": [], "teddy-cli": [], "floor": [], "durable": []}
    commands = {
        "plankit": [ours, "execute", "plan.md", "-y"],
        "teddy-cli": [str(theirs), "execute", "plan.md", "-y", "--no-copy"],
        "floor": [sys.executable, "-I", "-S", "-c", FLOOR],
        "durable": [sys.executable, "-I", "-S", "-c", DURABLE],
    }
    files = json.dumps(_files())
    for r in range(rounds + 1):  # the first round warms caches and is not counted
        order = list(commands) if r % 2 == 0 else list(reversed(commands))
        for name in order:
            with tempfile.TemporaryDirectory(prefix="plankit-vs-teddy-cli-") as tmp:
                project = Path(tmp)
                (project / "plan.md").write_text(text, encoding="utf-8")
                (project / "files.json").write_text(files, encoding="utf-8")
                os.sync()  # start from a clean page cache: see the module docstring
                elapsed = _time(commands[name], project)
                shutil.rmtree(project / "pkg", ignore_errors=True)
            if r:
                times[name].append(elapsed)
    ours_t, theirs_t = statistics.median(times["plankit"]), statistics.median(times["teddy-cli"])
    floor_t = statistics.median(times["floor"])
    durable_t = statistics.median(times["durable"])
    return [
        Result(
            f"execute -y, {N} CREATE: plankit ÷ teddy-cli {VERSION}",
            ours_t / theirs_t,
            1 / 3,
            f"{ours_t * 1e3:.0f} ms ÷ {theirs_t * 1e3:.0f} ms; a plain writer of the same "
            f"files {floor_t * 1e3:.0f} ms (plankit ÷ it {ours_t / floor_t:.2f}); the durable "
            f"floor {durable_t * 1e3:.0f} ms (it ÷ teddy-cli {durable_t / theirs_t:.2f}, "
            f"plankit ÷ it {ours_t / durable_t:.2f})",
        ),
    ]


if __name__ == "__main__":
    if "--install" in sys.argv:
        print(install())
        sys.exit(0)
    sys.exit(report(measure(rounds_from_argv(3))))
