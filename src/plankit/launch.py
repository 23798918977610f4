"""Where the ``teddy`` and ``plankit`` console scripts start, before click is imported.

Two command lines run far more often than the others and do less work than importing
click costs: ``teddy --help`` (people, and agents finding their way) and ``plankit
checklist start|done STEP`` (an agent marks every step of its plan twice).  Those are
answered here, by the same library calls the click commands make, and only in their
plainest form:

- ``teddy --help`` / ``teddy -h`` on a terminal at least 80 columns wide (or none):
  :data:`TEDDY_HELP`, the text click renders at that width;
- ``plankit checklist start|done STEP`` (``--json`` allowed) on a Markdown store,
  when the step is marked without error.

Anything else, a narrower terminal, another store, another option, and every error
(nothing is written then), goes to the click commands, which alone say how the tools
behave; ``tests/test_launch.py`` holds both paths to the same output.
"""

from __future__ import annotations

import os
import sys

TEDDY_HELP = """\
Usage: teddy [OPTIONS] COMMAND [ARGS]...

  TeDDy: Markdown action plans that AI agents write and people approve.

  A plan is one Markdown file: a title, a Rationale, optional Memos and an
  Action Plan of CREATE, READ, EDIT, EXECUTE, RESEARCH, CHAT_WITH_USER,
  INVOKE, CONCLUDE and PRUNE actions.

Options:
  --version   Show the version and exit.
  -h, --help  Show this message and exit.

Commands:
  acp         Serve TeDDy as an Agent Client Protocol agent on stdin/stdout.
  context     Write input.md for the current turn and print its path.
  execute     Validate, approve and execute a plan, then prepare the next...
  get-prompt  Print the system prompt of AGENT (default: the configured...
  new         Start a session NAME (kebab-case) in the current directory...
  parse       Parse PLAN and print its summary (or JSON); exit 1 listing...
  plan        Plan the current turn with a model and save plan.md (its...
  preprocess  Make a model's answer a plan: unwrap it and repair its fences.
  resume      Continue the session with whatever comes next.
  run         Plan, validate, approve and execute turn after turn, until...
  undo        Take back the latest executed turn: its files as they were,...
"""
"""``teddy --help`` as click renders it 80 columns wide (it never goes wider)."""

HELP_COLUMNS = 80
"""click wraps help at the terminal's width, up to this many columns."""


def _columns() -> int:
    """The terminal's width as click reads it: ``COLUMNS``, else the terminal behind
    standard output, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or HELP_COLUMNS


def teddy() -> None:
    """The ``teddy`` console script."""
    if sys.argv[1:] in (["--help"], ["-h"]) and _columns() >= HELP_COLUMNS:
        _print(TEDDY_HELP)
        return
    from plankit.teddy.cli import main

    main()


def plankit() -> None:
    """The ``plankit`` console script."""
    if _checklist_status(sys.argv[1:]):
        return
    from plankit.cli import main

    main()


STATUS_COMMANDS = ("start", "done")


def status_form(args: list[str]) -> tuple[str, str, bool] | None:
    """``(command, step, as_json)`` when ``args`` is ``checklist start|done STEP`` with
    at most ``--json`` besides; None for any other command line."""
    if len(args) < 3 or args[0] != "checklist" or args[1] not in STATUS_COMMANDS:
        return None
    rest = args[2:]
    as_json = "--json" in rest
    if as_json:
        rest = [arg for arg in rest if arg != "--json"]
    if len(rest) != 1 or rest[0].startswith("-") or len(args) > 4:
        return None
    return args[1], rest[0], as_json


def _checklist_status(args: list[str]) -> bool:
    """Mark the step of ``plankit checklist start|done STEP`` and print it as the click
    command would; False (nothing done) when the click command must answer."""
    form = status_form(args)
    if form is None:
        return False
    command, step, as_json = form
    from plankit.checklist.cli_output import DEFAULT_CELL, DEFAULT_STORE
    from plankit.checklist.stores import is_markdown_store

    store = os.environ.get("PLANKIT_STORE") or DEFAULT_STORE
    cell = os.environ.get("PLANKIT_CELL") or DEFAULT_CELL
    if not is_markdown_store(store):
        return False
    from plankit.checklist.cli_output import json_text, tolerant_output
    from plankit.checklist.manager import PlanManager
    from plankit.checklist.stores import open_store
    from plankit.errors import PlankitError

    tolerant_output()
    try:
        manager = PlanManager(open_store(store, cell=cell), cell, front_end="cli")
        task = manager.complete_task(step) if command == "done" else manager.start_task(step)
    except PlankitError:
        return False  # nothing was written: the click command says what is wrong
    except KeyboardInterrupt:
        sys.stderr.write("plankit: interrupted\n")
        sys.exit(130)
    if as_json:
        line = json_text(task.to_dict())
    else:
        from plankit.checklist.render import task_text

        line = task_text(task)
    if "\x1b" in line:  # click.echo strips terminal escapes when not writing to one
        import click

        click.echo(line)
    else:
        _print(line + "\n")
    return True


def _print(text: str) -> None:
    """``text`` on standard output as click prints it: nothing when standard output is
    closed, and exit status 1, without a word, when its reader has gone (a pipe)."""
    stream = sys.stdout
    if stream is None:
        return
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())  # the exit's own flush has nowhere to fail
        sys.exit(1)
