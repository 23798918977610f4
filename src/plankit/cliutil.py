"""What the three console scripts (``teddy``, ``plankit``, ``agentctl``) share.

:func:`run` calls a click group and turns its outcome into the project's exit codes:
0 success, 1 invalid input or a failed check (set by the commands themselves),
2 usage error (click's), 130 interrupted.  :class:`LazyGroup` imports a subcommand's
module only when it runs.  Only click is imported here.
"""

from __future__ import annotations

import sys
from importlib import import_module
from typing import NoReturn

import click


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use.

    ``lazy`` maps a subcommand's name to ``module:attribute`` of its click command.
    With ``summaries`` (name → the first paragraph of its help), ``--help`` lists the
    subcommands from them without importing any; ``tests/test_startup.py`` holds each
    summary to its command's help.
    """

    def __init__(
        self,
        *args: object,
        lazy: dict[str, str],
        summaries: dict[str, str] | None = None,
        **kwargs: object,
    ) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.lazy = lazy
        self.summaries = summaries or {}
        self._listing = False

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = self.lazy.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        if self._listing and cmd_name in self.summaries:
            return click.Command(cmd_name, help=self.summaries[cmd_name])
        module, _, attr = target.partition(":")
        command = getattr(import_module(module), attr)
        assert isinstance(command, click.Command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_commands(ctx, formatter)
        finally:
            self._listing = False


EXIT_INVALID = 1
EXIT_INTERRUPTED = 130


def run(group: click.Group, prog_name: str, argv: list[str] | None = None) -> NoReturn:
    """Run ``group`` as the ``prog_name`` command and exit with the right status."""
    try:
        code = group.main(args=argv, prog_name=prog_name, standalone_mode=False)
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo(f"{prog_name}: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)
