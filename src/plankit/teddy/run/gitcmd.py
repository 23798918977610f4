"""TeDDy's git commands: run with its own identity, hooks and prompts off.

Checkpoints (:mod:`plankit.teddy.run.checkpoint`) keep a turn's files on a ref of
their own with plumbing commands, and ``teddy undo`` reads them back; both go through
:func:`git`, which never lets a hook, a credential prompt or fsmonitor run and turns
any failure into :class:`GitFailed` (the caller then keeps the bytes in the session).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from plankit.errors import PlankitError

GIT_TIMEOUT = 120.0
"""Seconds one git command may take."""


class GitFailed(PlankitError):
    """A git command failed (the caller keeps the bytes in the session instead)."""


def find_git_dir(root: Path) -> Path | None:
    """The ``.git`` (directory or file) at or above ``root``, if any."""
    here = root.resolve()
    for folder in (here, *here.parents):
        candidate = folder / ".git"
        if os.path.lexists(candidate):
            return candidate
    return None


def git_env(index_file: Path | None = None) -> dict[str, str]:
    """The environment of TeDDy's git commands: its own identity, no prompt, and a
    temporary index when given."""
    env = dict(os.environ)
    env.update(
        GIT_AUTHOR_NAME="TeDDy",
        GIT_AUTHOR_EMAIL="teddy@localhost",
        GIT_COMMITTER_NAME="TeDDy",
        GIT_COMMITTER_EMAIL="teddy@localhost",
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
    )
    if index_file is not None:
        env["GIT_INDEX_FILE"] = str(index_file)
    else:
        env.pop("GIT_INDEX_FILE", None)
    return env


def git(
    root: Path,
    *args: str,
    env: dict[str, str],
    data: bytes | None = None,
    ok: tuple[int, ...] = (0,),
) -> bytes:
    """Run ``git ARGS`` in ``root`` (hooks and fsmonitor off); its stdout.  Raises
    :class:`GitFailed` with git's first line of error."""
    argv = ["git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", *args]
    try:
        proc = subprocess.run(
            argv,
            cwd=root,
            input=data,
            capture_output=True,
            env=env,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitFailed(f"git {args[0]}: {exc}") from None
    if proc.returncode not in ok:
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitFailed(f"git {args[0]}: {lines[0] if lines else f'exit {proc.returncode}'}")
    return proc.stdout


def object_id(data: bytes, algorithm: str) -> str:
    """The id git gives ``data`` as a blob (``algorithm``: ``sha1`` or ``sha256``)."""
    digest = hashlib.new(algorithm)
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


def git_blobs(root: Path, ids: Sequence[str]) -> dict[str, bytes]:
    """The bytes of each blob id (``git cat-file --batch``); a missing one is absent
    from the result."""
    if not ids:
        return {}
    out = git(
        root, "cat-file", "--batch", env=git_env(), data="".join(i + "\n" for i in ids).encode()
    )
    blobs: dict[str, bytes] = {}
    pos = 0
    for _ in ids:
        end = out.index(b"\n", pos)
        head = out[pos:end].decode("utf-8", "replace").split()
        pos = end + 1
        if len(head) == 3 and head[1] == "blob":
            size = int(head[2])
            blobs[head[0]] = out[pos : pos + size]
            pos += size + 1
        elif len(head) == 3:  # another kind of object: skip its content
            pos += int(head[2]) + 1
    return blobs
