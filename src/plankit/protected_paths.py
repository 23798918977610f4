"""Protected-path rules: globs over root-relative paths (``protected_paths`` in
``.teddy/config.yaml``, the files a plan may not write or read) and the files under a
project that they protect, by inode, to recognise a hard link to one."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path

from plankit.workspace import components


def _fold(name: str) -> str:
    # Letter case and trailing dots and spaces do not tell names apart on the
    # case-insensitive file systems of macOS and Windows: `.GIT` and `.git.` are `.git`
    # there.  Folding everywhere refuses a little more on Linux, never less anywhere.
    return name.rstrip(". ").casefold() or name


def check_rule(rule: str) -> str | None:
    """Why ``rule`` is not a usable protected-path rule, or None when it is."""
    if not isinstance(rule, str) or not rule.strip("/ "):
        return "a rule must be a non-empty path pattern such as '.git' or 'secrets/**'"
    if "\0" in rule or ".." in rule.replace("\\", "/").split("/"):
        return f"'{rule}' cannot be a rule: NUL bytes and '..' are not allowed"
    return None


@lru_cache(maxsize=256)
def _rule_parts(rule: str) -> tuple[str, ...]:
    """``rule``'s names, folded, anchored at the root (a rule without a slash starts
    with ``**``); remembered, as a turn checks every path against the same few rules."""
    text = rule.strip().replace("\\", "/")
    anchored = "/" in text.rstrip("/")
    parts = tuple(_fold(p) if p != "**" else p for p in components(text))
    return parts if anchored else ("**", *parts)


@lru_cache(maxsize=256)
def _name_anywhere(rule: str) -> str | None:
    """The one name ``rule`` protects at any depth, folded, when it is a plain name with
    no glob character (``.git``, ``.teddy``: the default rules), else None.  Such a rule
    matches a path when the name is one of the path's names: a set lookup, not a glob
    match per name."""
    parts = _rule_parts(rule)
    if len(parts) == 2 and parts[0] == "**" and not _GLOB_CHARS.intersection(parts[1]):
        return parts[1]
    return None


_GLOB_CHARS = frozenset("*?[")
"""What makes a rule's name a pattern for :func:`fnmatch.fnmatchcase`."""


def _matches_a_prefix(rule: Sequence[str], names: list[str]) -> bool:
    """Whether ``rule`` matches ``names`` or a directory above them (no recursion:
    one pass per rule component over the path)."""
    count = len(names)
    reach = [True] + [False] * count  # reach[j]: the rule so far matches names[:j]
    for part in rule:
        if part == "**":
            seen = False
            new = []
            for ok in reach:
                seen = seen or ok
                new.append(seen)
        else:
            new = [False] + [
                reach[j - 1] and fnmatchcase(names[j - 1], part) for j in range(1, count + 1)
            ]
        reach = new
    return any(reach[1:])


def protected_by(path: str, rules: Iterable[str]) -> str | None:
    """The first of ``rules`` that protects root-relative ``path``, or None.

    A rule is a glob: ``*`` any characters within a name, ``?`` one, ``[abc]`` one of
    those, ``**`` any number of directories.  A rule without a slash matches a name at
    any depth (``.git`` protects ``.git/config`` and ``sub/.git/hooks/x``); a rule with
    one is matched from the project root (``.teddy/config.yaml``, ``/secrets/*.pem``).
    A rule that matches a directory protects everything under it.  Letter case does not
    matter.
    """
    names = [_fold(name) for name in components(path)]
    if not names:
        return None
    for rule in rules:
        name = _name_anywhere(rule)
        if name in names if name is not None else _matches_a_prefix(_rule_parts(rule), names):
            return rule
    return None


def protected_links(root: Path, rules: Sequence[str]) -> set[tuple[int, int]]:
    """(device, inode) of each file under ``root`` that ``rules`` protect: a file with
    one of these, under another name, is a hard link to a protected file.  Symbolic links
    are not followed; unreadable directories are skipped."""
    found: set[tuple[int, int]] = set()
    if not rules:
        return found
    base = os.fspath(root)
    for dirpath, _dirnames, filenames in os.walk(base):
        rel_dir = os.path.relpath(dirpath, base).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir
        whole = bool(rel_dir) and protected_by(rel_dir, rules) is not None
        for name in filenames:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if not whole and protected_by(rel, rules) is None:
                continue
            try:
                st = os.stat(os.path.join(dirpath, name), follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):  # whatever its link count now: it may change
                found.add((st.st_dev, st.st_ino))
    return found
