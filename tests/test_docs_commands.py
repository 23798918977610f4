"""Docs that cannot drift: every command and subcommand, and every MCP tool, that
README.md or docs/*.md names exists.

A command is named where a line of a code block, or an inline code span, starts with
``teddy``, ``plankit`` or ``agentctl`` (after a ``$`` prompt): its words are walked
down the real click command tree, and a word where a subcommand must be that names
none fails (``agentctl task list`` when ``task`` has no ``list``).  Options, arguments
and placeholders (``STEP``, ``…``, ``<name>``) end the walk.  MCP tools are named in
the first column of a table whose header is ``tool``, and in the list after "MCP
tools (" in prose; each must be a tool of the ``plankit mcp`` server (the checklist's
and agentflow's tools).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import click
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PROGRAMS = ("teddy", "plankit", "agentctl")

_FENCE = re.compile(r"^(```+|~~~+)[^\n]*\n(.*?)^\1\s*$", re.M | re.S)
_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_WORD = re.compile(r"[a-z][a-z0-9-]*")


def _roots() -> dict[str, click.Command]:
    from plankit.cli import cli as plankit
    from plankit.orchestrate.cli import cli as agentctl  # run and worker added
    from plankit.teddy.cli import cli as teddy

    return {"teddy": teddy, "plankit": plankit, "agentctl": agentctl}


def command_lines(text: str) -> list[str]:
    """Every line of a code block, and every inline code span, that starts with one of
    the programs (a ``$`` prompt dropped)."""
    found: list[str] = []
    for block in _FENCE.finditer(text):
        for line in block.group(2).splitlines():
            found.append(line)
    prose = _FENCE.sub("", text)
    found += [" ".join(m.group(2).split()) for m in _SPAN.finditer(prose)]
    out = []
    for line in found:
        line = line.strip().removeprefix("$ ").strip()
        # a command after a shell operator or in $(…) counts too
        for part in re.split(r"\s*(?:&&|\|\||;|\||\$\()\s*", line):
            words = part.split()
            if words and words[0] in PROGRAMS:
                out.append(part)
    return out


def missing_command(roots: dict[str, click.Command], line: str) -> str | None:
    """The leading words of ``line`` up to the first that names no subcommand where
    one is needed; None when the command exists."""
    words = line.split()
    command = roots[words[0]]
    walked = [words[0]]
    for word in words[1:]:
        if not isinstance(command, click.Group):
            return None
        if not _WORD.fullmatch(word):  # an option, an argument, a placeholder
            return None
        sub = command.get_command(click.Context(command), word)  # lazy groups load it
        if sub is None:
            if word in ("help",):  # `teddy help` style, if any: not a subcommand
                return None
            return " ".join([*walked, word])
        command = sub
        walked.append(word)
    return None


def test_command_lines_are_found_in_blocks_spans_and_shell_lines() -> None:
    text = (
        'Run `agentctl task list --json` or `teddy plan -m "x"`.\n\n'
        "```console\n$ plankit checklist show --store PLAN.md\n"
        'got="$(agentctl task claim --json)"\n```\n'
    )
    assert command_lines(text) == [
        "plankit checklist show --store PLAN.md",
        'agentctl task claim --json)"',
        "agentctl task list --json",
        'teddy plan -m "x"',
    ]
    roots = _roots()
    assert missing_command(roots, "agentctl task list --json") == "agentctl task list"
    assert missing_command(roots, "agentctl task claim --json") is None
    assert missing_command(roots, "plankit checklist done STEP") is None
    assert missing_command(roots, "teddy plna") == "teddy plna"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_command_the_docs_name_exists(doc: Path) -> None:
    roots = _roots()
    text = doc.read_text(encoding="utf-8")
    lines = command_lines(text)
    wrong = sorted({m for line in lines if (m := missing_command(roots, line))})
    assert wrong == [], f"{doc.name} names commands that do not exist: {wrong}"


def _tools() -> set[str]:
    from plankit.checklist.manager import PlanManager
    from plankit.checklist.stores.memory import MemorySheets
    from plankit.mcp.server import build_server

    server = build_server(lambda: PlanManager(MemorySheets()), agentflow=True)

    async def listed() -> set[str]:
        tools: Any = await server.list_tools()
        return {t.name for t in tools}

    return anyio.run(listed)


def tool_names(text: str) -> set[str]:
    """The tools a document names: the first column of ``| tool |`` tables, and the
    code spans in the parentheses after "MCP tools (" (or "tools (")."""
    names: set[str] = set()
    in_table = False
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if "|" in line else []
        if cells and cells[0].lower() == "tool":
            in_table = True
            continue
        if not line.lstrip().startswith("|"):
            in_table = False
        elif in_table:
            names.update(re.findall(r"^`([a-z_]+)`$", cells[0]))
    flat = " ".join(text.split())
    for listing in re.findall(r"MCP tools \(([^)]*)\)", flat):
        names.update(re.findall(r"`([a-z_]+)`", listing))
    return names


def test_tool_names_are_found_in_tables_and_prose() -> None:
    text = (
        "The same operations are MCP tools (`init_plan`,\n`get_plan`), served.\n\n"
        "| tool | arguments |\n|---|---|\n| `task_claim` | `agent` |\n\nafter `other`\n"
    )
    assert tool_names(text) == {"init_plan", "get_plan", "task_claim"}


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_mcp_tool_the_docs_name_exists(doc: Path) -> None:
    named = tool_names(doc.read_text(encoding="utf-8"))
    unknown = sorted(named - _tools())
    assert unknown == [], f"{doc.name} names MCP tools that do not exist: {unknown}"


def test_the_docs_name_mcp_tools_at_all() -> None:
    named = set().union(*(tool_names(d.read_text(encoding="utf-8")) for d in DOCS))
    assert {"get_plan", "task_claim"} <= named
