"""A JSON-RPC line holding a lone UTF-16 surrogate (``"\\ud800"``), which UTF-8 cannot
carry: every server answers it (an error naming where, or a reply with the character
written as text) instead of leaving the client waiting, and serves on.

Spoken over real pipes to ``plankit mcp``, ``agentctl mcp`` and ``teddy acp``, which all
write through :func:`plankit.jsonrpc.encode`.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from plankit.jsonrpc import encode, surrogate_problem
from tests.acp.kit import ROOT, TEDDY
from tests.security.rpc import Peer

MCP_SERVERS = {
    "plankit mcp": [
        sys.executable,
        "-c",
        "import sys; from plankit.cli import main; sys.argv[0] = 'plankit'; main()",
        "mcp",
    ],
    "agentctl mcp": [
        sys.executable,
        "-c",
        "from plankit.agentflow.cli import main; main()",
        "mcp",
    ],
}
INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "surrogates", "version": "0"},
}


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "PLANKIT_HOME": str(tmp_path / "home"),
        "AGENTFLOW_HOME": str(tmp_path / "agentflow"),
        "AGENTFLOW_SESSION_ID": "surrogate-session",
    }


@pytest.fixture(params=sorted(MCP_SERVERS))
def mcp_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Peer]:
    project = tmp_path / "project"
    project.mkdir()
    peer = Peer(MCP_SERVERS[request.param], cwd=project, env=_env(tmp_path))
    yield peer
    peer.close()


def test_mcp_servers_answer_a_lone_surrogate_and_serve_on(mcp_server: Peer) -> None:
    mcp_server.request("initialize", INIT)
    mcp_server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    # written by hand, the way a client with a broken UTF-16 conversion sends it
    mcp_server.send_raw(
        b'{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"\\ud800"}}'
    )
    answer = mcp_server.answer("the answer to a tool name holding \\ud800")
    assert answer["id"] == 41
    assert answer["error"]["code"] == -32602
    assert "params.name holds a lone UTF-16 surrogate (\\ud800)" in answer["error"]["message"]

    mcp_server.send_raw(
        b'{"jsonrpc":"2.0","id":42,"method":"tools/call",'
        b'"params":{"name":"get_plan","arguments":{"full":false,"\\udfff":"x"}}}'
    )
    answer = mcp_server.answer("the answer to an argument name holding \\udfff")
    assert answer["id"] == 42 and "a key of params.arguments" in answer["error"]["message"]

    # a notification cannot be answered: it is dropped, and the next request served
    mcp_server.send_raw(b'{"jsonrpc":"2.0","method":"notifications/x","params":{"a":"\\ud800"}}')
    tools = mcp_server.request("tools/list", {})["result"]["tools"]
    assert tools
    assert mcp_server.proc.poll() is None
    assert "Traceback" not in mcp_server.stderr()


def test_teddy_acp_writes_a_lone_surrogate_as_text(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    peer = Peer([*TEDDY, "acp"], cwd=project, env=_env(tmp_path))
    try:
        peer.request("initialize", {"protocolVersion": 1})
        peer.send_raw(
            b'{"jsonrpc":"2.0","id":7,"method":"session/new",'
            b'"params":{"cwd":"/no/such/\\ud800","mcpServers":[]}}'
        )
        answer = peer.answer("the answer to session/new in a directory named with \\ud800")
        assert answer["id"] == 7 and "error" in answer
        assert "\\ud800" in json.dumps(answer)  # the character, as text the client can read
        assert peer.proc.poll() is None
    finally:
        peer.close()


def test_encode_writes_a_lone_surrogate_as_the_text_of_its_escape() -> None:
    line = encode({"jsonrpc": "2.0", "id": 1, "result": {"name": "a\ud800b", "\udfff": 1}})
    assert json.loads(line) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"name": "a\\ud800b", "\\udfff": 1},
    }
    assert encode({"a": "é😀"}) == '{"a":"é😀"}\n'.encode()


def test_surrogate_problem_names_the_place() -> None:
    message = {"params": {"arguments": {"items": ["fine", "x\udc00"]}}}
    assert surrogate_problem(message) == (
        "params.arguments.items[1] holds a lone UTF-16 surrogate (\\udc00), "
        "which is not text; send valid Unicode"
    )
    assert surrogate_problem({"params": {"text": "a 😀 pair is fine"}}) is None
