"""Mutation testing of chosen source modules: do the tests notice when the code changes?

Usage (from the project root, with the ``mutation`` extra installed)::

    .venv/bin/python tools/mutate.py src/plankit/checklist/model.py [MODULE ...]
        [--tests tests/checklist/test_parse.py ...] [--fail-under 85] [--workers N] [--record]

A MODULE is a path under ``src/`` or a dotted name (``plankit.checklist.model``).  The
tests run against each mutant are, unless ``--tests`` names them, the test folder that
mirrors the module's package (``tests/checklist`` for ``plankit.checklist.model``; the
nearest existing one for deeper packages).  mutmut then runs, for each mutant, only the
tests that call the mutated function, in one worker process.  Leave out, with
``--tests``, test files that run plankit in another process (they never see a mutant,
and cost time) or that need the real stdout/stderr (they fail under mutmut, which
captures both).

Everything is written under ``.mutation/`` (git-ignored): a snapshot of ``src/``,
``tests/``, ``examples/``, ``docs/`` and ``README.md``, mutmut's ``mutants/`` folder,
its log and ``report.txt``, which holds what is printed at the end: the kill rate of
each module and every surviving mutant as a diff.  A mutant counts as killed when a
test failed or ran out of time under it; the kill rate is killed mutants over all
mutants of the module (mutants that no selected test reaches count as survivors).

mutmut mutates the bodies of functions and methods (``@staticmethod`` and
``@classmethod`` included); module-level constants and other decorated functions
(``@property``) are left alone, so their tests are written by hand.

``--record`` also writes each module's result to ``docs/mutation/MODULE.json``, keeping
the hand-written reasons of survivors that are still there; ``tools/mutation_table.py``
rewrites the table in docs/testing.md from those records.

Exit status: 0 when the run finished (and every module reached ``--fail-under``), 1
when a module is under ``--fail-under`` or mutmut failed, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
TESTS = ROOT / "tests"
OUT = ROOT / ".mutation"
WORKERS = 1
"""mutmut's worker processes: one, so that the machine keeps a core for other work."""
HYPOTHESIS_PROFILE = "ci"
"""The suite's Hypothesis profile for mutation runs (``tests/profiles.py``): CI's example
counts, derandomized, so every mutant meets the same examples and runs are repeatable."""
HYPOTHESIS_SEED = "0"
"""The seed for property tests whose settings are not derandomized by the profile."""

DATA_PATHS = ("examples", "docs", "README.md")
"""Files and folders of the project, besides src/ and tests/, that tests read."""

KILLED = frozenset({"killed", "timeout", "caught by type check"})
STATUS_LINE = re.compile(r"\s*(\S+): (.+)")


class UsageError(Exception):
    """A module or test path that cannot be used; the message says which and why."""


@dataclass
class ModuleResult:
    """The mutants of one module, by status."""

    name: str
    statuses: dict[str, str] = field(default_factory=dict)

    @property
    def killed(self) -> int:
        return sum(1 for s in self.statuses.values() if s in KILLED)

    @property
    def survivors(self) -> list[str]:
        return sorted(
            (k for k, s in self.statuses.items() if s not in KILLED),
            key=_natural,
        )

    @property
    def rate(self) -> float:
        return 100.0 * self.killed / len(self.statuses) if self.statuses else 100.0


def _natural(key: str) -> list[object]:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", key)]


def module_path(arg: str) -> Path:
    """The source file that ``arg`` (a path or a dotted module name) names."""
    if arg.endswith(".py") or "/" in arg or os.sep in arg:
        full = (Path.cwd() / arg).resolve()
        if full.suffix != ".py":
            raise UsageError(f"{arg}: not a Python module; give a path like src/plankit/x/y.py")
    else:
        full = SRC.joinpath(*arg.split(".")).with_suffix(".py")
    if not full.is_file():
        raise UsageError(f"{arg}: no such module; give a path like src/plankit/x/y.py")
    try:
        full.relative_to(SRC)
    except ValueError:
        raise UsageError(
            f"{arg}: not under src/; only the package's modules can be mutated"
        ) from None
    return full


def dotted(path: Path) -> str:
    """``plankit.checklist.model`` for ``src/plankit/checklist/model.py``."""
    return ".".join(path.relative_to(SRC).with_suffix("").parts)


def default_tests(path: Path) -> Path:
    """The test folder mirroring ``path``'s package, or the nearest existing parent."""
    parts = path.relative_to(SRC / "plankit").parent.parts
    for depth in range(len(parts), 0, -1):
        candidate = TESTS.joinpath(*parts[:depth])
        if candidate.is_dir():
            return candidate
    return TESTS


def test_paths(args: list[str]) -> list[Path]:
    out = []
    for arg in args:
        full = (Path.cwd() / arg).resolve()
        if not full.exists():
            raise UsageError(f"{arg}: no such test file or folder")
        try:
            full.relative_to(TESTS)
        except ValueError:
            raise UsageError(f"{arg}: not under tests/; name test files of this project") from None
        out.append(full)
    return out


def _toml(value: object) -> str:
    """A TOML value for the strings, booleans, numbers and lists used here."""
    return json.dumps(value)


XDIST_OPTIONS = ("-n", "--numprocesses", "--maxprocesses", "--dist")
"""pytest-xdist's options: mutmut runs the tests of a mutant in its own process."""


def without_xdist(addopts: str) -> str:
    """``addopts`` without pytest-xdist's options and their values."""
    out: list[str] = []
    words = iter(shlex.split(addopts))
    for word in words:
        if word in XDIST_OPTIONS:
            next(words, None)  # the option's value
        elif not (
            word.startswith(tuple(f"{o}=" for o in XDIST_OPTIONS))
            or (word.startswith("-n") and not word.startswith("--"))
        ):
            out.append(word)
    return shlex.join(out)


def write_config(work: Path, modules: list[Path], tests: list[Path]) -> None:
    """The work folder's pyproject.toml: the project's pytest settings and mutmut's."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pytest_options = dict(project.get("tool", {}).get("pytest", {}).get("ini_options", {}))
    if isinstance(pytest_options.get("addopts"), str):
        pytest_options["addopts"] = without_xdist(pytest_options["addopts"])
    lines = ["[tool.pytest.ini_options]"]
    lines += [f"{key} = {_toml(value)}" for key, value in pytest_options.items()]
    plugins = ["-p", "no:cacheprovider"]
    if importlib.util.find_spec("xdist") is not None:
        plugins += ["-p", "no:xdist"]
    mutmut = {
        "source_paths": ["src"],
        "only_mutate": [str(m.relative_to(ROOT)) for m in modules],
        "pytest_add_cli_args_test_selection": [str(t.relative_to(ROOT)) for t in tests],
        "pytest_add_cli_args": [*plugins, f"--hypothesis-seed={HYPOTHESIS_SEED}"],
        "also_copy": [name for name in DATA_PATHS if (work / name).exists()],
        "use_git_change_detection": False,
    }
    lines += ["", "[tool.mutmut]"]
    lines += [f"{key} = {_toml(value)}" for key, value in mutmut.items()]
    (work / "pyproject.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def prepare(work: Path, modules: list[Path], tests: list[Path]) -> None:
    """A fresh work folder holding a snapshot of the sources and the tests."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis")
    shutil.copytree(SRC, work / "src", ignore=skip)
    shutil.copytree(TESTS, work / "tests", ignore=skip)
    for name in DATA_PATHS:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, work / name, ignore=skip)
        elif (ROOT / name).is_file():
            shutil.copy2(ROOT / name, work / name)
    write_config(work, modules, tests)


def mutmut(work: Path, *args: str, log: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", HYPOTHESIS_PROFILE=HYPOTHESIS_PROFILE)
    command = [sys.executable, "-m", "mutmut", *args]
    if log is None:
        return subprocess.run(command, cwd=work, env=env, capture_output=True, text=True)
    with log.open("w", encoding="utf-8") as out:
        done = subprocess.run(
            command, cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT, text=True
        )
    return subprocess.CompletedProcess(command, done.returncode, "", "")


def collect(work: Path, names: list[str]) -> dict[str, ModuleResult]:
    """Each module's mutants and their status, from ``mutmut results``."""
    listed = mutmut(work, "results", "--all", "true")
    if listed.returncode != 0:
        raise RuntimeError(f"mutmut results failed: {listed.stderr.strip()}")
    results = {name: ModuleResult(name) for name in names}
    for line in listed.stdout.splitlines():
        m = STATUS_LINE.fullmatch(line)
        if m is None:
            continue
        key, status = m.groups()
        owner = max((n for n in names if key.startswith(n + ".")), key=len, default=None)
        if owner is not None:
            results[owner].statuses[key] = status
    return results


def show(work: Path, results: dict[str, ModuleResult]) -> dict[str, str]:
    """Each survivor's diff, as ``mutmut show`` prints it, by its full name."""
    return {
        key: mutmut(work, "show", key).stdout.strip()
        for r in results.values()
        for key in r.survivors
    }


def fingerprint(name: str, diff: str) -> str:
    """What mutant ``name`` changes, in short: its function and the lines its ``diff``
    removes and adds, without context or line numbers, so that a mutant renumbered by an
    edit elsewhere in its function keeps its fingerprint and one changed does not."""
    function = name.rsplit("__mutmut_", 1)[0]
    lines = [
        line
        for line in diff.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    return hashlib.sha256("\n".join([function, *lines]).encode()).hexdigest()[:16]


def report(work: Path, results: dict[str, ModuleResult], diffs: dict[str, str]) -> str:
    width = max(len(name) for name in results)
    lines = [f"{'module':<{width}}  mutants  killed  survived  kill rate"]
    for r in results.values():
        lines.append(
            f"{r.name:<{width}}  {len(r.statuses):>7}  {r.killed:>6}  "
            f"{len(r.survivors):>8}  {r.rate:>8.1f}%"
        )
    for r in results.values():
        for key in r.survivors:
            lines += ["", f"# {key}: {r.statuses[key]}", *diffs[key].splitlines()[2:]]
    return "\n".join(lines) + "\n"


RECORDS = ROOT / "docs" / "mutation"
"""One JSON file per measured module: the figures and survivors of its last recorded run,
and, written by hand, why each survivor is left (``tools/mutation_table.py``)."""


def carried(old: dict, prints: dict[str, str]) -> tuple[list[dict], list[str]]:
    """The reasons of record ``old`` that still hold for the survivors whose fingerprints
    are ``prints``, and a line for each reason moved or dropped.  A reason stays with a
    survivor of the same name that makes the same change; else it goes to a survivor
    that makes its mutant's change and has no reason yet, the first in order (renumbered);
    else nowhere (killed now, or changed).  A mutant recorded without a fingerprint
    keeps its reason by name."""
    before: dict[str, str] = old.get("fingerprints", {})
    names = [name for entry in old.get("why", []) for name in entry.get("mutants", [])]
    target: dict[str, str | None] = {}
    for name in names:  # first, every mutant that is still itself
        if name not in before or prints.get(name) == before[name]:
            target[name] = name if name in prints else None
    claimed = {new for new in target.values() if new is not None}
    said = []
    for name in names:
        if name in target:
            continue
        new = next((n for n, p in prints.items() if p == before[name] and n not in claimed), None)
        target[name] = new
        if new is not None:
            claimed.add(new)
            said.append(f"reason moved: {name} -> {new} (the same change)")
        elif name in prints:
            said.append(f"reason dropped: {name} changes something else now; re-read it")
    kept = []
    for entry in old.get("why", []):
        mutants = [t for n in entry.get("mutants", []) if (t := target[n]) is not None]
        if mutants:
            kept.append({**entry, "mutants": mutants})
    return kept, said


def record(
    path: Path, result: ModuleResult, tests: list[Path], diffs: dict[str, str]
) -> tuple[Path, list[str]]:
    """Write ``result`` to the module's record, carrying the reasons of survivors still
    there (:func:`carried`); the path written and what moved or was dropped."""
    target = RECORDS / f"{result.name}.json"
    old = json.loads(target.read_text("utf-8")) if target.is_file() else {}
    prefix = result.name + "."
    survivors = [key.removeprefix(prefix) for key in result.survivors]
    prints = {key.removeprefix(prefix): fingerprint(key, diffs[key]) for key in result.survivors}
    kept, said = carried(old, prints)
    data = {
        "module": result.name,
        "source_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "tests": [str(t.relative_to(ROOT)) for t in tests],
        "mutants": len(result.statuses),
        "killed": result.killed,
        "survivors": survivors,
        "fingerprints": prints,
        "why": kept,
    }
    RECORDS.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return target, said


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tools/mutate.py",
        description="Mutation testing (mutmut) of the given modules; prints the kill rate "
        "per module and the surviving mutants.",
    )
    parser.add_argument("modules", nargs="+", metavar="MODULE", help="src/… path or dotted name")
    parser.add_argument(
        "--tests",
        nargs="+",
        metavar="PATH",
        help="test files or folders to run (default: the tests/ folder of each module's package)",
    )
    parser.add_argument(
        "--fail-under", type=float, metavar="PCT", help="exit 1 if a module's kill rate is lower"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=WORKERS,
        metavar="N",
        help=f"mutmut's worker processes (default {WORKERS}: the machine keeps a core)",
    )
    parser.add_argument(
        "--record",
        action="store_true",
        help="write each module's result to docs/mutation/MODULE.json (the source of the "
        "table in docs/testing.md; tools/mutation_table.py rewrites the table from them)",
    )
    args = parser.parse_args(argv)
    try:
        modules = list(dict.fromkeys(module_path(m) for m in args.modules))
        if args.tests:
            tests = test_paths(args.tests)
        else:
            tests = list(dict.fromkeys(default_tests(m) for m in modules))
    except UsageError as error:
        print(f"tools/mutate.py: {error}", file=sys.stderr)
        return 2
    try:
        import mutmut as _  # noqa: F401
    except ImportError:
        print(
            "tools/mutate.py: mutmut is not installed; run .venv/bin/pip install -e '.[mutation]'",
            file=sys.stderr,
        )
        return 2
    names = [dotted(m) for m in modules]
    slug = "+".join(n.removeprefix("plankit.") for n in names)
    if len(slug) > 60:
        slug = hashlib.sha1(slug.encode()).hexdigest()[:12]
    work = OUT / slug
    prepare(work, modules, tests)
    log = work / "mutmut.log"
    shown = ", ".join(str(t.relative_to(ROOT)) for t in tests)
    print(f"mutating {', '.join(names)} against {shown}; log: {log.relative_to(ROOT)}")
    run = mutmut(work, "run", "--max-children", str(max(1, args.workers)), log=log)
    if run.returncode != 0:
        print(f"tools/mutate.py: mutmut failed (exit {run.returncode}); see {log}", file=sys.stderr)
        lines = log.read_text("utf-8").splitlines()
        failed = [line for line in lines if line.startswith("FAILED ")]
        if failed:
            print("\n".join(failed), file=sys.stderr)
            print(
                "tools/mutate.py: these tests fail without any mutant under mutmut (a test "
                "that needs the real stdout/stderr or runs plankit in another process, which "
                "never sees the mutants); name the test files to run with --tests",
                file=sys.stderr,
            )
        return 1
    results = collect(work, names)
    diffs = show(work, results)
    text = report(work, results, diffs)
    (work / "report.txt").write_text(text, encoding="utf-8")
    print(text, end="")
    print(f"(report: {(work / 'report.txt').relative_to(ROOT)})")
    if args.record:
        for path, result in zip(modules, results.values(), strict=True):
            written, said = record(path, result, tests, diffs)
            for line in said:
                print(line)
            print(f"recorded: {written.relative_to(ROOT)}")
    counts = Counter(s for r in results.values() for s in r.statuses.values())
    if counts.keys() - KILLED - {"survived"}:
        print("statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if args.fail_under is not None and any(r.rate < args.fail_under for r in results.values()):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
