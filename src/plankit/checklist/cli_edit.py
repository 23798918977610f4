"""``plankit checklist`` commands that change a plan without losing its progress: any
status (``set``, ``reopen``), where an agent resumes (``current``), and the structure
(``add-step``, ``remove-step``, ``add-phase``, ``rename-phase``, ``answer``, ``goal``,
``analysis``).  They are added to the ``checklist`` group by
:mod:`plankit.checklist.cli`."""

from __future__ import annotations

from typing import Any

import click

from plankit.checklist.cli_common import (
    call,
    echo_json,
    print_task,
    store_options,
    task_line,
)

STATUSES = ("todo", "doing", "done", "blocked", "review")


@click.command(name="set")
@store_options
@click.argument("step")
@click.argument("status", type=click.Choice(STATUSES, case_sensitive=False))
@click.argument("note", nargs=-1)
def set_(
    store: str,
    cell: str,
    credentials: str | None,
    as_json: bool,
    step: str,
    status: str,
    note: tuple[str, ...],
) -> None:
    """Set STEP to STATUS (todo, doing, done, blocked, review); blocked and review need
    a NOTE (the rest of the line)."""
    text = " ".join(note) or None
    task = call(store, cell, credentials, as_json, lambda m: m.set_task_status(step, status, text))
    print_task(task, as_json)


@click.command()
@store_options
@click.argument("step")
def reopen(store: str, cell: str, credentials: str | None, as_json: bool, step: str) -> None:
    """Set STEP back to todo [ ] (its date or note is dropped)."""
    print_task(call(store, cell, credentials, as_json, lambda m: m.reopen_task(step)), as_json)


@click.command()
@store_options
def current(store: str, cell: str, credentials: str | None, as_json: bool) -> None:
    """Print the step in progress [/] (where an agent that resumes picks up)."""
    task = call(store, cell, credentials, as_json, lambda m: m.current_task())
    if as_json:
        echo_json(task.to_dict() if task else None)
    elif task is not None:
        click.echo(f"{task.step} {task.title}")
    else:
        click.echo("no step is in progress", err=True)


@click.command(name="add-step")
@store_options
@click.argument("text", nargs=-1, required=True)
@click.option("--after", metavar="STEP", help="Insert after this step (same level).")
@click.option("--before", metavar="STEP", help="Insert before this step (taking its number).")
@click.option("--phase", type=int, metavar="N", help="Add at the end of phase N.")
def add_step(
    store: str,
    cell: str,
    credentials: str | None,
    as_json: bool,
    text: tuple[str, ...],
    after: str | None,
    before: str | None,
    phase: int | None,
) -> None:
    """Add a todo step TEXT; the steps after it are renumbered, progress kept."""
    line = " ".join(text)
    task = call(
        store,
        cell,
        credentials,
        as_json,
        lambda m: m.add_step(line, after=after, before=before, phase=phase),
    )
    print_task(task, as_json)


@click.command(name="remove-step")
@store_options
@click.argument("step")
def remove_step(store: str, cell: str, credentials: str | None, as_json: bool, step: str) -> None:
    """Remove STEP (and its sub-steps); the steps after it are renumbered."""
    task = call(store, cell, credentials, as_json, lambda m: m.remove_step(step))
    if as_json:
        echo_json({"removed": task.to_dict()})
    else:
        click.echo(f"removed: {task_line(task)}")


def _phase_out(phase: Any, as_json: bool) -> None:
    if as_json:
        echo_json(phase.to_dict())
        return
    click.echo(f"Phase {phase.number}: {phase.name}")
    for task in phase.tasks:
        click.echo(f"  {task_line(task)}")


@click.command(name="add-phase")
@store_options
@click.argument("name", nargs=-1, required=True)
@click.option("--step", "steps", multiple=True, metavar="TEXT", help="A step (repeat, in order).")
@click.option("--after", type=int, metavar="N", help="After phase N (0: first; default: last).")
def add_phase(
    store: str,
    cell: str,
    credentials: str | None,
    as_json: bool,
    name: tuple[str, ...],
    steps: tuple[str, ...],
    after: int | None,
) -> None:
    """Add a phase NAME with its steps; the phases after it are renumbered."""
    title = " ".join(name)
    phase = call(
        store, cell, credentials, as_json, lambda m: m.add_phase(title, list(steps), after=after)
    )
    _phase_out(phase, as_json)


@click.command()
@store_options
def renumber(store: str, cell: str, credentials: str | None, as_json: bool) -> None:
    """Number phases 1, 2 … and steps N.1, N.2 … in document order (duplicates, gaps
    and misplaced numbers gone, every status kept)."""
    plan = call(store, cell, credentials, as_json, lambda m: m.renumber())
    if as_json:
        echo_json(plan.to_dict())
        return
    for phase in plan.phases:
        _phase_out(phase, as_json)


@click.command(name="rename-phase")
@store_options
@click.argument("number", type=int)
@click.argument("name", nargs=-1, required=True)
def rename_phase(
    store: str,
    cell: str,
    credentials: str | None,
    as_json: bool,
    number: int,
    name: tuple[str, ...],
) -> None:
    """Rename phase NUMBER to NAME (its steps are kept)."""
    title = " ".join(name)
    phase = call(store, cell, credentials, as_json, lambda m: m.rename_phase(number, title))
    _phase_out(phase, as_json)


@click.command()
@store_options
@click.argument("question")
@click.argument("answer", nargs=-1, required=True)
def answer(
    store: str,
    cell: str,
    credentials: str | None,
    as_json: bool,
    question: str,
    answer: tuple[str, ...],
) -> None:
    """Answer QUESTION (its number, or the start of its text) with ANSWER."""
    text = " ".join(answer)
    written = call(store, cell, credentials, as_json, lambda m: m.answer_question(question, text))
    if as_json:
        echo_json({"question": written})
    else:
        click.echo(written)


@click.command()
@store_options
@click.argument("text", nargs=-1, required=True)
def goal(
    store: str, cell: str, credentials: str | None, as_json: bool, text: tuple[str, ...]
) -> None:
    """Replace the plan's goal with TEXT."""
    line = " ".join(text)
    written = call(store, cell, credentials, as_json, lambda m: m.set_goal(line))
    if as_json:
        echo_json({"goal": written})
    else:
        click.echo(f"Goal: {written}")


@click.command()
@store_options
@click.option("--spreadsheet", help="The spreadsheet's name or ID.")
@click.option("--key-sheet", "key_sheets", multiple=True, help="A key sheet (repeat).")
@click.option("--read", "read", multiple=True, help="A range read, e.g. 'Orders!A2:F500 (ids)'.")
@click.option("--write", "write", multiple=True, help="A range written (repeat).")
@click.option("--state", help="The current state of the data.")
def analysis(
    store: str,
    cell: str,
    credentials: str | None,
    as_json: bool,
    spreadsheet: str | None,
    key_sheets: tuple[str, ...],
    read: tuple[str, ...],
    write: tuple[str, ...],
    state: str | None,
) -> None:
    """Set fields of the Analysis section; an option given replaces that field (all
    --read lines replace the read ranges), the others are kept."""
    fields = call(
        store,
        cell,
        credentials,
        as_json,
        lambda m: m.set_analysis(
            spreadsheet=spreadsheet,
            key_sheets=list(key_sheets) or None,
            read=list(read) or None,
            write=list(write) or None,
            current_state=state,
        ),
    )
    if as_json:
        echo_json(fields.to_dict())
        return
    from plankit.checklist.analysis import render_analysis

    for line in render_analysis(fields):
        click.echo(line)


COMMANDS = (
    set_,
    reopen,
    current,
    add_step,
    remove_step,
    add_phase,
    rename_phase,
    renumber,
    answer,
    goal,
    analysis,
)
"""The commands of this module, in the order ``--help`` lists them."""
