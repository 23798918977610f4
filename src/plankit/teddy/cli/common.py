"""What every ``teddy`` command shares: failing with one line, reading a plan, JSON out.

Imports nothing heavy: the commands import what they need inside their callbacks.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from plankit.cliutil import EXIT_INVALID

if TYPE_CHECKING:
    from typing import TextIO

    from plankit.errors import Diagnostic
    from plankit.teddy.run.approval import Approver, ChatResponder
    from plankit.teddy.run.outcome import Outcome
    from plankit.teddy.session.config import Config
    from plankit.textio import TextFile

MODEL_HELP = "The model: an llm model id or alias (default: TEDDY_MODEL, config.yaml, llm's)."
SESSION_HELP = "The session (default: the current one)."
JSON_HELP = "Print the result as one JSON object on standard output."
EXIT_QUIT = 5
"""The person quit at the approval prompt: nothing ran (``teddy execute``, ``run``)."""


def fail(message: str, code: int = EXIT_INVALID) -> NoReturn:
    """Print ``teddy: message`` on standard error and exit with ``code``."""
    click.echo(f"teddy: {message}", err=True)
    sys.exit(code)


def read_input(path: str) -> TextFile:
    """A plan file, or standard input for ``-``; a bad file fails with one line."""
    from plankit.errors import InputError
    from plankit.textio import decode_text, read_text

    try:
        if path == "-":
            return decode_text(sys.stdin.buffer.read(), path="<stdin>")
        return read_text(path)
    except InputError as exc:
        fail(str(exc))


def echo_json(obj: object) -> None:
    """One JSON document on standard output."""
    import json  # only --json needs it: plain commands start without it

    click.echo(json.dumps(obj, ensure_ascii=False))


def print_diagnostics(path: str, diagnostics: list[Diagnostic], as_json: bool) -> None:
    """Every problem as ``FILE:LINE: CODE message`` on stderr (and JSON on stdout)."""
    if as_json:
        from plankit.errors import diagnostics_json

        echo_json({"errors": diagnostics_json(diagnostics, path)})
    for diag in diagnostics:
        click.echo(diag.format(path), err=True)
    count = len(diagnostics)
    click.echo(f"{path}: {count} problem{'s' * (count != 1)}; the plan is invalid", err=True)


def project_root() -> Path:
    """The directory holding ``.teddy/`` (here or above), or fail saying how to start."""
    from plankit.workspace import find_root

    root = find_root()
    if root is None:
        fail("no .teddy/ directory here or in any parent; start a session with `teddy new NAME`")
    return root


def clipboard_error(exc: Exception) -> NoReturn:
    """Fail because the clipboard cannot be used."""
    fail(f"no clipboard is available ({exc}); pass a plan file, or - to read standard input")


def report_recovery(recovered: Outcome | None) -> None:
    """Say on stderr that a turn teddy had stopped in was finished from its journal."""
    if recovered is None or recovered.next_turn is None:
        return
    click.echo(
        f"teddy: {recovered.message}: {recovered.status}; next turn: {recovered.next_turn.name}",
        err=True,
    )


def deciders(
    yes: bool, config: Config, root: Path, shown: TextIO
) -> tuple[Approver, ChatResponder]:
    """Who approves the plan and answers CHAT_WITH_USER: everything approved and the
    messages only shown with ``-y`` (the console's prompts are not even imported then),
    else the console's review and reply prompts."""
    if yes:
        from plankit.teddy.run.approval import AutoApprover, ShowOnly

        return AutoApprover(), ShowOnly(shown)
    from plankit.teddy.review.console import ConsoleApprover, ConsoleChat

    return ConsoleApprover(config.preview_command, root=root), ConsoleChat(stdout=shown)
