"""``plankit acp …``: Agent Client Protocol commands (loaded only when used)."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.group(name="acp")
def acp() -> None:
    """Agent Client Protocol: run an ACP agent and watch its plan.

    TeDDy itself is an ACP agent: `teddy acp`.
    """


@acp.command(name="run")
@click.option("--approve-all", "approve", is_flag=True, help="Allow every permission request.")
@click.option("--deny-all", "deny", is_flag=True, help="Reject every permission request.")
@click.option(
    "--allow-writes",
    "writes",
    is_flag=True,
    help="Offer the agent fs/write_text_file (files inside the working directory).",
)
@click.option(
    "--allow-terminal",
    "terminal",
    is_flag=True,
    help="Offer the agent terminal/create (commands run in the working directory).",
)
@click.option("--json", "as_json", is_flag=True, help="Write the transcript as NDJSON instead.")
@click.option(
    "--board",
    is_flag=True,
    help="Also keep the transcript in .plankit/acp/ of the working directory, where "
    "`plankit board` shows the agent's plan live.",
)
@click.option(
    "--cwd",
    type=click.Path(file_okay=False, exists=True),
    help="The session's working directory (default: the current one).",
)
@click.argument("words", nargs=-1, required=True, metavar="-- AGENT [ARGS…] PROMPT")
def run_command(
    approve: bool,
    deny: bool,
    writes: bool,
    terminal: bool,
    as_json: bool,
    board: bool,
    cwd: str | None,
    words: tuple[str, ...],
) -> None:
    """Run AGENT over stdio, send PROMPT, and show its plan live until the turn ends.

    \b
    plankit acp run -- teddy acp "$(cat plan.md)"
    plankit acp run --approve-all -- teddy acp "/execute plan.md"
    PROMPT - reads the prompt from standard input.

    Permission requests are asked at the terminal unless --approve-all or --deny-all
    (without a terminal they are denied); --deny-all answers permission requests only.
    The agent may read files of the working directory through the client; writes and
    terminals are offered only with --allow-writes and --allow-terminal.  Exit status:
    0 done, 1 error, 2 usage, 5 a permission was denied, 130 cancelled (Ctrl-C cancels
    the turn).
    """
    if approve and deny:
        raise click.UsageError("--approve-all and --deny-all exclude each other")
    if len(words) < 2:
        raise click.UsageError("give the agent command and the prompt: -- AGENT [ARGS…] PROMPT")
    *command, prompt = words
    if prompt == "-":
        prompt = sys.stdin.read()
    from plankit.acp.client import Policy, run

    policy: Policy = "approve" if approve else "deny" if deny else "ask"
    code = run(
        list(command),
        prompt,
        policy=policy,
        as_json=as_json,
        cwd=Path(cwd).resolve() if cwd else Path.cwd(),
        board=board,
        writes=writes,
        terminal=terminal,
    )
    sys.exit(code)
