"""``plankit mcp`` and ``agentctl mcp`` against a hostile client, over real pipes.

Every malformed request gets a JSON-RPC error (the SDK alone drops them in silence,
leaving the client waiting forever), and the server goes on serving: ``initialize``
and a tool call still work afterwards.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.acp.kit import ROOT
from tests.security.rpc import Peer, check_bad_lines

SERVERS = {
    "plankit mcp": [
        "-c",
        "import sys; from plankit.cli import main; sys.argv[0] = 'plankit'; main()",
        "mcp",
        "--store",
        "PLAN.md",
    ],
    "agentctl mcp": ["-c", "from plankit.agentflow.cli import main; main()", "mcp"],
}
INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "hostile", "version": "0"},
}


@pytest.fixture(params=sorted(SERVERS))
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Peer]:
    project = tmp_path / "project"
    project.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PLANKIT_HOME": str(tmp_path / "home"),
        "AGENTFLOW_HOME": str(tmp_path / "agentflow"),
        "AGENTFLOW_SESSION_ID": "hostile-session",
    }
    peer = Peer([sys.executable, *SERVERS[request.param]], cwd=project, env=env)
    yield peer
    peer.close()


def test_every_malformed_request_gets_an_error_and_the_server_serves_on(server: Peer) -> None:
    assert check_bad_lines(server) == []
    assert server.proc.poll() is None
    answer = server.request("initialize", INIT)
    assert "capabilities" in answer["result"]
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for line in (b"null", b'{"jsonrpc":"2.0","id":{},"method":"tools/list"}', b"{"):
        server.send_raw(line)  # and between good requests, too
        assert server.answer(f"the answer to {line!r}")["error"]["code"] in (-32600, -32700)
    tools = server.request("tools/list", {})["result"]["tools"]
    assert tools
    called = server.request("tools/call", {"name": tools[0]["name"], "arguments": {}})
    assert "result" in called  # a real answer, whatever the tool thought of its input


def test_a_malformed_answer_to_nothing_is_ignored_and_the_server_serves_on(
    server: Peer,
) -> None:
    server.send_raw(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}')
    server.send_raw(b'{"jsonrpc":"2.0","id":77,"result":"not an object"}')
    answer = server.request("initialize", INIT)
    assert "capabilities" in answer["result"]


def test_closing_stdin_ends_the_server(server: Peer) -> None:
    server.request("initialize", INIT)
    server.close_stdin()
    assert server.wait() == 0
