"""The ``agentctl`` command: agentflow plan directories for agents and their hosts.

Agent side (the session comes from ``AGENTFLOW_SESSION_ID``)::

    agentctl plan dir | request-thread-dir | remove-thread --thread-id ID
    agentctl plan clear-current | commit
    agentctl set-topic TEXT

Host side::

    agentctl session start [--agent-session-id ID] | context | list
    agentctl plan show [--commit N] | validate DIR...
    agentctl prompt overseer
    agentctl mcp

Each command parses its options, calls one :class:`~plankit.agentflow.control.ControlPlane`
method and formats the result.  Exit codes: 0 success, 1 invalid input or a failed
check, 2 usage error, 130 interrupted.  Results go to stdout, messages to stderr;
``--json`` prints results as JSON and errors as ``{"errors": [{"code", "message",
"line", "file"}]}`` on stdout (``code`` is the rule's name; ``line`` and ``file`` may be
null).  Heavy modules are imported inside the commands.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn, TypeVar

import click

from plankit.cliutil import EXIT_INVALID, run

if TYPE_CHECKING:
    from plankit.agentflow.control import ControlPlane
    from plankit.agentflow.model import Problem


T = TypeVar("T")

_json_option = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
_session_option = click.option(
    "--session",
    "session",
    metavar="ID",
    default=None,
    help="The session (internal or agent session id); default: $AGENTFLOW_SESSION_ID.",
)


def _dump(data: object) -> None:
    import json

    click.echo(json.dumps(data, ensure_ascii=False, indent=None))


def _fail_problems(problems: list[Problem], as_json: bool) -> NoReturn:
    from plankit.agentflow.render import problems_text

    if as_json:
        # The details are on stdout; stderr only says that the command failed.
        _dump({"errors": [problem.to_json() for problem in problems]})
        count = len(problems)
        click.echo(
            f"agentctl: failed ({count} error{'s' * (count != 1)}, listed as JSON)", err=True
        )
    elif len(problems) == 1 and not problems[0].file:
        click.echo(f"agentctl: {problems[0].message}", err=True)
    else:
        click.echo(problems_text(problems), err=True)
    sys.exit(EXIT_INVALID)


def _call(as_json: bool, action: Callable[[], T]) -> T:
    """Run a library call, turning its errors into the command's error output."""
    from plankit.agentflow.records import problems_of

    try:
        return action()
    except Exception as exc:
        problems = problems_of(exc)
        if problems is None:
            raise
        _fail_problems(problems, as_json)


def _control(ctx: click.Context) -> ControlPlane:
    from plankit.agentflow.control import ControlPlane

    home = ctx.find_root().params.get("home")
    return ControlPlane(home)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="plankit", prog_name="agentctl")
@click.option(
    "--home",
    metavar="DIR",
    envvar="AGENTFLOW_HOME",
    default=None,
    help="State directory (default: $AGENTFLOW_HOME, else ~/.agentflow).",
)
def cli(home: str | None) -> None:
    """agentflow: plan directories for AI agents, validated and committed.

    An agent writes plan.md and tasks/NN-slug.md files into the plan directories the
    control plane allocates to it, then submits them all with `agentctl plan commit`.
    """


# --- session (host side) --------------------------------------------------------------


@cli.group()
def session() -> None:
    """Start, resume and list agent sessions (host side)."""


@session.command("start")
@click.option("--agent-session-id", metavar="ID", help="The agent's own session id, if it has one.")
@_json_option
@click.pass_context
def session_start(ctx: click.Context, agent_session_id: str | None, as_json: bool) -> None:
    """Create a session and its current plan directory; print the runtime context.

    Put the printed block into the agent's system prompt (or use `agentctl prompt
    overseer`) and export the environment it lists in the agent's shell.
    """
    from plankit.agentflow.prompts import context_block

    control = _control(ctx)
    context = _call(as_json, lambda: control.start_session(agent_session_id))
    if as_json:
        _dump({**context.to_dict(), "context": context_block(context)})
    else:
        click.echo(context_block(context), nl=False)


@session.command("context")
@_session_option
@_json_option
@click.pass_context
def session_context(ctx: click.Context, session: str | None, as_json: bool) -> None:
    """Print a session's runtime context (on resume: with its additional directories)."""
    from plankit.agentflow.prompts import context_block

    control = _control(ctx)
    context = _call(as_json, lambda: control.context(session))
    if as_json:
        _dump({**context.to_dict(), "context": context_block(context)})
    else:
        click.echo(context_block(context), nl=False)


@session.command("list")
@_json_option
@click.pass_context
def session_list(ctx: click.Context, as_json: bool) -> None:
    """List the sessions, newest first."""
    from plankit.agentflow.render import sessions_text

    control = _control(ctx)
    rows = _call(as_json, control.sessions)
    if as_json:
        _dump({"sessions": [row.to_dict() for row in rows]})
    else:
        click.echo(sessions_text(rows))


# --- plan (agent side, and show/validate) ---------------------------------------------


@cli.group()
def plan() -> None:
    """Plan directories: allocate, remove, clear, commit, show, validate."""


@plan.command("dir")
@_session_option
@_json_option
@click.pass_context
def plan_dir(ctx: click.Context, session: str | None, as_json: bool) -> None:
    """Print the current thread's plan directory."""
    control = _control(ctx)
    thread = _call(as_json, lambda: control.plan_dir(session))
    if as_json:
        _dump({"thread_id": thread.thread_id, "plan_dir": thread.plan_dir})
    else:
        click.echo(thread.plan_dir)


@plan.command("request-thread-dir")
@_session_option
@_json_option
@click.pass_context
def plan_request_thread_dir(ctx: click.Context, session: str | None, as_json: bool) -> None:
    """Allocate a plan directory for an additional thread.

    Prints {"thread_id": ..., "plan_dir": ...} (always JSON; --json is accepted).
    """
    control = _control(ctx)
    thread = _call(as_json, lambda: control.request_thread_dir(session))
    _dump({"thread_id": thread.thread_id, "plan_dir": thread.plan_dir})


@plan.command("remove-thread")
@click.option("--thread-id", required=True, metavar="ID", help="The additional thread to remove.")
@_session_option
@_json_option
@click.pass_context
def plan_remove_thread(
    ctx: click.Context, thread_id: str, session: str | None, as_json: bool
) -> None:
    """Remove an additional thread: delete its directory, leave it out of commits.

    The current thread cannot be removed; use `agentctl plan clear-current`.
    """
    control = _control(ctx)
    thread = _call(as_json, lambda: control.remove_thread(thread_id, session))
    if as_json:
        _dump({"thread_id": thread.thread_id, "plan_dir": thread.plan_dir, "removed": True})
    else:
        click.echo(f"removed {thread.thread_id} ({thread.plan_dir} deleted)")


@plan.command("clear-current")
@_session_option
@_json_option
@click.pass_context
def plan_clear_current(ctx: click.Context, session: str | None, as_json: bool) -> None:
    """Delete the plan files of the current thread; its directory stays allocated."""
    control = _control(ctx)
    thread, removed = _call(as_json, lambda: control.clear_current(session))
    if as_json:
        _dump(
            {"thread_id": thread.thread_id, "plan_dir": thread.plan_dir, "files_removed": removed}
        )
    else:
        click.echo(f"cleared {thread.plan_dir} ({removed} file{'s' * (removed != 1)} removed)")


@plan.command("commit")
@_session_option
@_json_option
@click.pass_context
def plan_commit(ctx: click.Context, session: str | None, as_json: bool) -> None:
    """Validate every allocated thread directory and submit them in one commit.

    Every problem in every directory is reported at once; fix them all and commit again.
    """
    from plankit.agentflow.render import commit_text

    control = _control(ctx)
    record = _call(as_json, lambda: control.commit(session))
    if as_json:
        _dump(record.to_dict())
    else:
        click.echo(commit_text(record))


@plan.command("show")
@click.option(
    "--commit", "number", type=click.IntRange(min=1), help="Commit number (default: latest)."
)
@_session_option
@_json_option
@click.pass_context
def plan_show(ctx: click.Context, number: int | None, session: str | None, as_json: bool) -> None:
    """Show a session's committed plans: threads, tasks in waves, ready tasks."""
    from plankit.agentflow.render import commit_text

    control = _control(ctx)
    record = _call(as_json, lambda: control.show(session, number))
    if as_json:
        _dump(record.to_dict())
    else:
        click.echo(commit_text(record, heading="Commit", ready=True))


@plan.command("validate")
@click.argument("dirs", nargs=-1, required=True, metavar="DIR...")
@_json_option
def plan_validate(dirs: tuple[str, ...], as_json: bool) -> None:
    """Validate plan directories without a session (for CI and pre-commit hooks)."""
    from plankit.agentflow.render import valid_text
    from plankit.agentflow.validate import check_dirs

    plans, problems = check_dirs(dirs)
    if problems:
        _fail_problems(problems, as_json)
    if as_json:
        _dump({"valid": True, "plans": [p.to_dict() for p in plans]})
    else:
        click.echo("\n".join(valid_text(p) for p in plans))


# --- topic, prompt, mcp -----------------------------------------------------------------


@cli.command("set-topic")
@click.argument("text")
@_session_option
@_json_option
@click.pass_context
def set_topic(ctx: click.Context, text: str, session: str | None, as_json: bool) -> None:
    """Set what the session is about (one line, at most 100 characters)."""
    control = _control(ctx)
    found = _call(as_json, lambda: control.set_topic(text, session))
    if as_json:
        _dump({"session_id": found.session_id, "topic": found.topic})
    else:
        click.echo(f"topic: {found.topic}")


@cli.group()
def prompt() -> None:
    """System prompts for agents."""


@prompt.command("overseer")
@_session_option
@_json_option
@click.pass_context
def prompt_overseer(ctx: click.Context, session: str | None, as_json: bool) -> None:
    """Print the overseer system prompt followed by the session's runtime context."""
    from plankit.agentflow.prompts import overseer_prompt

    control = _control(ctx)
    context = _call(as_json, lambda: control.context(session))
    text = overseer_prompt(context)
    if as_json:
        _dump({**context.to_dict(), "prompt": text})
    else:
        click.echo(text, nl=False)


@cli.command("mcp")
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """Serve the agentflow tools over MCP (stdio) for the session in $AGENTFLOW_SESSION_ID."""
    import os

    from plankit.agentflow.mcp_tools import serve

    if not os.environ.get("AGENTFLOW_SESSION_ID"):
        click.echo(
            "agentctl mcp: AGENTFLOW_SESSION_ID is not set; every tool will report "
            "session-missing until the server is started with it",
            err=True,
        )
    serve(_control(ctx).home)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``agentctl`` console script."""
    run(cli, "agentctl", argv)
