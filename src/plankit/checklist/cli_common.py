"""What the ``plankit checklist`` commands share: the store options, one manager call
per command, JSON and error output, lint warnings.  Only click is imported here."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from plankit.checklist.cli_output import DEFAULT_CELL, DEFAULT_STORE, json_text

if TYPE_CHECKING:
    from plankit.checklist.manager import PlanManager
    from plankit.checklist.model import PlanTask
    from plankit.errors import Diagnostic

F = TypeVar("F", bound=Callable[..., Any])
R = TypeVar("R")

EXIT_FAILED = 1


def store_options(fn: F) -> F:
    """``--store``, ``--cell``, ``--credentials`` and ``--json``."""
    fn = click.option("--json", "as_json", is_flag=True, help="Print one JSON value.")(fn)
    fn = click.option(
        "--credentials",
        type=click.Path(dir_okay=False),
        envvar="PLANKIT_GOOGLE_CREDENTIALS",
        help="Google credentials file (service-account key or OAuth client), for gsheets:.",
    )(fn)
    fn = click.option(
        "--cell",
        default=DEFAULT_CELL,
        show_default=True,
        envvar="PLANKIT_CELL",
        help="The cell holding the plan; the marker goes in the cell above.",
    )(fn)
    fn = click.option(
        "--store",
        default=DEFAULT_STORE,
        show_default=True,
        envvar="PLANKIT_STORE",
        help="Where the plan lives: a .md file, a .xlsx workbook, or gsheets:<spreadsheet id>.",
    )(fn)
    return fn


def echo_json(value: Any) -> None:
    click.echo(json_text(value))


def fail(message: str, diagnostics: list[Diagnostic], as_json: bool) -> NoReturn:
    """Exit 1 with ``message`` on stderr (and, with --json, the diagnostics on stdout)."""
    if as_json:
        from plankit.errors import diagnostics_json

        echo_json({"errors": diagnostics_json(diagnostics)})
    click.echo(f"plankit checklist: {message}", err=True)
    sys.exit(EXIT_FAILED)


def call(
    store: str,
    cell: str,
    credentials: str | None,
    as_json: bool,
    action: Callable[[PlanManager], R],
) -> R:
    """Run ``action`` on a manager for the store; any plankit error ends the command."""
    from plankit.checklist.manager import PlanManager
    from plankit.checklist.stores import open_store
    from plankit.errors import PlankitError, diagnostics_of

    try:
        interactive = bool(getattr(sys.stdin, "isatty", lambda: False)())
        opened = open_store(store, cell=cell, credentials=credentials, interactive=interactive)
        manager = PlanManager(opened, cell, front_end="cli")
        return action(manager)
    except PlankitError as exc:
        fail(str(exc), diagnostics_of(exc), as_json)


def no_plan(where: str, as_json: bool) -> NoReturn:
    from plankit.errors import Diagnostic

    message = f"no plan in {where}; run `plankit checklist init` or `plankit checklist create`"
    fail(message, [Diagnostic(0, "no-plan", message)], as_json)


def task_line(task: PlanTask) -> str:
    from plankit.checklist.render import task_text

    return task_text(task)


def findings_of(plan_text: str) -> list[Diagnostic]:
    from plankit.checklist.lint import lint_plan

    return lint_plan(plan_text)


def where_label(store: str, cell: str) -> str:
    """How findings name the plan: the file for a Markdown store, else the store and cell."""
    from plankit.checklist.stores import is_markdown_store

    return store if is_markdown_store(store) else f"{store} ({cell})"


def warn(findings: list[Diagnostic], store: str, cell: str) -> None:
    """The findings on standard error, one line each."""
    where = where_label(store, cell)
    for finding in findings:
        click.echo(f"plankit checklist: warning: {finding.format(where)}", err=True)


def plan_json(plan: Any, findings: list[Diagnostic]) -> dict[str, Any]:
    from plankit.errors import diagnostics_json

    data: dict[str, Any] = plan.to_dict()
    data["warnings"] = diagnostics_json(findings)
    return data


def print_task(task: PlanTask, as_json: bool) -> None:
    if as_json:
        echo_json(task.to_dict())
    else:
        click.echo(task_line(task))
