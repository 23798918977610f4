"""``agentctl task``: agents claim the tasks of a session's latest commit and report them.

    agentctl task claim [--agent NAME] [--lease 10m] [--json]
    agentctl task done REF [--claim ID]
    agentctl task fail REF --reason TEXT [--claim ID]
    agentctl task heartbeat REF [--claim ID] [--lease 10m]
    agentctl task release REF [--claim ID]

``REF`` is ``<thread_id>/<task_id>`` as the claim prints it.  ``--claim`` is the id the
claim printed: with it, a command refuses a task that is no longer held by that claim
(its lease ended and another agent took it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from plankit.agentflow.clihelp import Duration, call, control, dump, json_option, session_option

if TYPE_CHECKING:
    from plankit.agentflow.records import TaskStatus

_claim_option = click.option(
    "--claim",
    "claim_id",
    metavar="ID",
    default=None,
    help="The claim id `task claim` printed: refuse if that claim no longer holds the task.",
)
_lease_option = click.option(
    "--lease",
    type=Duration(),
    default="10m",
    show_default=True,
    help="How long the claim lasts without a heartbeat (90s, 10m, 2h …).",
)


@click.group()
def task() -> None:
    """Claim tasks of the latest commit and report them done or failed (workers)."""


def _line(status: TaskStatus) -> str:
    extra = ""
    if status.state == "claimed":
        extra = (
            f" by {status.holder or '?'} on {status.host}, lease until {status.lease_expires_at}"
        )
    elif status.state == "failed":
        extra = f": {status.reason}"
    return f"{status.ref} is {status.state}{extra}"


@task.command("claim")
@click.option(
    "--agent",
    metavar="NAME",
    default=None,
    help="Who claims; tasks assigned to another agent (their `agent` field) are left alone.",
)
@_lease_option
@session_option
@json_option
@click.pass_context
def task_claim(
    ctx: click.Context, agent: str | None, lease: float, session: str | None, as_json: bool
) -> None:
    """Claim one ready task of the session's latest commit, atomically.

    Prints {"task": {"ref", "claim", …} or null, "remaining": N} with --json. A null
    task with remaining > 0: others are working, claim again later; remaining 0: the
    work is over.
    """
    plane = control(ctx, as_json)
    result = call(as_json, lambda: plane.claim(session, agent=agent, lease=lease))
    if as_json:
        dump(result.to_dict())
        return
    left = f"{result.remaining} task{'s' * (result.remaining != 1)} with work left"
    if result.task is None:
        why = ""
        if result.reserved:
            count = len(result.reserved)
            listing = ", ".join(f"{ref} for {agent}" for ref, agent in result.reserved[:5])
            more = f", … ({count} in all)" if count > 5 else ""
            why = (
                f"; {count} ready task{' is' if count == 1 else 's are'} reserved for "
                f"another agent: {listing}{more}"
            )
        click.echo(f"nothing to claim now ({left}{why})")
        return
    spec = result.task.spec
    click.echo(
        f"claimed {result.task.ref} (claim {result.task.claim}, lease until "
        f"{result.task.lease_expires_at}): {spec['title']}\n"
        f"  file: {spec['plan_dir']}/{spec['file']}\n  {left}"
    )


@task.command("done")
@click.argument("ref")
@_claim_option
@session_option
@json_option
@click.pass_context
def task_done(
    ctx: click.Context, ref: str, claim_id: str | None, session: str | None, as_json: bool
) -> None:
    """Mark a task done; its dependents with nothing else to wait for become ready."""
    plane = control(ctx, as_json)
    status = call(as_json, lambda: plane.done(ref, session, claim=claim_id))
    dump(status.to_dict()) if as_json else click.echo(_line(status))


@task.command("fail")
@click.argument("ref")
@click.option("--reason", required=True, metavar="TEXT", help="Why the task failed.")
@_claim_option
@session_option
@json_option
@click.pass_context
def task_fail(
    ctx: click.Context,
    ref: str,
    reason: str,
    claim_id: str | None,
    session: str | None,
    as_json: bool,
) -> None:
    """Mark a task failed; the tasks that depend on it are blocked until it is reopened
    (`agentctl task release`)."""
    plane = control(ctx, as_json)
    status = call(as_json, lambda: plane.fail(ref, reason, session, claim=claim_id))
    dump(status.to_dict()) if as_json else click.echo(_line(status))


@task.command("heartbeat")
@click.argument("ref")
@_claim_option
@_lease_option
@session_option
@json_option
@click.pass_context
def task_heartbeat(
    ctx: click.Context,
    ref: str,
    claim_id: str | None,
    lease: float,
    session: str | None,
    as_json: bool,
) -> None:
    """Extend the lease of a claimed task: it stays claimed for --lease from now."""
    plane = control(ctx, as_json)
    status = call(as_json, lambda: plane.heartbeat(ref, session, claim=claim_id, lease=lease))
    dump(status.to_dict()) if as_json else click.echo(_line(status))


@task.command("release")
@click.argument("ref")
@_claim_option
@session_option
@json_option
@click.pass_context
def task_release(
    ctx: click.Context, ref: str, claim_id: str | None, session: str | None, as_json: bool
) -> None:
    """Give a claimed task back (ready again for anyone), or reopen a failed one."""
    plane = control(ctx, as_json)
    status = call(as_json, lambda: plane.release(ref, session, claim=claim_id))
    dump(status.to_dict()) if as_json else click.echo(_line(status))
