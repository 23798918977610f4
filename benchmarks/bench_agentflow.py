"""Benchmark: validating agentflow plan directories.

One directory of 10,000 tasks with random acyclic dependencies and one of 1,000 (the
same generator), validated with ``check_dir`` in interleaved rounds:

* 10,000 tasks against a budget of 3 s (target: at most 1);
* 10,000 ÷ 1,000 tasks (target: at most 12, i.e. linear);
* 10,000 tasks ÷ only reading them: listing the directory and reading and decoding
  every file, the floor of any validator (target: at most 3);
* the same 10,000 tasks with the front matter fast path ÷ with ruamel.yaml parsing
  every front matter, the floor without the fast path (target: at most 0.5), with where
  the time goes: front matter parsing and everything else (listing, reading,
  decoding, schema, ids, graph);
* hostile task files, each in a plan directory of its own (an alias bomb, 10 MB of
  front matter, 10 MB of front matter never closed, a 21 MiB file, brackets nested
  30,000 deep): the slowest refusal ÷ validating the 1,000 tasks (target: at most 1; a
  hostile file must cost less than an ordinary plan of a thousand tasks).

The spec's file names have a two-digit sort index, so a directory holds at most 100
distinct indices: the generated directory is valid except for the sort-index-duplicate
problems that 10,000 files must have; they are reported like any other problem.

``--rounds N`` sets the rounds (default 5).  Prints the figures and the ratios; exits 0.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from _bench import Result, interleaved, log, report, require, rounds_from_argv
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


def _alias_bomb() -> str:
    lines = ["---", "id: lol", 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefg", "bcdefgh", strict=True):
        lines.append(f"{name}: &{name} [{','.join([f'*{prev}'] * 9)}]")
    return "\n".join([*lines, f"subtasks: [{','.join(['*h'] * 9)}]", "---", "", "Boom.", ""])


def hostile(root: Path) -> dict[str, Path]:
    """One plan directory per hostile task file, by name; each must be refused."""
    filler = "subtasks:\n  - " + "x" * 76 + "\n"
    deep = "[" * 30_000 + "]" * 30_000
    texts: dict[str, str | bytes] = {
        "alias bomb": _alias_bomb(),
        "10 MB front matter": "---\nid: a\n" + filler * (10_000_000 // len(filler)) + "---\nX\n",
        "10 MB unclosed": "---\n" + "a: b\n" * 2_000_000,
        "21 MiB file": b"---\n" + b"x" * (21 * 1024 * 1024),
        "30,000-deep nesting": f"---\nid: a\nsubtasks: {deep}\n---\nX\n",
    }
    directories = {}
    for n, (name, text) in enumerate(texts.items()):
        directory = root / f"hostile-{n}"
        (directory / "tasks").mkdir(parents=True)
        (directory / "plan.md").write_text('---\ntitle: "Hostile"\n---\n', encoding="utf-8")
        data = text if isinstance(text, bytes) else text.encode()
        (directory / "tasks" / "01-a.md").write_bytes(data)
        _, problems = check_dir(str(directory))
        require(len(problems) == 1, f"{name}: expected one problem, got {problems}")
        directories[name] = directory
    return directories


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
    """(total seconds, seconds reading front matter) of one validation: the parser's,
    and the quick reading of a task's fields straight from its lines."""
    parse, spent = timed_parse(fast)
    original, quick = plandir.parse, plandir.quick_task_fields

    def timed_quick(yaml: str, yaml_line: int) -> object:
        started = time.perf_counter()
        try:
            return quick(yaml, yaml_line)
        finally:
            spent[0] += time.perf_counter() - started

    plandir.parse = parse  # type: ignore[assignment]
    plandir.quick_task_fields = timed_quick  # type: ignore[assignment]
    try:
        started = time.perf_counter()
        check_dir(str(directory), fast=fast)
        total = time.perf_counter() - started
    finally:
        plandir.parse, plandir.quick_task_fields = original, quick
    return total, spent[0]


def read_all(directory: Path) -> int:
    """What every validator must do: list the plan directory and its folders, read and
    decode each file."""
    total = 0
    for entry in sorted(os.scandir(directory), key=lambda e: e.name):
        if entry.is_dir():
            total += read_all(Path(entry.path))
        elif entry.is_file():
            with open(entry.path, "rb") as handle:
                total += len(handle.read().decode("utf-8"))
    return total


def measure(rounds: int = 5) -> list[Result]:
    """The budget ratio, the linearity ratio and the fast path ratio."""
    root = Path(tempfile.mkdtemp(prefix="bench-agentflow-"))
    try:
        small, large = root / "1k", root / "10k"
        generate(small, 1_000)
        generate(large, 10_000)
        _, problems = check_dir(str(large))  # also warms the file cache and the imports
        rules = Counter(p.code for p in problems)
        require(set(rules) == {"sort-index-duplicate"}, f"unexpected problems: {dict(rules)}")
        bad = hostile(root)
        log(f"agentflow: 1,000 and 10,000 tasks, hostile files, {rounds} rounds …")
        m = interleaved(
            {
                "1k": lambda: check_dir(str(small)),
                "10k": lambda: check_dir(str(large)),
                "10k read": lambda: read_all(large),
                "10k ruamel": lambda: check_dir(str(large), fast=False),
                **{name: (lambda d=d: check_dir(str(d))) for name, d in bad.items()},
            },
            rounds,
        )
        total, yaml = split(large, fast=True)
        slow_total, slow_yaml = split(large, fast=False)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"agentflow validation, median of {rounds} rounds")
    print(f"  1,000 tasks:   {m['1k']:7.3f} s")
    print(f"  10,000 tasks:  {m['10k']:7.3f} s   (target <= 3 s)")
    print(f"  problems in the 10k directory: {dict(rules)} (two-digit sort indices)")
    for name in bad:
        print(f"  hostile, {name}: {m[name] * 1e3:7.1f} ms")
    worst = max(bad, key=lambda name: m[name])
    print(
        f"  front matter reading (fast paths): {yaml:6.3f} s ({yaml / total:4.0%}), "
        f"everything else: {total - yaml:6.3f} s; with ruamel.yaml for every file: "
        f"{slow_yaml:6.3f} s ({slow_yaml / slow_total:4.0%}) of {slow_total:6.3f} s"
    )
    return [
        Result("agentflow check_dir 10,000 tasks ÷ 3 s", m["10k"] / 3.0, 1.0, f"{m['10k']:.2f} s"),
        Result(
            "agentflow check_dir 10,000 ÷ 1,000 tasks",
            m["10k"] / m["1k"],
            12.0,
            f"{m['10k'] * 1e3:.0f} ms ÷ {m['1k'] * 1e3:.0f} ms",
        ),
        Result(
            "agentflow check_dir 10,000 tasks ÷ reading the files",
            m["10k"] / m["10k read"],
            3.0,
            f"{m['10k'] * 1e3:.0f} ms ÷ {m['10k read'] * 1e3:.0f} ms",
        ),
        Result(
            "agentflow front matter fast path ÷ ruamel.yaml",
            m["10k"] / m["10k ruamel"],
            0.5,
            f"10,000 tasks; front matter reading is {yaml / total:.0%} of the time",
        ),
        Result(
            "agentflow slowest hostile task file refused ÷ 1,000 tasks",
            m[worst] / m["1k"],
            1.0,
            f"{worst}: {m[worst] * 1e3:.0f} ms ÷ {m['1k'] * 1e3:.0f} ms",
        ),
    ]


if __name__ == "__main__":
    sys.exit(report(measure(rounds_from_argv(5))))
