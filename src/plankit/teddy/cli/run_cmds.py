"""``teddy run``: hand the loop over, within limits."""

from __future__ import annotations

import sys

import click

from plankit.teddy.cli.common import (
    MODEL_HELP,
    SESSION_HELP,
    deciders,
    fail,
    project_root,
    report_recovery,
)


@click.command("run")
@click.option("-m", "--message", help="What the first turn should do (default: message.md).")
@click.option("--max-turns", type=click.IntRange(min=1), help="Plan at most N turns.")
@click.option("--max-cost", type=click.FloatRange(min=0, min_open=True), help="Spend at most USD.")
@click.option("-y", "--yes", is_flag=True, help="Approve every plan without asking.")
@click.option("--model", help=MODEL_HELP)
@click.option("--session", "session_name", help=SESSION_HELP)
@click.option("--json", "as_json", is_flag=True, help="One JSON event per line on stdout.")
def run_command(
    message: str | None,
    max_turns: int | None,
    max_cost: float | None,
    yes: bool,
    model: str | None,
    session_name: str | None,
    as_json: bool,
) -> None:
    """Plan, validate, approve and execute turn after turn, until there is a reason
    to stop.

    \b
    Exit status: 0 a CONCLUDE ended the work; 1 a turn failed (or was skipped, or its
    plan stayed invalid after the re-plans); 3 a CHAT_WITH_USER waits for your answer
    (give it with -m); 4 --max-turns or --max-cost reached (checked before each model
    call); 5 you quit at the approval prompt; 130 Ctrl-C.
    Without -y each plan goes through the usual approval.  The model: --model, else
    TEDDY_MODEL, else `model:` in .teddy/config.yaml; prices for --max-cost come from
    the bundled price table or `prices:` in config.yaml.
    """
    from plankit.errors import InputError
    from plankit.teddy.planning.autorun import run_session
    from plankit.teddy.planning.costs import Limits
    from plankit.teddy.planning.turn import choose_planner
    from plankit.teddy.run.events import Both, EventProgress, json_lines
    from plankit.teddy.run.progress import live_progress
    from plankit.teddy.run.recovery import open_session
    from plankit.teddy.session.config import load_config

    root = project_root()
    emit = json_lines() if as_json else _narrate
    tracker = live_progress()
    try:
        config = load_config(root)
        session, recovered = open_session(root, session_name)
        report_recovery(recovered)
        planner = choose_planner(model=model, manual=False, config=config, manual_fallback=False)
        if planner is None:
            fail("no model is set: pass --model, set TEDDY_MODEL, or put `model:` in config.yaml")
        shown = sys.stderr if as_json else sys.stdout  # stdout carries only events
        approver, chat = deciders(yes, config, root, shown)
        stopped = run_session(
            session,
            planner=planner,
            config=config,
            approver=tracker.watch(approver),
            chat=chat,
            message=message,
            limits=Limits(max_turns, max_cost),
            emit=emit,
            progress=lambda turn: (
                Both(tracker, EventProgress(emit, turn.name)) if as_json else tracker
            ),
        )
    except InputError as exc:
        fail(str(exc))
    finally:
        tracker.close()
    sys.exit(stopped.exit_status)


def _narrate(event: object) -> None:
    """Without --json: a line on stderr for the events a person follows."""
    assert isinstance(event, dict)
    name = event["event"]
    if name == "turn_started":
        click.echo(f"teddy: turn {event['turn']}: planning", err=True)
    elif name == "plan_written":
        title = f"“{event['title']}”" if event.get("title") else "a plan that does not parse"
        again = " (re-plan)" if event.get("replan") else ""
        click.echo(f"teddy: turn {event['turn']}: {title}{again}", err=True)
    elif name == "validation_failed":
        click.echo(f"teddy: turn {event['turn']}: validation failed; re-planning", err=True)
    elif name == "turn_finished":
        click.echo(f"teddy: turn {event['turn']}: {event['status']}", err=True)
    elif name == "stopped":
        usage = event["usage"]
        cost = f", ${usage['cost_usd']:.4f}" if usage["cost_usd"] else ""
        click.echo(
            f"teddy: stopped ({event['reason']}): {event['message']} — {event['turns']} turn(s), "
            f"{usage['calls']} model call(s), {usage['input_tokens']}+{usage['output_tokens']} "
            f"tokens{cost}",
            err=True,
        )
