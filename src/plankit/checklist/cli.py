"""``plankit checklist``: the PLAN.md checklist from the command line.

Each command opens the store named by ``--store`` (``PLAN.md``, ``plan.xlsx`` or
``gsheets:<id>``), makes one :class:`~plankit.checklist.manager.PlanManager` call and
prints the result: text for people, one JSON value with ``--json``.  Exit codes: 0
success, 1 an error (one line on standard error; with ``--json`` also
``{"errors": [{"code", "message", "line", "file"}]}`` on standard output), 2 usage
error.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from plankit.checklist.cli_common import (
    EXIT_FAILED,
    call,
    echo_json,
    fail,
    findings_of,
    no_plan,
    plan_json,
    print_task,
    store_options,
    task_line,
    warn,
    where_label,
)
from plankit.checklist.cli_edit import COMMANDS as EDIT_COMMANDS
from plankit.checklist.cli_output import tolerant_output

if TYPE_CHECKING:
    from plankit.checklist.manager import PlanManager
    from plankit.checklist.model import PlanTask


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def checklist() -> None:
    """PLAN.md checklists: phases of numbered steps kept in a file, an Excel workbook
    or a Google spreadsheet cell (AGENT_BASE!C2).

    \b
    plankit checklist init                      set up the store with a starter plan
    plankit checklist create --title T --goal G --phase "Collect: read A; read B"
    plankit checklist show                      the plan with progress per phase
    plankit checklist lint                      what the reader cannot see, and why
    plankit checklist next                      the next step to do
    plankit checklist start|done STEP           mark a step in progress / done
    plankit checklist block STEP REASON         mark a step blocked
    plankit checklist review STEP NOTE          ask a person to review a step
    plankit checklist set STEP STATUS [NOTE]    any status; reopen STEP: back to todo
    plankit checklist add-step TEXT --after 1.2 steps and phases change, progress kept
    """
    tolerant_output()


for _command in EDIT_COMMANDS:
    checklist.add_command(_command)


@checklist.command()
@store_options
def init(store: str, cell: str, credentials: str | None, as_json: bool) -> None:
    """Set up the store: the marker, and a starter plan if the cell is empty.

    An existing plan is kept as it is; running init again changes nothing.
    """
    plan = call(store, cell, credentials, as_json, lambda m: m.init_plan(raise_errors=True))
    findings = findings_of(plan.raw)
    if as_json:
        echo_json(plan_json(plan, findings))
        return
    from plankit.checklist.render import progress_text

    click.echo(f"{where_label(store, cell)}: {plan.title} [{progress_text(plan.progress)}]")
    warn(findings, store, cell)


@checklist.command()
@store_options
@click.option("--markdown", is_flag=True, help="Print the plan's Markdown as stored.")
def show(store: str, cell: str, credentials: str | None, as_json: bool, markdown: bool) -> None:
    """Show the plan with its progress per phase and overall."""
    plan, where = call(store, cell, credentials, as_json, lambda m: (m.get_plan(), m.where))
    if plan is None:
        no_plan(where, as_json)
    findings = findings_of(plan.raw)
    if as_json:
        echo_json(plan_json(plan, findings))
        return
    if markdown:
        click.echo(plan.raw, nl=not plan.raw.endswith("\n"))
    else:
        from plankit.checklist.render import format_plan

        click.echo(format_plan(plan))
    warn(findings, store, cell)


@checklist.command()
@store_options
def lint(store: str, cell: str, credentials: str | None, as_json: bool) -> None:
    """Check that every step of the plan is read: duplicate steps, misplaced or
    misspelled phase headings, task lines that are not read and why, numbering gaps.

    Exits 1 when something is found, 0 when the plan is read completely.
    """
    plan, where = call(store, cell, credentials, as_json, lambda m: (m.get_plan(), m.where))
    if plan is None:
        no_plan(where, as_json)
    findings = findings_of(plan.raw)
    if as_json:
        from plankit.errors import diagnostics_json

        echo_json({"warnings": diagnostics_json(findings)})
    else:
        where = where_label(store, cell)
        for finding in findings:
            click.echo(finding.format(where))
        if not findings:
            click.echo(f"{where}: every step is read ({len(plan.tasks)} steps)", err=True)
    if findings:
        sys.exit(EXIT_FAILED)


@checklist.command(name="next")
@store_options
def next_(store: str, cell: str, credentials: str | None, as_json: bool) -> None:
    """Print the next todo step (blocked and review steps are skipped)."""

    def find(m: PlanManager) -> tuple[PlanTask | None, Any, str]:
        plan = m.get_plan()
        return (None, None, m.where) if plan is None else (plan.next_task(), plan, m.where)

    task, plan, where = call(store, cell, credentials, as_json, find)
    findings = findings_of(plan.raw) if plan is not None else []
    if task is None and findings:
        # "nothing left" would be wrong: the plan has steps nobody can read
        warn(findings, store, cell)
        fail(
            "no todo step was read, but the plan has problems (see the warnings, or "
            "`plankit checklist lint`); fix them before concluding that nothing is left",
            findings,
            as_json,
        )
    if as_json:
        echo_json(task.to_dict() if task else None)
    elif task is not None:
        click.echo(f"{task.step} {task.title}")
        warn(findings, store, cell)
    elif plan is None:
        click.echo(f"no plan in {where}", err=True)
    else:
        from plankit.checklist.render import progress_text

        click.echo(f"no todo step left [{progress_text(plan.progress)}]", err=True)


@checklist.command()
@store_options
@click.argument("step")
def start(store: str, cell: str, credentials: str | None, as_json: bool, step: str) -> None:
    """Mark STEP in progress [/]."""
    print_task(call(store, cell, credentials, as_json, lambda m: m.start_task(step)), as_json)


@checklist.command()
@store_options
@click.argument("step")
def done(store: str, cell: str, credentials: str | None, as_json: bool, step: str) -> None:
    """Mark STEP done [x] with today's date."""
    print_task(call(store, cell, credentials, as_json, lambda m: m.complete_task(step)), as_json)


@checklist.command()
@store_options
@click.argument("step")
@click.argument("reason", nargs=-1, required=True)
def block(
    store: str,
    cell: str,
    credentials: str | None,
    as_json: bool,
    step: str,
    reason: tuple[str, ...],
) -> None:
    """Mark STEP blocked [>] with REASON (the rest of the line)."""
    text = " ".join(reason)
    task = call(store, cell, credentials, as_json, lambda m: m.block_task(step, text))
    print_task(task, as_json)


@checklist.command()
@store_options
@click.argument("step")
@click.argument("note", nargs=-1, required=True)
def review(
    store: str, cell: str, credentials: str | None, as_json: bool, step: str, note: tuple[str, ...]
) -> None:
    """Mark STEP for a person's review [!] with NOTE (the rest of the line)."""
    text = " ".join(note)
    task = call(store, cell, credentials, as_json, lambda m: m.review_task(step, text))
    print_task(task, as_json)


@checklist.command()
@store_options
def reviews(store: str, cell: str, credentials: str | None, as_json: bool) -> None:
    """List the steps waiting for review."""
    tasks = call(store, cell, credentials, as_json, lambda m: m.get_review_tasks())
    if as_json:
        echo_json([t.to_dict() for t in tasks])
        return
    for task in tasks:
        click.echo(task_line(task))
    if not tasks:
        click.echo("no step is waiting for review", err=True)


def _parse_phase(text: str) -> dict[str, Any]:
    import re

    name, colon, rest = text.partition(":")
    if not colon or not name.strip():
        raise click.BadParameter(
            f"{text!r}: expected 'Name: step; step' (a phase name, a colon, steps "
            "separated by ';')",
            param_hint="'--phase'",
        )
    steps = [s.replace("\\;", ";").strip() for s in re.split(r"(?<!\\);", rest)]
    steps = [s for s in steps if s]
    if not steps:
        raise click.BadParameter(f"{text!r}: the phase has no steps", param_hint="'--phase'")
    return {"name": name.strip(), "steps": steps}


@checklist.command()
@store_options
@click.option("--title", required=True, help="The plan's title.")
@click.option("--goal", required=True, help="One sentence: what success looks like.")
@click.option(
    "--phase",
    "phases",
    multiple=True,
    required=True,
    metavar="'NAME: STEP; STEP'",
    help="A phase and its steps (repeat for each phase; write \\; for a ';' in a step).",
)
@click.option("--force", is_flag=True, help="Replace a plan that is already there.")
def create(
    store: str,
    cell: str,
    credentials: str | None,
    as_json: bool,
    title: str,
    goal: str,
    phases: tuple[str, ...],
    force: bool,
) -> None:
    """Write a new plan: phases numbered from 1, steps N.1, N.2 …

    An existing plan (other than the starter plan) is replaced only with --force.
    """
    specs = [_parse_phase(p) for p in phases]
    plan = call(
        store,
        cell,
        credentials,
        as_json,
        lambda m: m.create_plan(title, goal, specs, replace=force),
    )
    if as_json:
        echo_json(plan.to_dict())
        return
    click.echo(
        f"{where_label(store, cell)}: created {plan.title!r} with {len(plan.phases)} "
        f"phase{'s' * (len(plan.phases) != 1)} and {len(plan.tasks)} "
        f"step{'s' * (len(plan.tasks) != 1)}"
    )


@checklist.command()
@store_options
@click.argument("text", nargs=-1, required=True)
def note(
    store: str, cell: str, credentials: str | None, as_json: bool, text: tuple[str, ...]
) -> None:
    """Add a line to the plan's Notes."""
    line = " ".join(text)
    written = call(store, cell, credentials, as_json, lambda m: m.append_note(line))
    if as_json:
        echo_json({"note": written})
    else:
        click.echo("note added", err=True)


@checklist.command()
@click.option(
    "--credentials",
    type=click.Path(dir_okay=False),
    envvar="PLANKIT_GOOGLE_CREDENTIALS",
    required=True,
    help="The OAuth client file (Desktop app) from the Google Cloud console.",
)
@click.option("--store", help="gsheets:<id> to check access after signing in.")
def auth(credentials: str, store: str | None) -> None:
    """Sign in to Google for gsheets: stores, once: prints an address to open in any
    browser, then takes the address the browser ends on (or its code).  Works without
    a browser on this machine; the token asks for the spreadsheets scope only."""
    from plankit.checklist.stores.gsheets_auth import read_json, sign_in, token_path
    from plankit.errors import PlankitError

    try:
        info = read_json(credentials)
        if info.get("type") == "service_account":
            email = info.get("client_email", "the account's client_email")
            click.echo(
                f"{credentials} is a service-account key: no sign-in is needed. Share the "
                f"spreadsheet with {email} as an editor.",
                err=True,
            )
        elif info.get("type") == "authorized_user":
            click.echo(f"{credentials} is already a signed-in token.", err=True)
        elif "installed" in info or "web" in info:
            if "web" in info and "installed" not in info:
                from plankit.checklist.stores.gsheets_auth import user_credentials

                user_credentials(credentials, info, interactive=True)  # explains the fix
            sign_in(credentials, prompt=lambda text: click.prompt(text, prompt_suffix="", err=True))
            credentials = token_path()
        else:
            from plankit.checklist.errors import StoreError

            raise StoreError(
                f"{credentials} is neither a service-account key nor an OAuth client file",
                code="bad-credentials",
            )
        if store:
            from plankit.checklist.stores import open_store

            sheets = open_store(store, credentials=credentials).list_sheets()
            click.echo(f"{store}: access works; sheets: {', '.join(sheets)}")
    except PlankitError as exc:
        fail(str(exc), [], False)
    except click.Abort:
        raise
    except (KeyboardInterrupt, EOFError):
        raise click.Abort() from None


@checklist.command()
@click.option(
    "--cell",
    default="AGENT_BASE!C2",
    show_default=True,
    envvar="PLANKIT_CELL",
    help="The cell the prompt names.",
)
@click.option("--json", "as_json", is_flag=True, help='Print {"prompt": ...}.')
def prompt(cell: str, as_json: bool) -> None:
    """Print the system-prompt section that teaches an agent the plan workflow with
    plankit's MCP tools."""
    from plankit.checklist.prompt import agent_prompt

    text = agent_prompt(cell)
    if as_json:
        echo_json({"prompt": text})
    else:
        click.echo(text, nl=False)
