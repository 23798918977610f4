"""``teddy plan`` and ``teddy resume``: planning turns, and re-planning a failed plan."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from plankit.teddy.cli.common import (
    JSON_HELP,
    MODEL_HELP,
    SESSION_HELP,
    fail,
    project_root,
    report_recovery,
)
from plankit.teddy.cli.prompting import plan_and_report, read_message

if TYPE_CHECKING:
    pass

_ANSWER_SOURCES = ("auto", "clipboard", "stdin", "editor")


@click.command("plan")
@click.option("-m", "--message", help="What this turn should do (default: message.md, or asked).")
@click.option("--model", help=MODEL_HELP)
@click.option("--manual", is_flag=True, help="Plan by hand: the prompt goes to prompt.md.")
@click.option(
    "--answer-from",
    type=click.Choice(_ANSWER_SOURCES),
    default="auto",
    show_default=True,
    help="Manual mode: where the answer is read from.",
)
@click.option("--no-copy", is_flag=True, help="Manual mode: leave the clipboard alone.")
@click.option("--replace", "replace_plan", is_flag=True, help="Plan a turn that has plan.md again.")
@click.option("--session", "session_name", help=SESSION_HELP)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def plan_command(
    message: str | None,
    model: str | None,
    manual: bool,
    answer_from: str,
    no_copy: bool,
    replace_plan: bool,
    session_name: str | None,
    as_json: bool,
) -> None:
    """Plan the current turn with a model and save plan.md (its path is printed).

    \b
    Rebuilds input.md, sends system_prompt.xml, input.md and the message to the
    model, drops text around the plan, repairs ambiguous fences, saves plan.md and
    records the model and its token usage in meta.yaml.
    The model: --model, else TEDDY_MODEL, else `model:` in .teddy/config.yaml, else
    llm's default (keys: `llm keys set openai`, or the provider's variable).
    Manual mode (--manual, or when no model can be used): the prompt is written to
    prompt.md and copied to the clipboard when there is one; the answer is read from
    standard input when it is not a terminal, else the clipboard (press Enter once
    the answer is copied), else $EDITOR, else the terminal (end with Ctrl-D).
    """
    from plankit.errors import InputError
    from plankit.teddy.planning.manual import ManualOptions
    from plankit.teddy.planning.turn import check_plannable, choose_planner, saved_message
    from plankit.teddy.run.recovery import open_session
    from plankit.teddy.session.config import load_config

    root = project_root()
    try:
        config = load_config(root)
        session, recovered = open_session(root, session_name)
        report_recovery(recovered)
        turn = session.latest()
        check_plannable(turn, replace_plan)
        saved = saved_message(turn)
        text = message if message is not None else saved or read_message(turn.name, None)
        planner = choose_planner(
            model=model,
            manual=manual,
            config=config,
            manual_options=ManualOptions(answer_from, not no_copy),
        )
    except InputError as exc:
        fail(str(exc))
    assert planner is not None
    plan_and_report(turn, text, planner, config, replace_plan=replace_plan, as_json=as_json)


@click.command()
@click.option("-m", "--message", help="The message for the next turn (default: asked).")
@click.option("-y", "--yes", is_flag=True, help="Approve every action without asking.")
@click.option("--model", help=MODEL_HELP)
@click.option("--manual", is_flag=True, help="Plan by hand (manual mode).")
@click.option("--no-replan", is_flag=True, help="No corrected plan after a validation failure.")
@click.option("--session", "session_name", help=SESSION_HELP)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def resume(
    ctx: click.Context,
    message: str | None,
    yes: bool,
    model: str | None,
    manual: bool,
    no_replan: bool,
    session_name: str | None,
    as_json: bool,
) -> None:
    """Continue the session with whatever comes next.

    \b
    The latest turn has plan.md but no report.md: it is executed, as by
    `teddy execute` (-y, --no-replan, --model and --manual apply).
    The previous turn is complete: asks for a message (or takes -m), then plans the
    latest turn, as by `teddy plan`.  --json prints what that command prints.
    """
    from plankit.errors import InputError
    from plankit.teddy.cli.execute_cmds import execute
    from plankit.teddy.planning.turn import choose_planner, next_step, saved_message
    from plankit.teddy.run.recovery import open_session
    from plankit.teddy.session.config import load_config

    root = project_root()
    try:
        config = load_config(root)
        session, recovered = open_session(root, session_name)
        report_recovery(recovered)
        turn = session.latest()
        step = next_step(turn)
    except InputError as exc:
        fail(str(exc))
    if step == "execute":
        if message is not None:
            click.echo(f"teddy: turn {turn.name} already has a plan; -m is not used", err=True)
        ctx.invoke(
            execute,
            plan=None,
            yes=yes,
            session_name=session.name,
            model=model,
            manual=manual,
            no_replan=no_replan,
            as_json=as_json,
        )
        return
    saved = saved_message(turn)
    text = message if message is not None else read_message(turn.name, saved)
    try:
        planner = choose_planner(model=model, manual=manual, config=config)
    except InputError as exc:
        fail(str(exc))
    assert planner is not None
    plan_and_report(turn, text, planner, config, as_json=as_json)
