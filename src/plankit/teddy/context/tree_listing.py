"""The project tree of the context payload (section 2): a plain indented listing.

Which paths are left out follows git, with ``.teddyignore`` files on top:

* Every ``.gitignore`` and ``.teddyignore`` file applies to the directory holding it
  and everything below, its patterns read relative to that directory (gitignore
  syntax and matching, by :class:`pathspec.GitIgnoreSpec`).
* The git verdict on a path is the last matching pattern, a deeper ``.gitignore``
  overriding a shallower one; as in git, nothing below an ignored directory can be
  re-included by a ``.gitignore`` line.
* A ``.teddyignore`` verdict, when one of its patterns matches, overrides the git
  verdict on that path.  Its negations (``!build/report.txt``) re-include a path even
  below a directory that ``.gitignore`` (or ``.teddyignore``) left out; such a
  directory is then listed with just what was re-included.
* Ignore files are read only in directories that are listed for their own sake (not
  in an ignored directory kept only for a re-included path).
* ``.git`` and ``.teddy`` are always left out; symbolic links are listed by name and
  never followed (git treats them as files).

The walk uses :func:`os.scandir` and does not descend into an ignored directory unless
a ``.teddyignore`` negation could match something below it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from pathspec import GitIgnoreSpec

ALWAYS_LEFT_OUT = frozenset({".git", ".teddy"})
"""Entry names never listed, at any depth."""

_GLOB_CHARS_RE = re.compile(r"[*?\[\\]")


@dataclass(frozen=True, slots=True)
class _IgnoreFile:
    """The compiled patterns of one ``.gitignore`` or ``.teddyignore`` file."""

    base: str
    """Root-relative directory holding the file, with a final ``/`` (``""`` at the root)."""
    spec: GitIgnoreSpec
    """The patterns."""
    negations: tuple[tuple[str, ...] | None, ...]
    """For each ``!`` pattern, its leading literal path components when it is anchored
    (``!docs/keep.md`` → ``("docs", "keep.md")``), or None when it can match at any
    depth; used to decide whether an ignored directory must still be walked."""


def _negations(lines: Sequence[str]) -> tuple[tuple[str, ...] | None, ...]:
    found: list[tuple[str, ...] | None] = []
    for raw in lines:
        line = raw.rstrip()
        if not line.startswith("!"):
            continue
        pattern = line[1:].rstrip("/")
        if "/" not in pattern:
            found.append(None)  # matches a name at any depth
            continue
        literal: list[str] = []
        for part in pattern.lstrip("/").split("/"):
            if _GLOB_CHARS_RE.search(part):
                break
            literal.append(part)
        found.append(tuple(literal))
    return tuple(found)


def _load(directory: str, name: str, base: str) -> _IgnoreFile | None:
    from pathspec import GitIgnoreSpec

    try:
        with open(os.path.join(directory, name), "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    lines = data.decode("utf-8", "replace").splitlines()
    spec = GitIgnoreSpec.from_lines(lines)
    if not len(spec):
        return None
    return _IgnoreFile(base, spec, _negations(lines))


def _verdict(files: Sequence[_IgnoreFile], rel: str) -> bool | None:
    """True (ignored), False (re-included) or None (no pattern matches) for ``rel``."""
    result: bool | None = None
    for ignore in files:
        if rel.startswith(ignore.base):
            include = ignore.spec.check_file(rel[len(ignore.base) :]).include
            if include is not None:
                result = include
    return result


def _may_reinclude_below(teddy: Sequence[_IgnoreFile], rel_dir: str) -> bool:
    """Whether a ``.teddyignore`` negation could match a path below ``rel_dir`` (``a/b/``)."""
    for ignore in teddy:
        if not rel_dir.startswith(ignore.base):
            continue
        parts = rel_dir[len(ignore.base) :].rstrip("/").split("/")
        for literal in ignore.negations:
            if literal is None:
                return True
            common = min(len(literal), len(parts))
            if literal[:common] == tuple(parts[:common]):
                return True
    return False


def _escape_char(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8 (os.fsdecode's surrogates)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def display_name(name: str) -> str:
    """``name`` with every non-printable character written as an escape (``\\x0a``)."""
    if name.isprintable():
        return name
    return "".join(c if c.isprintable() else _escape_char(c) for c in name)


def _sort_key(name: str) -> tuple[str, str]:
    return (name.casefold(), name)


class _Walker:
    def __init__(self, prune: bool) -> None:
        self.prune = prune

    def walk(
        self,
        path: str,
        rel: str,
        ignored: bool,
        git: tuple[_IgnoreFile, ...],
        teddy: tuple[_IgnoreFile, ...],
    ) -> list[str]:
        """The listing lines below directory ``path`` (root-relative ``rel``, ``a/b/``)."""
        if not ignored:
            found = _load(path, ".gitignore", rel)
            if found is not None:
                git = (*git, found)
            found = _load(path, ".teddyignore", rel)
            if found is not None:
                teddy = (*teddy, found)
        try:
            with os.scandir(path) as entries:
                listed = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
        except OSError:
            return []
        dirs: list[str] = []
        files: list[str] = []
        for name, is_dir in listed:
            if name in ALWAYS_LEFT_OUT:
                continue
            (dirs if is_dir else files).append(name)
        dirs.sort(key=_sort_key)
        files.sort(key=_sort_key)
        lines: list[str] = []
        for name in dirs:
            child = f"{rel}{name}/"
            child_ignored = self._ignored(child, ignored, git, teddy)
            if child_ignored and self.prune and not _may_reinclude_below(teddy, child):
                continue
            below = self.walk(os.path.join(path, name), child, child_ignored, git, teddy)
            if child_ignored and not below:
                continue
            lines.append(display_name(name) + "/")
            lines.extend("  " + line for line in below)
        for name in files:
            if not self._ignored(rel + name, ignored, git, teddy):
                lines.append(display_name(name))
        return lines

    @staticmethod
    def _ignored(
        rel: str, parent_ignored: bool, git: Sequence[_IgnoreFile], teddy: Sequence[_IgnoreFile]
    ) -> bool:
        if teddy:
            verdict = _verdict(teddy, rel)
            if verdict is not None:
                return verdict
        if parent_ignored:
            return True
        return bool(git) and _verdict(git, rel) is True


def tree_lines(root: str | os.PathLike[str], *, prune: bool = True) -> list[str]:
    """The listing of ``root`` as lines (two spaces a level, directories end with ``/``).

    ``prune=False`` walks every ignored directory too; the result is the same, only
    slower (tests use it to check the pruning).
    """
    top = os.fspath(root)
    return _Walker(prune).walk(top, "", False, (), ())


def project_tree(root: Path) -> str:
    """The section-2 listing of the project at ``root``: one entry a line, no final newline.

    Two spaces of indentation per level, directories end with ``/`` and come first,
    names sort case-insensitively; ``.gitignore`` and ``.teddyignore`` files are
    honoured as the module docstring describes.
    """
    return "\n".join(tree_lines(root))
