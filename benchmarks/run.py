"""Run every benchmark and print one table: measurement, ratio, target, whether it meets it.

    .venv/bin/python benchmarks/run.py            # the default rounds (a few minutes)
    .venv/bin/python benchmarks/run.py --quick    # fewer rounds, noisier ratios

The exit status is 0 whatever the ratios are: targets are reported, not enforced.
"""

from __future__ import annotations

import os
import platform
import sys

import bench_acp
import bench_checklist
import bench_context
import bench_execute
import bench_parse
import bench_preprocess
import bench_startup
from _bench import Result, log, table


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    log(
        f"Python {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"
    )
    results: list[Result] = []
    results += bench_parse.measure(rounds=5 if quick else 15)
    results += bench_preprocess.measure(rounds=3 if quick else 9)
    results += bench_startup.measure(rounds=20 if quick else 30)
    results += bench_execute.measure(rounds=3 if quick else 7)
    results += bench_context.measure()
    results += bench_checklist.measure(rounds=10 if quick else 25)
    results += bench_acp.measure(rounds=5 if quick else 15)
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
