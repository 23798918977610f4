"""``teddy execute`` and ``teddy acp``: running plans, at the terminal or for an ACP client."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from plankit.cliutil import EXIT_INTERRUPTED, EXIT_INVALID
from plankit.errors import diagnostics_json
from plankit.teddy.cli.common import (
    EXIT_QUIT,
    JSON_HELP,
    SESSION_HELP,
    deciders,
    echo_json,
    fail,
)

if TYPE_CHECKING:
    from plankit.acp.contract import Planner as AcpPlanner
    from plankit.teddy.run.outcome import Outcome
    from plankit.teddy.session.layout import Turn


def outcome_json(turn: Turn | None, outcome: Outcome, plan: str) -> dict[str, object]:
    """``teddy execute --json``: what the turn did, in one object."""
    return {
        "status": str(outcome.status) if outcome.status is not None else None,
        "turn": turn.name if turn is not None else None,
        "report": str(turn.report_path) if turn is not None and outcome.report else None,
        "report_markdown": outcome.report,
        "next_turn": str(outcome.next_turn.path) if outcome.next_turn is not None else None,
        "interrupted": outcome.interrupted,
        "recovered": outcome.recovered,
        "message": outcome.message or None,
        "errors": diagnostics_json(outcome.validation, plan),
    }


@click.command()
@click.argument("plan", required=False, type=click.Path(dir_okay=True))
@click.option("-y", "--yes", is_flag=True, help="Approve every action without asking.")
@click.option("--session", "session_name", help=SESSION_HELP)
@click.option("--model", help="Re-plan after a validation failure with this model.")
@click.option("--manual", is_flag=True, help="Re-plan by hand after a validation failure.")
@click.option("--no-replan", is_flag=True, help="No corrected plan after a validation failure.")
@click.option("--check", is_flag=True, help="Only validate: exit 0 or 1, write nothing.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def execute(
    plan: str | None,
    yes: bool,
    session_name: str | None,
    model: str | None = None,
    manual: bool = False,
    no_replan: bool = False,
    as_json: bool = False,
    check: bool = False,
) -> None:
    """Validate, approve and execute a plan, then prepare the next turn.

    \b
    With no PLAN: the current turn's plan.md.
    With a PLAN inside .teddy/: that turn (it must be the latest).
    With any other PLAN: stateless mode, against the project root (the directory
    holding .teddy/, or the current directory); the report is printed, not saved.
    When a session's plan fails validation, the model that wrote it (or --model,
    TEDDY_MODEL, config.yaml; --manual: by hand) gets the errors and writes a corrected
    plan in the next turn, at most replan.max_attempts times; nothing else runs.
    With --check: validation only, nothing written (not even the journal).
    """
    if check:
        from plankit.teddy.cli.check_cmds import check_only

        check_only(plan, session_name, as_json)
    from plankit.errors import InputError
    from plankit.teddy.run.actions import Progress, Runtime
    from plankit.teddy.run.events import Both, EventProgress, json_lines
    from plankit.teddy.run.execute import execute_plan
    from plankit.teddy.run.progress import live_progress
    from plankit.teddy.run.report import Status
    from plankit.teddy.session.config import load_config
    from plankit.workspace import find_root

    root = find_root() or Path.cwd()
    progress = live_progress()  # rich on a terminal, plain lines otherwise (stderr)
    shown = sys.stderr if as_json else sys.stdout  # with --json, stdout carries only events
    follow: Progress = Both(progress, EventProgress(json_lines())) if as_json else progress
    try:
        config = load_config(root)
        approver, chat = deciders(yes, config, root, shown)
        turn, outcome = execute_plan(
            root,
            Path(plan) if plan is not None else None,
            session_name=session_name,
            approver=progress.watch(approver),
            chat=chat,
            config=config,
            runtime=Runtime(root, config, chat, progress=follow),
        )
    except InputError as exc:
        fail(str(exc))
    finally:
        progress.close()
    if as_json:
        shape = outcome_json(turn, outcome, plan or (turn.rel("plan.md") if turn else ""))
        echo_json({"event": "turn_finished", **shape})
    if outcome.recovered:
        click.echo(f"teddy: {outcome.message}; no plan was run now", err=True)
    if outcome.status is None:
        click.echo(f"teddy: {outcome.message}", err=True)
        sys.exit(EXIT_INVALID if outcome.refused else EXIT_QUIT)
    if turn is None and outcome.report is not None:
        if not as_json:
            click.echo(outcome.report, nl=False)
    else:
        click.echo(f"{outcome.status}: {turn.report_path if turn else ''}", err=True)
    shown = turn.rel("plan.md") if turn is not None else (plan or "plan.md")
    for issue in outcome.validation:  # as teddy parse tells problems, a diff under its error
        click.echo(issue.format(shown), err=True)
        if issue.detail:
            click.echo("\n".join(f"    {ln}" for ln in issue.detail.splitlines()), err=True)
    if outcome.next_turn is not None:
        click.echo(f"next turn: {outcome.next_turn.path}", err=True)
    skipped = outcome.status is Status.SKIPPED and turn is not None and outcome.next_turn
    if skipped and not yes and not as_json and sys.stdin.isatty():
        from plankit.teddy.cli.prompting import plan_after_skip

        assert outcome.next_turn is not None
        plan_after_skip(outcome.next_turn, model)  # section 7: (s)kip asks and plans again
    if turn is not None and outcome.validation and outcome.next_turn and not no_replan:
        correct(turn, outcome, model=model, manual=manual, yes=yes)  # section 8.3
    if outcome.interrupted:
        sys.exit(EXIT_INTERRUPTED)
    if outcome.status in (Status.COMPLETED, Status.SKIPPED):
        return
    sys.exit(EXIT_INVALID)


def correct(turn: Turn, outcome: Outcome, *, model: str | None, manual: bool, yes: bool) -> None:
    """After a validation failure in ``teddy execute``: the re-plan loop, told on stderr."""
    from plankit.errors import InputError
    from plankit.teddy.planning.models import PlanningCancelled
    from plankit.teddy.planning.replan import correct_failed_plan
    from plankit.teddy.planning.turn import Planned
    from plankit.teddy.session.config import load_config

    def started(name: str, limit: int) -> None:
        who = "by hand (manual mode)" if name == "manual" else f"with {name}"
        click.echo(f"teddy: re-planning {who}, at most {limit} attempts", err=True)

    def planned(done: Planned) -> None:
        title = f"“{done.plan.title}”" if done.plan else "a plan that does not parse"
        click.echo(f"teddy: turn {done.turn.name}: {title}; validating", err=True)

    try:
        config = load_config(turn.session.root)
        correction = correct_failed_plan(
            turn,
            outcome,
            config,
            model=model,
            manual=manual,
            interactive=sys.stdin.isatty() and not yes,
            on_start=started,
            on_planned=planned,
        )
    except PlanningCancelled as exc:
        fail(f"re-planning was cancelled ({exc})")
    except InputError as exc:
        fail(f"no re-plan: {exc}")
    result = correction.result
    if result is None:
        click.echo(
            "teddy: no automatic re-plan (the plan was not written by a model, and none is "
            "set); the next turn's message.md holds the errors: `teddy plan` uses it",
            err=True,
        )
        return
    if result.valid:
        click.echo(
            f"teddy: turn {result.turn.name} has a corrected plan that passes validation: "
            f"{result.turn.plan_path}\nteddy: review it, then run `teddy execute`",
            err=True,
        )
        return
    failed = ", ".join(result.failed_turns)
    click.echo(
        f"teddy: validation failed again after {result.attempts} automatic re-plan"
        f"{'s' * (result.attempts != 1)} (turn{'s' * (len(result.failed_turns) != 1)} {failed}); "
        f"stopping.\nteddy: turn {result.turn.name}'s message.md holds the last errors: write "
        "its plan.md by hand, or run `teddy plan -m MESSAGE`",
        err=True,
    )


@click.command(name="acp")
@click.option(
    "--planner",
    metavar="MODULE:CALLABLE",
    help="Write plans from plain prompts with CALLABLE(prompt_text, turn) -> plan Markdown.",
)
@click.option(
    "--model",
    help="Plan plain requests with this llm model (default: TEDDY_MODEL or config.yaml).",
)
@click.option("-v", "--verbose", is_flag=True, help="Log each request on standard error.")
def acp_command(planner: str | None, model: str | None, verbose: bool) -> None:
    """Serve TeDDy as an Agent Client Protocol agent on stdin/stdout.

    For ACP clients (Zed, acpx, `plankit acp run` …): each prompt is one TeDDy turn in
    a session created in the client's working directory; actions become tool calls,
    each asking the client's permission.  Only ACP messages go to stdout.
    """
    from plankit.acp.stdio import load_planner, serve
    from plankit.errors import InputError

    try:
        loaded: AcpPlanner | None = load_planner(planner) if planner else None
    except InputError as exc:
        fail(str(exc))
    # the model and the configuration are read per session, from the session's project
    serve(loaded, model=model, verbose=verbose)
