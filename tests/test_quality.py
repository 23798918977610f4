"""The code base stays lint-clean and formatted (ruff) and type-clean (mypy --strict on src/).

The tools are pinned exactly in the ``test`` extra, so the verdict depends on the code,
not on the day the environment was installed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CODE = ["src", "tests", "benchmarks"]


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(Path(sys.executable).parent))
    if path is None:
        pytest.fail(f"{name} is not installed next to this Python; install the test extra")
    return path


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True)


def test_ruff_finds_nothing() -> None:
    result = _run(_tool("ruff"), "check", *CODE)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_changes_nothing() -> None:
    result = _run(_tool("ruff"), "format", "--check", *CODE)
    assert result.returncode == 0, (
        f"{result.stdout}{result.stderr}\nrun `ruff format {' '.join(CODE)}` to format them"
    )


def test_mypy_strict_finds_nothing() -> None:
    result = _run(_tool("mypy"))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("name", ["ruff", "mypy"])
def test_the_installed_tool_is_the_pinned_one(name: str) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pins = [
        req.partition("==")[2]
        for req in project["project"]["optional-dependencies"]["test"]
        if re.fullmatch(rf"{name}==[\w.]+", req)
    ]
    assert len(pins) == 1, f"the test extra must pin {name} exactly ({name}==VERSION)"
    version = _run(_tool(name), "--version").stdout.split()[1]
    assert version == pins[0], (
        f"{name} {version} is installed but the test extra pins {pins[0]}; "
        "reinstall it: pip install -e '.[test]'"
    )
