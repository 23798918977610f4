"""Parse memory and the unclosed fence: peak memory ÷ plan size, broken ÷ valid time.

Three plans of about 10 MB, from the same generated plan: *valid*; *unclosed*, with the
opening fence of its middle fenced block made longer than any fence after it, so that
it never closes and runs to the end of the plan; *cut off*, ending inside its last
fenced block (a model's answer cut short).  The broken two must give their
``fence-unclosed`` diagnostic before anything is measured.

Memory is measured in a fresh interpreter for each plan (a child process, so that no
measurement inherits another's heap), as its peak resident size (``VmHWM`` where the
system has ``/proc``, else ``ru_maxrss``):

- *check_plan*: reading the file and ``check_plan`` of its text, less the interpreter
  with plankit imported, ÷ the plan's size in bytes (target ≤ 10).  It counts the text
  itself, which Python holds in four bytes a character once the text has one emoji
  (the generated header has 🟢, as real plans do);
- *teddy parse*: the whole ``teddy parse PLAN`` command (its entry point, as the
  console script calls it), interpreter and file reading included, as a user sees it,
  ÷ the plan's size (target ≤ 10).  For a broken plan that is also the work after the
  diagnostics: repairing the plan as ``teddy preprocess`` would and parsing the result,
  to say that ``teddy preprocess`` makes it valid (both broken plans must get that line).

Time, median ÷ median over interleaved rounds (target ≤ 2 each): ``check_plan`` of each
broken plan ÷ ``check_plan`` of the valid one; and the whole ``teddy parse`` command (a
fresh process, start-up included) of each broken plan ÷ the same of the valid one.
``--rounds N`` sets the rounds.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from _bench import ROOT, Result, interleaved, log, report, require, rounds_from_argv
from plankit.teddy.format.parse import check_plan
from plans import generate_plan

MEMORY_TARGET = 10.0
TIME_TARGET = 2.0
SIZE = 10_000_000

_PEAK = """
import resource, sys


def peak():
    # VmHWM: the peak of this program's own memory.  ru_maxrss on Linux also counts the
    # parent's peak at the fork, which a benchmark holding three 10 MB plans would add.
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss if sys.platform == "darwin" else rss * 1024
"""

_CHECK_PLAN = (
    _PEAK
    + """
from plankit.teddy.format.parse import check_plan

base = peak()
with open(sys.argv[1], "rb") as handle:
    data = handle.read()
text = data.decode("utf-8")
del data
check_plan(text)
print(base, peak())
"""
)

_TEDDY_RUN = """
import sys
from plankit.teddy.cli import main

main(["parse", sys.argv[1]])
"""

SUGGESTION = "makes it a valid plan"
"""What ``teddy parse`` says of a broken plan that ``teddy preprocess`` repairs."""

_TEDDY_PARSE = (
    _PEAK
    + """
from plankit.teddy.cli import main

sys.argv = ["teddy", "parse", sys.argv[1]]
try:
    main()
except SystemExit:
    pass
finally:
    print(peak(), file=sys.__stderr__)
"""
)


def _top_openers(text: str) -> list[tuple[int, int, int]]:
    """(offset, line, backticks) of each opening fence that is not inside another block."""
    out: list[tuple[int, int, int]] = []
    fence = 0  # backticks of the open block, 0 when none is open
    offset = 0
    for number, line in enumerate(text.split("\n"), 1):
        ticks = len(line) - len(line.lstrip("`"))
        if fence and ticks >= fence and not line[ticks:].strip():
            fence = 0
        elif not fence and ticks >= 3:
            fence = ticks
            out.append((offset, number, ticks))
        offset += len(line) + 1
    return out


def unclosed(text: str) -> tuple[str, int]:
    """``text`` with the opening fence of its middle block never closed, and that line."""
    openers = _top_openers(text)
    longest = max(ticks for _, _, ticks in openers)
    offset, line, ticks = openers[len(openers) // 2]
    return text[:offset] + "`" * (longest + 1) + text[offset + ticks :], line


def cut_off(text: str) -> tuple[str, int]:
    """``text`` ending two lines into its last fenced block, and that block's line."""
    offset, line, _ = _top_openers(text)[-1]
    stop = text.index("\n", text.index("\n", offset) + 1)
    return text[: text.index("\n", stop + 1)], line


def _check_broken(name: str, text: str, line: int) -> None:
    plan, diagnostics = check_plan(text)
    require(plan is None, f"{name}: the broken plan parses")
    found = [d for d in diagnostics if d.code == "fence-unclosed"]
    require([d.line for d in found] == [line], f"{name}: expected fence-unclosed at {line}")


def _probe(code: str, path: str) -> list[int]:
    result = subprocess.run(
        [sys.executable, "-c", code, path], cwd=ROOT, capture_output=True, text=True
    )
    output = result.stdout if code is _CHECK_PLAN else result.stderr
    require(output.strip(), f"memory probe failed: {result.stderr[-500:]}")
    return [int(v) for v in output.strip().splitlines()[-1].split()]


def _check_plan_peak(path: str) -> tuple[int, int]:
    """(interpreter with plankit imported, peak while reading and parsing), in bytes."""
    base, peak = _probe(_CHECK_PLAN, path)
    return base, peak


def _teddy_parse_peak(path: str) -> int:
    """The peak memory of ``teddy parse PLAN`` (its entry point, as the script runs it)."""
    (peak,) = _probe(_TEDDY_PARSE, path)
    return peak


def _memory(paths: dict[str, str]) -> list[Result]:
    results: list[Result] = []
    for name, path in paths.items():
        size = Path(path).stat().st_size
        log(f"memory, {name}: {size / 1e6:.1f} MB …")
        base, peak = _check_plan_peak(path)
        whole = _teddy_parse_peak(path)
        results.append(
            Result(
                f"check_plan peak ÷ plan size, {name}",
                (peak - base) / size,
                MEMORY_TARGET,
                f"{(peak - base) / 1e6:.0f} MB above the interpreter's {base / 1e6:.0f} MB "
                f"for {size / 1e6:.1f} MB",
            )
        )
        results.append(
            Result(
                f"teddy parse peak ÷ plan size, {name}",
                whole / size,
                MEMORY_TARGET,
                f"{whole / 1e6:.0f} MB for {size / 1e6:.1f} MB, interpreter included",
            )
        )
    return results


def _run_teddy_parse(path: str, valid: bool) -> None:
    """``teddy parse PLAN`` in a fresh interpreter, checked: a summary for the valid plan,
    the suggestion to run ``teddy preprocess`` for a broken one."""
    result = subprocess.run(
        [sys.executable, "-c", _TEDDY_RUN, path],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    if valid:
        require(result.returncode == 0, f"teddy parse failed: {result.stderr[-500:]}")
    else:
        require(
            result.returncode == 1 and SUGGESTION in result.stderr,
            f"teddy parse of a broken plan: exit {result.returncode}, {result.stderr[-500:]}",
        )


def _ratios(
    cases: dict[str, Callable[[], object]], rounds: int, label: str, what: str
) -> list[Result]:
    """Each case's median time ÷ the valid plan's, after one warm-up call of each."""
    for func in cases.values():  # warm up (and check): compiled patterns, caches
        func()
    log(f"time, {label}: {len(cases)} plans, {rounds} rounds …")
    medians = interleaved(cases, rounds)
    valid = medians["valid"]
    return [
        Result(
            f"{label} time, {name} ÷ valid",
            medians[name] / valid,
            TIME_TARGET,
            f"{medians[name] * 1e3:.0f} ms vs {valid * 1e3:.0f} ms{what}",
        )
        for name in cases
        if name != "valid"
    ]


def _command_time(paths: dict[str, str], rounds: int) -> list[Result]:
    cases: dict[str, Callable[[], object]] = {
        name: (lambda path=path, valid=name == "valid": _run_teddy_parse(path, valid))
        for name, path in paths.items()
    }
    return _ratios(cases, rounds, "teddy parse", ", a fresh process each")


def _time(plans: dict[str, str], rounds: int) -> list[Result]:
    cases: dict[str, Callable[[], object]] = {
        name: (lambda text=text: check_plan(text)) for name, text in plans.items()
    }
    return _ratios(cases, rounds, "check_plan", "")


def measure(rounds: int = 9) -> list[Result]:
    """Peak memory ÷ plan size for the three plans, and the four time ratios."""
    valid = generate_plan(SIZE, seed=4, invoke=False)
    plan, diagnostics = check_plan(valid)
    require(not diagnostics and plan is not None, f"the valid plan has {diagnostics[:3]}")
    broken, line = unclosed(valid)
    _check_broken("unclosed", broken, line)
    short, last = cut_off(valid)
    _check_broken("cut off", short, last)
    plans = {"valid": valid, "unclosed": broken, "cut off": short}
    with tempfile.TemporaryDirectory() as folder:
        paths: dict[str, str] = {}
        for name, text in plans.items():
            path = Path(folder) / f"{name}.md"
            path.write_text(text, encoding="utf-8")
            paths[name] = str(path)
        return _memory(paths) + _time(plans, rounds) + _command_time(paths, rounds)


if __name__ == "__main__":
    sys.exit(report(measure(rounds_from_argv(9))))
