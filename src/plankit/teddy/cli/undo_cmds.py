"""``teddy undo``: take back the latest executed turn from its checkpoint."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from plankit.teddy.cli.common import JSON_HELP, SESSION_HELP, echo_json, fail, project_root

if TYPE_CHECKING:
    from plankit.teddy.run.undo import Undone


def undone_json(done: Undone) -> dict[str, object]:
    """``teddy undo --json``: what was put back, in one object."""
    return {
        "session": done.session,
        "turn": done.turn,
        "restored": list(done.restored),
        "removed": list(done.removed),
        "moved_to": str(done.moved_to),
        "later_turns": list(done.later_turns),
        "checkpoint": done.checkpoint,
        "commands_not_undone": done.commands,
        "forced": done.forced,
        "errors": [],
    }


@click.command()
@click.option("--force", is_flag=True, help="Restore even files changed since the turn ran.")
@click.option("--session", "session_name", help=SESSION_HELP)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def undo(force: bool, session_name: str | None, as_json: bool) -> None:
    """Take back the latest executed turn: its files as they were, its plan unexecuted.

    \b
    Files the turn edited get their content and mode back, files it created are
    removed, memos.yaml is restored; the turn's report and the turn it prepared move
    to <session>/.undone/, and its plan.md waits to be executed again.  A file changed
    since the turn ran is refused, by name, unless --force.  What EXECUTE commands did
    is not undone.
    """
    from plankit.errors import InputError, diagnostics_json
    from plankit.teddy.run.undo import undo as undo_last

    root = project_root()
    try:
        done = undo_last(root, session_name, force=force)
    except InputError as exc:
        if as_json:
            echo_json({"errors": diagnostics_json([exc.diagnostic()])})
        fail(str(exc))
    if as_json:
        echo_json(undone_json(done))
    files = len(done.restored) + len(done.removed)
    what = f"{len(done.restored)} restored, {len(done.removed)} removed" if files else "no file"
    click.echo(
        f"teddy: turn {done.turn} undone ({what}); its plan.md is ready to execute again",
        err=True,
    )
    click.echo(f"teddy: its report and the turns after it were moved to {done.moved_to}", err=True)
    if done.commands:
        noun = "command" if done.commands == 1 else "commands"
        click.echo(
            f"teddy: note: {done.commands} EXECUTE {noun} ran in that turn; what "
            f"{'it' if done.commands == 1 else 'they'} changed is not undone",
            err=True,
        )
