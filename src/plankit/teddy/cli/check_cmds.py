"""``teddy execute --check``: validation only, told like ``teddy parse`` tells problems."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click

from plankit.cliutil import EXIT_INVALID
from plankit.teddy.cli.common import echo_json, fail


def check_only(plan: str | None, session_name: str | None, as_json: bool) -> NoReturn:
    """Validate the plan ``teddy execute`` would run and exit: 0 valid, 1 invalid (or
    refused).  Problems go to stderr as ``PLAN:LINE: CODE message``; with ``as_json``,
    stdout gets ``{"valid", "turn", "plan", "actions", "errors"}`` in the shared
    diagnostic shape.  Nothing is written."""
    from plankit.errors import InputError, diagnostics_json
    from plankit.teddy.run.check import check_plan
    from plankit.teddy.session.config import load_config
    from plankit.workspace import find_root

    root = find_root() or Path.cwd()
    try:
        checked = check_plan(
            root,
            Path(plan) if plan is not None else None,
            session_name=session_name,
            config=load_config(root),
        )
    except InputError as exc:
        if as_json:
            echo_json({"valid": False, "errors": diagnostics_json([exc.diagnostic()])})
        fail(str(exc))
    diagnostics = list(checked.issues)
    if as_json:
        echo_json(
            {
                "valid": not diagnostics,
                "turn": checked.turn.name if checked.turn is not None else None,
                "plan": checked.plan,
                "actions": checked.actions,
                "errors": diagnostics_json(diagnostics, checked.plan),
            }
        )
    for issue in checked.issues:  # a diff against the closest region under its FIND's error
        click.echo(issue.format(checked.plan), err=True)
        if issue.detail:
            click.echo("\n".join(f"    {ln}" for ln in issue.detail.splitlines()), err=True)
    if diagnostics:
        count = len(diagnostics)
        click.echo(
            f"{checked.plan}: {count} problem{'s' * (count != 1)}; the plan is invalid "
            "(nothing was run or written)",
            err=True,
        )
        sys.exit(EXIT_INVALID)
    noun = "action" if checked.actions == 1 else "actions"
    click.echo(f"{checked.plan}: valid, {checked.actions} {noun} (nothing was run)", err=True)
    sys.exit(0)
