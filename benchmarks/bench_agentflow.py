"""Benchmark: validating agentflow plan directories.

Prints, for one directory of 10,000 tasks with random acyclic dependencies:

* the time to validate it (target: at most 3 s) and the ratio to 1,000 tasks (target:
  at most 12, i.e. linear);
* where the time goes: front matter parsing (fast path, ruamel.yaml for the rest) and
  everything else (listing, reading, decoding, schema, ids, graph);
* the same directory with every front matter parsed by ruamel.yaml (the fast path off),
  which is the floor without the fast path.

The spec's file names have a two-digit sort index, so a directory holds at most 100
distinct indices: the generated directory is valid except for the sort-index-duplicate
problems that 10,000 files must have; they are reported like any other problem.

Run: ``python benchmarks/bench_agentflow.py`` (exits 0; figures only, no assertion).
"""

from __future__ import annotations

import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from plankit.agentflow import frontmatter, plandir
from plankit.agentflow.validate import check_dir


def generate(directory: Path, count: int, seed: int = 7) -> None:
    """A plan directory of ``count`` tasks; each depends on up to 3 earlier ones."""
    rng = random.Random(seed)
    tasks = directory / "tasks"
    tasks.mkdir(parents=True)
    (directory / "plan.md").write_text(
        '---\ntitle: "Benchmark plan"\n---\n\nA generated plan.\n', encoding="utf-8"
    )
    for i in range(count):
        deps = sorted({f"task-{rng.randrange(i)}" for _ in range(min(i, rng.randint(0, 3)))})
        agent = "agent: claude-code\n" if rng.random() < 0.5 else ""
        subtasks = "subtasks:\n  - Write the code\n  - Test it\n" if rng.random() < 0.5 else ""
        text = (
            f"---\nid: task-{i}\ndepends_on: [{', '.join(deps)}]\n{agent}{subtasks}---\n\n"
            f"Task {i}: do the work and check it.\n\nAcceptance criteria:\n- it works\n"
        )
        (tasks / f"{i % 100:02d}-task-{i}.md").write_text(text, encoding="utf-8")


def best(runs: int, action: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def timed_parse(fast: bool) -> tuple[Callable[..., frontmatter.Node], list[float]]:
    """A replacement for the loader's ``parse`` that adds up its own time."""
    spent = [0.0]
    original = frontmatter.parse

    def parse(
        yaml: str, first_line: int = 1, *, fast_path: bool = fast, **_: object
    ) -> frontmatter.Node:
        started = time.perf_counter()
        try:
            return original(yaml, first_line, fast=fast_path)
        finally:
            spent[0] += time.perf_counter() - started

    return parse, spent


def split(directory: Path, fast: bool) -> tuple[float, float]:
    """(total seconds, seconds in front matter parsing) of one validation."""
    parse, spent = timed_parse(fast)
    original = plandir.parse
    plandir.parse = parse  # type: ignore[assignment]
    try:
        started = time.perf_counter()
        check_dir(str(directory))
        total = time.perf_counter() - started
    finally:
        plandir.parse = original
    return total, spent[0]


def main() -> int:
    root = Path(tempfile.mkdtemp(prefix="bench-agentflow-"))
    try:
        small, large = root / "1k", root / "10k"
        generate(small, 1_000)
        generate(large, 10_000)
        check_dir(str(large))  # warm the file cache and the imports
        _, problems = check_dir(str(large))
        t_small = best(5, lambda: check_dir(str(small)))
        t_large = best(3, lambda: check_dir(str(large)))
        total, yaml = split(large, fast=True)
        slow_total, slow_yaml = split(large, fast=False)
        rules = Counter(p.rule for p in problems)
        print("agentflow validation (best of runs, seconds)")
        print(f"  1,000 tasks:   {t_small:7.3f} s")
        print(f"  10,000 tasks:  {t_large:7.3f} s   (target <= 3 s)")
        print(f"  ratio 10k/1k:  {t_large / t_small:7.2f}     (target <= 12)")
        print(f"  problems in the 10k directory: {dict(rules)} (two-digit sort indices)")
        print("where the time goes, 10,000 tasks")
        print(
            f"  front matter parsing (fast path): {yaml:6.3f} s ({yaml / total:4.0%})   "
            f"everything else: {total - yaml:6.3f} s ({(total - yaml) / total:4.0%})"
        )
        share = slow_yaml / slow_total
        print(
            f"  with ruamel.yaml for every file:  {slow_yaml:6.3f} s ({share:4.0%})   "
            f"total {slow_total:6.3f} s  ({slow_total / total:.1f}x the fast path)"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
