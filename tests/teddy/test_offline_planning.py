"""Offline planning imports no model library: the scripted model, manual mode and the
re-plan loop run ``teddy`` in a fresh interpreter, and neither llm nor a provider's SDK
(openai …) may be among the modules it imported.  No time is asserted:
``benchmarks/bench_offline_plan.py`` measures it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.waiting import DEADLINE

RATIONALE = "\n".join(
    ["## Rationale", "````text"]
    + [
        f"### {i}. {name}\nx"
        for i, name in enumerate(
            ["Synthesis", "Justification", "Expected Outcome", "State Dashboard"], 1
        )
    ]
    + ["````"]
)


def plan(find: str, title: str) -> str:
    return (
        f"# {title}\n- **Status:** Green 🟢\n- **Agent:** Developer\n\n{RATIONALE}\n\n"
        "## Action Plan\n\n### `EDIT`\n- **File Path:** [app.py](/app.py)\n"
        f"- **Description:** Fix it.\n\n`FIND:`\n```python\n{find}\n```\n"
        "`REPLACE:`\n```python\n    return 42\n```\n"
    )


BAD = plan("    return 40", "Fix the answer")
GOOD = plan("    return 41", "Fix the answer, corrected")

# runs the console script's main and writes every module it imported to argv[1]
_RUN = """
import sys
out = sys.argv.pop(1)
sys.argv[0] = "teddy"
try:
    from plankit.teddy.cli import main
    main()
finally:
    with open(out, "w", encoding="utf-8") as f:
        f.write("\\n".join(sorted(sys.modules)))
"""

PROVIDERS = ("llm", "openai", "anthropic", "httpx", "google", "ddgs")


def teddy(
    project: Path, tmp_path: Path, *args: str, env: dict[str, str], stdin: str = ""
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    listing = tmp_path / "modules.txt"
    result = subprocess.run(
        [sys.executable, "-c", _RUN, str(listing), *args],
        cwd=project, env=env, input=stdin, capture_output=True, text=True, timeout=DEADLINE,
    )  # fmt: skip
    return result, set(listing.read_text(encoding="utf-8").split())


def providers_in(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".", 1)[0] in PROVIDERS)


def setup(tmp_path: Path, answers: list[str]) -> tuple[Path, dict[str, str]]:
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("def answer():\n    return 41\n", encoding="utf-8")
    responses = tmp_path / "responses.json"
    responses.write_text(json.dumps(answers), encoding="utf-8")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("TEDDY_MODEL", "TEDDY_SESSION", "OPENAI_API_KEY", "LLM_LOAD_PLUGINS")
    }
    env.update(
        TEDDY_SCRIPTED_RESPONSES=str(responses),
        LLM_USER_PATH=str(tmp_path / "llm-home"),
        PLANKIT_HOME=str(tmp_path / "plankit-home"),
    )
    subprocess.run(
        [sys.executable, "-c", _RUN, str(tmp_path / "new.txt"), "new", "fix"],
        cwd=project, env=env, capture_output=True, check=True, timeout=DEADLINE,
    )  # fmt: skip
    (project / ".teddy" / "global.context").write_text("app.py\n", encoding="utf-8")
    return project, env


def test_planning_with_the_scripted_model_imports_no_model_library(tmp_path: Path) -> None:
    project, env = setup(tmp_path, [GOOD])
    result, modules = teddy(
        project, tmp_path, "plan", "--model", "teddy-scripted", "-m", "Fix it", env=env
    )
    assert result.returncode == 0, result.stderr
    written = Path(result.stdout.strip())
    assert written.name == "plan.md" and written.read_text(encoding="utf-8") == GOOD
    assert "teddy: teddy-scripted answered:" in result.stderr
    assert "plankit.teddy.planning.scripted" in modules  # the listing is real
    assert providers_in(modules) == []


def test_the_scripted_models_errors_are_one_line_without_llm(tmp_path: Path) -> None:
    project, env = setup(tmp_path, [])
    result, modules = teddy(
        project, tmp_path, "plan", "--model", "teddy-scripted", "-m", "Fix it", env=env
    )
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        "teddy: teddy-scripted: the scripted model has given all 0 responses of "
        f"{tmp_path / 'responses.json'}; add more, or delete responses.json.position "
        "to start again"
    )
    assert providers_in(modules) == []


def test_manual_planning_imports_no_model_library(tmp_path: Path) -> None:
    project, env = setup(tmp_path, [])
    result, modules = teddy(
        project, tmp_path, "plan", "--manual", "-m", "Fix it", env=env, stdin=GOOD + "\n\n"
    )
    assert result.returncode == 0, result.stderr
    assert Path(result.stdout.strip()).read_text(encoding="utf-8").strip() == GOOD.strip()
    assert providers_in(modules) == []


def test_the_replan_loop_with_the_scripted_model_imports_no_model_library(
    tmp_path: Path,
) -> None:
    project, env = setup(tmp_path, [BAD, GOOD])
    env["TEDDY_MODEL"] = "teddy-scripted"
    planned, _ = teddy(project, tmp_path, "plan", "-m", "Fix it", env=env)
    assert planned.returncode == 0, planned.stderr
    # turn 01's plan fails validation (its FIND is not in app.py): turn 02 is re-planned
    result, modules = teddy(project, tmp_path, "execute", "-y", env=env)
    assert "re-plan" in result.stderr, result.stderr
    session = next(p for p in (project / ".teddy").iterdir() if p.is_dir())
    assert (session / "02" / "plan.md").read_text(encoding="utf-8") == GOOD
    assert providers_in(modules) == []
