"""``plankit mcp``: run the MCP server over stdio."""

from __future__ import annotations

import click


@click.command()
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
def mcp(store: str, cell: str, credentials: str | None, no_agentflow: bool) -> None:
    """Run plankit's MCP server on standard input/output.

    Exposes the checklist tools (init_plan, get_plan, get_next_task, get_review_tasks,
    create_plan, start_task, complete_task, block_task, review_task, append_note,
    set_task_status) on the store given, plus the agentflow tools when installed.
    Point an MCP client at: plankit mcp --store PLAN.md
    """
    from plankit.checklist.refs import parse_ref
    from plankit.errors import InputError
    from plankit.mcp.server import build_server, manager_factory, run_stdio

    try:
        parse_ref(cell)
    except InputError as exc:
        raise click.BadParameter(str(exc), param_hint="'--cell'") from None
    server = build_server(manager_factory(store, cell, credentials), agentflow=not no_agentflow)
    run_stdio(server)
