"""The agentflow MCP tools, through the mcp SDK's stdio client against ``agentctl mcp``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from plankit.agentflow.control import ControlPlane

from .helpers import copy_example, task, write_plan
from .test_workflow import agentctl_path

TOOLS = {
    "plan_dir",
    "plan_request_thread_dir",
    "plan_remove_thread",
    "plan_clear_current",
    "plan_commit",
    "set_topic",
    "plan_show",
    "task_claim",
    "task_done",
    "task_fail",
    "task_heartbeat",
    "task_release",
}


async def _session_calls(params: StdioServerParameters, script: Any) -> None:
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        await script(client)


def test_agentflow_tools_over_stdio(tmp_path: Path) -> None:
    home = tmp_path / "home"
    context = ControlPlane(home).start_session()
    current = Path(context.current.plan_dir)
    params = StdioServerParameters(
        command=agentctl_path(),
        args=["mcp"],
        env={"AGENTFLOW_HOME": str(home), "AGENTFLOW_SESSION_ID": context.session.session_id},
    )
    seen: dict[str, Any] = {}

    async def script(client: ClientSession) -> None:
        async def call(name: str, **arguments: Any) -> tuple[bool, dict[str, Any]]:
            result = await client.call_tool(name, arguments)
            assert result.structured_content is not None
            return bool(result.is_error), dict(result.structured_content)

        tools = await client.list_tools()
        seen["tools"] = {tool.name for tool in tools.tools}
        seen["schemas"] = {tool.name: tool.input_schema for tool in tools.tools}

        seen["dir"] = await call("plan_dir")
        seen["extra"] = await call("plan_request_thread_dir")
        seen["extra_made"] = Path(seen["extra"][1]["plan_dir"]).is_dir()
        seen["empty_commit"] = await call("plan_commit")
        seen["remove_current"] = await call(
            "plan_remove_thread", thread_id=context.current.thread_id
        )
        extra_id = seen["extra"][1]["thread_id"]
        write_plan(Path(seen["extra"][1]["plan_dir"]), title="Extra", tasks={"01-a.md": task("a")})
        copy_example(current)
        write_plan(current / "unused")  # an extra directory in the plan root is ignored
        seen["commit"] = await call("plan_commit")
        seen["remove_extra"] = await call("plan_remove_thread", thread_id=extra_id)
        seen["remove_again"] = await call("plan_remove_thread", thread_id=extra_id)
        seen["clear"] = await call("plan_clear_current")
        seen["topic_bad"] = await call("set_topic", topic="x" * 101)
        seen["topic"] = await call("set_topic", topic="Add user authentication")

        # work on the commit: claim, fail, reopen, claim, done, show
        seen["claim"] = await call("task_claim", agent="claude-code", lease_seconds=120)
        ref, claim = seen["claim"][1]["task"]["ref"], seen["claim"][1]["task"]["claim"]
        seen["beat"] = await call("task_heartbeat", ref=ref, claim=claim, lease_seconds=300)
        seen["fail"] = await call("task_fail", ref=ref, reason="schema drift", claim=claim)
        seen["release"] = await call("task_release", ref=ref)
        again = await call("task_claim")
        seen["done"] = await call("task_done", ref=again[1]["task"]["ref"])
        seen["show"] = await call("plan_show")

        # arguments: unknown, missing, of the wrong type: the documented error shape
        seen["unknown_arg"] = await call("plan_commit", force=True)
        seen["missing_arg"] = await call("task_fail", ref=ref)
        seen["bad_type"] = await call("task_claim", lease_seconds="soon")
        seen["bad_type2"] = await call("set_topic", topic=["a"], extra=1)

    anyio.run(_session_calls, params, script)

    assert seen["tools"] == TOOLS
    assert set(seen["schemas"]["plan_remove_thread"]["properties"]) == {"thread_id"}
    assert set(seen["schemas"]["set_topic"]["properties"]) == {"topic"}
    assert seen["dir"] == (
        False,
        {"thread_id": context.current.thread_id, "plan_dir": str(current)},
    )
    error, extra = seen["extra"]
    assert not error and seen["extra_made"] and extra["thread_id"] != context.current.thread_id
    assert not Path(extra["plan_dir"]).exists()  # removed by plan_remove_thread

    error, data = seen["empty_commit"]
    assert error
    assert [e["code"] for e in data["errors"]] == ["plan-missing", "plan-missing"]
    assert all(list(e) == ["code", "message", "line", "file"] for e in data["errors"])

    error, data = seen["remove_current"]
    assert error and data["errors"][0]["code"] == "thread-current"

    error, data = seen["commit"]
    assert not error
    assert (data["commit"], data["thread_count"], data["task_count"]) == (1, 2, 4)

    assert seen["remove_extra"][1]["removed"] is True and not seen["remove_extra"][0]
    assert (
        seen["remove_again"][0] and seen["remove_again"][1]["errors"][0]["code"] == "thread-removed"
    )
    assert seen["clear"] == (
        False,
        {"thread_id": context.current.thread_id, "plan_dir": str(current), "files_removed": 5},
    )
    assert seen["topic_bad"][0] and seen["topic_bad"][1]["errors"][0]["code"] == "topic-invalid"
    assert seen["topic"][1]["topic"] == "Add user authentication"

    error, data = seen["claim"]
    assert not error and data["remaining"] == 4 and data["task"]["holder"] == "claude-code"
    assert seen["beat"][1]["lease_expires_at"] > data["task"]["lease_expires_at"]
    assert seen["fail"][1]["state"] == "failed" and seen["release"][1]["state"] == "ready"
    assert seen["done"] == (False, seen["done"][1]) and seen["done"][1]["state"] == "done"
    error, shown = seen["show"]
    assert not error and shown["tracked"] is True and shown["progress"]["done"] == 1
    states = {t["id"]: t["state"] for th in shown["threads"] for t in th["plan"]["tasks"]}
    assert states == {
        "create-schema": "done",
        "implement-service": "ready",
        "wire-handler": "waiting",
        "a": "ready",
    }
    assert shown["threads"][0]["plan"]["ready"] == ["implement-service"]

    def errors(key: str) -> list[tuple[str, str]]:
        error, data = seen[key]
        assert error and set(data) == {"errors"}, data
        assert all(list(e) == ["code", "message", "line", "file"] for e in data["errors"])
        return [(e["code"], e["message"]) for e in data["errors"]]

    assert errors("unknown_arg") == [
        ("argument-unknown", "unknown argument `force`; the arguments are: none")
    ]
    assert errors("missing_arg") == [("argument-missing", "`reason` is required")]
    assert errors("bad_type") == [
        (
            "argument-invalid",
            '`lease_seconds` must be a whole number, not the text "soon": '
            "Seconds the claim lasts before another agent may take it",
        )
    ]
    assert [code for code, _ in errors("bad_type2")] == ["argument-unknown", "argument-invalid"]
    assert seen["schemas"]["task_fail"]["additionalProperties"] is False
    assert ControlPlane(home).context(context.session.session_id).session.topic == (
        "Add user authentication"
    )


def test_register_agentflow_tools_adds_exactly_the_agentflow_tools(tmp_path: Path) -> None:
    from mcp.server.mcpserver import MCPServer

    from plankit.agentflow.mcp_tools import register_agentflow_tools

    server: MCPServer[Any] = MCPServer(name="umbrella")
    register_agentflow_tools(server, ControlPlane(tmp_path / "home"), session="none")
    tools = anyio.run(server.list_tools)
    assert {tool.name for tool in tools} == TOOLS
    assert all(tool.description for tool in tools)
