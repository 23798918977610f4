"""Paths a plan may not write or read: ``protected_paths`` in ``.teddy/config.yaml``.

By default CREATE and EDIT may not touch ``.git`` (a hook, or ``core.fsmonitor`` in
``.git/config``, runs commands at the user's next ``git status``) or ``.teddy``
(TeDDy's config, sessions and memos), at any depth; READ, EDIT and handoff resources
may not reach ``.git`` (remote URLs can carry credentials).  Validation refuses such a
plan; execution checks again before each write.  The rules are globs
(:func:`plankit.protected_paths.protected_by`); the path is checked as written and, when it
goes through a symbolic link inside the project, where it leads.  A file read that is
a protected file under another name (a hard link) is refused too.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from plankit.protected_paths import protected_by, protected_links
from plankit.teddy.session.config import Config
from plankit.workspace import PathRefused, real_root, relative_posix, shorten

CODE = "protected-path"
"""The code of a refusal (in the report, ``--json`` and the re-plan message)."""


def check_protected(
    root: Path,
    path: str,
    config: Config,
    *,
    write: bool = False,
    read: bool = False,
    real: Path | None = None,
) -> None:
    """Raise :class:`PathRefused` (code ``protected-path``) when root-relative ``path``
    (or ``real``, where it resolved to) matches a rule of ``protected_paths.write``
    (``write``) or ``protected_paths.read`` (``read``)."""
    where = [(path, "")]
    if real is not None:
        target = relative_posix(real, real_root(root))
        if target is not None and target != path.strip("/"):
            where.append((target, f"leads to `{shorten(target)}`, a "))
    if read and real is not None and config.protected_read:
        _refuse_hard_link(root, path, real, config.protected_read)
    checks = []
    if write:
        checks.append(("write", config.protected_write, "create or edit"))
    if read:
        checks.append(("read", config.protected_read, "read"))
    for key, rules, verb in checks:
        for candidate, lead in where:
            rule = protected_by(candidate, rules)
            if rule is None:
                continue
            raise PathRefused(
                f"{lead}protected path: plans may not {verb} paths matching '{rule}' "
                f"(protected_paths.{key} in .teddy/config.yaml; change that list to "
                "allow it)",
                code=CODE,
                path=shorten(path),
            )


def hard_link_check(root: Path, config: Config) -> Callable[[os.stat_result], None]:
    """A check for a file opened under ``root``: :class:`PathRefused` when it is a file
    ``protected_paths.read`` protects, under another name (a hard link).  The protected
    files are listed once, the first time a file with more than one link is checked."""
    found: list[set[tuple[int, int]]] = []

    def check(st: os.stat_result) -> None:
        if st.st_nlink < 2 or not config.protected_read:
            return
        if not found:
            found.append(protected_links(root, config.protected_read))
        if (st.st_dev, st.st_ino) in found[0]:
            raise PathRefused(
                "is a hard link to a protected file: plans may not read it under another "
                "name (protected_paths.read in .teddy/config.yaml)",
                code=CODE,
            )

    return check


def _refuse_hard_link(root: Path, path: str, real: Path, rules: tuple[str, ...]) -> None:
    try:
        st = os.stat(real)
    except OSError:
        return
    if st.st_nlink > 1 and (st.st_dev, st.st_ino) in protected_links(root, rules):
        raise PathRefused(
            "is a hard link to a protected file: plans may not read it under another name "
            "(protected_paths.read in .teddy/config.yaml)",
            code=CODE,
            path=shorten(path),
        )
