"""The checklist MCP tools in process: a compact get_plan (the Markdown on request),
enums and descriptions in every input schema, argument errors in the servers' one
error shape (one line of text, the diagnostics as structured content), unknown
arguments refused, and the structural tools."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import MCPServer

from plankit.checklist import MemorySheets, PlanManager
from plankit.checklist.mcp_tools import TOOL_NAMES, register_checklist_tools

from .test_restructure import PLAN


@pytest.fixture
def server() -> tuple[MCPServer[Any], MemorySheets]:
    store = MemorySheets({"AGENT_BASE!C2": PLAN})
    manager = PlanManager(store)
    srv: MCPServer[Any] = MCPServer("test")
    assert register_checklist_tools(srv, lambda: manager) == list(TOOL_NAMES)
    return srv, store


def call(srv: MCPServer[Any], name: str, args: dict[str, Any]) -> str:
    async def go() -> str:
        result = await srv.call_tool(name, args)
        return "".join(getattr(c, "text", "") for c in result.content)  # type: ignore[union-attr]

    return anyio.run(go)


def error(srv: MCPServer[Any], name: str, args: dict[str, Any]) -> str:
    """The one-line text of the error ``name`` answers (its shape checked)."""

    async def go() -> Any:
        return await srv.call_tool(name, args)

    result = anyio.run(go)
    assert result.is_error, result
    (content,) = result.content
    message = str(content.text)
    assert "\n" not in message, message
    errors = result.structured_content["errors"]
    assert errors and all(list(e) == ["code", "message", "line", "file"] for e in errors)
    assert message.startswith(f"{errors[0]['code']} ") or ": " in message
    return message


def schemas(srv: MCPServer[Any]) -> dict[str, dict[str, Any]]:
    async def go() -> dict[str, dict[str, Any]]:
        return {t.name: t.input_schema for t in await srv.list_tools()}

    return anyio.run(go)


def test_every_argument_is_described_and_unknown_ones_are_refused(server: Any) -> None:
    srv, _ = server
    found = schemas(srv)
    assert set(found) == set(TOOL_NAMES)
    for name, schema in found.items():
        assert schema["additionalProperties"] is False, name
        for arg, spec in schema.get("properties", {}).items():
            assert spec.get("description"), (name, arg)
    status = found["set_task_status"]["properties"]["status"]
    assert status["enum"] == ["todo", "doing", "done", "blocked", "review"]
    phases = found["create_plan"]["$defs"]["PhaseSpec"]
    assert all(p.get("description") for p in phases["properties"].values())


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        (
            "complete_task",
            {"stepp": "1.1"},
            "argument-unknown unknown argument `stepp`; the arguments are: step",
        ),
        ("complete_task", {"step": "1.3", "force": True}, "unknown argument `force`"),
        ("block_task", {"step": "1.3"}, "argument-missing `reason` is required"),
        (
            "complete_task",
            {"step": 1.3},
            "`step` must be text, not the number 1.3: Step number as written in the plan, e.g. 1.2",
        ),
        (
            "set_task_status",
            {"step": "1.3", "status": "finished"},
            '`status` must be one of "todo", "doing", "done", "blocked", "review", '
            'not the text "finished"',
        ),
        ("get_plan", {"full": "yes please"}, '`full` must be true or false, not the text "yes'),
        ("create_plan", {"title": "t", "goal": "g"}, "`phases` is required"),
        (
            "create_plan",
            {"title": "t", "goal": "g", "phases": [{"name": "a", "steps": ["x"], "extra": 1}]},
            "unknown field `phases[0].extra`",
        ),
        ("block_task", {"step": "1.3", "reason": " "}, "needs a reason"),
        ("add_step", {"text": "x"}, "say where the step goes"),
        ("complete_task", {"step": "9.9"}, "no task '9.9' in the plan"),
    ],
)
def test_argument_errors_are_one_line(
    server: Any, name: str, args: dict[str, Any], expected: str
) -> None:
    srv, store = server
    assert expected in error(srv, name, args)
    assert store.get_cell("AGENT_BASE!C2") == PLAN  # nothing was written


def test_get_plan_is_compact_and_gives_the_markdown_on_request(server: Any) -> None:
    srv, _ = server
    text = call(srv, "get_plan", {})
    assert text.splitlines() == [
        "Progress: 2/8 done (25%) · 1 doing · 1 blocked · 1 review · 3 todo",
        "Plan: Q4",
        "Goal: fill the summary",
        "Phase 1 Collect: 1/3 done (33%) · 1 blocked · 1 todo",
        "Phase 2 Process: 1/5 done (20%) · 1 doing · 1 review · 2 todo",
        "Current: 2.1 Totals",
        "Next: 1.3 Read Regions",
        "Waiting for review: 2.2 Margins — check the formula",
        "Blocked: 1.2 Read Pricing — waiting for supplier data",
        "Open questions: 1. Include archived orders? | 2. Which date range?",
        "(get_plan with full=true returns the Markdown, analysis and notes included.)",
    ]
    full = call(srv, "get_plan", {"full": True})
    assert full.endswith("\n\n" + PLAN)


def test_a_large_plan_costs_a_fraction_of_its_markdown() -> None:
    phases = [
        f"### Phase {p}: Part {p}\n"
        + "".join(
            f"- [ ] {p}.{s} Read Orders{p}!A2:F{s}00 (order id, date, customer)\n"
            for s in range(1, 21)
        )
        for p in range(1, 26)
    ]
    text = "# Plan: Big\n\nGoal: g\n\n" + "\n".join(phases)
    assert len(text) > 30_000
    srv: MCPServer[Any] = MCPServer("big")
    manager = PlanManager(MemorySheets({"AGENT_BASE!C2": text}))
    register_checklist_tools(srv, lambda: manager)
    compact = call(srv, "get_plan", {})
    assert len(compact) < len(text) / 10


def test_structural_tools(server: Any) -> None:
    srv, store = server
    added = json.loads(call(srv, "add_step", {"text": "Read Discounts", "after": "1.1"}))
    assert (added["step"], added["status"]) == ("1.2", "todo")
    assert call(srv, "remove_step", {"step": "1.4"}).startswith("Removed 1.4 Read Regions")
    assert call(srv, "add_phase", {"name": "Report", "steps": ["Send it"]}) == (
        "Added Phase 3: Report (3.1 Send it)"
    )
    assert call(srv, "rename_phase", {"number": 1, "name": "Gather"}).startswith(
        "Renamed: Phase 1: Gather (1.1 Read Orders; 1.2 Read Discounts"
    )
    assert call(srv, "answer_question", {"question": 2, "answer": "Q4"}) == (
        "Which date range? — Answer: Q4"
    )
    assert call(srv, "set_goal", {"goal": "ship it"}) == "Goal: ship it"
    fields = json.loads(call(srv, "set_analysis", {"current_state": "500 orders"}))
    assert fields["current_state"] == "500 orders"
    assert fields["target_ranges"]["read"] == ["Orders!A2:F500 (orders)"]
    current = json.loads(call(srv, "get_current_task", {}))
    assert current["step"] == "2.1"
    assert (
        json.loads(call(srv, "set_task_status", {"step": "2.1", "status": "todo"}))["status"]
        == "todo"
    )
    assert call(srv, "get_current_task", {}) == "null"
    assert "- [ ] 3.1 Send it" in store.get_cell("AGENT_BASE!C2")


def test_renumber_fixes_duplicates_and_next_refuses_a_plan_it_cannot_read() -> None:
    srv: MCPServer[Any] = MCPServer("dup")
    store = MemorySheets(
        {"AGENT_BASE!C2": "# Plan: D\n\n### Phase 1: W\n- [ ] 1.1 A\n- [ ] 1.1 B\n"}
    )
    manager = PlanManager(store)
    register_checklist_tools(srv, lambda: manager)
    assert "lines 4 and 5" in error(srv, "start_task", {"step": "1.1"})
    assert "- line 5: duplicate-step" in call(srv, "get_plan", {})
    assert "Warnings" not in call(srv, "renumber_steps", {})
    assert json.loads(call(srv, "start_task", {"step": "1.2"}))["title"] == "B"
    store.set_cell("AGENT_BASE!C2", "# Plan: D\n\n## Phase 1: W\n- [ ] 1.1 A\n")
    message = error(srv, "get_next_task", {})
    assert "plan-unreadable no todo step was read, but the plan has problems: " in message
    assert "phase-heading-level" in message
