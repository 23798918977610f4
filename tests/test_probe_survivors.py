"""tools/probe_survivors.py: the ways a chat gives a corpus answer, and its refusal
to run without mutants."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "probe_survivors", ROOT / "tools" / "probe_survivors.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PLAN = "# Title\n\n## Rationale\n```text\nwhy\n```\n\n## Action Plan\n\n### `READ`\n- **Resource:** [a.py](/a.py)\n"


def test_an_answer_is_read_wrapped_followed_by_remarks_and_cut_off() -> None:
    made = _tool().inputs("a.answer.md", PLAN)
    assert made["a.answer.md in ```markdown, then ''"] == "```markdown\n" + PLAN + "```\n"
    assert made["a.answer.md in ~~~markdown, then '\\nLet me know if you want changes.\\n'"] == (
        "~~~markdown\n" + PLAN + "~~~\n\nLet me know if you want changes.\n"
    )
    lines = ("```\n" + PLAN + "```\n").splitlines(keepends=True)
    cuts = [label for label in made if label.startswith("a.answer.md in ```, cut")]
    assert cuts == [f"a.answer.md in ```, cut after line {n}" for n in range(6, 13)]
    assert made["a.answer.md in ```, cut after line 9"] == "".join(lines[:9])
    assert len(made) == 4 * (7 + 7)  # four fences, seven endings and seven cuts each


def test_an_answer_already_in_a_fence_is_not_wrapped_again() -> None:
    made = _tool().inputs("b.answer.md", "````markdown\n" + PLAN + "````")
    assert all(label.startswith("b.answer.md,") for label in made)
    assert made["b.answer.md, then ''"] == "````markdown\n" + PLAN + "````\n"


def test_a_module_without_mutants_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as ended:
        _tool().main(["plankit.no.such.module"])
    assert ended.value.code == 2
    assert "run tools/mutate.py plankit.no.such.module first" in capsys.readouterr().err
