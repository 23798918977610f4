"""Starting a command as a terminal starts a foreground job, for tests of Ctrl-C.

A shell that runs the suite in the background (``pytest &``, ``nohup``, some CI
runners) starts it with SIGINT ignored, and every process inherits that disposition:
Python then never raises ``KeyboardInterrupt``, so a command under test would carry
on through a Ctrl-C and the test would fail for a reason that has nothing to do with
the command.  A terminal's foreground job has SIGINT's default action; pass
``preexec_fn=as_foreground_job`` to give the command that.
"""

from __future__ import annotations

import signal


def as_foreground_job() -> None:
    """In the child, before it runs the command: SIGINT back to its default action."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
