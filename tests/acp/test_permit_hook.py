"""The runtime's per-action ``permit`` hook, as any front end uses it (``teddy acp`` is
one): asked before each approved action, a string skips it with that reason and the
next action is still asked."""

from __future__ import annotations

from pathlib import Path

from plankit.teddy.format.model import Action
from plankit.teddy.run.actions import Runtime
from plankit.teddy.run.approval import Approval, AutoApprover, Decision, NoReply, ScriptedApprover
from plankit.teddy.run.execute import execute_turn
from plankit.teddy.run.report import Status
from plankit.teddy.session.config import Config
from plankit.teddy.session.layout import Turn, create_session
from plankit.teddy.session.prompts import get_prompt
from tests.acp.kit import create, execute, plan_text


def _turn(root: Path, text: str) -> Turn:
    session = create_session(root, "permit", get_prompt("Developer"), "Developer")
    turn = session.latest()
    turn.plan_path.write_text(text, encoding="utf-8")
    return turn


class Gate:
    def __init__(self, answers: dict[int, str | None]) -> None:
        self.answers = answers
        self.asked: list[tuple[int, str]] = []

    def __call__(self, index: int, action: Action) -> str | None:
        self.asked.append((index, str(action.type)))
        return self.answers.get(index)


def test_a_refused_action_is_skipped_and_the_next_one_runs(tmp_path: Path) -> None:
    turn = _turn(
        tmp_path, plan_text(create("a.txt", "a"), create("b.txt", "b"), execute("touch c"))
    )
    gate = Gate({1: "rejected by the user"})
    runtime = Runtime(tmp_path, Config(), NoReply(), permit=gate)
    outcome = execute_turn(
        turn, approver=AutoApprover(), chat=NoReply(), config=Config(), runtime=runtime
    )
    assert gate.asked == [(0, "CREATE"), (1, "CREATE"), (2, "EXECUTE")]
    assert (tmp_path / "a.txt").exists() and not (tmp_path / "b.txt").exists()
    assert (tmp_path / "c").exists()
    assert outcome.status is Status.PARTIAL
    assert "### 2. `CREATE` b.txt\n- **Status:** Skipped 🟡 (rejected by the user)" in (
        outcome.report or ""
    )


def test_permit_is_not_asked_for_unselected_actions_nor_after_a_failure(tmp_path: Path) -> None:
    turn = _turn(
        tmp_path,
        plan_text(
            create("a.txt", "a"), execute("exit 3"), create("b.txt", "b"), create("d.txt", "d")
        ),
    )
    gate = Gate({})
    approval = Approval(Decision.APPROVE, selected=frozenset({1, 2, 3}))
    runtime = Runtime(tmp_path, Config(), NoReply(), permit=gate)
    outcome = execute_turn(
        turn,
        approver=ScriptedApprover([approval]),
        chat=NoReply(),
        config=Config(),
        runtime=runtime,
    )
    assert gate.asked == [(1, "EXECUTE")]  # 0 not selected; 2 and 3 skipped after the failure
    assert outcome.status is Status.FAILED


def test_without_a_permit_everything_approved_runs(tmp_path: Path) -> None:
    turn = _turn(tmp_path, plan_text(create("a.txt", "a")))
    outcome = execute_turn(turn, approver=AutoApprover(), chat=NoReply(), config=Config())
    assert outcome.status is Status.COMPLETED
