"""``teddy parse`` of an invalid plan says when ``teddy preprocess`` would make it valid.

The command finds that out without holding the plan twice: :func:`answer_edits` gives
what :func:`answer_to_plan` would do as edits of the text, and :func:`apply_edits`
applies them through the repaired plan's UTF-8.  Both must give exactly what
:func:`answer_to_plan` gives, for every text that does not parse, and the command must
print its line exactly when the repaired text parses.
"""

from __future__ import annotations

import gc
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plankit.teddy import cli as teddy_cli
from plankit.teddy.format import answer
from plankit.teddy.format.answer import answer_edits, answer_to_plan, apply_edits
from plankit.teddy.format.parse import check_plan
from plankit.teddy.format.preprocess import Sanitizer
from tests.profiles import examples
from tests.teddy.broken_answers import corpus

DATA = Path(__file__).resolve().parents[1] / "data" / "preprocess"
BROKEN = sorted(
    p.read_bytes().decode("utf-8") for p in DATA.glob("*.broken.md") if "-clean-" not in p.name
)
CASES = [case.broken for case in corpus(seed=31, count=300)] + BROKEN
# invalid for another reason too: the repair does not make them valid
CASES += [text.replace("CREATE`", "DEPLOY`", 1) for text in CASES[:60] if "CREATE`" in text]


def same_as_answer_to_plan(text: str) -> bool:
    """Whether :func:`answer_edits` agrees with :func:`answer_to_plan` on ``text`` (a
    text that does not parse); True when it used the edits, False when it deferred."""
    found = answer_edits(text)
    if found is None:
        return False
    edits, changes = found
    made = answer_to_plan(text)
    assert changes == made.changes
    texts = [text]
    assert apply_edits(texts, edits) == made.text
    assert not texts
    assert (not edits) == (not made.changed)
    return True


def test_the_edits_are_what_answer_to_plan_does_to_broken_answers() -> None:
    used: Counter[str] = Counter()
    for text in CASES:
        if check_plan(text)[0] is not None:
            continue
        fast = same_as_answer_to_plan(text)
        used["edits" if fast else "answer_to_plan"] += 1
        if fast and answer_to_plan(text).changed:
            used["repaired from edits"] += 1
    # both ways are taken, and the edits settle many repairs on their own
    assert used["answer_to_plan"] >= 30, used
    assert used["repaired from edits"] >= 30, used


def test_a_repair_read_twice_is_left_to_answer_to_plan() -> None:
    # the first reading gives a block an end that does not fit, so the text is read again
    text = "\n".join(["## Rationale", "```", "```", "````", "```", "```", "# Plan"])
    assert check_plan(text)[0] is None
    first = Sanitizer(text)
    first.run()
    assert first.unsure
    assert first.changes() != answer_to_plan(text).changes  # reported from two readings
    assert answer_edits(text) is None


answer_line = st.sampled_from(
    [
        "# Plan",
        "## Rationale",
        "## Action Plan",
        "### `CREATE`",
        "### `EDIT`",
        "### `CHAT_WITH_USER`",
        "- **File Path:** [a.py](/a.py)",
        "FIND:",
        "REPLACE:",
        "```",
        "````",
        "```python",
        "~~~",
        "text 🟢",
        "",
        "Here is the plan:",
    ]
)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(answer_line, max_size=30), st.sampled_from(["\n", "\r\n"]))
def test_the_edits_are_what_answer_to_plan_does_to_any_invalid_text(
    lines: list[str], newline: str
) -> None:
    text = newline.join(lines)
    if check_plan(text)[0] is None:
        same_as_answer_to_plan(text)


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 1 << 16])
def test_apply_edits_gives_the_edited_text(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    monkeypatch.setattr(answer, "ENCODE_CHUNK", chunk)
    text = "# Plan 🟢\nçà\n```\nbody ✓\n"
    edits = ((0, 0, "é"), (10, 13, "````"), (16, 16, "🟢"), (len(text), len(text), "```\n"))
    expected = "é" + text[:10] + "````" + text[13:16] + "🟢" + text[16:] + "```\n"
    texts = [text]
    assert apply_edits(texts, edits) == expected
    assert texts == []  # taken
    assert apply_edits([text], ()) == text
    assert apply_edits(["abc"], ((0, 3, ""),)) == ""
    assert apply_edits(["a\ud800b"], ((1, 1, "\udc00"),)) == "a\udc00\ud800b"


def expected_suggestion(text: str) -> bool:
    """What ``teddy parse`` said before it used :func:`answer_edits`."""
    made = answer_to_plan(text)
    return made.changed and check_plan(made.text)[0] is not None


def test_parse_suggests_preprocess_exactly_when_the_repair_parses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The command's full collection gives a fresh process's freed memory back; in a test
    # worker's heap of thousands of tests it costs a third of a second a call, 120 times,
    # and has no part in what is said. test_parse_leaves_the_garbage_collector_as_it_found_it
    # runs the command with it.
    monkeypatch.setattr(gc, "collect", lambda generation=2: 0)
    path = tmp_path / "plan.md"
    said: Counter[bool] = Counter()
    for text in CASES[::3]:
        if check_plan(text)[0] is not None:
            continue
        path.write_bytes(text.encode("utf-8"))
        result = CliRunner().invoke(teddy_cli.cli, ["parse", str(path)])
        assert result.exit_code == 1
        text = text.removeprefix("\ufeff")  # the command reads the file without it
        expected = expected_suggestion(text)
        assert ("makes it a valid plan" in result.stderr) == expected, text
        if expected:
            count = len(answer_to_plan(text).changes)
            assert result.stderr.splitlines()[-1] == (
                f"{path}: `teddy preprocess {path}` makes it a valid plan "
                f"({count} change{'s' * (count != 1)})"
            )
        said[expected] += 1
    assert said[True] >= 20, said
    assert said[False] >= 1, said


def test_parse_leaves_the_garbage_collector_as_it_found_it(tmp_path: Path) -> None:
    path = tmp_path / "plan.md"
    path.write_text(next(t for t in CASES if expected_suggestion(t)), encoding="utf-8")
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            result = CliRunner().invoke(teddy_cli.cli, ["parse", str(path)])
            assert "makes it a valid plan" in result.stderr
            assert gc.isenabled() == enabled
        finally:
            gc.enable()
