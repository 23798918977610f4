"""Parse speed: ``parse_plan`` ÷ markdown-it-py's own CommonMark parse of the same text.

Two generated plans: 1 MB with over 1,000 actions (target ≤ 0.6), and one of 10,000
actions (about 9 MB; reported against the same target).  Both must parse with no
diagnostic before anything is timed.  ``--rounds N`` sets the rounds of the 1 MB plan
(the 10,000-action plan gets a third of them, at least 3).
"""

from __future__ import annotations

import sys

from markdown_it import MarkdownIt

from _bench import Result, interleaved, log, report, require, rounds_from_argv
from plankit.teddy.format.parse import check_plan, parse_plan
from plans import fenced_share, generate_plan

TARGET = 0.6


def _case(name: str, text: str, min_actions: int, rounds: int) -> Result:
    plan, diagnostics = check_plan(text)
    require(not diagnostics, f"{name}: the generated plan has diagnostics: {diagnostics[:3]}")
    require(plan is not None, f"{name}: the generated plan does not parse")
    assert plan is not None
    require(len(plan.actions) >= min_actions, f"{name}: only {len(plan.actions)} actions")
    md = MarkdownIt("commonmark")
    cases = {"plankit": lambda: parse_plan(text), "markdown-it": lambda: md.parse(text)}
    for func in cases.values():  # warm up: caches, compiled patterns
        func()
    log(f"{name}: {len(text) / 1e6:.1f} MB, {len(plan.actions)} actions, {rounds} rounds …")
    medians = interleaved(cases, rounds)
    ratio = medians["plankit"] / medians["markdown-it"]
    detail = (
        f"{len(text) / 1e6:.2f} MB, {len(plan.actions)} actions, "
        f"{fenced_share(text):.0%} in fences; parse_plan {medians['plankit'] * 1e3:.0f} ms, "
        f"markdown-it {medians['markdown-it'] * 1e3:.0f} ms"
    )
    return Result(name, ratio, TARGET, detail)


def measure(rounds: int = 15) -> list[Result]:
    """The two parse ratios."""
    one_mb = generate_plan(1_000_000, actions=1_000, seed=1)
    many = generate_plan(actions=10_000, seed=2, invoke=False)
    return [
        _case("parse 1 MB ÷ markdown-it", one_mb, 1_000, rounds),
        _case("parse 10,000 actions ÷ markdown-it", many, 10_000, max(3, rounds // 3)),
    ]


if __name__ == "__main__":
    sys.exit(report(measure(rounds_from_argv(15))))
