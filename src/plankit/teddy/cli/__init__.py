"""The ``teddy`` command.

Each command parses its options, calls one library function and formats the result.
Exit codes: 0 success, 1 invalid input or a failed check, 2 usage error, 130
interrupted.  Machine output goes to stdout; messages and progress to stderr.
Heavy modules are imported inside the commands that need them, and a command's module
only when it runs (``teddy --help`` lists them from :data:`SUMMARIES`).

The commands live by theme: :mod:`.format_cmds` (parse, preprocess),
:mod:`.session_cmds` (new, context, get-prompt), :mod:`.planning_cmds` (plan, resume),
:mod:`.run_cmds` (run), :mod:`.execute_cmds` (execute, acp); :mod:`.common` holds what
they share.
"""

from __future__ import annotations

import click

from plankit.cliutil import LazyGroup, run

_HERE = "plankit.teddy.cli."
COMMANDS: dict[str, str] = {
    "acp": _HERE + "execute_cmds:acp_command",
    "context": _HERE + "session_cmds:context",
    "execute": _HERE + "execute_cmds:execute",
    "get-prompt": _HERE + "session_cmds:get_prompt_command",
    "new": _HERE + "session_cmds:new",
    "parse": _HERE + "format_cmds:parse",
    "plan": _HERE + "planning_cmds:plan_command",
    "preprocess": _HERE + "format_cmds:preprocess",
    "resume": _HERE + "planning_cmds:resume",
    "run": _HERE + "run_cmds:run_command",
    "undo": _HERE + "undo_cmds:undo",
}
"""Command name → ``module:attribute`` of its click command, imported when it runs."""

SUMMARIES: dict[str, str] = {
    "acp": "Serve TeDDy as an Agent Client Protocol agent on stdin/stdout.",
    "context": "Write input.md for the current turn and print its path.",
    "execute": "Validate, approve and execute a plan, then prepare the next turn.",
    "get-prompt": "Print the system prompt of AGENT (default: the configured default agent).",
    "new": "Start a session NAME (kebab-case) in the current directory and print its path.",
    "parse": "Parse PLAN and print its summary (or JSON); exit 1 listing every problem.",
    "plan": "Plan the current turn with a model and save plan.md (its path is printed).",
    "preprocess": "Make a model's answer a plan: unwrap it and repair its fences.",
    "resume": "Continue the session with whatever comes next.",
    "run": "Plan, validate, approve and execute turn after turn, until there is a reason to stop.",
    "undo": "Take back the latest executed turn: its files as they were, its plan unexecuted.",
}
"""The first paragraph of each command's help, for ``teddy --help`` (which then imports
no command module); a test holds them to the commands."""


@click.group(
    cls=LazyGroup,
    lazy=COMMANDS,
    summaries=SUMMARIES,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(package_name="plankit", prog_name="teddy")
def cli() -> None:
    """TeDDy: Markdown action plans that AI agents write and people approve.

    A plan is one Markdown file: a title, a Rationale, optional Memos and an Action
    Plan of CREATE, READ, EDIT, EXECUTE, RESEARCH, CHAT_WITH_USER, INVOKE, CONCLUDE
    and PRUNE actions.
    """


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``teddy`` console script."""
    run(cli, "teddy", argv)
