"""The ``agentctl`` command: agentflow plan directories for agents and their hosts.

Agent side (the session comes from ``AGENTFLOW_SESSION_ID``)::

    agentctl plan dir | request-thread-dir | remove-thread --thread-id ID
    agentctl plan clear-current | commit
    agentctl set-topic TEXT

Workers (any host sharing the database)::

    agentctl task claim [--agent NAME] [--lease 10m] | done REF | fail REF --reason TEXT
    agentctl task heartbeat REF | release REF

Host side::

    agentctl session start [--agent-session-id ID] | context | list | end
    agentctl plan show [--commit N] | graph [--format mermaid|dot] | validate DIR...
    agentctl prompt overseer
    agentctl gc --older-than DAYS
    agentctl mcp
    agentctl run GOAL | worker     (added by plankit.orchestrate.cli: agents run by agentflow)

Each command parses its options, calls one :class:`~plankit.agentflow.plane.ControlPlane`
method and formats the result.  Exit codes: 0 success, 1 invalid input or a failed
check, 2 usage error, 130 interrupted.  Results go to stdout, messages to stderr;
``--json`` prints results as JSON and errors as ``{"errors": [{"code", "message",
"line", "file"}]}`` on stdout (``code`` is the rule's name; ``line`` and ``file`` may be
null).  Heavy modules are imported inside the commands.
"""

from __future__ import annotations

import click

from plankit.agentflow.clihelp import (
    call,
    control,
    dump,
    fail_problems,
    json_option,
    session_option,
)
from plankit.cliutil import run


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="plankit", prog_name="agentctl")
@click.option(
    "--home",
    metavar="DIR",
    envvar="AGENTFLOW_HOME",
    default=None,
    help="State directory (default: $AGENTFLOW_HOME, else ~/.agentflow).",
)
@click.option(
    "--database",
    metavar="URL",
    envvar="AGENTFLOW_DATABASE_URL",
    default=None,
    help="A PostgreSQL database shared by several hosts (default: $AGENTFLOW_DATABASE_URL, "
    "else SQLite under the state directory).",
)
def cli(home: str | None, database: str | None) -> None:
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
@json_option
@click.pass_context
def session_start(ctx: click.Context, agent_session_id: str | None, as_json: bool) -> None:
    """Create a session and its current plan directory; print the runtime context.

    Put the printed block into the agent's system prompt (or use `agentctl prompt
    overseer`) and export the environment it lists in the agent's shell.
    """
    from plankit.agentflow.prompts import context_block

    plane = control(ctx, as_json)
    context = call(as_json, lambda: plane.start_session(agent_session_id))
    if as_json:
        dump({**context.to_dict(), "context": context_block(context)})
    else:
        click.echo(context_block(context), nl=False)


@session.command("context")
@session_option
@json_option
@click.pass_context
def session_context(ctx: click.Context, session: str | None, as_json: bool) -> None:
    """Print a session's runtime context (on resume: with its additional directories)."""
    from plankit.agentflow.prompts import context_block

    plane = control(ctx, as_json)
    context = call(as_json, lambda: plane.context(session))
    if as_json:
        dump({**context.to_dict(), "context": context_block(context)})
    else:
        click.echo(context_block(context), nl=False)


@session.command("list")
@json_option
@click.pass_context
def session_list(ctx: click.Context, as_json: bool) -> None:
    """List the sessions, newest first."""
    from plankit.agentflow.render import sessions_text

    plane = control(ctx, as_json)
    rows = call(as_json, plane.sessions)
    if as_json:
        dump({"sessions": [row.to_dict() for row in rows]})
    else:
        click.echo(sessions_text(rows))


@session.command("end")
@session_option
@json_option
@click.pass_context
def session_end(ctx: click.Context, session: str | None, as_json: bool) -> None:
    """End a session: no more directories, commits or claims (its tasks in progress may
    still be reported).  `agentctl gc` later deletes its plan directories."""
    plane = control(ctx, as_json)
    found = call(as_json, lambda: plane.end_session(session))
    if as_json:
        dump(found.to_dict())
    else:
        click.echo(f"session {found.session_id} ended at {found.ended_at}")


# --- plan (agent side, and show/validate) ---------------------------------------------


@cli.group()
def plan() -> None:
    """Plan directories: allocate, remove, clear, commit, show, validate."""


@plan.command("dir")
@session_option
@json_option
@click.pass_context
def plan_dir(ctx: click.Context, session: str | None, as_json: bool) -> None:
    """Print the current thread's plan directory."""
    plane = control(ctx, as_json)
    thread = call(as_json, lambda: plane.plan_dir(session))
    if as_json:
        dump({"thread_id": thread.thread_id, "plan_dir": thread.plan_dir})
    else:
        click.echo(thread.plan_dir)


@plan.command("request-thread-dir")
@session_option
@json_option
@click.pass_context
def plan_request_thread_dir(ctx: click.Context, session: str | None, as_json: bool) -> None:
    """Allocate a plan directory for an additional thread.

    Prints {"thread_id": ..., "plan_dir": ...} (always JSON; --json is accepted).
    """
    plane = control(ctx, as_json)
    thread = call(as_json, lambda: plane.request_thread_dir(session))
    dump({"thread_id": thread.thread_id, "plan_dir": thread.plan_dir})


@plan.command("remove-thread")
@click.option("--thread-id", required=True, metavar="ID", help="The additional thread to remove.")
@session_option
@json_option
@click.pass_context
def plan_remove_thread(
    ctx: click.Context, thread_id: str, session: str | None, as_json: bool
) -> None:
    """Remove an additional thread: delete its directory, leave it out of commits.

    The current thread cannot be removed; use `agentctl plan clear-current`.
    """
    plane = control(ctx, as_json)
    thread = call(as_json, lambda: plane.remove_thread(thread_id, session))
    if as_json:
        dump({"thread_id": thread.thread_id, "plan_dir": thread.plan_dir, "removed": True})
    else:
        click.echo(f"removed {thread.thread_id} ({thread.plan_dir} deleted)")


@plan.command("clear-current")
@session_option
@json_option
@click.pass_context
def plan_clear_current(ctx: click.Context, session: str | None, as_json: bool) -> None:
    """Delete the plan files of the current thread; its directory stays allocated."""
    plane = control(ctx, as_json)
    thread, removed = call(as_json, lambda: plane.clear_current(session))
    if as_json:
        dump({"thread_id": thread.thread_id, "plan_dir": thread.plan_dir, "files_removed": removed})
    else:
        click.echo(f"cleared {thread.plan_dir} ({removed} file{'s' * (removed != 1)} removed)")


@plan.command("commit")
@session_option
@json_option
@click.pass_context
def plan_commit(ctx: click.Context, session: str | None, as_json: bool) -> None:
    """Validate every allocated thread directory and submit them in one commit.

    Every problem in every directory is reported at once; fix them all and commit again.
    """
    from plankit.agentflow.render import commit_text

    plane = control(ctx, as_json)
    record = call(as_json, lambda: plane.commit(session))
    if as_json:
        dump(record.to_dict())
    else:
        click.echo(commit_text(record))


@plan.command("show")
@click.option(
    "--commit", "number", type=click.IntRange(min=1), help="Commit number (default: latest)."
)
@session_option
@json_option
@click.pass_context
def plan_show(ctx: click.Context, number: int | None, session: str | None, as_json: bool) -> None:
    """Show a session's committed plans: threads, tasks in waves, and for the latest
    commit each task's state, who holds it, the tasks ready now, and what the runs of
    `agentctl run`/`worker` recorded (merge commit, files, tool calls, last message)."""
    from plankit.agentflow.evidence import attach, evidence_text, task_records
    from plankit.agentflow.render import commit_text, progress_dict

    plane = control(ctx, as_json)
    record, statuses = call(as_json, lambda: plane.progress(session, number))
    records = call(as_json, lambda: task_records(plane, session)) if statuses is not None else {}
    if as_json:
        doc = progress_dict(record, statuses)
        attach(doc, records)
        dump(doc)
    else:
        click.echo(commit_text(record, heading="Commit", ready=True, statuses=statuses))
        if records:
            click.echo("\nEvidence:\n" + evidence_text(records))


@plan.command("graph")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["mermaid", "dot"]),
    default="mermaid",
    show_default=True,
    help="Mermaid flowchart or Graphviz DOT.",
)
@click.option(
    "--commit", "number", type=click.IntRange(min=1), help="Commit number (default: latest)."
)
@session_option
@json_option
@click.pass_context
def plan_graph(
    ctx: click.Context, fmt: str, number: int | None, session: str | None, as_json: bool
) -> None:
    """Draw a commit's task dependencies (with each task's state for the latest commit)."""
    from plankit.agentflow.diagram import diagram

    plane = control(ctx, as_json)
    record, statuses = call(as_json, lambda: plane.progress(session, number))
    text = diagram(record, statuses, fmt)
    if as_json:
        dump({"format": fmt, "commit": record.number, "graph": text})
    else:
        click.echo(text, nl=False)


@plan.command("validate")
@click.argument("dirs", nargs=-1, required=True, metavar="DIR...")
@json_option
def plan_validate(dirs: tuple[str, ...], as_json: bool) -> None:
    """Validate plan directories without a session (for CI and pre-commit hooks)."""
    from plankit.agentflow.render import valid_text
    from plankit.agentflow.validate import check_dirs

    plans, problems = check_dirs(dirs)
    if problems:
        fail_problems(problems, as_json)
    if as_json:
        dump({"valid": True, "plans": [p.to_dict() for p in plans]})
    else:
        click.echo("\n".join(valid_text(p) for p in plans))


# --- topic, prompt, mcp -----------------------------------------------------------------


@cli.command("set-topic")
@click.argument("text")
@session_option
@json_option
@click.pass_context
def set_topic(ctx: click.Context, text: str, session: str | None, as_json: bool) -> None:
    """Set what the session is about (one line, at most 100 characters)."""
    plane = control(ctx, as_json)
    found = call(as_json, lambda: plane.set_topic(text, session))
    if as_json:
        dump({"session_id": found.session_id, "topic": found.topic})
    else:
        click.echo(f"topic: {found.topic}")


@cli.group()
def prompt() -> None:
    """System prompts for agents."""


@prompt.command("overseer")
@session_option
@json_option
@click.pass_context
def prompt_overseer(ctx: click.Context, session: str | None, as_json: bool) -> None:
    """Print the overseer system prompt followed by the session's runtime context."""
    from plankit.agentflow.prompts import overseer_prompt

    plane = control(ctx, as_json)
    context = call(as_json, lambda: plane.context(session))
    text = overseer_prompt(context)
    if as_json:
        dump({**context.to_dict(), "prompt": text})
    else:
        click.echo(text, nl=False)


@cli.command("gc")
@click.option(
    "--older-than",
    "days",
    type=click.FloatRange(min=0),
    required=True,
    metavar="DAYS",
    help="Collect sessions ended more than DAYS days ago (0: every ended session).",
)
@click.option("--dry-run", is_flag=True, help="List what would be deleted; delete nothing.")
@json_option
@click.pass_context
def gc(ctx: click.Context, days: float, dry_run: bool, as_json: bool) -> None:
    """Delete old plan directories: those of sessions ended more than DAYS days ago, of
    removed threads, and what interrupted removals left.  Sessions and commits stay
    in the database."""
    plane = control(ctx, as_json)
    sessions, paths = call(as_json, lambda: plane.gc(days, dry_run=dry_run))
    if as_json:
        dump({"sessions": sessions, "deleted": paths, "dry_run": dry_run})
        return
    verb = "would delete" if dry_run else "deleted"
    for path in paths:
        click.echo(f"{verb} {path}")
    count = len(paths)
    click.echo(
        f"{verb} {count} director{'y' if count == 1 else 'ies'} "
        f"({len(sessions)} ended session{'s' * (len(sessions) != 1)})",
        err=True,
    )


@cli.command("mcp")
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """Serve the agentflow tools over MCP (stdio) for the session in $AGENTFLOW_SESSION_ID."""
    import os

    from plankit.agentflow.paths import home_dir
    from plankit.mcp.server import serve_agentflow

    params = ctx.find_root().params
    home = call(False, lambda: home_dir(params.get("home")))  # the SDK loads while serving
    if not os.environ.get("AGENTFLOW_SESSION_ID"):
        click.echo(
            "agentctl mcp: AGENTFLOW_SESSION_ID is not set; every tool will report "
            "session-missing until the server is started with it",
            err=True,
        )
    call(False, lambda: serve_agentflow(home, params.get("database")))


def _add_task_commands() -> None:
    from plankit.agentflow.cli_work import task

    cli.add_command(task)


_add_task_commands()


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``agentctl`` console script."""
    run(cli, "agentctl", argv)
