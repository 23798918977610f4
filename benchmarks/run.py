"""Run every benchmark and print one table: measurement, ratio, target, whether it meets it.

    .venv/bin/python benchmarks/run.py            # the default rounds (several minutes)
    .venv/bin/python benchmarks/run.py --quick    # fewer rounds, noisier ratios

The exit status is 0 whatever the ratios are: targets are reported, not enforced.
"""

from __future__ import annotations

import importlib
import os
import platform
import sys

from _bench import Result, log, table

BENCHMARKS = [
    # (script, rounds, rounds with --quick); each script's measure(rounds) gives its results
    ("bench_parse", 15, 5),
    ("bench_parse_memory", 9, 3),
    ("bench_preprocess", 9, 3),
    ("bench_answers", 5, 2),
    ("bench_startup", 30, 20),
    ("bench_offline_plan", 20, 10),
    ("bench_execute", 7, 3),
    ("bench_teddy_cli", 3, 1),
    ("bench_checkpoint", 7, 3),
    ("bench_context", 31, 31),
    ("bench_checklist", 25, 10),
    ("bench_xlsx", 3, 1),
    ("bench_agentflow", 5, 3),
    ("bench_claims", 5, 3),
    ("bench_acp", 15, 5),
    ("bench_mcp", 15, 5),
    ("bench_board", 5, 2),
    ("bench_orchestrate", 1, 1),
]


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    log(
        f"Python {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"
    )
    results: list[Result] = []
    for name, rounds, quick_rounds in BENCHMARKS:
        results += importlib.import_module(name).measure(rounds=quick_rounds if quick else rounds)
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
