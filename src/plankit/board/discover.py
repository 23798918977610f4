"""Finding every plan under a directory: TeDDy sessions, PLAN.md checklists (Markdown
files and xlsx workbooks), agentflow plan directories and ACP plan transcripts.

The walk never leaves the directory: symbolic links are not followed, and files
reached through one are not listed.  Directories that hold no plans of a user's
(``.git``, ``node_modules``, virtual environments, caches) are skipped, and so is
anything inside a ``.teddy`` directory but the sessions themselves.  A plan is named
by its :class:`PlanRef`: its kind and its path relative to the root, which is also
its id in the API.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

KINDS = ("teddy", "checklist", "agentflow", "acp")
"""The four plan systems, as the API names them."""

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        ".tox",
        ".cache",
        "site-packages",
    }
)
"""Directories never walked into."""

CHECKLIST_NAMES = frozenset({"plan.md"})
"""Markdown file names read as checklists (any letter case), besides ``*.plan.md``."""

ACP_DIR = Path(".plankit") / "acp"
"""Where ``plankit acp run --board`` writes its transcripts, under its working directory."""

MAX_ENTRIES = 200_000
"""Directory entries looked at before the walk stops (a guard for huge trees)."""


@dataclass(frozen=True, slots=True, order=True)
class PlanRef:
    """One plan found under the root."""

    kind: str
    """``teddy``, ``checklist``, ``agentflow`` or ``acp``."""
    rel: str
    """Its path relative to the root, with ``/`` separators."""

    @property
    def id(self) -> str:
        """The id the API uses: ``kind:path``."""
        return f"{self.kind}:{self.rel}"


def parse_id(plan_id: str) -> PlanRef | None:
    """The ref an id names, or None for an id that cannot be one."""
    kind, sep, rel = plan_id.partition(":")
    if not sep or kind not in KINDS or not rel:
        return None
    parts = rel.split("/")
    if "\\" in rel or "\0" in rel or any(p in ("", ".", "..") for p in parts):
        return None  # a leading "/" gives an empty part
    return PlanRef(kind, rel)


def looks_like_plan(rel: str) -> bool:
    """Whether a file at ``rel`` (relative to the root) is named like a plan or a part of
    one the walk looks for: a checklist's name, anything under ``.teddy``, an ACP
    transcript, an agentflow directory's ``tasks/`` file."""
    parts = rel.split("/")
    name = parts[-1].lower()
    if name in CHECKLIST_NAMES or name.endswith((".plan.md", ".xlsx")) or ".teddy" in parts:
        return True
    if name.endswith(".jsonl") and "/".join(parts[-3:-1]) == ACP_DIR.as_posix():
        return True
    return len(parts) > 1 and parts[-2] == "tasks"


def _is_agentflow_dir(path: Path, names: set[str]) -> bool:
    return "plan.md" in names and "tasks" in names and (path / "tasks").is_dir()


def discover(root: Path) -> list[PlanRef]:
    """Every plan under ``root``, sorted by kind and path."""
    found: list[PlanRef] = []
    seen = 0
    for directory, dirs, files in _walk(root):
        seen += len(dirs) + len(files)
        if seen > MAX_ENTRIES:
            break
        rel_dir = directory.relative_to(root).as_posix()
        prefix = "" if rel_dir == "." else rel_dir + "/"
        names = set(files) | set(dirs)
        if directory.name == ".teddy":
            found += [
                PlanRef("teddy", prefix + d) for d in dirs if d[:8].isdigit() and d[8:9] == "-"
            ]
            dirs.clear()  # sessions are read whole by their view, not walked
            continue
        if _is_agentflow_dir(directory, names) and rel_dir != ".":
            found.append(PlanRef("agentflow", rel_dir))
            dirs[:] = [d for d in dirs if d != "tasks"]
        if directory.as_posix().endswith("/" + ACP_DIR.as_posix()):
            found += [PlanRef("acp", prefix + f) for f in files if f.endswith(".jsonl")]
        for name in files:
            lower = name.lower()
            named = lower in CHECKLIST_NAMES and not _is_agentflow_dir(directory, names)
            if named or lower.endswith((".plan.md", ".xlsx")):
                found.append(PlanRef("checklist", prefix + name))
    return sorted(found)


def _named_like_a_checklist(name: str) -> bool:
    lower = name.lower()
    return lower in CHECKLIST_NAMES or lower.endswith(".plan.md")


def _walk(root: Path) -> Iterator[tuple[Path, list[str], list[str]]]:
    """``os.walk`` without following links; names of links are left out."""
    stack = [root]
    while stack:
        directory = stack.pop()
        dirs: list[str] = []
        files: list[str] = []
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    if entry.is_symlink():
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in SKIP_DIRS:
                            dirs.append(entry.name)
                    elif entry.is_file(follow_symlinks=False) or _named_like_a_checklist(
                        entry.name
                    ):
                        # a FIFO or a socket named like a checklist is listed too, and
                        # its page says why it is not read (it is never opened to wait)
                        files.append(entry.name)
        except OSError:
            continue
        dirs.sort()
        files.sort()
        yield directory, dirs, files
        stack.extend(directory / d for d in reversed(dirs))


def locate(root: Path, ref: PlanRef) -> Path | None:
    """The plan's path on disk, when it is still under ``root`` with no link on the way."""
    where = str(root)
    try:
        for part in ref.rel.split("/"):
            where = os.path.join(where, part)
            if stat.S_ISLNK(os.lstat(where).st_mode):
                return None
    except OSError:  # gone
        return None
    return Path(where)
