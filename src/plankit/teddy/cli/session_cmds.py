"""``teddy new``, ``teddy context`` and ``teddy get-prompt``: sessions and what they hold."""

from __future__ import annotations

from pathlib import Path

import click

from plankit.teddy.cli.common import (
    JSON_HELP,
    SESSION_HELP,
    echo_json,
    fail,
    project_root,
    report_recovery,
)


@click.command()
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def new(name: str, as_json: bool) -> None:
    """Start a session NAME (kebab-case) in the current directory and print its path.

    Creates .teddy/YYYYMMDD-NAME/ with session.context and turn 01, whose
    system_prompt.xml is the default agent's prompt.
    """
    from plankit.errors import InputError
    from plankit.teddy.session.layout import start_session
    from plankit.workspace import find_root

    root = find_root() or Path.cwd()
    try:
        session = start_session(root, name)
    except InputError as exc:
        fail(str(exc))
    if as_json:
        turn = session.latest()
        echo_json({"session": session.name, "path": str(session.path), "turn": turn.name})
    else:
        click.echo(session.path)


@click.command()
@click.option("--session", "session_name", help=SESSION_HELP)
@click.option("--stats", is_flag=True, help="List each resource's size (and what was left out).")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def context(session_name: str | None, stats: bool, as_json: bool) -> None:
    """Write input.md for the current turn and print its path.

    With context.max_bytes or context.max_tokens in config.yaml, the oldest execution
    reports leave input.md first, then files the AI added, until it fits; input.md
    lists what was left out.
    """
    from plankit.errors import InputError
    from plankit.teddy.context.payload import write_turn_payload
    from plankit.teddy.run.recovery import open_session

    root = project_root()
    try:
        session, recovered = open_session(root, session_name)
        report_recovery(recovered)
        written = write_turn_payload(session)
    except InputError as exc:
        fail(str(exc))
    if as_json:
        echo_json(
            {
                "session": written.turn.session.name,
                "turn": written.turn.name,
                "path": str(written.path),
                "bytes": written.size,
                "resources": [
                    {
                        "resource": r.key,
                        "scope": r.scope,
                        "bytes": r.size,
                        "tokens": r.tokens,
                        "left_out": r.left_out,
                    }
                    for r in written.resources
                ],
            }
        )
        return
    click.echo(written.path)
    if stats:
        width = max((len(r.key) for r in written.resources), default=8)
        for r in written.resources:
            mark = "  left out (context budget)" if r.left_out else ""
            line = f"{r.key:<{width}}  {r.scope:<7} {r.size:>9,} B {r.tokens:>8,} tok{mark}"
            click.echo(line)
        click.echo(f"{'input.md':<{width}}  {'':<7} {written.size:>9,} B")


@click.command("get-prompt")
@click.argument("agent", required=False)
@click.option("--list", "list_agents", is_flag=True, help="List the agents that have a prompt.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def get_prompt_command(agent: str | None, list_agents: bool, as_json: bool) -> None:
    """Print the system prompt of AGENT (default: the configured default agent).

    A project's .teddy/prompts/<agent>.xml wins over the bundled prompt.
    """
    from plankit.errors import InputError
    from plankit.teddy.session.config import Config, load_config
    from plankit.teddy.session.prompts import get_prompt, known_agents
    from plankit.workspace import find_root

    root = find_root()
    try:
        if list_agents:
            agents = known_agents(root)
            if as_json:
                echo_json({"agents": list(agents)})
            else:
                click.echo("\n".join(agents))
            return
        config = load_config(root) if root is not None else Config()
        name = agent or config.default_agent
        text = get_prompt(name, root)
    except InputError as exc:
        fail(str(exc))
    if as_json:
        echo_json({"agent": name, "prompt": text})
    else:
        click.echo(text, nl=not text.endswith("\n"))
