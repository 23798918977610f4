"""Model answers to plans: how many come out as meant, in both corpora, and at what cost.

Two corpora go through ``answer_to_plan`` (what ``teddy plan``, ``teddy acp`` and
``teddy preprocess`` run on a model's answer):

* the *generated* one (``tests/teddy/broken_answers.py``, seed 12, 400 answers): valid
  plans broken by fence, wrapper, preamble and remark rules;
* the *hand-written* one (``tests/data/answers``): answers written the way Claude, GPT,
  Gemini and small local models answer, each with the plan it means, the problem it
  must report (an answer that reads two ways), or nothing to change.

Reported, lower is better: the share of answers that do not come out as meant (target
≤ 0.01 generated, 0 hand-written), the share that come out as a valid plan that is *not*
the one meant, without a word (target 0), and the time of ``answer_to_plan`` on every
hand-written answer ÷ ``check_plan`` of the plans they mean (target ≤ 10: a broken
answer is parsed once per step that proposes a change, to confirm it).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _bench import Result, interleaved, log, report, require, rounds_from_argv  # noqa: E402
from plankit.teddy.format.answer import answer_to_plan  # noqa: E402
from plankit.teddy.format.parse import check_plan  # noqa: E402
from plankit.textio import decode_text  # noqa: E402

ANSWERS = ROOT / "tests" / "data" / "answers"


def _read(path: Path) -> str:
    return decode_text(path.read_bytes(), path=str(path)).text


def _hand_written() -> list[tuple[str, str, str | None, str]]:
    """``(name, answer, intended plan or None, what is expected)``."""
    cases = json.loads((ANSWERS / "cases.json").read_text("utf-8"))
    out = []
    for name, case in sorted(cases.items()):
        plan = _read(ANSWERS / case["plan"]) if "plan" in case else None
        expected = "plan" if plan else ("reported" if "reported" in case else "untouched")
        out.append((name, _read(ANSWERS / f"{name}.answer.md"), plan, expected))
    return out


def _judge(answer: str, intended: str | None, expected: str) -> tuple[bool, bool, bool]:
    """``(as meant, a valid plan that is not the one meant, silently, reported)``."""
    result = answer_to_plan(answer)
    got = check_plan(result.text)[0]
    if expected == "plan":
        meant = got == check_plan(intended or "")[0]
    elif expected == "reported":
        meant = bool(result.problems) and got is None
    else:
        meant = not result.changed
    wrong = got is not None and not meant and not result.problems
    return meant, wrong, bool(result.problems)


def measure(rounds: int = 5) -> list[Result]:
    from tests.teddy.broken_answers import corpus

    generated = corpus(seed=12, count=400)
    hand = _hand_written()
    log(f"answers: {len(generated)} generated, {len(hand)} hand-written …")
    gen = [_judge(c.broken, c.valid, "plan") for c in generated]
    own = [_judge(answer, plan, what) for _, answer, plan, what in hand]
    require(all(check_plan(p)[0] for _, _, p, _ in hand if p), "an intended plan is invalid")
    plans = [p for _, _, p, _ in hand if p]
    m = interleaved(
        {
            "answers": lambda: [answer_to_plan(a) for _, a, _, _ in hand],
            "parse": lambda: [check_plan(p) for p in plans],
        },
        rounds,
    )

    def missed(found: list[tuple[bool, bool, bool]]) -> tuple[float, float, str]:
        meant = sum(a for a, _, _ in found)
        wrong = sum(b for _, b, _ in found)
        told = sum(c for _, _, c in found)
        return (
            1 - meant / len(found),
            wrong / len(found),
            f"{meant}/{len(found)} as meant, {told} reported, {wrong} silently wrong",
        )

    g_miss, g_wrong, g_detail = missed(gen)
    h_miss, h_wrong, h_detail = missed(own)
    return [
        Result("generated answers not as meant", g_miss, 0.01, g_detail),
        Result("generated answers silently wrong", g_wrong, 0.0, g_detail),
        Result("hand-written answers not as meant", h_miss, 0.0, h_detail),
        Result("hand-written answers silently wrong", h_wrong, 0.0, h_detail),
        Result(
            "answer_to_plan of the hand-written answers ÷ check_plan of their plans",
            m["answers"] / m["parse"],
            10.0,
            f"{m['answers'] * 1e3:.1f} ms ÷ {m['parse'] * 1e3:.1f} ms",
        ),
    ]


if __name__ == "__main__":
    sys.exit(report(measure(rounds_from_argv(5))))
