"""``agentctl run`` and ``agentctl worker``: the commands that run the agents.

The ``agentctl`` console script is this module's :func:`main`: agentflow's command group
(:mod:`plankit.agentflow.cli`) with these two commands added, so that agentflow never
imports the layer above it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NoReturn

import click

from plankit.agentflow.cli import cli
from plankit.agentflow.clihelp import Duration, control, dump, json_option, session_option
from plankit.cliutil import run as run_cli

if TYPE_CHECKING:
    from plankit.orchestrate.run import Report

_agent_option = click.option(
    "--agent",
    "agents",
    metavar="NAME=CMD",
    multiple=True,
    help="The ACP agent command for tasks whose `agent:` is NAME (`default`: tasks naming "
    "none); repeatable. Default: `teddy acp`, or the [agents] of .agentflow.toml.",
)
_workers_option = click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=None,
    help="Tasks run at once by this process (default: [run] workers, else 1).",
)
_timeout_option = click.option(
    "--timeout",
    type=Duration(),
    default=None,
    help="Longest turn of one agent before it is cancelled and its task fails "
    "(default: [run] timeout, else 30m).",
)
_lease_option = click.option(
    "--lease",
    type=Duration(),
    default="2m",
    show_default=True,
    help="How long a claim lasts without a heartbeat (renewed every third of it while the "
    "agent works); a worker that dies loses its task after this.",
)
_project_option = click.option(
    "--project",
    type=click.Path(file_okay=False, exists=True),
    default=".",
    show_default=True,
    help="The project: a git repository whose HEAD the work starts from.",
)


def _finish(report: Report, as_json: bool) -> NoReturn:
    if as_json:
        dump(report.to_dict())
        raise SystemExit(report.exit_code)
    echo = click.echo
    if report.error:
        echo(f"agentctl run: {report.error}", err=True)
    for task in report.tasks:
        line = f"  {task['state']:8} {task['ref']}"
        if task.get("merge_commit"):
            line += f"  merged {task['merge_commit'][:12]}"
        if task.get("reason"):
            line += f"  ({task['reason']})"
        echo(line)
    if report.tip is not None:
        echo(f"branch {report.branch} (from {report.base[:12]}, now {report.tip[:12]})")
        echo("\n".join(report.diffstat) if report.diffstat else "no changes merged")
    failed = report.failed
    if report.interrupted:
        echo("agentctl run: interrupted; claims released, unfinished work not merged", err=True)
    elif failed:
        names = "; ".join(f"{t['ref']} {t['state']}: {t['reason'] or '-'}" for t in failed)
        echo(f"agentctl run: {len(failed)} task(s) not done: {names}", err=True)
    raise SystemExit(report.exit_code)


def _table(project: str, agents: tuple[str, ...], planner: str | None) -> object:
    from plankit.agentflow.clihelp import call
    from plankit.orchestrate.agents import agent_table

    return call(False, lambda: agent_table(project, agents, planner))


@cli.command("run")
@click.argument("goal")
@click.option("--planner", metavar="CMD", help="The planning agent's command (default: teddy acp).")
@_agent_option
@_workers_option
@_timeout_option
@_lease_option
@click.option(
    "--remote",
    metavar="NAME",
    default=None,
    help="Keep the integration branch in this git remote, for workers on other hosts "
    "(`agentctl worker`); default: this repository only.",
)
@_project_option
@json_option
@click.pass_context
def run_command(
    ctx: click.Context,
    goal: str,
    planner: str | None,
    agents: tuple[str, ...],
    workers: int | None,
    timeout: float | None,
    lease: float,
    remote: str | None,
    project: str,
    as_json: bool,
) -> None:
    """Plan GOAL with the planner agent, then run every task with the agents, each in a
    git worktree of its own, merging the work into the branch agentflow/<session>.

    The user's branch, index and working tree are not touched. Exit status: 0 every task
    done, 1 a task failed (they are named) or planning failed, 130 interrupted.
    """
    from plankit.agentflow.clihelp import call
    from plankit.orchestrate.agents import AgentTable
    from plankit.orchestrate.run import DEFAULT_TIMEOUT, run_goal

    table = _table(project, agents, planner)
    assert isinstance(table, AgentTable)
    plane = control(ctx, as_json)
    report = call(
        as_json,
        lambda: run_goal(
            os.path.abspath(project), goal, table, plane=plane,
            workers=workers or table.workers or 1,
            timeout=timeout or table.timeout or DEFAULT_TIMEOUT, lease=lease, remote=remote,
            on_session=lambda sid: click.echo(f"session {sid}", err=True),
        ),
    )  # fmt: skip
    _finish(report, as_json)


@cli.command("worker")
@_agent_option
@_workers_option
@_timeout_option
@_lease_option
@click.option(
    "--remote",
    metavar="NAME",
    default="origin",
    show_default=True,
    help="The git remote holding the integration branch agentflow/<session>.",
)
@_project_option
@session_option
@json_option
@click.pass_context
def worker_command(
    ctx: click.Context,
    agents: tuple[str, ...],
    workers: int | None,
    timeout: float | None,
    lease: float,
    remote: str,
    project: str,
    session: str | None,
    as_json: bool,
) -> None:
    """Join a session from this host and run its tasks until none is left.

    Give the session (--session or $AGENTFLOW_SESSION_ID) and the shared database
    (--database or $AGENTFLOW_DATABASE_URL); run it in a clone of the project whose
    remote (--remote) holds the integration branch.
    """
    from plankit.agentflow.clihelp import call
    from plankit.orchestrate.agents import AgentTable
    from plankit.orchestrate.run import DEFAULT_TIMEOUT, join_session

    table = _table(project, agents, None)
    assert isinstance(table, AgentTable)
    plane = control(ctx, as_json)
    report = call(
        as_json,
        lambda: join_session(
            os.path.abspath(project), session, table, plane=plane,
            workers=workers or table.workers or 1,
            timeout=timeout or table.timeout or DEFAULT_TIMEOUT, lease=lease, remote=remote,
        ),
    )  # fmt: skip
    _finish(report, as_json)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``agentctl`` console script."""
    run_cli(cli, "agentctl", argv)
