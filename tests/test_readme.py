"""The README's two set-up commands exist, and CI runs the test command word for word."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _shell_blocks() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return [b.strip() for b in re.findall(r"```sh\n(.*?)```", readme, re.S)]


def test_readme_starts_with_the_two_commands() -> None:
    main_job, tests = _shell_blocks()[:2]
    assert "pip install" in main_job and "examples/demo/run.sh" in main_job
    assert "'.[test]'" in tests and "pytest" in tests
    assert "\n" not in main_job and "\n" not in tests


def test_ci_runs_the_readme_test_command() -> None:
    tests = _shell_blocks()[1]
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = [ln for ln in script.splitlines() if ln.strip() and not ln.startswith("#")]
    assert commands[-1] == tests
