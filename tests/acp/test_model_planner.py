"""`teddy acp --model`: a plain request is planned by the model, then run."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.acp.kit import PLANKIT, ROOT, TEDDY, create, plan_text


def test_a_plain_request_is_planned_by_the_model_and_executed(
    project: Path, tmp_path: Path
) -> None:
    answers = tmp_path / "answers.json"
    plan = plan_text(create("hello.txt", "hi from the model"), title="Say hello")
    answers.write_text(json.dumps([f"Here is my plan:\n\n{plan}"]))
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "TEDDY_SCRIPTED_RESPONSES": str(answers),
    }
    result = subprocess.run(
        [*PLANKIT, "acp", "run", "--approve-all", "--", *TEDDY, "acp", "--model", "teddy-scripted",
         "Please create hello.txt saying hi"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert (project / "hello.txt").read_text() == "hi from the model\n"
    assert "[plan] Say hello 1/1 done" in result.stdout
    turn = next((project / ".teddy").glob("*/01"))
    saved = (turn / "plan.md").read_text()
    assert saved.startswith("# Say hello")  # the text before the title was unwrapped
    assert (turn / "message.md").read_text().strip() == "Please create hello.txt saying hi"


def test_without_a_model_a_plain_request_gets_the_explanation(project: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TEDDY_MODEL"}
    env["PYTHONPATH"] = str(ROOT)
    result = subprocess.run(
        [*PLANKIT, "acp", "run", "--approve-all", "--", *TEDDY, "acp", "Please do something"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "planning from a plain request needs a model" in result.stdout
    assert "teddy acp --model NAME" in result.stdout
