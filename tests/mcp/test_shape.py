"""What an MCP client sees of both servers (``plankit mcp``, ``agentctl mcp``), through
the MCP SDK's own stdio client: every argument described, the version set, no empty
capabilities, one error shape naming tools (never CLI commands or Python types), the
catalogue true to what is registered, and ``initialize`` answered before the SDK is
imported."""

from __future__ import annotations

import os
import re
import sys
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from plankit import __version__
from plankit.mcp import catalog
from tests.acp.kit import ROOT
from tests.security.rpc import Peer
from tests.waiting import wait_until

PLANKIT = "import sys; from plankit.cli import main; sys.argv[0] = 'plankit'; main()"
AGENTCTL = "import sys; from plankit.agentflow.cli import main; sys.argv[0] = 'agentctl'; main()"
SERVERS = {
    "plankit mcp": ["-c", PLANKIT, "mcp", "--store", "PLAN.md", "--tools", "all"],
    "agentctl mcp": ["-c", AGENTCTL, "mcp"],
}
INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "shape", "version": "0"},
}


def _env(tmp_path: Path, session: str = "no-such-session") -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "PLANKIT_HOME": str(tmp_path / "home"),
        "AGENTFLOW_HOME": str(tmp_path / "agentflow"),
        "AGENTFLOW_SESSION_ID": session,
    }


def _session(
    tmp_path: Path,
    server: str,
    script: Callable[[ClientSession, Any], Awaitable[None]],
    session: str = "no-such-session",
) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=SERVERS[server], env=_env(tmp_path, session), cwd=tmp_path
    )

    async def go() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            init = await client.initialize()
            await script(client, init)

    anyio.run(go)


def _every_property(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    found = list(schema.get("properties", {}).items())
    for name, body in schema.get("$defs", {}).items():
        found += [(f"{name}.{key}", spec) for key, spec in body.get("properties", {}).items()]
    return found


@pytest.mark.parametrize("server", sorted(SERVERS))
def test_every_argument_is_described_and_the_server_says_what_it_is(
    tmp_path: Path, server: str
) -> None:
    seen: dict[str, Any] = {}

    async def script(client: ClientSession, init: Any) -> None:
        seen["init"] = init.model_dump(by_alias=True, exclude_none=True, mode="json")
        seen["tools"] = (await client.list_tools()).tools

    _session(tmp_path, server, script)
    info = seen["init"]
    assert info["serverInfo"]["version"] == __version__
    assert info["capabilities"] == {"tools": {"listChanged": False}}
    described = 0
    for tool in seen["tools"]:
        schema = tool.input_schema
        assert schema["additionalProperties"] is False, tool.name
        assert "title" not in schema and all(
            "title" not in d for d in schema.get("$defs", {}).values()
        )
        for name, spec in _every_property(schema):
            assert spec.get("description"), f"{tool.name}: argument {name} has no description"
            assert "title" not in spec, (tool.name, name)
            described += 1
    assert described >= (14 if server == "agentctl mcp" else 45)
    expected = catalog.AGENTFLOW if server == "agentctl mcp" else catalog.ALL
    assert [(t.name, t.description) for t in seen["tools"]] == [
        (t.name, t.description) for t in expected
    ]


TYPE_NAMES = re.compile(r"NoneType|\bstr\b|\bint\b|\bdict\b|\bbool\b|\bfloat\b|integer|string")
WRONG = {"string": 12, "integer": "soon", "boolean": "yes", "array": "a, b", "object": [1]}


@pytest.mark.parametrize("server", sorted(SERVERS))
def test_every_error_has_one_shape_and_speaks_the_agents_words(tmp_path: Path, server: str) -> None:
    results: list[tuple[str, Any]] = []

    async def script(client: ClientSession, init: Any) -> None:
        tools = (await client.list_tools()).tools
        results.append(("unknown tool", await client.call_tool("no_such_tool", {})))
        for tool in tools:
            properties = tool.input_schema.get("properties", {})
            required = tool.input_schema.get("required", [])
            if required:  # every required argument null, then each of the wrong kind
                nulls = dict.fromkeys(required)
                results.append((f"{tool.name} nulls", await client.call_tool(tool.name, nulls)))
            for name, spec in properties.items():
                kinds = [o.get("type") for o in spec.get("anyOf", [spec])]
                value = WRONG.get(str(kinds[0]))
                if value is None:
                    continue
                args = {name: value}
                results.append((f"{tool.name} {name}", await client.call_tool(tool.name, args)))
            results.append(
                (f"{tool.name} extra", await client.call_tool(tool.name, {"bogus_argument": 1}))
            )

    _session(tmp_path, server, script)
    assert len(results) > 30
    for what, result in results:
        assert result.is_error, what
        (content,) = result.content
        errors = result.structured_content["errors"]
        assert errors, what
        for error in errors:
            assert list(error) == ["code", "message", "line", "file"], what
            assert not TYPE_NAMES.search(error["message"]), (what, error["message"])
        assert "\n" not in content.text, what
        first = errors[0]
        assert content.text.startswith(f"{first['code']} {first['message']}"), what
        if len(errors) > 1:
            assert content.text.endswith(f"(and {len(errors) - 1} more)"), what
    codes = {error["code"] for _, r in results for error in r.structured_content["errors"]}
    assert {"tool-unknown", "argument-unknown", "argument-missing", "argument-invalid"} <= codes


def test_agentflow_errors_name_the_tool_to_call(tmp_path: Path) -> None:
    from plankit.agentflow.control import ControlPlane
    from tests.agentflow.helpers import copy_example

    home = tmp_path / "agentflow"
    context = ControlPlane(home).start_session()
    copy_example(Path(context.current.plan_dir))
    texts: list[str] = []

    async def script(client: ClientSession, init: Any) -> None:
        assert not (await client.call_tool("plan_commit", {})).is_error
        claimed = (await client.call_tool("task_claim", {})).structured_content["task"]
        await client.call_tool("task_fail", {"ref": claimed["ref"], "reason": "disk full"})
        for name, args in (
            ("task_done", {"ref": claimed["ref"]}),  # failed: it says how to reopen it
            ("task_done", {"ref": "thread_9/nothing"}),
            ("plan_remove_thread", {"thread_id": context.current.thread_id}),
        ):
            result = await client.call_tool(name, args)
            assert result.is_error, (name, result)
            texts.append(result.content[0].text)

    _session(tmp_path, "agentctl mcp", script, session=context.session.session_id)
    assert all("agentctl" not in text for text in texts), texts
    assert "`task_release`" in texts[0]
    assert "`plan_clear_current`" in texts[2]


def test_checklist_errors_name_the_tool_not_the_command(tmp_path: Path) -> None:
    (tmp_path / "PLAN.md").write_text(
        "# Plan: Old\n\n### Phase 1: A\n- [x] 1.1 One\n- [ ] 1.2 Two\n", encoding="utf-8"
    )
    texts: list[str] = []

    async def script(client: ClientSession, init: Any) -> None:
        phases = [{"name": "P", "steps": ["s"]}]
        args = {"title": "New", "goal": "g", "phases": phases}
        result = await client.call_tool("create_plan", args)
        assert result.is_error
        texts.append(result.content[0].text)

    _session(tmp_path, "plankit mcp", script)
    assert "plankit checklist" not in texts[0]
    assert texts[0].endswith("To replace it, call create_plan with replace=true")


def test_the_early_initialize_answer_is_the_sdks_own(tmp_path: Path) -> None:
    """The same initialize answered first (by the front, before the SDK is loaded) and
    after a ping (by the SDK itself)."""
    from mcp_types import version

    from plankit.mcp.front import HANDSHAKE_VERSIONS

    assert HANDSHAKE_VERSIONS == version.HANDSHAKE_PROTOCOL_VERSIONS
    for server in SERVERS:
        answers = []
        for asked in ("2025-06-18", "2024-11-05", "1999-01-01"):
            params = {**INIT, "protocolVersion": asked}
            for ping_first in (False, True):
                peer = Peer([sys.executable, *SERVERS[server]], cwd=tmp_path, env=_env(tmp_path))
                try:
                    if ping_first:
                        assert "result" in peer.request("ping", {})
                    answers.append((asked, ping_first, peer.request("initialize", params)))
                    peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
                    assert peer.request("tools/list", {})["result"]["tools"]
                finally:
                    peer.close()
        for (asked, _, early), (_, _, late) in zip(answers[::2], answers[1::2], strict=True):
            assert early["result"] == late["result"], (server, asked)
        assert answers[-1][2]["result"]["protocolVersion"] == "2025-11-25"


GATE = """
import os, sys, time
class _Gate:
    def find_spec(self, name, path=None, target=None):
        if name == "mcp" or name.startswith("mcp."):
            while not os.path.exists(os.environ["MCP_IMPORT_GATE"]):
                time.sleep(0.01)
        return None
sys.meta_path.insert(0, _Gate())
"""


@pytest.mark.parametrize("server", sorted(SERVERS))
def test_initialize_is_answered_while_the_sdk_cannot_load_yet(tmp_path: Path, server: str) -> None:
    """The SDK's import is held until a file exists: the initialize answer comes anyway,
    and the rest is served once the import may go on."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(textwrap.dedent(GATE), encoding="utf-8")
    gate = tmp_path / "gate"
    env = {
        **_env(tmp_path),
        "PYTHONPATH": os.pathsep.join([str(site), str(ROOT / "src")]),
        "MCP_IMPORT_GATE": str(gate),
    }
    peer = Peer([sys.executable, *SERVERS[server]], cwd=tmp_path, env=env)
    try:
        answer = peer.request("initialize", INIT)
        assert answer["result"]["serverInfo"]["version"] == __version__
        assert not gate.exists()
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        peer.send({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {}})
        gate.touch()
        listed = peer.answer("the tools/list answer once the SDK may load")
        assert listed["id"] == 5 and listed["result"]["tools"]
        peer.close_stdin()
        wait_until(lambda: peer.proc.poll() is not None, "the server to end with its input")
        assert "Traceback" not in peer.stderr()
    finally:
        peer.close()
