"""The umbrella ``plankit`` command.

Subcommands are imported only when they run (or when ``--help`` lists them), so
``plankit --help`` stays fast and no heavy library is loaded before it is needed:

- ``plankit checklist …`` — PLAN.md checklists (:mod:`plankit.checklist.cli`);
- ``plankit mcp`` — the MCP server over stdio (:mod:`plankit.mcp.cli`);
- ``plankit acp run`` — drive an ACP agent and show its plan live (:mod:`plankit.acp.cli`);
- ``plankit board`` — every plan under a directory, live in the browser
  (:mod:`plankit.board.cli`).

Exit codes: 0 success, 1 an error or a failed check, 2 usage error, 130 interrupted.
"""

from __future__ import annotations

import click

from plankit.cliutil import LazyGroup, run

SUBCOMMANDS: dict[str, str] = {
    "acp": "plankit.acp.cli:acp",
    "board": "plankit.board.cli:board",
    "checklist": "plankit.checklist.cli:checklist",
    "mcp": "plankit.mcp.cli:mcp",
}
"""Subcommand name → ``module:attribute`` of its click command."""


@click.group(
    cls=LazyGroup,
    lazy=SUBCOMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(package_name="plankit", prog_name="plankit")
def cli() -> None:
    """plankit: plans that AI agents write, check, run and show."""


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``plankit`` console script."""
    run(cli, "plankit", argv)
