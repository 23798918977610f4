"""execute_turn with the shipped scripted approver and chat (the library API)."""

from __future__ import annotations

from pathlib import Path

import pytest

from plankit.teddy.run.approval import ScriptedApprover, ScriptedChat
from plankit.teddy.run.execute import execute_turn
from plankit.teddy.run.report import Status
from plankit.teddy.session.config import Config
from plankit.teddy.session.layout import create_session
from plankit.teddy.session.prompts import get_prompt
from tests.teddy.test_session_e2e import plan
from tests.waiting import record_group, wait_for_group_end, wait_until


def _turn(tmp_path: Path, actions: str):  # type: ignore[no-untyped-def]
    session = create_session(tmp_path, "lib", get_prompt("Developer"), "Developer")
    turn = session.latest()
    turn.plan_path.write_text(plan(actions), encoding="utf-8")
    return turn


def test_skip_writes_a_skipped_report_and_prepares_the_next_turn(tmp_path: Path) -> None:
    turn = _turn(tmp_path, "### `CREATE`\n- **File Path:** [a.txt](/a.txt)\n```\nx\n```")
    outcome = execute_turn(
        turn, approver=ScriptedApprover(["skip"]), chat=ScriptedChat([]), config=Config()
    )
    assert outcome.status is Status.SKIPPED
    assert not (tmp_path / "a.txt").exists()
    report = turn.report_path.read_text()
    assert "Skipped 🟡 (the plan was skipped by the user)" in report
    assert "- **Actions:** 1 total / 0 approved / 1 skipped" in report
    assert outcome.next_turn is not None
    assert outcome.next_turn.context_path.read_text().splitlines() == [turn.rel("report.md")]


def test_quit_writes_nothing(tmp_path: Path) -> None:
    turn = _turn(tmp_path, "### `CREATE`\n- **File Path:** [a.txt](/a.txt)\n```\nx\n```")
    outcome = execute_turn(
        turn, approver=ScriptedApprover(["quit"]), chat=ScriptedChat([]), config=Config()
    )
    assert (outcome.status, outcome.report, outcome.next_turn) == (None, None, None)
    assert not turn.report_path.exists()
    assert [t.name for t in turn.session.turns()] == ["01"]


def test_chat_reply_goes_into_the_report(tmp_path: Path) -> None:
    turn = _turn(tmp_path, "### `CHAT_WITH_USER`\nShall I use ```` fences?")
    chat = ScriptedChat(["Yes, ``` and ```` both."])
    approver = ScriptedApprover(["approve"])
    outcome = execute_turn(turn, approver=approver, chat=chat, config=Config())
    assert outcome.status is Status.COMPLETED
    assert chat.messages == ["Shall I use ```` fences?"]
    assert approver.reviewed[0].title == "A plan"
    report = turn.report_path.read_text()
    assert "**User reply:**\n`````text\nYes, ``` and ```` both.\n`````" in report


def test_an_approval_can_select_and_modify_actions(tmp_path: Path) -> None:
    from plankit.teddy.format.model import Create
    from plankit.teddy.run.approval import Approval, Decision

    turn = _turn(
        tmp_path,
        "### `CREATE`\n- **File Path:** [a.txt](/a.txt)\n```\nA\n```\n\n"
        "### `CREATE`\n- **File Path:** [b.txt](/b.txt)\n```\nB\n```",
    )
    approval = Approval(
        Decision.APPROVE,
        selected=frozenset({1}),
        actions=(Create("a.txt", "A"), Create("c.txt", "C by the user")),
        modified={1: "Saved as `c.txt` with new content."},
    )
    outcome = execute_turn(
        turn, approver=ScriptedApprover([approval]), chat=ScriptedChat([]), config=Config()
    )
    assert outcome.status is Status.PARTIAL
    assert not (tmp_path / "a.txt").exists() and not (tmp_path / "b.txt").exists()
    assert (tmp_path / "c.txt").read_text() == "C by the user\n"
    report = turn.report_path.read_text()
    assert "### 1. `CREATE` a.txt\n- **Status:** Skipped 🟡 (not selected)" in report
    assert "### 2. `CREATE` c.txt\n- **Status:** Approved ✅" in report
    assert "- **Modified by user:** yes" in report
    assert "Saved as `c.txt` with new content." in report


def test_ctrl_c_before_the_wait_still_stops_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The interrupt can arrive while the output readers are being set up, before the
    # wait: the command must be stopped all the same.
    import plankit.teddy.run.shell as runner

    real = runner._Capture.__init__
    calls = []
    group, marker = tmp_path / "group", tmp_path / "finished"

    def interrupted_once(self: runner._Capture, stream: object, cap: int) -> None:
        calls.append(1)
        if len(calls) == 1:
            wait_until(group.exists, "the command to start")
            raise KeyboardInterrupt
        real(self, stream, cap)  # type: ignore[arg-type]

    monkeypatch.setattr(runner._Capture, "__init__", interrupted_once)
    command = f"{record_group(group)}; sleep 30; touch {marker}"
    result = runner.run_command(command, cwd=tmp_path, timeout=60, cap=1000)
    assert result.interrupted and result.exit_code is None
    wait_for_group_end(group)  # stopped: the sleep is gone long before its 30 s
    assert not marker.exists()


def test_the_default_research_backend_maps_ddgs_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ddgs is a real dependency; only its network call is replaced here.
    import ddgs

    from plankit.teddy.run.research import SearchResult, load_backend

    class OfflineDDGS:
        def text(self, query: str, max_results: int) -> list[dict[str, str]]:
            return [{"title": f"About {query}", "href": "https://example.com/a", "body": "text"}][
                :max_results
            ]

    monkeypatch.setattr(ddgs, "DDGS", OfflineDDGS)
    backend = load_backend("ddgs", tmp_path)
    assert backend.search("markdown", 5) == [
        SearchResult("About markdown", "https://example.com/a", "text")
    ]
