"""``teddy execute --check``, EDITs of files in the session and global context, and a
teddy-cli ``config.yaml``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from plankit.errors import InputError
from plankit.teddy.session import config as config_module
from plankit.teddy.session.config import load_config
from tests.teddy.test_session_e2e import plan, teddy
from tests.teddy.test_undo import create, edit


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def answer():\n    return 41\n", encoding="utf-8")
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text("# Guide\nOld advice.\n", encoding="utf-8")
    return root


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    out: dict[str, tuple[bytes, int]] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            st = path.lstat()
            data = path.read_bytes() if path.is_file() else b""
            out[str(path.relative_to(root))] = (data, st.st_mtime_ns)
    return out


def session_with_plan(root: Path, actions: str, context: str = "") -> Path:
    session = Path(teddy(root, "new", "demo").stdout.strip())
    (session / "01" / "turn.context").write_text(context, encoding="utf-8")
    (session / "01" / "plan.md").write_text(plan(actions), encoding="utf-8")
    return session


def test_check_of_a_valid_plan_writes_nothing(project: Path) -> None:
    session = session_with_plan(project, create("b.py", "y = 2"))
    before = snapshot(project)
    result = teddy(project, "execute", "--check", "--json")
    assert json.loads(result.stdout) == {
        "valid": True,
        "turn": "01",
        "plan": f".teddy/{session.name}/01/plan.md",
        "actions": 1,
        "errors": [],
    }
    assert "valid, 1 action (nothing was run)" in result.stderr
    assert snapshot(project) == before  # no journal, no report, no next turn, no b.py


def test_check_of_an_invalid_plan_lists_every_error_in_the_shared_shape(project: Path) -> None:
    actions = "\n\n".join([create("src/app.py", "x"), edit("src/app.py", "return 41", "return 42")])
    session = session_with_plan(project, actions)
    before = snapshot(project)
    result = teddy(project, "execute", "--check", "--json", check=1)
    out = json.loads(result.stdout)
    rel = f".teddy/{session.name}/01/plan.md"
    assert out["valid"] is False and out["actions"] == 2
    assert [(e["code"], e["file"]) for e in out["errors"]] == [
        ("file-exists", rel),
        ("not-in-context", rel),
    ]
    lines = (session / "01" / "plan.md").read_text().splitlines()
    for error in out["errors"]:
        assert lines[error["line"] - 1].startswith("### `")  # the action's heading
    assert f"{rel}:{out['errors'][0]['line']}: file-exists " in result.stderr
    assert "2 problems; the plan is invalid" in result.stderr
    assert snapshot(project) == before


def test_check_refuses_an_executed_turn_in_one_line(project: Path) -> None:
    session_with_plan(project, create("b.py", "y = 2"))
    teddy(project, "execute", "-y")
    result = teddy(project, "execute", "--check", "--json", check=1)
    assert (
        result.stderr.strip() == "teddy: turn 02 has no plan.md yet; write one or run `teddy plan`"
    )
    assert json.loads(result.stdout)["errors"][0]["code"] == "no-plan"


def test_check_of_a_plan_outside_a_session(project: Path) -> None:
    (project / "p.md").write_text(plan(edit("src/app.py", "return 41", "return 42")))
    teddy(project, "execute", "--check", "p.md")  # no context checks in stateless mode
    (project / "bad.md").write_text("no title\n")
    result = teddy(project, "execute", "--check", "bad.md", "--json", check=1)
    assert json.loads(result.stdout)["errors"]
    assert not (project / ".teddy").exists()


# --- item: an EDIT may target any file input.md shows ----------------------------------


@pytest.mark.parametrize("where", ["session", "global", "turn"])
def test_an_edit_of_a_file_in_any_context_is_valid(project: Path, where: str) -> None:
    session = session_with_plan(project, edit("docs/guide.md", "Old advice.", "New advice."))
    context_file = {
        "session": session / "session.context",
        "global": project / ".teddy" / "global.context",
        "turn": session / "01" / "turn.context",
    }[where]
    context_file.write_text("./docs//guide.md\n", encoding="utf-8")
    teddy(project, "execute", "--check")
    teddy(project, "execute", "-y")
    assert (project / "docs" / "guide.md").read_text() == "# Guide\nNew advice.\n"


def test_an_edit_of_a_file_in_no_context_is_still_refused(project: Path) -> None:
    session = session_with_plan(project, edit("docs/guide.md", "Old advice.", "New advice."))
    (session / "session.context").write_text("src/app.py\n", encoding="utf-8")
    result = teddy(project, "execute", "--check", check=1)
    assert "not-in-context" in result.stderr


def test_a_prune_of_a_session_context_file_is_still_refused(project: Path) -> None:
    session = session_with_plan(
        project, "### `PRUNE`\n- **Resource:** [docs/guide.md](/docs/guide.md)"
    )
    (session / "session.context").write_text("docs/guide.md\n", encoding="utf-8")
    result = teddy(project, "execute", "--check", check=1)
    assert "the resource is not in the turn's context" in result.stderr


# --- item: a config.yaml written for teddy-cli 0.2.x ---------------------------------------

TEDDY_CLI_CONFIG = """\
editor: "nvim -R"
diff_flags: ["--diff"]
execution:
  default_timeout_seconds: 60
  similarity_threshold: 0.95
  max_output_lines: 100
read:
  max_lines: 1000
research:
  max_results: 5
yolo_default: false
yolo_guardrails:
  enabled: true
  max_turns: 99
  max_session_cost: 5.0
auto_pruning:
  enabled: true
  turn_context_threshold: 50000
llm:
  model: "some-provider/some-model"
  api_key: "${TEDDY_LLM_API_KEY}"
  temperature: 0.2
"""


@pytest.fixture
def fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config_module, "_WARNED", set())


def write_config(root: Path, text: str) -> None:
    (root / ".teddy").mkdir(exist_ok=True)
    (root / ".teddy" / "config.yaml").write_text(text, encoding="utf-8")


def test_a_teddy_cli_config_is_accepted_with_one_warning(
    project: Path, fresh_warnings: None, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config(project, TEDDY_CLI_CONFIG + "execute:\n  timeout: 30\n")
    config = load_config(project)
    assert config.execute_timeout == 30
    load_config(project)  # a second read in the same process says nothing more
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert (
        "ignoring teddy-cli settings plankit does not use: editor, diff_flags, execution, " in err
    )
    assert "llm, research.max_results" in err


def test_a_teddy_cli_config_does_not_stop_a_command(project: Path) -> None:
    session_with_plan(project, create("b.py", "y = 2"))
    write_config(project, TEDDY_CLI_CONFIG)
    result = teddy(project, "execute", "-y")
    assert result.stderr.count("ignoring teddy-cli settings") == 1
    assert (project / "b.py").exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("modle: x\n", "unknown setting 'modle'; did you mean 'model'?"),
        ("execute:\n  timout: 5\n", "unknown setting 'execute.timout'; did you mean 'execute.timeout'?"),
        ("editor: vi\nreserch:\n  backend: ddgs\n", "unknown setting 'reserch'"),
        ("execute:\n  checkpoint: 'no'\n", "'execute.checkpoint' must be true or false"),
    ],
)  # fmt: skip
def test_misspelled_plankit_keys_stay_errors(
    project: Path, fresh_warnings: None, text: str, message: str
) -> None:
    write_config(project, text)
    with pytest.raises(InputError, match=r"config\.yaml: ") as caught:
        load_config(project)
    assert message in str(caught.value)
