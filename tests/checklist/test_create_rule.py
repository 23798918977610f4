"""What ``create_plan`` may overwrite is decided by PlanManager alone, so Python, the
``plankit checklist create`` command and the ``create_plan`` MCP tool give the same
answer: the starter plan (even partly worked through) or an empty cell is replaced, any
other plan only when the caller asks for it (``replace=True``, ``--force``,
``replace: true``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from plankit.checklist import MarkdownFile, PhaseInput, PlanExistsError, PlanManager
from plankit.checklist.frontends import how
from plankit.cli import cli
from plankit.errors import PlankitError


@dataclass(frozen=True)
class Outcome:
    """What a front end answered: whether the plan was written, and the error's text."""

    written: bool
    error: str = ""


def _python(path: Path, title: str, replace: bool) -> Outcome:
    manager = PlanManager(MarkdownFile(path))
    try:
        manager.create_plan(title, "G", [PhaseInput("P", ["a step"])], replace=replace)
    except PlankitError as exc:
        return Outcome(False, str(exc))
    return Outcome(True)


def _cli(path: Path, title: str, replace: bool) -> Outcome:
    args = ["checklist", "create", "--json", "--store", str(path), "--title", title]
    args += ["--goal", "G", "--phase", "P: a step", *(["--force"] if replace else [])]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    if result.exit_code == 0:
        return Outcome(True)
    assert result.exit_code == 1, result.output
    (error,) = json.loads(result.stdout)["errors"]
    assert result.stderr == f"plankit checklist: {error['message']}\n"
    return Outcome(False, error["message"])


def _mcp(path: Path, title: str, replace: bool) -> Outcome:
    from mcp import Client
    from plankit.mcp.server import build_server

    manager = PlanManager(MarkdownFile(path), front_end="mcp")  # as `plankit mcp` makes it
    server = build_server(lambda: manager, agentflow=False)
    arguments: dict[str, Any] = {
        "title": title,
        "goal": "G",
        "phases": [{"name": "P", "steps": ["a step"]}],
    }
    if replace:
        arguments["replace"] = True

    async def call() -> Outcome:
        async with Client(server) as client:
            result = await client.call_tool("create_plan", arguments)
        text = "".join(getattr(c, "text", "") for c in result.content)
        return Outcome(False, text) if result.is_error else Outcome(True)

    return anyio.run(call)


FRONT_ENDS: dict[str, Callable[[Path, str, bool], Outcome]] = {
    "python": _python,
    "cli": _cli,
    "mcp": _mcp,
}


def _starter(path: Path) -> None:
    PlanManager(MarkdownFile(path)).init_plan(raise_errors=True)


def _starter_worked_through(path: Path) -> None:
    manager = PlanManager(MarkdownFile(path))
    manager.init_plan(raise_errors=True)
    manager.complete_task("1.1")
    manager.block_task("1.2", "the headers are merged")
    manager.append_note("the user works on Q4 sales")


def _real_plan(path: Path) -> None:
    manager = PlanManager(MarkdownFile(path))
    manager.create_plan("Old", "Keep me", [PhaseInput("Work", ["one", "two"])])
    manager.complete_task("1.1")


def _not_a_plan(path: Path) -> None:
    path.write_text("meeting notes, not a plan\n", encoding="utf-8")


SETUPS: dict[str, Callable[[Path], None]] = {
    "missing": lambda path: None,
    "starter": _starter,
    "starter-worked-through": _starter_worked_through,
    "real-plan": _real_plan,
    "not-a-plan": _not_a_plan,
}

EXPECTED = {
    # setup: (written without replace, written with replace)
    "missing": (True, True),
    "starter": (True, True),
    "starter-worked-through": (True, True),
    "real-plan": (False, True),
    "not-a-plan": (False, True),
}


@pytest.mark.parametrize("setup", sorted(SETUPS))
@pytest.mark.parametrize("replace", [False, True], ids=["plain", "replace"])
def test_every_front_end_gives_the_same_answer(tmp_path: Path, setup: str, replace: bool) -> None:
    answers: dict[str, Outcome] = {}
    for name, front_end in FRONT_ENDS.items():
        path = tmp_path / name / "PLAN.md"
        path.parent.mkdir()
        SETUPS[setup](path)
        before = path.read_bytes() if path.exists() else None
        answers[name] = front_end(path, "New", replace)
        after = path.read_bytes()
        if answers[name].written:
            plan = PlanManager(MarkdownFile(path)).get_plan()
            assert plan is not None and plan.title == "New", name
        else:
            assert after == before, f"{name} changed the store although it refused"
    assert {answer.written for answer in answers.values()} == {EXPECTED[setup][replace]}
    # the same refusal, each telling the fix in its own front end's words only
    heads = {
        name: answer.error.replace(str(tmp_path / name), "").partition(". To ")[0]
        for name, answer in answers.items()
    }
    assert heads["cli"] == heads["python"] and heads["python"] in heads["mcp"]
    for name, answer in answers.items():
        for other in FRONT_ENDS:
            said = how(other, "replace") in answer.error  # type: ignore[arg-type]
            assert said == (not answer.written and other == name), (name, other, answer.error)
    assert "plankit checklist" not in answers["mcp"].error


def test_the_refusal_names_the_plan_and_every_way_to_replace_it(tmp_path: Path) -> None:
    path = tmp_path / "PLAN.md"
    _real_plan(path)
    with pytest.raises(PlanExistsError) as caught:
        PlanManager(MarkdownFile(path)).create_plan(
            "New", "G", [PhaseInput("P", ["s"])], replace=False
        )
    assert caught.value.code == "plan-exists"
    # a PLAN.md file is named by its path (it has no cells), the fix in Python's words
    assert str(caught.value) == (
        f"{path} already holds the plan 'Old' (1 of 2 steps done); nothing was written. "
        "To replace it, call create_plan(..., replace=True)"
    )


def test_the_python_default_replaces_any_plan_as_the_spec_does(tmp_path: Path) -> None:
    path = tmp_path / "PLAN.md"
    _real_plan(path)
    plan = PlanManager(MarkdownFile(path)).create_plan("New", "G", [PhaseInput("P", ["s"])])
    assert plan.title == "New"
    assert "\n# Plan: New\n" in path.read_text(encoding="utf-8")


def test_the_mcp_tool_offers_replace_defaulting_to_false(tmp_path: Path) -> None:
    from mcp import Client
    from plankit.mcp.server import build_server

    server = build_server(lambda: PlanManager(MarkdownFile(tmp_path / "PLAN.md")), agentflow=False)

    async def schema() -> dict[str, Any]:
        async with Client(server) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        return tools["create_plan"].input_schema

    properties = anyio.run(schema)["properties"]
    assert properties["replace"]["type"] == "boolean"
    assert properties["replace"]["default"] is False
