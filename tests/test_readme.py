"""The README's two set-up commands exist, CI runs the test command word for word and
exits with its status, and the script that installs the tests' programs is the one the
README names."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from tests.acp.conftest import ACPX_VERSION
from tests.waiting import DEADLINE

ROOT = Path(__file__).resolve().parents[1]
CI = ROOT / ".ci" / "run"


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
    script = CI.read_text(encoding="utf-8")
    commands = [ln for ln in script.splitlines() if ln.strip() and not ln.startswith("#")]
    runs = [ln for ln in commands if "echo" not in ln and re.search(r"pytest|pip |test-deps", ln)]
    assert runs == [f"{tests} || status=$?"]
    assert commands[-1] == 'exit "$status"'


def test_the_readme_test_command_installs_the_programs_the_tests_drive() -> None:
    tests = _shell_blocks()[1]
    first = tests.split(" && ")[0]
    assert first == "bash tools/test-deps"
    script = (ROOT / "tools" / "test-deps").read_text(encoding="utf-8")
    # every program whose absence makes tests skip, and acpx at the version they expect
    for package in ("postgresql", "libreoffice-calc", "chromium"):
        assert re.search(rf'^ *apt_install "[^"]+"(?: [a-z-]+)* {package}\b', script, re.M)
    assert f"ACPX_VERSION={ACPX_VERSION} " in script


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (0, None),
        (1, "tests failed"),
        (2, "interrupted"),
        (3, "internal error"),
        (4, "wrong option"),
        (5, "collected no tests"),
    ],
)
def test_ci_exits_with_pytests_status_and_says_what_it_means(
    tmp_path: Path, code: int, said: str | None
) -> None:
    """.ci/run on a checkout whose test run ends with each of pytest's exit statuses: a
    `python3` first on PATH makes a virtual environment whose pytest exits so."""
    checkout = tmp_path / "checkout"
    (checkout / ".ci").mkdir(parents=True)
    shutil.copy(CI, checkout / ".ci" / "run")
    (checkout / "tools").mkdir()
    (checkout / "tools" / "test-deps").write_text("exit 0\n", encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    python3 = bin_dir / "python3"
    python3.write_text(
        "#!/bin/sh\n"  # python3 -m venv .venv
        'mkdir -p "$3/bin"\n'
        'printf "#!/bin/sh\\nexit 0\\n" > "$3/bin/pip"\n'
        f'printf "#!/bin/sh\\necho pytest ran \\"\\$*\\"\\nexit {code}\\n" > "$3/bin/python"\n'
        'chmod +x "$3/bin/pip" "$3/bin/python"\n',
        encoding="utf-8",
    )
    python3.chmod(python3.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(
        ["bash", str(checkout / ".ci" / "run")],
        env=env,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert result.returncode == code, result.stdout + result.stderr
    assert "pytest ran -m pytest" in result.stdout
    if said is None:
        assert ".ci/run:" not in result.stdout
    else:
        assert f".ci/run: exit {code}: " in result.stdout and said in result.stdout
