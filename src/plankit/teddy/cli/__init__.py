"""The ``teddy`` command.

Each command parses its options, calls one library function and formats the result.
Exit codes: 0 success, 1 invalid input or a failed check, 2 usage error, 130
interrupted.  Machine output goes to stdout; messages and progress to stderr.
Heavy modules are imported inside the commands that need them.

The commands live by theme: :mod:`.format_cmds` (parse, preprocess),
:mod:`.session_cmds` (new, context, get-prompt), :mod:`.planning_cmds` (plan, resume),
:mod:`.run_cmds` (run), :mod:`.execute_cmds` (execute, acp); :mod:`.common` holds what
they share.
"""

from __future__ import annotations

import click

from plankit.cliutil import run
from plankit.teddy.cli.execute_cmds import acp_command, execute
from plankit.teddy.cli.format_cmds import parse, preprocess
from plankit.teddy.cli.planning_cmds import plan_command, resume
from plankit.teddy.cli.run_cmds import run_command
from plankit.teddy.cli.session_cmds import context, get_prompt_command, new
from plankit.teddy.cli.undo_cmds import undo


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="plankit", prog_name="teddy")
def cli() -> None:
    """TeDDy: Markdown action plans that AI agents write and people approve.

    A plan is one Markdown file: a title, a Rationale, optional Memos and an Action
    Plan of CREATE, READ, EDIT, EXECUTE, RESEARCH, CHAT_WITH_USER, INVOKE, CONCLUDE
    and PRUNE actions.
    """


for _command in (
    parse,
    preprocess,
    new,
    context,
    execute,
    acp_command,
    plan_command,
    resume,
    run_command,
    undo,
    get_prompt_command,
):
    cli.add_command(_command)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``teddy`` console script."""
    run(cli, "teddy", argv)
