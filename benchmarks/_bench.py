"""Shared helpers of the benchmark scripts: interleaved timing, results, the table.

Every number a benchmark reports is a ratio of two medians measured in the same run,
in interleaved rounds (each round times every case once, in a rotating order), so a
slow or busy machine slows both sides alike and the ratio stays comparable.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The project checkout."""


@dataclass(frozen=True)
class Result:
    """One measured ratio and the target it is held to (lower is better)."""

    name: str
    ratio: float
    target: float
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.ratio <= self.target


def interleaved(cases: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """The median time (seconds) of each case over ``rounds`` interleaved rounds."""
    names = list(cases)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            func = cases[name]
            gc.collect()
            start = time.perf_counter()
            func()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def table(results: Sequence[Result]) -> str:
    """The results as a plain-text table."""
    rows = [("measurement", "ratio", "target", "meets", "detail")]
    for res in results:
        rows.append(
            (
                res.name,
                f"{res.ratio:.2f}",
                f"≤ {res.target:g}",
                "yes" if res.ok else "NO",
                res.detail,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for i, row in enumerate(rows):
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def rounds_from_argv(default: int) -> int:
    """``--rounds N`` from the command line, else ``default``."""
    argv = sys.argv[1:]
    if "--rounds" in argv:
        return max(1, int(argv[argv.index("--rounds") + 1]))
    return default


def report(results: Sequence[Result]) -> int:
    """Print the table; the exit status is 0 (targets are reported, not enforced)."""
    print(table(results))
    return 0


def require(condition: object, message: str) -> None:
    """Stop the benchmark (not with ``assert``: it must hold under ``python -O`` too)."""
    if not condition:
        raise SystemExit(f"benchmark precondition failed: {message}")


def log(message: str) -> None:
    """Progress on stderr."""
    print(message, file=sys.stderr, flush=True)
