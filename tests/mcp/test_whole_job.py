"""The default (core) tool set of ``plankit mcp`` is enough for the whole job, driven
through the MCP SDK's stdio client the way an agent works: a checklist from nothing to
every step done (one blocked and reopened, one added, a note), then an agentflow plan
written, committed, and every task claimed, kept alive and finished."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.client.stdio import StdioServerParameters

from mcp import Client
from plankit.agentflow.control import ControlPlane
from plankit.mcp.catalog import selected
from tests.acp.kit import ROOT

PLAN_MD = """---
title: "Ship the invoice export"
---

Export invoices as CSV for the accounting team; a schema first, then the writer.
"""

TASKS = {
    "01-schema.md": "---\nid: schema\n---\n\nDefine the CSV columns: number, date, total.\n",
    "02-writer.md": (
        "---\nid: writer\ndepends_on: [schema]\n---\n\nWrite export_csv() using the schema.\n"
    ),
    "03-docs.md": "---\nid: docs\ndepends_on: [writer]\n---\n\nDocument the export.\n",
}


def test_the_core_tools_do_a_whole_checklist_and_a_whole_agentflow_cycle(tmp_path: Path) -> None:
    home = tmp_path / "agentflow"
    context = ControlPlane(home).start_session()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from plankit.cli import main; main()", "mcp", "--store", "PLAN.md"],
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT / "src"),
            "AGENTFLOW_HOME": str(home),
            "AGENTFLOW_SESSION_ID": context.session.session_id,
        },
        cwd=tmp_path,
    )
    used: set[str] = set()
    seen: dict[str, Any] = {}

    async def agent() -> None:
        async with Client(params) as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
            seen["listed"] = listed

            async def call(name: str, **arguments: Any) -> Any:
                assert name in listed, f"{name} is not in the default set"
                used.add(name)
                result = await client.call_tool(name, arguments)
                assert not result.is_error, (name, result.content)
                return result

            def text(result: Any) -> str:
                return "".join(getattr(c, "text", "") for c in result.content)

            # the checklist, from nothing
            assert text(await call("get_plan")).startswith("No plan in")
            await call(
                "create_plan",
                title="Invoice export",
                goal="Accounting gets a CSV of every invoice",
                phases=[
                    {"name": "Design", "steps": ["Agree the CSV columns with accounting"]},
                    {"name": "Build", "steps": ["Write export_csv()", "Test on last month"]},
                ],
            )
            blocked_once = False
            while (step := json.loads(text(await call("get_next_task")))) is not None:
                await call("start_task", step=step["step"])
                if step["step"] == "2.1" and not blocked_once:
                    blocked_once = True
                    await call(
                        "set_task_status",
                        step="2.1",
                        status="blocked",
                        note="waiting for the invoices table's read access",
                    )
                    await call("append_note", text="read access asked for on Monday")
                    await call("add_step", text="Ask for read access", phase=1)
                    continue
                await call("complete_task", step=step["step"])
                if step["step"] == "1.2":  # access granted: reopen the blocked step
                    await call("set_task_status", step="2.1", status="todo")
            seen["plan"] = text(await call("get_plan", full=True))

            # the agentflow cycle, in the same server
            where = (await call("plan_dir")).structured_content
            directory = Path(where["plan_dir"])
            (directory / "plan.md").write_text(PLAN_MD, encoding="utf-8")
            (directory / "tasks").mkdir(exist_ok=True)
            for name, body in TASKS.items():
                (directory / "tasks" / name).write_text(body, encoding="utf-8")
            committed = (await call("plan_commit")).structured_content
            seen["committed"] = committed
            failed_once = False
            finished = []
            while task := (await call("task_claim", agent="e2e")).structured_content["task"]:
                await call("task_heartbeat", ref=task["ref"], claim=task["claim"])
                if task["ref"].endswith("/docs") and not failed_once:
                    failed_once = True
                    await call("task_fail", ref=task["ref"], reason="docs site down")
                    seen["after_fail"] = (await call("plan_show")).structured_content
                    break
                await call("task_done", ref=task["ref"], claim=task["claim"])
                finished.append(task["ref"].split("/")[-1])
            seen["finished"] = finished
            seen["shown"] = (await call("plan_show")).structured_content

    anyio.run(agent)

    core = {tool.name for tool in selected("core")}
    assert seen["listed"] == core
    assert used == core  # every core tool was needed, and none other
    assert "- [x] 1.1 Agree the CSV columns with accounting" in seen["plan"]
    assert "- [x] 1.2 Ask for read access" in seen["plan"]
    assert "- [x] 2.1 Write export_csv()" in seen["plan"]
    assert "- [x] 2.2 Test on last month" in seen["plan"]
    assert "read access asked for on Monday" in seen["plan"]
    assert seen["plan"].startswith("Progress: 4/4 done (100%)")
    assert seen["committed"]["task_count"] == 3
    assert seen["finished"] == ["schema", "writer"]
    states = {t["id"]: t["state"] for t in seen["shown"]["threads"][0]["plan"]["tasks"]}
    assert states == {"schema": "done", "writer": "done", "docs": "failed"}
