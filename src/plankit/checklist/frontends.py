"""How checklist messages tell a fix: in the words of the front end in use.

The same error reaches a person at the command line, an agent through the MCP tools,
or a program calling :class:`~plankit.checklist.manager.PlanManager`; each is told the
step it can take (a command, a tool and its argument, a method call), and the plan is
named the way its store holds it: a PLAN.md file by its path (a file has no cells), a
workbook or a Google spreadsheet by the cell.  ``PlanManager(..., front_end=…)`` says
which front end it serves; the CLI and the MCP server set theirs.
"""

from __future__ import annotations

from typing import Literal

FrontEnd = Literal["python", "cli", "mcp"]
"""Who reads the message: a Python program, a person at the CLI, an agent over MCP."""

FRONT_ENDS: tuple[FrontEnd, ...] = ("python", "cli", "mcp")

Fix = Literal["create", "replace", "elsewhere", "renumber", "lint"]

_FIXES: dict[str, dict[FrontEnd, str]] = {
    "create": {
        "python": "init_plan() for the starter plan, or create_plan(title, goal, phases)",
        "cli": "`plankit checklist init` for the starter plan, or `plankit checklist create`",
        "mcp": "init_plan for the starter plan, or create_plan",
    },
    "replace": {
        "python": "call create_plan(..., replace=True)",
        "cli": "run `plankit checklist create … --force`",
        "mcp": "call create_plan with replace=true",
    },
    "renumber": {
        "python": "renumber(), or remove_step() and add_step()",
        "cli": "`plankit checklist renumber`, or `remove-step` and `add-step`",
        "mcp": "renumber_steps, or remove_step and add_step",
    },
    "lint": {
        "python": "lint()",
        "cli": "`plankit checklist lint`",
        "mcp": "get_plan (its Warnings)",
    },
}

_ELSEWHERE: dict[bool, dict[FrontEnd, str]] = {
    True: {
        "python": "keep the plan in another file (MarkdownFile(path))",
        "cli": "keep the plan in another file (--store)",
        "mcp": "keep the plan in another file (the server's --store)",
    },
    False: {
        "python": "choose another cell (PlanManager(store, cell=…))",
        "cli": "choose another cell with --cell",
        "mcp": "choose another cell (the server's --cell)",
    },
}


def how(front_end: FrontEnd, fix: Fix, *, file: bool = False) -> str:
    """The words for ``fix`` in ``front_end``'s terms; ``file``: the store is a
    PLAN.md file rather than a cell of a workbook or a spreadsheet."""
    if fix == "elsewhere":
        return _ELSEWHERE[file][front_end]
    return _FIXES[fix][front_end]
