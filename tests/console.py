"""Running a console script's ``main`` in the test process, as the installed script would.

A new Python process for every command costs the interpreter's start and every import
again (about half a second for ``teddy``), which adds up to minutes over the suite.
Where the process boundary itself is not under test, :func:`run_console` calls the
script's ``main(argv)`` here instead: the same exit-code handling, stdout and stderr
captured apart, stdin from ``input`` (never a terminal), in ``cwd``, with ``env`` laid
over the environment for the call (``None`` unsets a variable). The result has the
fields of :class:`subprocess.CompletedProcess`, so a test reads it the same way either
way.

Keep a real process where the boundary matters: signals, stdio protocols, two commands
at once, what a fresh interpreter imports.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from click.testing import CliRunner


def run_console(
    main: Callable[[list[str]], object],
    *args: str,
    cwd: Path,
    input: str | None = None,
    env: Mapping[str, str | None] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``main(list(args))`` in ``cwd``; its exit status and what it printed."""
    code: int | str | None = 0
    with (
        contextlib.chdir(cwd),
        CliRunner().isolation(input=input, env=env) as (out, err, _),
    ):
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        stdout = out.getvalue().decode("utf-8", "replace")
        stderr = err.getvalue().decode("utf-8", "replace")
    if isinstance(code, str):  # sys.exit("message"): printed, status 1
        stderr += code + "\n"
        code = 1
    return subprocess.CompletedProcess(list(args), code or 0, stdout, stderr)
