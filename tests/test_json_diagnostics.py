"""``teddy``, ``plankit checklist`` and ``agentctl`` print every ``--json`` diagnostic in
one shape: ``{"code", "message", "line", "file"}``, ``line`` a 1-based int or null (never
0), ``file`` a string or null."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"

COMMANDS = {
    "teddy": "from plankit.teddy.cli import main; main()",
    "plankit": "from plankit.cli import main; main()",
    "agentctl": "from plankit.agentflow.cli import main; main()",
}


def errors_of(tmp_path: Path, command: str, *args: str) -> list[dict[str, object]]:
    """Run ``command ARGS --json`` in a fresh interpreter; the errors it printed (exit 1)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "AGENTFLOW_HOME": str(tmp_path / "agentflow-home"),
        "PLANKIT_HOME": str(tmp_path / "plankit-home"),
    }
    env.pop("AGENTFLOW_SESSION_ID", None)
    result = subprocess.run(
        [sys.executable, "-c", COMMANDS[command], *args, "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        check=False,
    )
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    errors = json.loads(result.stdout)["errors"]
    assert isinstance(errors, list) and errors
    return errors


def check_shape(errors: list[dict[str, object]]) -> None:
    for error in errors:
        assert list(error) == ["code", "message", "line", "file"], error
        assert isinstance(error["code"], str) and error["code"]
        assert isinstance(error["message"], str) and error["message"]
        line = error["line"]
        assert line is None or (isinstance(line, int) and line >= 1), error
        assert error["file"] is None or isinstance(error["file"], str), error


def _not_utf8(tmp_path: Path) -> str:
    path = tmp_path / "PLAN.md"
    path.write_bytes(b"# Plan: T\n\nGoal: caf\xe9\n")
    return str(path)


CASES = {
    # name: (command, arguments, {field: expected value or a callable check})
    "teddy-invalid-plan": (
        "teddy",
        ["parse", str(DATA / "plans" / "invalid" / "fields.md")],
        {"code": "field-missing", "line": 18},
    ),
    "teddy-missing-file": ("teddy", ["parse", "{tmp}/nowhere.md"], {"line": None}),
    "checklist-no-plan": (
        "plankit",
        ["checklist", "done", "9.9", "--store", "{tmp}/PLAN.md"],
        {"code": "no-plan", "line": None, "file": None},
    ),
    "checklist-not-utf8": (
        "plankit",
        ["checklist", "show", "--store", "{not_utf8}"],
        {"code": "not-utf8", "line": 3},
    ),
    "agentctl-no-session": (
        "agentctl",
        ["plan", "dir"],
        {"code": "session-missing", "line": None, "file": None},
    ),
    "agentctl-invalid-dir": (
        "agentctl",
        ["plan", "validate", str(DATA / "agentflow" / "rules" / "body-empty")],
        {"code": "body-empty", "line": None},
    ),
    "agentctl-invalid-line": (
        "agentctl",
        ["plan", "validate", str(DATA / "agentflow" / "rules" / "depends-unknown")],
        {"code": "depends-unknown", "line": 5},
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_command_prints_the_one_shape(tmp_path: Path, case: str) -> None:
    command, args, expected = CASES[case]
    filled = [
        arg.replace("{tmp}", str(tmp_path)).replace(
            "{not_utf8}", _not_utf8(tmp_path) if "{not_utf8}" in arg else ""
        )
        for arg in args
    ]
    errors = errors_of(tmp_path, command, *filled)
    check_shape(errors)
    first = errors[0]
    for key, value in expected.items():
        assert first[key] == value, (key, first)
    if case in ("teddy-missing-file", "checklist-not-utf8"):
        assert first["file"] == filled[-1]  # the file the error is about
    if case.startswith("agentctl-invalid"):
        assert isinstance(first["file"], str) and first["file"].startswith(filled[-1])
