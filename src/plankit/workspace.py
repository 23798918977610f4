"""A project root and the paths inside it.

Everything TeDDy reads or writes on a plan's behalf goes through :func:`resolve`, which
refuses any path that could lead outside the project: absolute paths, ``~``, ``..``
components, NUL bytes, and symbolic links (at any depth) that point outside the root.
"""

from __future__ import annotations

import os
from pathlib import Path

from plankit.errors import InputError

TEDDY_DIR = ".teddy"
"""The directory that marks a TeDDy project root."""


class PathRefused(InputError):
    """A path that would leave the project root (or is not a path at all)."""


def find_root(start: Path | None = None) -> Path | None:
    """The nearest directory at or above ``start`` that holds ``.teddy/``, like git."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / TEDDY_DIR).is_dir():
            return candidate
    return None


def check_relative(path: str) -> str | None:
    """Why ``path`` is not an acceptable root-relative path, or None when it is."""
    if not path:
        return "the path is empty"
    if "\0" in path:
        return "the path contains a NUL byte"
    if path.startswith("~"):
        return "paths starting with ~ are refused; give a path inside the project"
    if (
        path.startswith(("/", "\\"))
        or Path(path).is_absolute()
        or (len(path) > 1 and path[1] == ":")
    ):
        return "absolute paths are refused; give a path relative to the project root"
    if ".." in path.replace("\\", "/").split("/"):
        return "'..' is refused; paths must stay inside the project"
    return None


def resolve(root: Path, path: str) -> Path:
    """The absolute path of root-relative ``path``, guaranteed to be inside ``root``.

    Raises :class:`PathRefused` for a path that is absolute, starts with ``~``, has a
    ``..`` component or a NUL byte, or goes through a symbolic link leading out.
    """
    problem = check_relative(path)
    if problem is not None:
        raise PathRefused(problem, code="path-refused", path=path)
    real_root = root.resolve()
    candidate = real_root / path
    # resolve() follows every symlink that exists along the way; what does not exist
    # yet is appended as written (and has no '..' by the check above).
    real = candidate.resolve()
    if real != real_root and real_root not in real.parents:
        raise PathRefused(
            "goes through a symbolic link that leads outside the project; refused",
            code="path-refused",
            path=path,
        )
    return real


def relative(root: Path, path: Path) -> str:
    """``path`` (inside ``root``) as a root-relative POSIX path."""
    return path.resolve().relative_to(root.resolve()).as_posix()


def is_inside(root: Path, path: Path) -> bool:
    """Whether ``path`` (after following symlinks) lies inside ``root``."""
    real_root = root.resolve()
    real = Path(os.path.realpath(path))
    return real == real_root or real_root in real.parents
