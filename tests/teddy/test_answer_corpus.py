"""Hand-written model answers (tests/data/answers/): each comes out as the plan it means.

Each ``NAME.answer.md`` was written the way a chat model or a small local model answers
(Claude, GPT, Gemini, local models: the prefix of the name), with one or more of the
breakages issue 21 names; ``cases.json`` says what each must give: ``plan`` (the
intended plan, parsed equal, and the kinds of change that must be listed),
``reported`` (a problem naming both readings, and no plan guessed) or ``untouched``.
The ``*.plan.md`` files are valid plans and, with every other valid plan of the
project, must pass through byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plankit.teddy.format.answer import answer_to_plan
from plankit.teddy.format.parse import check_plan
from plankit.teddy.format.preprocess import Preprocessed
from plankit.textio import decode_text

ROOT = Path(__file__).resolve().parents[2]
ANSWERS = ROOT / "tests" / "data" / "answers"
CASES: dict[str, dict[str, object]] = json.loads((ANSWERS / "cases.json").read_text("utf-8"))


def _read(path: Path) -> str:
    return decode_text(path.read_bytes(), path=str(path)).text


def test_every_answer_file_has_a_case_and_every_case_a_file() -> None:
    files = {p.name.removesuffix(".answer.md") for p in ANSWERS.glob("*.answer.md")}
    assert files == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_answer_gives_what_it_means(name: str) -> None:
    case = CASES[name]
    text = _read(ANSWERS / f"{name}.answer.md")
    result = answer_to_plan(text)
    assert answer_to_plan(result.text).text == result.text  # idempotent
    if "plan" in case:
        intended, diagnostics = check_plan(_read(ANSWERS / str(case["plan"])))
        assert intended is not None, diagnostics
        got, problems = check_plan(result.text)
        assert got == intended, problems
        assert not result.problems
        kinds = {c.kind for c in result.changes}
        assert kinds >= set(case["kinds"]), kinds  # type: ignore[arg-type]
        assert all(1 <= c.line <= text.count("\n") + 1 for c in result.changes)
    elif "reported" in case:
        assert any(str(case["reported"]) in p.message for p in result.problems), result.problems
        assert check_plan(result.text)[0] is None  # nothing guessed into a valid plan
    else:
        assert result == Preprocessed(text, ())


def _valid_plans() -> list[Path]:
    found = [
        *(ROOT / "tests" / "data" / "plans" / "valid").rglob("*.md"),
        *(ROOT / "tests" / "data" / "preprocess").glob("*.expected.md"),
        *ANSWERS.glob("*.plan.md"),
        *(ROOT / "examples").rglob("*.md"),
    ]
    return sorted(p for p in found if check_plan(_read(p))[0] is not None)


def test_every_valid_plan_of_the_project_passes_byte_for_byte() -> None:
    plans = _valid_plans()
    assert len(plans) >= 50
    for path in plans:
        text = _read(path)
        assert answer_to_plan(text) == Preprocessed(text, ()), path


def test_the_corpus_rate() -> None:
    meant = 0
    for name, case in CASES.items():
        result = answer_to_plan(_read(ANSWERS / f"{name}.answer.md"))
        if "plan" in case:
            intended = check_plan(_read(ANSWERS / str(case["plan"])))[0]
            meant += check_plan(result.text)[0] == intended
        elif "reported" in case:
            meant += bool(result.problems)
        else:
            meant += not result.changed
    print(f"\nhand-written answers: {meant}/{len(CASES)} as meant")
    assert meant == len(CASES)
