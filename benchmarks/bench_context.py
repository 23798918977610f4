"""Context payload speed: ``build_payload`` on a project of 2,000 files / 20 MB.

A generated project in a temporary directory: 2,000 source files of about 10 KB each
(20 MB) in nested packages, all of them in the tree, plus what a real checkout carries
and the tree leaves out (a ``.git/`` directory, an ignored ``build/`` and ignored
``*.pyc`` files, 300 files in all).  Four context sizes, timed in interleaved rounds
(each round builds each once, in a rotating order):

* **1×**: 200 files in the context (100 turn, 60 session, 40 global, with repeats
  across scopes), about 2 MB included; target ≤ 1 s.
* **2×**: 400 files, about 4 MB included; **4×**: 800 files, about 8 MB.
* **0×**: no context at all: the fixed cost (tree walk, system information).

Each figure is the fastest of the rounds: the ratios below subtract one time from
another, and on a busy machine the fastest round is the least disturbed one (medians
moved the context-part ratio by ±0.5 between runs here; the fastest rounds by ±0.05).

Reported: the 1× time (target ≤ 1 s), the ratio 2× ÷ 1× of the whole build (below 2
because the tree walk is a fixed cost) and the ratio of the part that depends on the
context, (2× − 0×) ÷ (1× − 0×), which is 2 for perfectly linear growth with the bytes
included (target ≤ 2.5), and the same for 4× ÷ 2×.  Before timing, the benchmark checks
that the tree lists all 2,000 files and that every context file is included in full.
"""

from __future__ import annotations

import gc
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _bench import Result, log, report, require, rounds_from_argv
from plankit.teddy.context.payload import build_payload, project_tree, write_context_file

FILES = 2_000
FILE_BYTES = 10_000
SESSION = "20260124-bench"

_WORDS = (
    "value", "result", "items", "config", "path", "handler", "request", "response", "parse",
    "render", "build", "context", "session", "turn", "plan", "action", "memo", "report",
    "fence", "tree", "node", "index", "count",
)  # fmt: skip


def _source(rng: random.Random, size: int) -> str:
    """About ``size`` bytes of Python-like text, with a few backtick runs in docstrings."""
    lines: list[str] = []
    total = 0
    while total < size:
        kind = rng.random()
        name = "_".join(rng.sample(_WORDS, 2))
        if kind < 0.1:
            line = f"def {name}({rng.choice(_WORDS)}: int) -> str:"
        elif kind < 0.15:
            line = f'    """Return the ``{name}`` of a ```fenced``` block."""'
        elif kind < 0.2:
            line = ""
        else:
            line = f"    {name} = {rng.choice(_WORDS)}({rng.randint(0, 999)}, {name!r})"
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines) + "\n"


def build_project(base: Path, seed: int = 7) -> tuple[Path, list[str]]:
    """The project under ``base``; returns its root and the 2,000 listed files."""
    rng = random.Random(seed)
    root = base / "project"
    files: list[str] = []
    for i in range(FILES):
        package = f"src/pkg{i % 20:02d}/sub{i % 5}"
        files.append(f"{package}/module_{i:04d}.py")
    for rel in files:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_source(rng, FILE_BYTES), encoding="utf-8")
    (root / ".gitignore").write_text("build/\n*.pyc\n__pycache__/\n", encoding="utf-8")
    files.append(".gitignore")
    for i in range(100):  # left out of the tree: pruned or ignored
        for rel in (f"build/lib/m{i}.py", f".git/objects/{i:02x}/obj", f"src/pkg00/m{i}.pyc"):
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"\0" * 100)
    (root / ".teddy" / SESSION / "01").mkdir(parents=True)
    return root, files


def set_context(root: Path, files: list[str], count: int) -> None:
    """Name ``count`` different files across the three scopes (with some repeats)."""
    chosen = files[:: FILES // count][:count] if count else []
    turn, session = chosen[: count // 2], chosen[count // 2 : count * 8 // 10]
    glob = chosen[count * 8 // 10 :] + turn[:10]  # repeats: named in two scopes
    teddy = root / ".teddy"
    write_context_file(teddy / SESSION / "01" / "turn.context", turn)
    write_context_file(teddy / SESSION / "session.context", session + turn[:5])
    write_context_file(teddy / "global.context", glob)


def _context_files(root: Path) -> list[Path]:
    teddy = root / ".teddy"
    return [teddy / SESSION / "01" / "turn.context", teddy / SESSION / "session.context",
            teddy / "global.context"]  # fmt: skip


def fastest(cases: dict[int, Callable[[], object]], rounds: int) -> dict[int, float]:
    """The fastest time (seconds) of each case over ``rounds`` interleaved rounds."""
    names = list(cases)
    best = dict.fromkeys(names, float("inf"))
    for r in range(rounds):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            gc.collect()
            start = time.perf_counter()
            cases[name]()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def measure(rounds: int = 31) -> list[Result]:
    """The 1× time and the linearity ratios."""
    counts = (0, 200, 400, 800)
    with tempfile.TemporaryDirectory(prefix="plankit-bench-context-") as tmp:
        root, files = build_project(Path(tmp))
        session, turn = root / ".teddy" / SESSION, root / ".teddy" / SESSION / "01"
        size = sum((root / rel).stat().st_size for rel in files)
        log(f"context: project of {len(files):,} files, {size / 1e6:.1f} MB")
        listed = [line for line in project_tree(root).splitlines() if not line.endswith("/")]
        require(len(listed) == len(files), f"the tree lists {len(listed)} files, not {len(files)}")

        contexts: dict[int, list[bytes]] = {}
        included: dict[int, int] = {}
        for count in counts:
            set_context(root, files, count)
            contexts[count] = [path.read_bytes() for path in _context_files(root)]
            payload = build_payload(root, session, turn)
            require(payload.count("**Resource:** ") == count, f"{count} resources expected")
            require("left out" not in payload, "a context file was cut")
            included[count] = len(payload.partition("## 5. Resource Contents")[2].encode())

        def run(count: int) -> str:
            # writing three small context files costs microseconds, next to the build
            for path, data in zip(_context_files(root), contexts[count], strict=True):
                path.write_bytes(data)
            return build_payload(root, session, turn)

        log(f"context: 0, 200, 400 and 800 files in the context, {rounds} rounds …")
        m = fastest({c: (lambda c=c: run(c)) for c in counts}, rounds)

    t0, t1, t2, t4 = (m[c] for c in counts)
    for count in counts:
        print(
            f"build_payload with {count:>3} files in the context "
            f"({included[count] / 1e6:.1f} MB included): {m[count] * 1e3:.1f} ms"
        )
    print(
        f"ratio 2× ÷ 1× included bytes: {t2 / t1:.2f} (whole build), "
        f"{(t2 - t0) / (t1 - t0):.2f} (the part that depends on the context); "
        f"4× ÷ 2×: {t4 / t2:.2f}, {(t4 - t0) / (t2 - t0):.2f}"
    )
    return [
        Result("context 2,000 files / 20 MB, 200 in context (s)", t1, 1.0, f"{t1 * 1e3:.0f} ms"),
        Result(
            "context 2× ÷ 1× included bytes (whole build)",
            t2 / t1,
            2.5,
            f"{t2 * 1e3:.0f} ms ÷ {t1 * 1e3:.0f} ms",
        ),
        Result(
            "context 2× ÷ 1× included bytes (context part)",
            (t2 - t0) / (t1 - t0),
            2.5,
            f"each minus the {t0 * 1e3:.0f} ms of a build with no context",
        ),
        Result(
            "context 4× ÷ 2× included bytes (context part)",
            (t4 - t0) / (t2 - t0),
            2.5,
            f"{t4 * 1e3:.0f} ms with 800 files",
        ),
    ]


if __name__ == "__main__":
    sys.exit(report(measure(rounds_from_argv(31))))
