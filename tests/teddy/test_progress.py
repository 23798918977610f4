"""Progress while executing: plain lines off a terminal, a live rich list on one."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from plankit.teddy.format.model import ChatWithUser, Create, Execute
from plankit.teddy.run.actions import Runtime
from plankit.teddy.run.approval import Approval, Decision, ScriptedApprover, ScriptedChat
from plankit.teddy.run.execute import execute_stateless
from plankit.teddy.run.progress import (
    PlainProgress,
    RichProgress,
    Row,
    State,
    Tracker,
    live_progress,
    seconds,
)
from plankit.teddy.run.report import ActionResult
from plankit.teddy.session.config import Config

PLAN = """# Progress
- **Status:** Green 🟢
- **Agent:** Developer

## Rationale
```text
### 1. Synthesis
Show progress.
### 2. Justification
Tests.
### 3. Expected Outcome
Lines.
### 4. State Dashboard
- **Progress:** Done
```

## Action Plan

### `CREATE`
- **File Path:** [a.txt](/a.txt)
```text
a
```

### `EXECUTE`
```shell
sleep 1.2; echo done
```

### `CREATE`
- **File Path:** [b.txt](/b.txt)
```text
b
```

### `EXECUTE`
```shell
exit 3
```

### `CREATE`
- **File Path:** [c.txt](/c.txt)
```text
c
```
"""


def run(tmp_path: Path, tracker: Tracker, approval: Approval) -> None:
    plan = tmp_path / "plan.md"
    plan.write_text(PLAN)
    root = tmp_path / "root"
    root.mkdir()
    chat = ScriptedChat([])
    outcome = execute_stateless(
        plan, root, approver=tracker.watch(ScriptedApprover([approval])), chat=chat,
        config=Config(), runtime=Runtime(root, Config(), chat, progress=tracker),
    )  # fmt: skip
    tracker.close()
    assert outcome.status is not None and not outcome.validation, outcome.report


def test_plain_lines_for_every_state(tmp_path: Path) -> None:
    out = io.StringIO()
    run(tmp_path, PlainProgress(out), Approval(Decision.APPROVE, selected=frozenset({0, 1, 3, 4})))
    lines = [re.sub(r"\d+(\.\d+)? (ms|s)", "T", line) for line in out.getvalue().splitlines()]
    assert lines == [
        "[1/5] CREATE a.txt: running",
        "[1/5] CREATE a.txt: done (T)",
        "[2/5] EXECUTE sleep 1.2; echo done: running",
        "[2/5] EXECUTE sleep 1.2; echo done: done (T)",
        "[3/5] CREATE b.txt: skipped (not selected)",
        "[4/5] EXECUTE exit 3: running",
        "[4/5] EXECUTE exit 3: failed (exit code 3, T)",
        "[5/5] CREATE c.txt: skipped (skipped after the failure of `EXECUTE` above)",
    ]


def test_plain_lines_without_an_approval_count(tmp_path: Path) -> None:
    out = io.StringIO()
    tracker = PlainProgress(out)
    result = ActionResult(Create("x", "y"), True, None, True, 0.5)
    tracker.started(0, Create("x", "y"))
    tracker.finished(0, result)
    tracker.close()
    assert out.getvalue() == "[1] CREATE x: running\n[1] CREATE x: done (500 ms)\n"


def test_plain_lines_of_file_writes_wait_to_go_out_together(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from plankit.teddy.run import progress

    clock = [0.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    tracker = PlainProgress(out)
    tracker.expect([Create("a", "x"), Execute("make"), Create("b", "y"), Create("c", "z")], None)
    tracker.started(0, Create("a", "x"))
    tracker.finished(0, ActionResult(Create("a", "x"), True, None, True, 0.001))
    assert out.getvalue() == ""  # a file write: its lines wait for more
    tracker.started(1, Execute("make"))  # a command may take long: shown at once
    assert out.getvalue().splitlines() == [
        "[1/4] CREATE a: running",
        "[1/4] CREATE a: done (1 ms)",
        "[2/4] EXECUTE make: running",
    ]
    tracker.finished(1, ActionResult(Execute("make"), True, None, True, 2.0))
    assert out.getvalue().splitlines()[-1] == "[2/4] EXECUTE make: done (2.0 s)"
    tracker.started(2, Create("b", "y"))
    clock[0] += progress.GATHER_FOR  # the first line waiting has waited long enough
    tracker.finished(2, ActionResult(Create("b", "y"), True, None, True, 0.001))
    assert out.getvalue().splitlines()[-2:] == [
        "[3/4] CREATE b: running",
        "[3/4] CREATE b: done (1 ms)",
    ]
    tracker.started(3, Create("c", "z"))
    clock[0] += progress.GATHER_FOR / 2
    tracker.finished(3, ActionResult(Create("c", "z"), True, None, True, 0.001))
    assert "CREATE c" not in out.getvalue()
    tracker.close()  # the turn is over: nothing waits
    assert out.getvalue().splitlines()[-2:] == [
        "[4/4] CREATE c: running",
        "[4/4] CREATE c: done (1 ms)",
    ]


def test_rich_live_list_in_a_terminal(tmp_path: Path) -> None:
    from rich.console import Console

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, color_system=None)
    tracker = RichProgress(console)
    run(tmp_path, tracker, Approval(Decision.APPROVE, selected=frozenset({0, 1, 3, 4})))
    text = out.getvalue()
    assert "running 1.2 s" in text or "running 1.1 s" in text or "running 1.3 s" in text
    finals = [line for line in re.split(r"[\r\n]", text) if "[" in line]
    assert any(re.search(r"✓ \[1/5\] CREATE a.txt: done \(\d+ ms\)", line) for line in finals)
    assert any("– [3/5] CREATE b.txt: skipped (not selected)" in line for line in finals)
    assert any("✗ [4/5] EXECUTE exit 3: failed (exit code 3" in line for line in finals)
    assert tracker.live is None  # stopped after the last action


def test_rich_stops_the_live_list_while_chatting() -> None:
    from rich.console import Console

    tracker = RichProgress(Console(file=io.StringIO(), force_terminal=True))
    tracker.expect([Execute("true"), ChatWithUser("hi?"), Execute("true")], None)
    tracker.started(0, Execute("true"))
    assert tracker.live is not None
    tracker.finished(0, ActionResult(Execute("true"), True, None, True, 0.1))
    tracker.started(1, ChatWithUser("hi?"))
    assert tracker.live is None  # the user answers in the plain terminal
    tracker.finished(1, ActionResult(ChatWithUser("hi?"), True, None, True, 0.1))
    tracker.started(2, Execute("true"))
    assert tracker.live is not None
    tracker.finished(2, ActionResult(Execute("true"), True, None, True, 0.1))
    assert tracker.live is None


def test_running_row_shows_elapsed_time_after_a_second(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    from plankit.teddy.run import progress

    now = 1000.0  # the module's clock stands still: a busy machine cannot add a second
    monkeypatch.setattr(progress, "time", types.SimpleNamespace(monotonic=lambda: now))
    tracker = Tracker()
    tracker.total = 1
    row = Row("EXECUTE make", State.RUNNING, started=now - 75)
    assert tracker.line(0, row) == "[1/1] EXECUTE make: running 1 min 15 s"
    row.started = now - 0.9
    assert tracker.line(0, row) == "[1/1] EXECUTE make: running"


@pytest.mark.parametrize(
    ("value", "shown"), [(0.0123, "12 ms"), (3.45, "3.5 s"), (125, "2 min 05 s")]
)
def test_seconds(value: float, shown: str) -> None:
    assert seconds(value) == shown


def test_live_progress_is_plain_off_a_terminal_and_rich_on_one() -> None:
    assert isinstance(live_progress(io.StringIO()), PlainProgress)

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert isinstance(live_progress(Tty()), RichProgress)


def test_a_skipped_plan_shows_nothing(tmp_path: Path) -> None:
    out = io.StringIO()
    tracker = PlainProgress(out)
    run(tmp_path, tracker, Approval(Decision.SKIP))
    assert out.getvalue() == "" and tracker.rows == {}
