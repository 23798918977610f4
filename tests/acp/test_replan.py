"""`teddy acp`: a plan that fails validation is re-planned as `teddy execute` does it.

The model is plankit's scripted one (its answers from a JSON file); the client is
`plankit acp run`, which prints what the agent sends: messages, and plan updates as
``[plan] TITLE done/total``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.acp.kit import PLANKIT, ROOT, TEDDY, create, plan_text

# app.py exists in the project: creating it again fails validation
BAD = plan_text(create("app.py", "x = 2"), title="Create app.py again")
GOOD = plan_text(create("hello.txt", "hi"), title="Say hello")


def run(project: Path, tmp_path: Path, answers: list[str]) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "answers.json"
    script.write_text(json.dumps(answers))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TEDDY_SCRIPTED_RESPONSES": str(script)}
    return subprocess.run(
        [*PLANKIT, "acp", "run", "--approve-all", "--", *TEDDY, "acp", "--model", "teddy-scripted",
         "Please say hello"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip


def test_a_plan_that_fails_validation_is_re_planned_and_the_corrected_one_runs(
    project: Path, tmp_path: Path
) -> None:
    done = run(project, tmp_path, [BAD, "Here it is:\n\n```markdown\n" + GOOD + "```\n"])
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "The plan failed validation: re-planning with teddy-scripted, at most 3" in out
    assert "Attempt 1 (turn 02): “Say hello”; validating it." in out
    # the corrected answer streamed as it came, between the announcement and the attempt
    streamed = out.index("Here it is:")
    assert out.index("re-planning with") < streamed < out.index("Attempt 1 (turn 02)")
    assert "Re-planned in turn 02 after 1 attempt. Completed 🟢" in out
    assert "[plan] Say hello 1/1 done" in out
    assert (project / "hello.txt").read_text() == "hi\n"
    assert (project / "app.py").read_text() == "x = 1\n"
    session = next((project / ".teddy").glob("*-acp-*"))
    report = (session / "01" / "report.md").read_text()
    assert "Validation Failed" in report and "file-exists" in report
    feedback = (session / "02" / "message.md").read_text()
    assert "- line 19: file-exists `CREATE` on `app.py`: the file already exists" in feedback
    assert (session / "02" / "plan.md").read_text() == GOOD  # unwrapped, as teddy plan does


def test_when_the_attempts_run_out_the_turn_ends_with_the_errors(
    project: Path, tmp_path: Path
) -> None:
    (project / ".teddy").mkdir()
    (project / ".teddy" / "config.yaml").write_text("replan:\n  max_attempts: 2\n")
    done = run(project, tmp_path, [BAD, BAD, BAD])
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "at most 2 attempts" in out
    assert "Attempt 1 (turn 02)" in out and "Attempt 2 (turn 03)" in out
    assert "2 automatic re-plans failed validation too (turns 02, 03)" in out
    assert "file-exists `CREATE` on `app.py`: the file already exists" in out
    assert "Turn 04's message.md holds them." in out
    assert (project / "app.py").read_text() == "x = 1\n"
