"""``plankit mcp``, driven by the mcp SDK's own stdio client: list the tools, call each
one against a real workbook, and read the errors an agent would see."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.stdio import StdioServerParameters
from python_calamine import CalamineWorkbook

from mcp import Client
from plankit.checklist.mcp_tools import TOOL_NAMES
from plankit.mcp.catalog import selected

ROOT = Path(__file__).resolve().parents[2]


def server_params(tmp_path: Path, *args: str) -> StdioServerParameters:
    script = shutil.which("plankit", path=str(Path(sys.executable).parent))
    command, prefix = (
        (script, []) if script else (sys.executable, ["-c", "from plankit.cli import main; main()"])
    )
    env = {
        "PYTHONPATH": str(ROOT / "src"),
        "AGENTFLOW_HOME": str(tmp_path / "agentflow-home"),
        "PLANKIT_HOME": str(tmp_path / "plankit-home"),
    }
    return StdioServerParameters(
        command=command, args=[*prefix, "mcp", *args], env=env, cwd=str(tmp_path)
    )


def text_of(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def test_stdio_server_lists_and_runs_every_checklist_tool(tmp_path: Path) -> None:
    book = tmp_path / "plan.xlsx"
    calls: list[tuple[str, dict[str, Any]]] = [
        ("get_plan", {}),
        ("init_plan", {}),
        ("get_next_task", {}),
        ("start_task", {"step": "1.1"}),
        ("complete_task", {"step": "1.1"}),
        ("block_task", {"step": "1.2", "reason": "Sheet1 headers are merged"}),
        ("review_task", {"step": "1.3", "note": "check the column types"}),
        ("get_review_tasks", {}),
        ("append_note", {"text": "headers live on row 2"}),
        ("set_task_status", {"step": "1.2", "status": "todo"}),
        (
            "create_plan",
            {
                "title": "Q4 report",
                "goal": "Fill Summary!B5:E20",
                "phases": [
                    {"name": "Collect", "steps": ["Read Orders!A2:F500 (id, total)"]},
                    {"name": "Write", "steps": ["Write Summary!B5:E20", "Check totals"]},
                ],
            },
        ),
        ("get_plan", {"full": True}),
    ]

    async def session() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(
            server_params(tmp_path, "--store", str(book), "--tools", "all")
        ) as client:
            listed = await client.list_tools()
            out["tools"] = {t.name: t for t in listed.tools}
            for name, args in calls:
                result = await client.call_tool(name, args)
                assert not result.is_error, (name, text_of(result))
                out.setdefault(name, []).append(text_of(result))
            bad = await client.call_tool("complete_task", {"step": "9.9"})
            out["bad"] = (bad.is_error, text_of(bad))
            missing = await client.call_tool("block_task", {"step": "1.1"})
            out["missing"] = (missing.is_error, text_of(missing))
        return out

    out = anyio.run(session)
    tools = out["tools"]
    assert set(TOOL_NAMES) <= set(tools)
    for name in TOOL_NAMES:
        assert 10 < len(tools[name].description or "") <= 160, name
    assert tools["block_task"].input_schema["required"] == ["step", "reason"]
    assert "Step number" in tools["start_task"].input_schema["properties"]["step"]["description"]
    assert "phases" in tools["create_plan"].input_schema["required"]

    assert out["get_plan"][0].startswith("No plan in ")  # the workbook and its cell
    assert "plan.xlsx, AGENT_BASE!C2" in out["get_plan"][0]
    assert out["init_plan"][0].startswith("Progress: 0/6 done")
    assert json.loads(out["get_next_task"][0])["step"] == "1.1"
    assert json.loads(out["start_task"][0])["status"] == "doing"
    assert json.loads(out["complete_task"][0])["completed_date"]
    assert json.loads(out["block_task"][0])["blocked_reason"] == "Sheet1 headers are merged"
    assert json.loads(out["review_task"][0])["review_note"] == "check the column types"
    assert [t["step"] for t in json.loads(out["get_review_tasks"][0])] == ["1.3"]
    assert out["append_note"][0] == "Note added."
    assert json.loads(out["set_task_status"][0])["status"] == "todo"
    assert out["create_plan"][0].startswith("Created plan 'Q4 report': 2 phases, 3 steps.")
    assert "- [ ] 2.2 Check totals" in out["get_plan"][1]

    is_error, message = out["bad"]
    assert is_error
    assert message == "unknown-step no task '9.9' in the plan (known steps: 1.1, 2.1, 2.2)"
    is_error, message = out["missing"]
    assert is_error and message == "argument-missing `reason` is required"

    rows = (
        CalamineWorkbook.from_path(str(book))
        .get_sheet_by_name("AGENT_BASE")
        .to_python(skip_empty_area=False)
    )
    assert rows[0][2] == "PLAN.md Contents"
    assert rows[1][2].startswith("# Plan: Q4 report\n")


def test_agentflow_tools_can_be_left_out(tmp_path: Path) -> None:
    async def names(*flags: str) -> set[str]:
        params = server_params(tmp_path, "--store", str(tmp_path / "PLAN.md"), *flags)
        async with Client(params) as client:
            return {t.name for t in (await client.list_tools()).tools}

    assert anyio.run(names, "--no-agentflow", "--tools", "all") == set(TOOL_NAMES)
    core = {t.name for t in selected("core", agentflow=False)}
    assert anyio.run(names, "--no-agentflow") == core
    assert len(core) < len(TOOL_NAMES)


def test_store_errors_reach_the_agent_as_tool_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.xlsx"
    bad.write_bytes(b"not a workbook")

    async def call() -> tuple[bool, str, str]:
        params = server_params(tmp_path, "--store", str(bad), "--no-agentflow", "--tools", "all")
        async with Client(params) as client:
            got = await client.call_tool("get_plan", {})
            init = await client.call_tool("init_plan", {})
            return got.is_error, text_of(got), text_of(init)

    is_error, message, init_text = anyio.run(call)
    assert is_error and "is not an xlsx workbook" in message
    assert "# Plan: Initialization Error" in init_text
    assert bad.read_bytes() == b"not a workbook"


def test_build_server_in_process_with_a_memory_store() -> None:
    from plankit.checklist import MemorySheets, PlanManager
    from plankit.mcp.server import build_server

    manager = PlanManager(MemorySheets())
    server = build_server(lambda: manager, agentflow=False)

    async def go() -> list[str]:
        async with Client(server) as client:
            await client.call_tool("init_plan", {})
            result = await client.call_tool("complete_task", {"step": "1.1"})
            return [text_of(result)]

    (done,) = anyio.run(go)
    assert json.loads(done)["status"] == "done"
    plan = manager.get_plan()
    assert plan is not None and plan.tasks[0].status == "done"


def test_register_agentflow_skips_a_missing_module(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    from plankit.mcp import server as srv

    real_import = builtins.__import__

    def fake_import(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "plankit.agentflow.mcp_tools":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    assert srv.register_agentflow(object()) is False  # type: ignore[arg-type]


def test_python_dash_m_plankit_mcp_help() -> None:
    import subprocess

    result = subprocess.run(
        [sys.executable, "-m", "plankit.mcp", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        check=False,
    )
    assert result.returncode == 0
    assert "Run plankit's MCP server" in result.stdout
