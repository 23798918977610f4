"""The MCP tool lists a user reads say what the servers serve: the README's and
docs/mcp.md's lists (written by tools/mcp_docs.py), ``plankit mcp --help``, and the
tables of docs/checklist.md and docs/agentflow.md."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from plankit.mcp import catalog
from tests.acp.kit import ROOT


def _mcp_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mcp_docs", ROOT / "tools" / "mcp_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_and_docs_lists_are_the_registered_tools() -> None:
    docs = _mcp_docs()
    tools = docs.registered()
    assert [t["name"] for t in tools] == [t.name for t in catalog.ALL]
    made = docs.blocks(tools)
    for path in docs.FILES:
        text = path.read_text(encoding="utf-8")
        assert docs.regenerate(text, made) == text, (
            f"{path.name}: its MCP tool list is out of date; run tools/mcp_docs.py"
        )
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    mcp_md = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    assert "<!-- mcp-tools:readme-checklist -->" in readme
    assert "<!-- mcp-tools:readme-agentflow -->" in readme
    for tool in catalog.ALL:
        assert f"| `{tool.name}` |" in mcp_md


def test_a_drifted_list_is_caught() -> None:
    docs = _mcp_docs()
    made = docs.blocks(docs.registered())
    stale = "<!-- mcp-tools:table -->\n| `old_tool` |\n<!-- /mcp-tools:table -->\n"
    assert docs.regenerate(stale, made) != stale


def test_plankit_mcp_help_lists_every_tool_of_each_set() -> None:
    result = subprocess.run(
        [sys.executable, "-c", "from plankit.cli import main; main()", "mcp", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    default = re.search(r"Tools served by default \(--tools core\): ([a-z_, ]+)\.", text)
    added = re.search(r"Added by --tools all: ([a-z_, ]+)\.", text)
    assert default and added, text
    assert default[1].split(", ") == [t.name for t in catalog.selected("core")]
    listed = default[1].split(", ") + added[1].split(", ")
    assert sorted(listed) == sorted(t.name for t in catalog.ALL)
    assert "--tools [core|all]" in result.stdout


def _table_tools(path: Path, heading: str) -> set[str]:
    text = path.read_text(encoding="utf-8")
    section = text[text.index(heading) :]
    section = section[: section.index("\n## ", 1)] if "\n## " in section[1:] else section
    names: set[str] = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            first = line.split("|")[1]
            names |= set(re.findall(r"`([a-z_]+)`", first))
    return names


def test_the_checklist_and_agentflow_tables_name_exactly_their_tools() -> None:
    checklist = _table_tools(ROOT / "docs" / "checklist.md", "## MCP server and tools")
    agentflow = _table_tools(ROOT / "docs" / "agentflow.md", "## MCP tools")
    assert checklist == {t.name for t in catalog.CHECKLIST}
    assert agentflow == {t.name for t in catalog.AGENTFLOW}
