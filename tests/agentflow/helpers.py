"""Helpers that write plan files for the tests."""

from __future__ import annotations

import shutil
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "agentflow"
SPEC_EXAMPLE = DATA / "valid" / "spec-example"


def write(path: Path, text: str) -> Path:
    """Write ``text`` to ``path``, creating parent directories."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def write_plan(directory: Path, title: str = "A plan", tasks: dict[str, str] | None = None) -> Path:
    """A plan directory: plan.md with ``title`` and the given ``tasks/NAME: text`` files."""
    write(directory / "plan.md", f'---\ntitle: "{title}"\n---\n\nThe narrative.\n')
    for name, text in (tasks or {}).items():
        write(directory / "tasks" / name, text)
    return directory


def task(task_id: str, depends_on: list[str] | None = None, body: str = "Do it.\n") -> str:
    """A task file's text."""
    deps = f"depends_on: [{', '.join(depends_on)}]\n" if depends_on is not None else ""
    return f"---\nid: {task_id}\n{deps}---\n\n{body}"


def copy_example(target: Path) -> Path:
    """Copy the spec's example plan files into the directory ``target``."""
    shutil.copytree(SPEC_EXAMPLE, target, dirs_exist_ok=True)
    return target
