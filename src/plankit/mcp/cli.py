"""``plankit mcp``: run the MCP server over stdio."""

from __future__ import annotations

import click

from plankit.mcp.catalog import SELECTIONS, Selection, help_text


@click.command(help=help_text())
@click.option(
    "--store",
    default="PLAN.md",
    show_default=True,
    envvar="PLANKIT_STORE",
    help="Where the checklist lives: a .md file, a .xlsx workbook, or gsheets:<spreadsheet id>.",
)
@click.option(
    "--cell",
    default="AGENT_BASE!C2",
    show_default=True,
    envvar="PLANKIT_CELL",
    help="The cell holding the plan.",
)
@click.option(
    "--credentials",
    type=click.Path(dir_okay=False),
    envvar="PLANKIT_GOOGLE_CREDENTIALS",
    help="Google credentials file, for gsheets: stores.",
)
@click.option("--no-agentflow", is_flag=True, help="Leave out the agentflow tools.")
@click.option(
    "--tools",
    type=click.Choice(SELECTIONS),
    default="core",
    show_default=True,
    envvar="PLANKIT_MCP_TOOLS",
    help="core: what an agent needs for the whole job, in under 2k tokens; all: every tool.",
)
def mcp(store: str, cell: str, credentials: str | None, no_agentflow: bool, tools: str) -> None:
    from plankit.checklist.refs import parse_ref
    from plankit.errors import InputError
    from plankit.mcp.server import manager_factory, serve

    try:
        parse_ref(cell)
    except InputError as exc:
        raise click.BadParameter(str(exc), param_hint="'--cell'") from None
    chosen: Selection = "all" if tools == "all" else "core"
    serve(manager_factory(store, cell, credentials), agentflow=not no_agentflow, tools=chosen)
