"""What the security tests share: plans, a `teddy` runner, a project with a session."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from plankit.teddy.format.parse import RATIONALE_SECTIONS

TEDDY = str(Path(sys.executable).parent / "teddy")
RATIONALE = "\n".join(
    ["## Rationale", "````text"]
    + [f"### {i}. {name}\nx" for i, name in enumerate(RATIONALE_SECTIONS, 1)]
    + ["````"]
)


def plan(actions: str, memos: str = "") -> str:
    """A valid plan around ``actions`` (Markdown of the Action Plan section)."""
    memo_part = f"## Memos\n````\n{memos}\n````\n\n" if memos else ""
    return f"# A plan\n- **Status:** Green 🟢\n\n{RATIONALE}\n\n{memo_part}## Action Plan\n\n{actions}\n"


def create(path: str, content: str = "pwned") -> str:
    """A CREATE action of ``path``."""
    return f"### `CREATE`\n- **File Path:** [{path}](/{path})\n```\n{content}\n```"


def edit(path: str, find: str, replace: str) -> str:
    """An EDIT action of ``path`` with one FIND/REPLACE pair."""
    return (
        f"### `EDIT`\n- **File Path:** [{path}](/{path})\n\n"
        f"#### `FIND:`\n```\n{find}\n```\n#### `REPLACE:`\n```\n{replace}\n```"
    )


def read(path: str) -> str:
    """A READ action of ``path``."""
    return f"### `READ`\n- **Resource:** [{path}](/{path})"


def teddy(
    cwd: Path, *args: str, umask: int | None = None, check: int | None = 0
) -> subprocess.CompletedProcess[str]:
    """Run the real `teddy` command (with ``umask`` when given)."""
    command = [TEDDY, *args]
    if umask is not None:
        command = ["sh", "-c", f'umask {umask:03o} && exec "$@"', "sh", *command]
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)
    if check is not None:
        assert result.returncode == check, result.stdout + result.stderr
    return result


def start_session(root: Path, *, umask: int | None = None) -> Path:
    """`teddy new` in ``root``: the first turn's directory."""
    session = Path(teddy(root, "new", "sec", umask=umask).stdout.strip())
    return session / "01"


def snapshot(directory: Path) -> dict[str, bytes | str]:
    """Every entry under ``directory``: a file's bytes, a link's target, ``dir``."""
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(directory):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            key = path.relative_to(directory).as_posix()
            if path.is_symlink():
                out[key] = "-> " + os.readlink(path)
            elif path.is_dir():
                out[key] = "dir"
            else:
                out[key] = path.read_bytes()
    return out


def fast_directory() -> Iterator[Path]:
    """A scratch directory on a memory file system when there is one (fsync is free
    there, so thousands of atomic writes stay quick), else in the usual temp dir."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="plankit-sec-", dir=base) as path:
        yield Path(path).resolve()
