"""What report.md says of CHAT_WITH_USER, of a plan that failed validation, and of a READ
of a URL (fetched in its own turn)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from plankit.teddy.context.payload import URL_CACHE, build_payload
from plankit.teddy.run.approval import ScriptedApprover, ScriptedChat
from plankit.teddy.run.execute import execute_turn
from plankit.teddy.run.report import Status
from plankit.teddy.session.config import load_config
from plankit.teddy.session.layout import Turn, create_session
from plankit.teddy.session.prompts import get_prompt
from tests.teddy.test_session_e2e import plan

QUESTION = "Which colour, *blue* or ```green```?"


def _turn(root: Path, actions: str) -> Turn:
    session = create_session(root, "report", get_prompt("Developer"), "Developer")
    turn = session.latest()
    turn.plan_path.write_text(plan(actions), encoding="utf-8")
    return turn


def _run(turn: Turn, replies: list[str | None]):  # type: ignore[no-untyped-def]
    return execute_turn(
        turn,
        approver=ScriptedApprover(["approve"]),
        chat=ScriptedChat(replies),
        config=load_config(turn.session.root),
    )


def test_chat_shows_the_question_and_the_reply(tmp_path: Path) -> None:
    turn = _turn(tmp_path, f"### `CHAT_WITH_USER`\n{QUESTION}")
    _run(turn, ["Blue."])
    report = turn.report_path.read_text()
    assert "**Question:**\n````markdown\n" + QUESTION + "\n````" in report
    assert "**User reply:**\n```text\nBlue.\n```" in report
    assert report.index("**Question:**") < report.index("**User reply:**")


def test_chat_without_a_reply_still_shows_the_question(tmp_path: Path) -> None:
    turn = _turn(tmp_path, f"### `CHAT_WITH_USER`\n{QUESTION}")
    _run(turn, [None])
    report = turn.report_path.read_text()
    assert QUESTION in report and "No reply yet" in report


def test_a_validation_failure_counts_the_plans_actions(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("exists\n")
    actions = "\n\n".join(
        f"### `CREATE`\n- **File Path:** [{n}.txt](/{n}.txt)\n```\nx\n```" for n in "abc"
    )
    turn = _turn(tmp_path, actions)
    outcome = _run(turn, [])
    assert outcome.status is Status.VALIDATION_FAILED
    assert "- **Actions:** 3 total / 0 approved / 3 skipped" in turn.report_path.read_text()


@pytest.fixture
def server() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"the page text\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_a_read_of_a_url_is_fetched_in_its_turn_and_cached_for_input_md(
    tmp_path: Path, server: str
) -> None:
    (tmp_path / ".teddy").mkdir()
    (tmp_path / ".teddy" / "config.yaml").write_text(
        'network:\n  allow_networks: ["127.0.0.0/8"]\n'
    )
    url = f"{server}/page"
    turn = _turn(tmp_path, f"### `READ`\n- **Resource:** [{url}]({url})")
    outcome = _run(turn, [])
    assert outcome.status is Status.COMPLETED
    assert "Fetched (14 characters)" in turn.report_path.read_text()
    assert outcome.next_turn is not None

    session = turn.session
    cached = list((session.path / URL_CACHE).iterdir())
    assert len(cached) == 1 and "the page text" in cached[0].read_text()
    text = build_payload(tmp_path, session.path, outcome.next_turn.path)
    assert "the page text" in text


def test_an_unreachable_url_fails_in_the_turn_that_asked_for_it(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9/nothing"  # refused: loopback, not allowed
    turn = _turn(tmp_path, f"### `READ`\n- **Resource:** [{url}]({url})")
    outcome = _run(turn, [])
    assert outcome.status is Status.FAILED
    assert "the URL cannot be fetched" in turn.report_path.read_text()
