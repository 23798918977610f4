"""Preprocess speed: what ``teddy preprocess`` runs on a 10 MB plan ÷ ``parse_plan`` of it.

``teddy preprocess`` (and ``teddy plan``, ``teddy acp``) run ``answer_to_plan``: the
unwrapping of a model's answer around the fence sanitizer; that is what is timed.

Two 10 MB plans from the same seed: a *broken* one, whose outer fences around
content with fences of its own are too short (as models write them), and the *clean*
one it repairs into.  Reported: preprocess(broken) ÷ parse_plan(repaired) and
preprocess(clean) ÷ parse_plan(clean) (target ≤ 1.5), and linearity, preprocess of
10 MB ÷ preprocess of the 1 MB plan of the same seed (target ≤ 12).  Before timing,
the benchmark checks that the broken plan really is invalid, that preprocess repairs
it into exactly the clean plan, and that the clean plan parses with no diagnostic and
passes through preprocess unchanged.
"""

from __future__ import annotations

import sys

from _bench import Result, interleaved, log, report, require, rounds_from_argv
from plankit.teddy.format.answer import answer_to_plan as preprocess
from plankit.teddy.format.parse import check_plan, parse_plan
from plans import generate_plan

SEED = 3


def _plans(size: int) -> tuple[str, str]:
    clean = generate_plan(size, seed=SEED)
    broken = generate_plan(size, seed=SEED, broken=True)
    plan, diagnostics = check_plan(clean)
    require(plan is not None and not diagnostics, f"the clean plan is invalid: {diagnostics[:3]}")
    require(check_plan(broken)[1], "the broken plan parses without diagnostics")
    repaired = preprocess(broken)
    require(repaired.changed, "preprocess changed nothing in the broken plan")
    require(repaired.text == clean, "preprocess did not repair the broken plan into the clean one")
    require(not preprocess(clean).changed, "preprocess changed the clean plan")
    return clean, broken


def measure(rounds: int = 9) -> list[Result]:
    """Preprocess ÷ parse ratios and the linearity of preprocess."""
    clean10, broken10 = _plans(10_000_000)
    clean1, broken1 = _plans(1_000_000)
    changes = len(preprocess(broken10).changes)
    cases = {
        "pre broken 10": lambda: preprocess(broken10),
        "pre clean 10": lambda: preprocess(clean10),
        "parse 10": lambda: parse_plan(clean10),
        "pre broken 1": lambda: preprocess(broken1),
        "pre clean 1": lambda: preprocess(clean1),
    }
    log(f"preprocess: 10 MB plans ({changes} fences to repair), {rounds} rounds …")
    m = interleaved(cases, rounds)

    def ms(name: str) -> str:
        return f"{m[name] * 1e3:.0f} ms"

    size = f"{len(clean10) / 1e6:.1f} MB"
    return [
        Result(
            "preprocess broken 10 MB ÷ parse",
            m["pre broken 10"] / m["parse 10"],
            1.5,
            f"{size}, {changes} repairs; preprocess {ms('pre broken 10')}, "
            f"parse_plan of the repaired plan {ms('parse 10')}",
        ),
        Result(
            "preprocess clean 10 MB ÷ parse",
            m["pre clean 10"] / m["parse 10"],
            1.5,
            f"{size}; preprocess {ms('pre clean 10')}, parse_plan {ms('parse 10')}",
        ),
        Result(
            "preprocess broken 10 MB ÷ 1 MB",
            m["pre broken 10"] / m["pre broken 1"],
            12,
            f"{ms('pre broken 10')} ÷ {ms('pre broken 1')}",
        ),
        Result(
            "preprocess clean 10 MB ÷ 1 MB",
            m["pre clean 10"] / m["pre clean 1"],
            12,
            f"{ms('pre clean 10')} ÷ {ms('pre clean 1')}",
        ),
    ]


if __name__ == "__main__":
    sys.exit(report(measure(rounds_from_argv(9))))
