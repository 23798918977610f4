"""File operations on allocated plan directories, confined to ``AGENTFLOW_HOME/plans``.

Nothing here follows a symlink: a plan directory replaced by a symlink (or a file) is
refused, and clearing a directory unlinks the symlinks in it without touching their
targets.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat

from plankit.agentflow.paths import is_inside, new_id
from plankit.agentflow.records import ControlError, Thread


def allocate(plans_root: str, name: str) -> str:
    """Create the new directory ``plans_root/name`` (never reusing one) with an empty
    ``tasks/`` in it, ready for the task files."""
    path = os.path.join(plans_root, name)
    try:
        os.makedirs(plans_root, mode=0o700, exist_ok=True)
        os.mkdir(path, 0o700)
        os.mkdir(os.path.join(path, "tasks"), 0o700)
    except OSError as exc:
        discard(path)
        raise ControlError(
            "state-unusable", f"cannot create the plan directory {path} ({exc.strerror})"
        ) from None
    return path


def discard(path: str | None) -> None:
    """Remove a directory just allocated by a request that then failed (if any)."""
    if path is not None:
        with contextlib.suppress(OSError):
            os.rmdir(os.path.join(path, "tasks"))
        with contextlib.suppress(OSError):
            os.rmdir(path)


def check(plans_root: str, thread: Thread) -> None:
    """Refuse a plan directory that is not a real directory inside ``plans_root``."""
    path = thread.plan_dir
    if not is_inside(plans_root, path):
        raise ControlError(
            "plan-dir-unsafe", f"{path} is outside {plans_root}; refusing to touch it"
        )
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        raise ControlError(
            "plan-dir-unsafe",
            f"{path} ({thread.thread_id}) is no longer a directory (a symlink or a file "
            "replaced it); agentflow will not follow it; remove it and run "
            "`agentctl plan dir` to recreate the directory",
        )


def ensure(path: str) -> None:
    """Recreate an allocated directory (and its ``tasks/``) that was deleted."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(os.path.join(path, "tasks"), 0o700)


def move_aside(plans_root: str, path: str) -> str | None:
    """Rename ``path`` to a hidden name in ``plans_root``; the new name, or None if absent."""
    if not os.path.lexists(path):
        return None
    trash = os.path.join(plans_root, f".removed-{new_id()}")
    os.rename(path, trash)
    return trash


def delete(trash: str | None) -> None:
    """Delete what :func:`move_aside` set aside (best effort; it is hidden already)."""
    if trash is None:
        return
    if os.path.islink(trash) or not os.path.isdir(trash):
        with contextlib.suppress(OSError):
            os.unlink(trash)
        return
    shutil.rmtree(trash, ignore_errors=True)


def clear(path: str) -> int:
    """Delete everything in the directory ``path``, keeping it and an empty ``tasks/``;
    the number of files removed."""
    ensure(path)
    removed = 0
    with os.scandir(path) as entries:
        for entry in list(entries):
            if entry.is_dir(follow_symlinks=False):
                removed += sum(len(files) for _, _, files in os.walk(entry.path))
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
                removed += 1
    ensure(path)
    return removed


def collect(plans_root: str, paths: list[str]) -> list[str]:
    """Delete plan directories (only real directories inside ``plans_root``) and the
    trash that interrupted removals left; the paths deleted."""
    deleted: list[str] = []
    candidates = list(paths)
    with contextlib.suppress(OSError), os.scandir(plans_root) as entries:
        candidates += [e.path for e in entries if e.name.startswith(".removed-")]
    for path in candidates:
        if not is_inside(plans_root, path) or path == plans_root:
            continue
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(path, ignore_errors=True)
            deleted.append(path)
    return deleted
