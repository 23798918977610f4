"""A repair of the model's answer that changed what an action does is listed where the
plan is judged: report.md's notes and the re-plan feedback (with its line in answer.md).

The answer's CREATE closes its block with a remark on the fence's line; its EDIT's FIND
matches nowhere, so the plan fails validation and is re-planned.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("llm")

from plankit.teddy.planning import scripted_model
from plankit.teddy.planning.models import ModelPlanner, load_model
from plankit.teddy.planning.replan import correct_failed_plan
from plankit.teddy.planning.turn import plan_turn
from plankit.teddy.run.approval import AutoApprover, NoReply
from plankit.teddy.run.execute import execute_turn
from plankit.teddy.session.config import Config
from plankit.teddy.session.layout import create_session
from plankit.teddy.session.prompts import get_prompt

RATIONALE = """## Rationale
```text
### 1. Synthesis
The app has no notes.
### 2. Justification
Notes help.
### 3. Expected Outcome
notes.md exists.
### 4. State Dashboard
- Notes: none
```
"""
ANSWER = f"""# Add the notes

{RATIONALE}
## Action Plan

### `EDIT`
- **File Path:** [src/app.py](/src/app.py)

FIND:
```python
    return 40
```
REPLACE:
```python
    return 42
```

### `CREATE`
- **File Path:** [notes.md](/notes.md)
```markdown
# Notes

- First entry.
``` Let me know if you want a changelog section as well.
"""
GOOD = f"""# Add the notes

{RATIONALE}
## Action Plan

### `READ`
- **Resource:** [src/app.py](/src/app.py)
"""
TAIL_LINE = 35  # the closing fence with the remark, in ANSWER


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm-home"))
    monkeypatch.setenv("PLANKIT_HOME", str(tmp_path / "plankit-home"))
    for name in ("TEDDY_MODEL", "TEDDY_SESSION", "TEDDY_SCRIPTED_RESPONSES"):
        monkeypatch.delenv(name, raising=False)
    scripted_model.reset()
    yield
    scripted_model.reset()


def test_report_and_feedback_list_the_repair_that_changed_a_file(tmp_path: Path) -> None:
    assert ANSWER.splitlines()[TAIL_LINE - 1].startswith("``` Let me know")
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def answer():\n    return 41\n", encoding="utf-8")
    session = create_session(root, "notes", get_prompt("Developer"), "Developer")
    turn = session.latest()
    config = Config()
    scripted_model.script([ANSWER, GOOD])
    planner = ModelPlanner(load_model("teddy-scripted"), live=False)
    planned = plan_turn(turn, "add notes", planner, config)
    assert [c.line for c in planned.changes if c.touches_action] == [TAIL_LINE]
    outcome = execute_turn(turn, approver=AutoApprover(), chat=NoReply(), config=config)
    assert outcome.validation
    report = turn.report_path.read_text(encoding="utf-8")
    note = (
        f"- **Note:** repaired from the model's answer: answer.md line {TAIL_LINE}: the "
        "closing fence here has text after it"
    )
    assert note in report
    correct_failed_plan(
        turn, outcome, config, model=None, manual=False, interactive=False, planner=planner
    )
    feedback = scripted_model.received()[-1].prompt
    assert "## Repairs Made to Your Answer (check that they kept your meaning):" in feedback
    assert f"- answer.md line {TAIL_LINE}: the closing fence here has text after it" in feedback
