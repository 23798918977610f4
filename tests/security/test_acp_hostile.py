"""``teddy acp`` against a hostile or careless client, over real pipes.

Every malformed line gets a JSON-RPC error and the agent goes on serving; a client
that closes stdin mid-EXECUTE gets its command stopped and its turn recorded; a
permission request answered with an error (or garbage) is a rejection that ends the
turn with a report; and a client that only opens sessions leaves nothing behind.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.acp.kit import ROOT, TEDDY, create, execute, plan_text
from tests.security.rpc import Peer, check_bad_lines
from tests.waiting import record_group, wait_for_group_end, wait_until

INIT = {"protocolVersion": 1, "clientCapabilities": {}}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.fixture
def agent(project: Path, tmp_path: Path) -> Iterator[Peer]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PLANKIT_HOME": str(tmp_path / "home")}
    env.pop("TEDDY_SESSION", None)
    peer = Peer([*TEDDY, "acp"], cwd=project, env=env)
    yield peer
    peer.close()


def open_session(agent: Peer, project: Path) -> str:
    assert agent.request("initialize", INIT)["result"]["protocolVersion"] == 1
    answer = agent.request("session/new", {"cwd": str(project), "mcpServers": []})
    session: str = answer["result"]["sessionId"]
    return session


def prompt(agent: Peer, session: str, text: str, ident: int = 1) -> None:
    agent.send(
        {
            "jsonrpc": "2.0",
            "id": ident,
            "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]},
        }
    )


def until_permission_asked(agent: Peer) -> dict[str, Any]:
    """Read until the agent asks permission; that request."""
    while True:
        message = agent.receive("a permission request")
        if message.get("method") == "session/request_permission":
            return message


def allow(request: dict[str, Any]) -> dict[str, Any]:
    outcome = {"outcome": "selected", "optionId": "allow-once"}
    return {"jsonrpc": "2.0", "id": request["id"], "result": {"outcome": outcome}}


def until_answer(agent: Peer, ident: int, seen: list[dict[str, Any]]) -> dict[str, Any]:
    """Read until the answer to request ``ident``, keeping everything else in ``seen``."""
    while True:
        message = agent.receive(f"the answer to request {ident}")
        if message.get("id") == ident and "method" not in message:
            return message
        seen.append(message)


def turn(project: Path, session: str, name: str = "01") -> Path:
    return project / ".teddy" / session / name


def test_every_malformed_line_gets_an_error_and_the_agent_serves_on(
    agent: Peer, project: Path
) -> None:
    assert check_bad_lines(agent) == []
    assert agent.proc.poll() is None
    session = open_session(agent, project)  # initialize still works after all that
    for line in (b"null", b"[]", b"{"):  # and bad lines between good ones, too
        agent.send_raw(line)
        assert agent.answer(f"the answer to {line!r}")["error"]["code"] in (-32600, -32700)
    answer = agent.request("session/new", {"cwd": str(project), "mcpServers": []})
    assert answer["result"]["sessionId"] != session


def test_closing_stdin_mid_execute_stops_the_command_and_writes_the_report(
    agent: Peer, project: Path
) -> None:
    group = project / "group"
    session = open_session(agent, project)
    command = f"{record_group(group)}; touch started; sleep 600; touch late"
    prompt(agent, session, plan_text(execute(command)))
    agent.send(allow(until_permission_asked(agent)))
    wait_until((project / "started").exists, "the command to start")
    agent.close_stdin()  # the client goes away
    assert agent.wait() == 0
    wait_for_group_end(group)  # the command was stopped, not left behind:
    assert not (project / "late").exists()  # it never got past its sleep
    report = (turn(project, session) / "report.md").read_text(encoding="utf-8")
    assert "interrupted" in report


def test_closing_stdin_while_permission_is_asked_records_the_turn(
    agent: Peer, project: Path
) -> None:
    session = open_session(agent, project)
    prompt(agent, session, plan_text(create("a.txt", "a"), execute("touch ran")))
    until_permission_asked(agent)
    agent.close_stdin()
    assert agent.wait() == 0
    assert not (project / "a.txt").exists() and not (project / "ran").exists()
    assert (turn(project, session) / "report.md").is_file()


@pytest.mark.parametrize(
    "answer",
    [
        {"error": {"code": -32000, "message": "the dialog was closed"}},
        {"error": "nope"},
        {"result": 5},
    ],
    ids=["error", "malformed error", "unreadable result"],
)
def test_a_permission_answered_with_an_error_is_a_rejection(
    agent: Peer, project: Path, answer: dict[str, Any]
) -> None:
    session = open_session(agent, project)
    first = plan_text(create("a.txt", "a"), execute("touch ran"), title="First")
    prompt(agent, session, first, ident=1)
    asked = until_permission_asked(agent)
    agent.send({"jsonrpc": "2.0", "id": asked["id"], **answer})
    seen: list[dict[str, Any]] = []
    response = until_answer(agent, 1, seen)
    assert response["result"]["stopReason"] == "end_turn"
    methods = [m.get("method") for m in seen]
    assert "session/request_permission" not in methods  # nothing else was asked, nor run
    assert not (project / "a.txt").exists() and not (project / "ran").exists()
    updates = [m["params"]["update"] for m in seen if m.get("method") == "session/update"]
    tool = asked["params"]["toolCall"]["toolCallId"]
    finals = [
        u["status"]
        for u in updates
        if u["sessionUpdate"] == "tool_call_update" and u["toolCallId"] == tool and "status" in u
    ]
    assert finals[-1] == "failed"
    plans = [u for u in updates if u["sessionUpdate"] == "plan"]
    statuses = [e["_meta"]["plankit"]["status"] for e in plans[-1]["entries"]]
    assert statuses == ["rejected", "skipped"]
    report = (turn(project, session) / "report.md").read_text(encoding="utf-8")
    assert "permission request with an error" in report

    # the turn was recorded: the next prompt is turn 02 and leaves turn 01's plan alone
    prompt(agent, session, plan_text(create("b.txt", "b"), title="Second"), ident=2)
    agent.send(allow(until_permission_asked(agent)))
    assert until_answer(agent, 2, [])["result"]["stopReason"] == "end_turn"
    assert (project / "b.txt").read_text(encoding="utf-8") == "b\n"
    assert "# First" in (turn(project, session) / "plan.md").read_text(encoding="utf-8")
    assert (turn(project, session, "02") / "report.md").is_file()


def test_session_new_alone_creates_nothing(agent: Peer, project: Path) -> None:
    open_session(agent, project)
    open_session(agent, project)
    agent.close_stdin()
    assert agent.wait() == 0
    assert list(project.iterdir()) == []  # no .teddy/, no session directory
