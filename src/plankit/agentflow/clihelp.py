"""What the ``agentctl`` commands share: options, JSON output, errors, the control plane.

A command parses its options, calls one :class:`~plankit.agentflow.control.ControlPlane`
method through :func:`call` (which turns a refusal into the command's error output:
one line on stderr, or ``{"errors": [...]}`` on stdout with ``--json``, and exit 1)
and prints the result with :func:`dump` or as text.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn, TypeVar

import click

from plankit.cliutil import EXIT_INVALID

if TYPE_CHECKING:
    from plankit.agentflow.control import ControlPlane
    from plankit.agentflow.model import Problem

T = TypeVar("T")

json_option = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
session_option = click.option(
    "--session",
    "session",
    metavar="ID",
    default=None,
    help="The session (internal or agent session id); default: $AGENTFLOW_SESSION_ID.",
)


def dump(data: object) -> None:
    """Print ``data`` as one line of JSON."""
    import json

    click.echo(json.dumps(data, ensure_ascii=False, indent=None))


def fail_problems(problems: list[Problem], as_json: bool) -> NoReturn:
    """Report the problems (JSON on stdout, or text on stderr) and exit 1."""
    from plankit.agentflow.render import problems_text

    if as_json:
        # The details are on stdout; stderr only says that the command failed.
        dump({"errors": [problem.to_json() for problem in problems]})
        count = len(problems)
        click.echo(
            f"agentctl: failed ({count} error{'s' * (count != 1)}, listed as JSON)", err=True
        )
    elif len(problems) == 1 and not problems[0].file:
        click.echo(f"agentctl: {problems[0].message}", err=True)
    else:
        click.echo(problems_text(problems), err=True)
    sys.exit(EXIT_INVALID)


def call(as_json: bool, action: Callable[[], T]) -> T:
    """Run a library call, turning its errors into the command's error output."""
    from plankit.agentflow.records import problems_of

    try:
        return action()
    except Exception as exc:
        problems = problems_of(exc)
        if problems is None:
            raise
        fail_problems(problems, as_json)


def control(ctx: click.Context, as_json: bool = False) -> ControlPlane:
    """The control plane of ``--home`` and ``--database`` (or their variables)."""
    from plankit.agentflow.control import ControlPlane

    params = ctx.find_root().params
    return call(as_json, lambda: ControlPlane(params.get("home"), database=params.get("database")))


_DURATION = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*(s|m|h|d)?", re.ASCII)
_UNITS = {None: 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


class Duration(click.ParamType):  # type: ignore[type-arg]
    """A duration: ``90`` or ``90s``, ``10m``, ``2h``, ``1d``; in seconds."""

    name = "duration"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, int | float):
            return float(value)
        match = _DURATION.fullmatch(str(value).strip())
        if match is None:
            self.fail(
                f"{value!r} is not a duration; write for example 90s, 10m, 2h or 1d", param, ctx
            )
        return float(match.group(1)) * _UNITS[match.group(2)]
