"""agentctl starts without the heavy modules: they are imported by the commands that use them."""

from __future__ import annotations

import json
import subprocess
import sys

from .helpers import SPEC_EXAMPLE

HEAVY = ["mcp", "pydantic", "ruamel", "textual", "llm", "openpyxl", "rich"]

_PROBE = """
import json, sys
{setup}
print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))
"""


def _modules(setup: str) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-c", _PROBE.format(setup=setup)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return set(json.loads(result.stdout.splitlines()[-1]))


def test_importing_the_cli_loads_no_heavy_module() -> None:
    assert _modules("import plankit.agentflow.cli").isdisjoint(HEAVY)


def test_help_and_validating_the_usual_plan_load_no_heavy_module() -> None:
    setup = f"""
from plankit.agentflow.cli import cli
from pathlib import Path
example = Path({str(SPEC_EXAMPLE)!r})
for args in (["--help"], ["plan", "validate", str(example)]):
    try:
        cli.main(args=args, prog_name="agentctl", standalone_mode=False)
    except SystemExit:
        pass
"""
    loaded = _modules(setup)
    assert loaded.isdisjoint(HEAVY), loaded & set(HEAVY)
