"""``--json`` on every ``teddy`` command that prints results, in one diagnostic shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import plankit.teddy
from plankit.teddy.cli import cli
from tests.teddy.test_session_e2e import plan

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(*args: str, input: str | None = None) -> tuple[int, object, str]:
    """The exit code, the JSON document printed (for `execute`: the last event, the
    outcome; the action events before it are in tests/teddy/test_run.py) and stderr."""
    result = CliRunner().invoke(cli, list(args), input=input)
    lines = result.stdout.strip().splitlines()
    out = json.loads(lines[-1]) if lines else None
    if args[0] in ("execute", "resume") and isinstance(out, dict):
        assert out.pop("event") == "turn_finished"
    return result.exit_code, out, result.stderr


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def new_session(project: Path) -> dict[str, str]:
    code, out, err = run("new", "demo", "--json")
    assert code == 0, err
    assert isinstance(out, dict)
    return out


def test_new_and_context(project: Path) -> None:
    out = new_session(project)
    assert out["session"].endswith("-demo") and out["turn"] == "01"
    assert Path(out["path"]) == project / ".teddy" / out["session"]
    code, ctx, err = run("context", "--json")
    assert code == 0, err
    assert isinstance(ctx, dict)
    written = Path(ctx["path"])
    assert written == Path(out["path"]) / "01" / "input.md"
    assert ctx["bytes"] == written.stat().st_size > 0
    assert (ctx["session"], ctx["turn"]) == (out["session"], "01")


def test_get_prompt(project: Path) -> None:
    code, listed, _ = run("get-prompt", "--list", "--json")
    assert code == 0 and isinstance(listed, dict)
    assert "developer" in [a.lower() for a in listed["agents"]]
    code, one, _ = run("get-prompt", "developer", "--json")
    assert code == 0 and isinstance(one, dict)
    assert one["agent"] == "developer" and "<agent" in one["prompt"]


def test_execute_success_and_failure(project: Path) -> None:
    session = Path(new_session(project)["path"])
    (session / "01" / "plan.md").write_text(
        plan("### `CREATE`\n- **File Path:** [b.py](/b.py)\n```python\ny = 2\n```"),
        encoding="utf-8",
    )
    code, out, err = run("execute", "-y", "--json")
    assert code == 0, err
    assert isinstance(out, dict)
    assert out["status"] == "Completed 🟢" and out["turn"] == "01" and out["errors"] == []
    assert Path(out["report"]) == session / "01" / "report.md"
    assert Path(out["next_turn"]) == session / "02"
    assert (project / "b.py").read_text(encoding="utf-8") == "y = 2\n"

    # a plan that fails validation: the errors in the shared shape, with code and line
    (session / "02" / "plan.md").write_text(
        plan("### `CREATE`\n- **File Path:** [a.py](/a.py)\n```python\nx = 3\n```"),
        encoding="utf-8",
    )
    code, out, _ = run("resume", "-y", "--no-replan", "--json")
    assert code == 1
    assert isinstance(out, dict)
    assert out["status"] == "Validation Failed 🔴"
    [error] = out["errors"]
    assert set(error) == {"code", "message", "line", "file"}
    assert error["code"] == "file-exists"
    assert error["file"] == ".teddy/" + session.name + "/02/plan.md"
    heading = (session / "02" / "plan.md").read_text(encoding="utf-8").splitlines()
    assert heading[error["line"] - 1] == "### `CREATE`"
    assert (project / "a.py").read_text(encoding="utf-8") == "x = 1\n"  # nothing ran


def test_execute_of_a_plan_that_does_not_parse_reports_its_lines(project: Path) -> None:
    bad = project / "bad.md"
    bad.write_text(plan("### `CREATE`\n```python\ny = 2\n```"), encoding="utf-8")
    code, out, _ = run("execute", "-y", "--json", str(bad))
    assert code == 1
    assert isinstance(out, dict)
    assert out["turn"] is None and out["report"] is None
    assert "Validation Failed" in out["report_markdown"]
    assert [e["code"] for e in out["errors"]] == ["field-missing"]
    assert out["errors"][0]["line"] >= 1 and out["errors"][0]["file"] == str(bad)


def test_preprocess_json() -> None:
    broken = (EXAMPLES / "needs-preprocess.md").read_text(encoding="utf-8")
    code, out, _ = run("preprocess", "-", "--json", input=broken)
    assert code == 0 and isinstance(out, dict)
    assert out["changed"] is True and out["source"] == "<stdin>"
    assert out["changes"] and all(c["line"] >= 1 and c["message"] for c in out["changes"])
    assert plankit.teddy.check_plan(out["text"])[1] == []

    valid = (EXAMPLES / "add-health-endpoint.md").read_text(encoding="utf-8")
    code, out, _ = run("preprocess", "-", "--json", input=valid)
    assert code == 0 and isinstance(out, dict)
    assert out == {
        "source": "<stdin>",
        "changed": False,
        "changes": [],
        "problems": [],
        "text": valid,
    }


def test_every_lazy_export_resolves() -> None:
    for name in plankit.teddy.__all__:
        assert getattr(plankit.teddy, name) is not None, name
