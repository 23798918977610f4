"""Where agentflow keeps its state, and the ids it hands out.

Everything lives under one directory, ``AGENTFLOW_HOME`` (default ``~/.agentflow``)::

    agentflow.db          the control plane (SQLite, WAL mode)
    plans/<id>/           one plan directory per thread; <id> is the session's internal
                          id for its current thread, a fresh id for each extra thread
    locks/<session>.lock  serializes the file operations of one session

Ids are UUIDv7 strings: unique, unguessable and sorted by creation time.
"""

from __future__ import annotations

import os
import secrets
import time
import uuid

ENV_HOME = "AGENTFLOW_HOME"
"""Environment variable that moves all agentflow state."""

ENV_SESSION = "AGENTFLOW_SESSION_ID"
"""Environment variable naming the agent's session (set by the host)."""

ENV_DATABASE = "AGENTFLOW_DATABASE_URL"
"""Environment variable naming a PostgreSQL database shared by several hosts."""


def home_dir(home: str | os.PathLike[str] | None = None) -> str:
    """The absolute, resolved state directory: ``home``, ``$AGENTFLOW_HOME`` or ``~/.agentflow``.

    A path with a control character (a newline, a tab …) is refused: it would break
    the runtime context and the ``export`` lines given to the agent.
    """
    chosen = os.fspath(home) if home is not None else os.environ.get(ENV_HOME, "")
    if any(ord(ch) < 32 or ch in "\x7f\u2028\u2029" for ch in chosen):
        from plankit.agentflow.records import ControlError

        raise ControlError(
            "home-invalid",
            f"{ENV_HOME} (or --home) {chosen!r} contains a newline or another control "
            "character; use a path without them",
        )
    if not chosen:
        chosen = os.path.join(os.path.expanduser("~"), ".agentflow")
    return os.path.realpath(os.path.expanduser(chosen))


def new_id() -> str:
    """A new UUIDv7 (48-bit millisecond time, then 74 random bits) as a string."""
    millis = time.time_ns() // 1_000_000
    value = (millis & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= secrets.randbits(12) << 64
    value |= 0b10 << 62
    value |= secrets.randbits(62)
    return str(uuid.UUID(int=value))


def is_inside(root: str, path: str) -> bool:
    """Whether ``path`` (absolute, resolved) is ``root`` or below it."""
    root = root.rstrip(os.sep) or os.sep
    return path == root or path.startswith(root + os.sep if root != os.sep else root)
