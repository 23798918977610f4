"""What the three console scripts (``teddy``, ``plankit``, ``agentctl``) share.

:func:`run` calls a click group and turns its outcome into the project's exit codes:
0 success, 1 invalid input or a failed check (set by the commands themselves),
2 usage error (click's), 130 interrupted.  Only click is imported here.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import click

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
