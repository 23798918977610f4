"""The repairs of a turn's answer that changed what an action does
(plankit.teddy.format.repairs.action_repairs), read again from answer.md while plan.md is
still what the answer gave."""

from __future__ import annotations

from pathlib import Path

from plankit.teddy.format.answer import answer_to_plan
from plankit.teddy.format.repairs import action_repairs

ANSWER = """# Add the notes

## Rationale
```text
The app has no notes.
```

## Action Plan

### `CREATE`
- **File Path:** [notes.md](/notes.md)
```markdown
# Notes

```python
x = 1
```
```

### `EXECUTE`
- **Description:** List the notes.
```shell
ls notes.md
``` Let me know if you want more.
"""
"""A CREATE whose inner block closes the outer one early (its fences on lines 12 and 18
lengthened), and an EXECUTE whose closing fence has a remark on its line (line 24)."""
REPAIRS = (
    "answer.md line 12: lengthened the opening fence from 3 to 4 (the block ends at line 18)",
    "answer.md line 18: lengthened the closing fence from 3 to 4 (the block opens at line 12)",
)


def _turn(tmp_path: Path, answer: str = ANSWER) -> tuple[Path, Path]:
    (tmp_path / "answer.md").write_text(answer, encoding="utf-8", newline="")
    plan = tmp_path / "plan.md"
    plan.write_text(answer_to_plan(answer).text, encoding="utf-8", newline="")
    return tmp_path / "answer.md", plan


def test_the_repairs_that_changed_an_action_are_listed_with_their_answer_lines(
    tmp_path: Path,
) -> None:
    answer, plan = _turn(tmp_path)
    found = action_repairs(answer, plan)
    assert found[:2] == REPAIRS
    assert len(found) == 3
    assert found[2].startswith("answer.md line 24: the closing fence here has text after it")


def test_a_plan_saved_with_a_byte_order_mark_or_without_its_last_newlines_still_matches(
    tmp_path: Path,
) -> None:
    answer, plan = _turn(tmp_path)
    text = plan.read_text(encoding="utf-8")
    plan.write_text("\ufeff" + text.rstrip("\n"), encoding="utf-8")
    assert action_repairs(answer, plan)[:2] == REPAIRS
    plan.write_text(text + "\n\n", encoding="utf-8")
    assert action_repairs(answer, plan)[:2] == REPAIRS
    # and an answer with a byte-order mark, whose plan has none
    (tmp_path / "answer.md").write_text("\ufeff" + ANSWER, encoding="utf-8")
    plan.write_text(text, encoding="utf-8")
    assert action_repairs(answer, plan)[:2] == REPAIRS


def test_a_plan_edited_since_the_answer_has_no_repairs_of_it(tmp_path: Path) -> None:
    answer, plan = _turn(tmp_path)
    plan.write_text(plan.read_text(encoding="utf-8").replace("ls notes.md", "cat notes.md"))
    assert action_repairs(answer, plan) == ()


def test_no_answer_file_or_no_plan_gives_no_repairs(tmp_path: Path) -> None:
    answer, plan = _turn(tmp_path)
    plan.unlink()
    assert action_repairs(answer, plan) == ()
    answer.unlink()
    assert action_repairs(answer, plan) == ()
    answer.mkdir()  # a folder where the answer was
    assert action_repairs(answer, plan) == ()


def test_an_unreadable_answer_gives_no_repairs(tmp_path: Path) -> None:
    answer, plan = _turn(tmp_path)
    answer.write_bytes(b"# Add the notes\n\xff\xfe not UTF-8\n")
    assert action_repairs(answer, plan) == ()


def test_an_answer_whose_repairs_change_no_action_lists_none(tmp_path: Path) -> None:
    clean = ANSWER.replace("```\n```\n", "```\n````\n").replace("```markdown", "````markdown")
    clean = "Here is the plan:\n\n" + clean.replace("``` Let me know if you want more.", "```")
    answer, plan = _turn(tmp_path, clean)
    assert [c.kind for c in answer_to_plan(clean).changes] == ["preamble"]
    assert action_repairs(answer, plan) == ()


def test_trailing_spaces_at_the_end_of_the_plan_count(tmp_path: Path) -> None:
    # the answer's last fence has trailing spaces, as models leave them: the plan keeps
    # them, and a plan whose only edit took them away is no longer what the answer gave
    spaced = ANSWER.replace("``` Let me know if you want more.", "```  ")
    answer, plan = _turn(tmp_path, spaced)
    assert action_repairs(answer, plan) == REPAIRS
    plan.write_text(plan.read_text(encoding="utf-8").rstrip() + "\n", encoding="utf-8")
    assert action_repairs(answer, plan) == ()


def test_a_plan_whose_last_word_ends_in_a_capital_x_keeps_its_repairs(tmp_path: Path) -> None:
    """Only line endings are ignored when the plan is compared with the answer: a plan
    that ends with a chat line about "version X" is still the answer's plan."""
    answer = ANSWER + "\n### `CHAT_WITH_USER`\nShould the notes move to version X\n"
    answer_path, plan = _turn(tmp_path, answer)
    assert plan.read_text(encoding="utf-8").rstrip("\n").endswith("version X")
    assert action_repairs(answer_path, plan)[:2] == REPAIRS
