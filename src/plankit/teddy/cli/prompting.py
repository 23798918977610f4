"""Asking for a turn's message at the terminal, and planning a turn with the result told:
what ``teddy plan``, ``teddy resume`` and ``teddy execute`` (after ``(s)kip``) share."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from plankit.teddy.cli.common import echo_json, fail

if TYPE_CHECKING:
    from plankit.teddy.planning.models import Planner
    from plankit.teddy.session.config import Config
    from plankit.teddy.session.layout import Turn


def read_message(turn_name: str, saved: str | None) -> str:
    """A message typed on the terminal, ending at an empty line."""
    if not sys.stdin.isatty():
        fail("no message: pass -m MESSAGE (there is no terminal to ask on)")
    hint = " (an empty first line: the turn's message.md)" if saved else ""
    click.echo(f"Message for turn {turn_name}, ending with an empty line{hint}:", err=True)
    lines: list[str] = []
    while True:
        line = sys.stdin.readline()
        if not line or not line.strip():
            break
        lines.append(line.rstrip("\n"))
    if not lines and saved:
        return saved
    if not lines:
        fail("no message was given; nothing was planned")
    return "\n".join(lines) + "\n"


def plan_and_report(
    turn: Turn,
    message: str,
    planner: Planner,
    config: Config,
    *,
    replace_plan: bool = False,
    as_json: bool = False,
) -> None:
    from plankit.errors import InputError
    from plankit.teddy.planning.models import PlanningCancelled
    from plankit.teddy.planning.turn import plan_turn

    try:
        planned = plan_turn(turn, message, planner, config, replace_plan=replace_plan)
    except PlanningCancelled as exc:
        fail(f"planning was cancelled ({exc}); no plan.md was written")
    except InputError as exc:
        fail(str(exc))
    if as_json:
        usage = planned.answer.usage
        echo_json(
            {
                "plan": str(planned.plan_path),
                "model": planned.answer.model,
                "input_tokens": usage.input_tokens if usage else None,
                "output_tokens": usage.output_tokens if usage else None,
                "parses": planned.plan is not None,
                "problems": list(planned.problems),
            }
        )
    else:
        click.echo(planned.plan_path)
    answer = planned.turn.rel("answer.md")
    for change in planned.changes:  # lines in answer.md, which keeps the answer as it came
        click.echo(f"teddy: {answer}:{change.line}: {change.message}", err=True)
    if planned.plan is None:
        click.echo(
            f"teddy: warning: plan.md does not parse ({planned.problems[0]}); "
            "`teddy execute` will report it and re-plan",
            err=True,
        )
        return
    kinds = ", ".join(dict.fromkeys(str(a.type) for a in planned.plan.actions))
    count = len(planned.plan.actions)
    click.echo(
        f"teddy: “{planned.plan.title}”: {count} action{'s' * (count != 1)} ({kinds}); "
        "review it, then `teddy execute`",
        err=True,
    )


def plan_after_skip(turn: Turn, model: str | None) -> None:
    """Section 7's ``(s)kip``: ask for a message, then plan ``turn`` (the next one) from it."""
    from plankit.errors import InputError
    from plankit.teddy.planning.turn import choose_planner
    from plankit.teddy.session.config import load_config

    click.echo("teddy: the plan was skipped; what should the next plan do instead?", err=True)
    text = read_message(turn.name, None)
    try:
        config = load_config(turn.session.root)
        planner = choose_planner(model=model, manual=False, config=config)
    except InputError as exc:
        fail(str(exc))
    assert planner is not None
    plan_and_report(turn, text, planner, config)
