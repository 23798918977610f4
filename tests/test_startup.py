"""The command-line tools start fast: heavy libraries stay out of their start-up.

Each CLI module is imported in a fresh interpreter, and ``teddy --help`` and
``teddy parse`` run in one with ``-X importtime``; none of them may import textual,
llm, openai, mcp, acp, pydantic, openpyxl or rich (the libraries later commands
import lazily), and ``teddy --help`` may not even import markdown-it-py.  No timing is
asserted here: ``benchmarks/bench_startup.py`` measures the time.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SMALL_PLAN = "examples/finisher-agent-research.md"

HEAVY = ("textual", "llm", "openai", "mcp", "acp", "pydantic", "openpyxl", "rich")
"""Top-level packages no CLI may import at start-up (nor any of their submodules)."""

CLI_MODULES = (
    "plankit.teddy.cli",
    "plankit.cli",
    "plankit.agentflow.cli",
    "plankit.orchestrate.cli",
)
ALWAYS_PRESENT = "plankit.teddy.cli"

_MISSING = "<module not found>"

# Imports the module named in argv[1] and prints sys.modules, one name a line; only
# the import machinery, which the interpreter has loaded at start-up anyway, is used.
# A module whose package does not exist (yet) prints a marker instead; any other
# import error fails.
_IMPORT_AND_LIST = f"""
import importlib, importlib.util, sys
name = sys.argv[1]
try:
    spec = importlib.util.find_spec(name)
except ModuleNotFoundError as exc:
    if not exc.name or not (name + ".").startswith(exc.name + "."):
        raise
    spec = None
if spec is None:
    print({_MISSING!r})
else:
    importlib.import_module(name)
    print("\\n".join(sorted(sys.modules)))
"""

# What the ``teddy`` console script does.
_RUN_TEDDY = "import sys; from plankit.teddy.cli import main; sys.argv[0] = 'teddy'; main()"


def heavy_in(modules: set[str]) -> list[str]:
    """The modules of ``modules`` that are, or are inside, one of :data:`HEAVY`."""
    return sorted(m for m in modules if m.split(".", 1)[0] in HEAVY)


def test_heavy_in_matches_packages_and_submodules_only() -> None:
    found = heavy_in({"rich", "rich.console", "textual.widgets", "richer", "mcpx", "click"})
    assert found == ["rich", "rich.console", "textual.widgets"]


@pytest.mark.parametrize("module", CLI_MODULES)
def test_importing_cli_module_leaves_heavy_libraries_out(module: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", _IMPORT_AND_LIST, module],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    if result.stdout.strip() == _MISSING:
        if module == ALWAYS_PRESENT:
            pytest.fail(f"{module} does not exist")
        pytest.skip(f"{module} does not exist yet")
    modules = set(result.stdout.split())
    assert module in modules  # the listing is real, not an empty output
    assert heavy_in(modules) == []


def _imported_by_teddy(
    *args: str, cwd: Path = ROOT
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run ``teddy ARGS`` with ``-X importtime``; the result and every module imported."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", _RUN_TEDDY, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    modules: set[str] = set()
    for line in result.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "package":  # the header line
                modules.add(name)
    return result, modules


def test_teddy_help_imports_no_heavy_library_and_no_markdown_parser() -> None:
    result, modules = _imported_by_teddy("--help")
    assert result.returncode == 0, result.stderr
    assert "Usage: teddy" in result.stdout
    assert {"click", "plankit.teddy.cli"} <= modules
    assert heavy_in(modules) == []
    assert [m for m in modules if m.split(".", 1)[0] == "markdown_it"] == []


def test_teddy_parse_imports_no_heavy_library() -> None:
    result, modules = _imported_by_teddy("parse", SMALL_PLAN)
    assert result.returncode == 0, result.stderr
    assert "Finisher" in result.stdout
    assert {"click", "plankit.teddy.cli", "plankit.teddy.format.parse"} <= modules
    assert heavy_in(modules) == []


def test_teddy_help_lists_each_command_as_its_own_help_would() -> None:
    """``teddy --help`` lists the commands from summaries, without importing them: each
    summary gives the same line as the command's own help, at any terminal width."""
    import click

    from plankit.teddy.cli import COMMANDS, SUMMARIES, cli

    assert set(SUMMARIES) == set(COMMANDS)
    context = click.Context(cli)
    for name in COMMANDS:
        real = cli.get_command(context, name)
        assert real is not None and real.name == name and not real.hidden
        stand_in = click.Command(name, help=SUMMARIES[name])
        for limit in (20, 45, 60, 74, 200):
            assert stand_in.get_short_help_str(limit) == real.get_short_help_str(limit), name


def test_teddy_help_imports_no_command_module() -> None:
    result, modules = _imported_by_teddy("--help")
    assert result.returncode == 0, result.stderr
    assert "execute     Validate, approve and execute a plan" in result.stdout
    assert not {m for m in modules if m.startswith("plankit.teddy.cli.")}, modules


_NOTES_PLAN = """# Start the notes folder
- **Status:** Green 🟢
- **Plan Type:** Implementation
- **Agent:** Developer

## Rationale
```text
### 1. Synthesis
The project has no notes yet.

### 2. Justification
One README gives later notes a home.

### 3. Expected Outcome
notes/README.md exists.

### 4. State Dashboard
- **Overall Goal:** A notes folder.
```

## Action Plan

### `CREATE`
- **File Path:** [notes/README.md](/notes/README.md)
- **Description:** The folder's README.
```markdown
# Notes
```
"""


def test_teddy_execute_yes_imports_no_review_prompt(tmp_path: Path) -> None:
    """With ``-y`` nobody is asked anything: the console's review and reply prompts (and
    what they import) stay out of the turn, the most frequent command of a session."""
    made, _ = _imported_by_teddy("new", "notes", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    turn = Path(made.stdout.strip()) / "01"
    (turn / "plan.md").write_text(_NOTES_PLAN, encoding="utf-8")
    result, modules = _imported_by_teddy("execute", "-y", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Completed" in result.stderr
    assert (tmp_path / "notes" / "README.md").read_text("utf-8") == "# Notes\n"
    assert {"plankit.teddy.run.execute", "plankit.teddy.run.approval"} <= modules
    assert [m for m in modules if m.startswith("plankit.teddy.review")] == []
    assert heavy_in(modules) == []
