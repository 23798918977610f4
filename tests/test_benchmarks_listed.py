"""Every benchmark script runs in ``benchmarks/run.py`` and is described in its README."""

from __future__ import annotations

import ast
import re
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(path.stem for path in BENCH.glob("bench_*.py"))


def _run_py_list() -> list[str]:
    tree = ast.parse((BENCH / "run.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "BENCHMARKS":
            return [name for name, *_ in ast.literal_eval(node.value)]
    raise AssertionError("benchmarks/run.py has no BENCHMARKS list")


def test_there_are_benchmarks() -> None:
    assert len(SCRIPTS) >= 8, SCRIPTS


def test_run_py_runs_every_benchmark_once() -> None:
    listed = _run_py_list()
    assert sorted(listed) == SCRIPTS, "add the script to BENCHMARKS in benchmarks/run.py"


def test_the_readme_describes_every_benchmark() -> None:
    readme = (BENCH / "README.md").read_text(encoding="utf-8")
    described = re.findall(r"^\| `(bench_\w+)\.py` \|", readme, re.M)
    assert sorted(described) == SCRIPTS, "give the script a row in benchmarks/README.md"
