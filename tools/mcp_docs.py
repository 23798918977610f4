"""Write the MCP tool lists of README.md and docs/mcp.md from the registered tools.

Usage (from the project root)::

    .venv/bin/python tools/mcp_docs.py          # rewrite the lists in place
    .venv/bin/python tools/mcp_docs.py --check  # exit 1 when a list is out of date

Each list sits between two markers, ``<!-- mcp-tools:NAME -->`` and
``<!-- /mcp-tools:NAME -->``, and is made from the tools the servers really register
(every tool of ``plankit mcp --tools all``, asked through ``tools/list``): name,
set, description and arguments (required ones first, ``?`` after an optional one).
``tests/mcp/test_docs.py`` fails when a list and the servers drift apart.
"""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FILES = (ROOT / "README.md", ROOT / "docs" / "mcp.md")


def registered() -> list[dict[str, Any]]:
    """Every tool ``plankit mcp --tools all`` lists, as ``tools/list`` gives it."""
    import anyio

    from plankit.checklist import MemorySheets, PlanManager
    from plankit.mcp.server import build_server

    manager = PlanManager(MemorySheets())
    server = build_server(lambda: manager, tools="all")

    async def listing() -> list[dict[str, Any]]:
        return [
            tool.model_dump(by_alias=True, exclude_none=True, mode="json")
            for tool in await server.list_tools()
        ]

    return anyio.run(listing)


def _arguments(tool: dict[str, Any]) -> str:
    schema = tool.get("inputSchema", {})
    required = schema.get("required", [])
    names = [f"`{n}`" for n in required]
    names += [f"`{n}?`" for n in schema.get("properties", {}) if n not in required]
    return ", ".join(names) or "—"


def blocks(tools: list[dict[str, Any]]) -> dict[str, str]:
    """The text of each marked list, by name."""
    from plankit.mcp.catalog import BY_NAME

    def names(system: str, core: bool | None) -> str:
        chosen = [
            t["name"]
            for t in tools
            if BY_NAME[t["name"]].system == system
            and (core is None or BY_NAME[t["name"]].core is core)
        ]
        return ", ".join(f"`{n}`" for n in chosen)

    readme_checklist = (
        f"The same operations are MCP tools, served over stdio by `plankit mcp`. By default\n"
        f"it serves the core set, {names('checklist', True)} (with the agentflow tools\n"
        f"alongside), under 2,000 tokens of `tools/list`; `--tools all` adds\n"
        f"{names('checklist', False)}. `docs/mcp.md` lists them all.\n"
    )
    readme_agentflow = (
        f"The same operations are MCP tools ({names('agentflow', None)}), served over stdio\n"
        f"by `agentctl mcp` (and by `plankit mcp`: {names('agentflow', True)} by default):\n"
    )
    rows = ["| tool | set | server | arguments | what it does |", "|---|---|---|---|---|"]
    for tool in tools:
        info = BY_NAME[tool["name"]]
        served = "`plankit mcp`" if info.system == "checklist" else "both"
        rows.append(
            f"| `{info.name}` | {'core' if info.core else 'all'} | {served} | "
            f"{_arguments(tool)} | {tool['description'].replace('|', '/')} |"
        )
    return {
        "readme-checklist": textwrap.fill(" ".join(readme_checklist.split()), 88) + "\n",
        "readme-agentflow": textwrap.fill(" ".join(readme_agentflow.split()), 88) + "\n",
        "table": "\n".join(rows) + "\n",
    }


def _marked(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- mcp-tools:{name} -->\n)(.*?)(<!-- /mcp-tools:{name} -->)", re.DOTALL)


def regenerate(text: str, made: dict[str, str]) -> str:
    """``text`` with every marked list it holds replaced by ``made``'s."""
    for name, body in made.items():
        text = _marked(name).sub(lambda found, body=body: found[1] + body + found[3], text)
    return text


def main(argv: list[str]) -> int:
    made = blocks(registered())
    stale = []
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        new = regenerate(text, made)
        if new != text:
            stale.append(path.relative_to(ROOT))
            if "--check" not in argv:
                path.write_text(new, encoding="utf-8")
    if stale and "--check" in argv:
        print(f"out of date: {', '.join(map(str, stale))}; run tools/mcp_docs.py", file=sys.stderr)
        return 1
    for path in stale:
        print(f"rewrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
