"""Planning: the feedback message, `teddy plan`, `teddy resume`, the
automated re-plan loop, manual mode and the agent prompts.

Whole sessions run offline with the `teddy` command (its entry point called in this
process, see :func:`tests.console.run_console`) and plankit's scripted model, which llm
loads through its plugin hook; the scripted answers come from a directory named by
TEDDY_SCRIPTED_RESPONSES and every request lands in TEDDY_SCRIPTED_LOG, as they would
for separate `teddy` processes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("llm")

from plankit.teddy.cli import main
from plankit.teddy.format.parse import RATIONALE_SECTIONS
from plankit.teddy.planning import scripted_model
from plankit.teddy.planning.models import ModelPlanner, load_model
from plankit.teddy.planning.replan import FEEDBACK_INTRO, feedback_message, replan
from plankit.teddy.planning.turn import PlanningError, plan_turn, user_prompt
from plankit.teddy.run.approval import AutoApprover, NoReply
from plankit.teddy.run.execute import execute_turn
from plankit.teddy.session.config import Config
from plankit.teddy.session.layout import Session, create_session
from plankit.teddy.session.prompts import get_prompt, known_agents
from tests.console import run_console

RATIONALE = "\n".join(
    ["## Rationale", "````text"]
    + [f"### {i}. {name}\nx" for i, name in enumerate(RATIONALE_SECTIONS, 1)]
    + ["````"]
)


def plan(actions: str, title: str = "A plan") -> str:
    return f"# {title}\n- **Status:** Green 🟢\n- **Agent:** Developer\n\n{RATIONALE}\n\n## Action Plan\n\n{actions}\n"


def edit(find: str, replace: str, title: str) -> str:
    return plan(
        "### `EDIT`\n- **File Path:** [src/app.py](/src/app.py)\n- **Description:** Fix it.\n\n"
        f"`FIND:`\n```python\n{find}\n```\n`REPLACE:`\n```python\n{replace}\n```",
        title,
    )


READ_APP = "### `READ`\n- **Resource:** [src/app.py](/src/app.py)\n- **Description:** See it."
BAD_EDIT = edit("    return 40", "    return 42", "Fix the answer")
GOOD_EDIT = edit("    return 41", "    return 42", "Fix the answer, corrected")


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm-home"))
    monkeypatch.setenv("PLANKIT_HOME", str(tmp_path / "plankit-home"))
    for name in (
        "OPENAI_API_KEY",
        "TEDDY_MODEL",
        "TEDDY_SESSION",
        "TEDDY_SCRIPTED_RESPONSES",
        "TEDDY_SCRIPTED_LOG",
        "EDITOR",
        "VISUAL",
    ):
        monkeypatch.delenv(name, raising=False)
    scripted_model.reset()
    yield
    scripted_model.reset()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def answer():\n    return 41\n", encoding="utf-8")
    return root


class Scripted:
    """Scripted answers for `teddy` commands, and the requests they made."""

    def __init__(self, tmp_path: Path, answers: list[str]) -> None:
        self.dir = tmp_path / "answers"
        self.dir.mkdir()
        for i, answer in enumerate(answers, 1):
            (self.dir / f"{i:02d}.md").write_text(answer, encoding="utf-8")
        self.log = tmp_path / "requests.jsonl"
        self.env = {
            **os.environ,
            "TEDDY_MODEL": "teddy-scripted",
            "TEDDY_SCRIPTED_RESPONSES": str(self.dir),
            "TEDDY_SCRIPTED_LOG": str(self.log),
        }

    def requests(self) -> list[dict[str, str]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]


def teddy(
    cwd: Path,
    *args: str,
    env: dict[str, str] | None = None,
    input: str | None = None,
    check: int | None = 0,
) -> subprocess.CompletedProcess[str]:
    if env is not None:  # the whole environment, as for a process: unset what it leaves out
        env = {**dict.fromkeys(os.environ), **env}
    result = run_console(main, *args, cwd=cwd, env=env, input=input)
    if check is not None:
        assert result.returncode == check, result.stdout + result.stderr
    return result


def new_session(root: Path) -> Path:
    return Path(teddy(root, "new", "demo").stdout.strip())


def context_entries(turn: Path) -> list[str]:
    return [ln for ln in (turn / "turn.context").read_text().splitlines() if ln.strip()]


def meta(turn: Path) -> dict[str, str]:
    out = {}
    for line in (turn / "meta.yaml").read_text().splitlines():
        key, _, value = line.partition(": ")
        out[key] = value.strip('"')
    return out


PLAN = plan(READ_APP)


# --- messages ------------------------------------------------------------------------------


def test_feedback_message_layout_and_fence() -> None:
    faulty = plan("### `EXECUTE`\n`````shell\necho '````'\n`````", "Faulty")
    message = feedback_message(
        ["`EDIT` on `a.py`: pair 1: no match", "two lines:\n  detail here"], faulty
    )
    assert message == (
        f"{FEEDBACK_INTRO}\n\n"
        "## Validation Errors:\n"
        "- `EDIT` on `a.py`: pair 1: no match\n"
        "- two lines:\n"
        "  ```text\n"
        "    detail here\n"
        "  ```\n\n"
        "## Original Faulty Plan:\n"
        "``````markdown\n" + faulty + "``````\n"
    )


def test_user_prompt_puts_the_message_after_the_payload() -> None:
    assert user_prompt("# Agent Invocation Payload\nbody\n", "  do it \n") == (
        "# Agent Invocation Payload\nbody\n\n---\n\n# User Message\n\ndo it\n"
    )


# --- a whole session, offline, with the real command ----------------------------------------


def test_whole_session_with_the_scripted_model(tmp_path: Path, project: Path) -> None:
    check = f"### `EXECUTE`\n- **Description:** Check.\n```shell\n{sys.executable} -c \"import sys; sys.path.insert(0, 'src'); import app; assert app.answer() == 42\"\n```"
    script = Scripted(
        tmp_path,
        [
            "Here is my plan:\n\n```markdown\n" + plan(READ_APP, "Read the app") + "```\n",
            BAD_EDIT,
            GOOD_EDIT,
            plan(check, "Check the fix"),
        ],
    )
    session = new_session(project)
    env = script.env

    # turn 01: plan (the answer is unwrapped), execute
    out = teddy(project, "plan", "-m", "Fix the off-by-one", env=env)
    t1 = session / "01"
    assert out.stdout.strip() == str(t1 / "plan.md")
    assert (t1 / "plan.md").read_text() == plan(READ_APP, "Read the app")
    assert (t1 / "answer.md").read_text().startswith("Here is my plan:")
    answer = f".teddy/{session.name}/01/answer.md"
    assert f"teddy: {answer}:1: dropped the text before the plan's title (line 1)" in out.stderr
    assert f"teddy: {answer}:3: dropped the ```markdown fence wrapped around" in out.stderr
    assert (t1 / "message.md").read_text() == "Fix the off-by-one\n"
    [first] = script.requests()
    assert first["system"] == (t1 / "system_prompt.xml").read_text().rstrip("\n")  # llm trims it
    assert first["prompt"] == user_prompt((t1 / "input.md").read_text(), "Fix the off-by-one")
    m1 = meta(t1)
    assert m1["model"] == "teddy-scripted"
    assert int(m1["input_tokens"]) == (len(first["system"] + first["prompt"]) + 3) // 4
    assert int(m1["output_tokens"]) > 0
    teddy(project, "execute", "-y", env=env)
    t2 = session / "02"
    assert context_entries(t2) == ["src/app.py", f".teddy/{session.name}/01/report.md"]

    # turn 02: the plan fails validation; turn 03 is re-planned from the feedback
    teddy(project, "plan", "-m", "Now fix it", env=env)
    out = teddy(project, "execute", "-y", env=env, check=1)
    assert "re-planning with teddy-scripted" in out.stderr
    assert "turn 03 has a corrected plan that passes validation" in out.stderr
    report2 = (t2 / "report.md").read_text()
    assert "Validation Failed" in report2
    # the FIND matches nowhere: its error names the plan's line, the closest region's diff
    # is under it in the report, on the terminal and in the re-plan message
    errors = report2.partition("## 3. Validation Errors\n")[2].partition("\n\n##")[0].rstrip()
    first, *diff = errors.splitlines()
    assert first.startswith("- line ") and " find-no-match `EDIT` on `src/app.py`: " in first
    assert diff[0] == "  ```diff" and diff[-1] == "  ```"
    assert "  -    return 41" in diff and "  +    return 40" in diff
    plan_line = first.split(":")[0].removeprefix("- line ")
    assert f"02/plan.md:{plan_line}: find-no-match `EDIT` on `src/app.py`" in out.stderr
    assert "    -    return 41\n" in out.stderr
    t3 = session / "03"
    feedback = (t3 / "message.md").read_text()
    assert feedback == (
        f"{FEEDBACK_INTRO}\n\n## Validation Errors:\n{errors}\n\n## Original Faulty Plan:\n"
        f"`````markdown\n{BAD_EDIT}`````\n"
    )
    requests = script.requests()
    assert len(requests) == 3
    assert requests[2]["prompt"].endswith("# User Message\n\n" + feedback)
    # the failure report stays out of the corrected turn's context
    assert context_entries(t3) == ["src/app.py", f".teddy/{session.name}/01/report.md"]
    payload = (t3 / "input.md").read_text()
    assert "02/report.md" not in payload and "def answer():" in payload
    assert "02/report.md" not in requests[2]["prompt"]
    assert (t3 / "plan.md").read_text() == GOOD_EDIT
    assert not (t3 / "report.md").exists()  # halted: the person reviews, then executes
    assert (project / "src" / "app.py").read_text() == "def answer():\n    return 41\n"

    teddy(project, "execute", "-y", env=env)
    assert (project / "src" / "app.py").read_text() == "def answer():\n    return 42\n"

    # turn 04 through `teddy resume`: plan, then execute
    out = teddy(project, "resume", "-m", "Verify it", env=env)
    t4 = session / "04"
    assert out.stdout.strip() == str(t4 / "plan.md")
    assert script.requests()[3]["prompt"].endswith("# User Message\n\nVerify it\n")
    teddy(project, "resume", "-y", env=env)
    assert "Completed" in (t4 / "report.md").read_text()
    assert (session / "05").is_dir() and not (session / "05" / "plan.md").exists()


def test_replan_stops_after_max_attempts(tmp_path: Path, project: Path) -> None:
    (project / ".teddy").mkdir()
    (project / ".teddy" / "config.yaml").write_text("replan:\n  max_attempts: 2\n")
    (project / ".teddy" / "global.context").write_text("src/app.py\n")
    script = Scripted(tmp_path, [BAD_EDIT, BAD_EDIT, BAD_EDIT, GOOD_EDIT])
    session = new_session(project)
    teddy(project, "plan", "-m", "Fix it", env=script.env)
    out = teddy(project, "execute", "-y", env=script.env, check=1)
    assert (
        "validation failed again after 2 automatic re-plans (turns 02, 03); stopping" in out.stderr
    )
    assert len(script.requests()) == 3  # the fourth answer was never asked for
    for turn in ("01", "02", "03"):
        assert "Validation Failed" in (session / turn / "report.md").read_text()
    t4 = session / "04"
    assert not (t4 / "plan.md").exists()
    assert (t4 / "message.md").read_text().startswith(FEEDBACK_INTRO)
    assert f"`````markdown\n{BAD_EDIT}`````" in (t4 / "message.md").read_text()
    assert not (session / "05").exists()


def test_no_replan_flag_and_hand_written_plans(tmp_path: Path, project: Path) -> None:
    script = Scripted(tmp_path, [BAD_EDIT, GOOD_EDIT])
    session = new_session(project)
    (session / "01" / "turn.context").write_text("src/app.py\n")
    teddy(project, "plan", "-m", "Fix it", env=script.env)
    teddy(project, "execute", "-y", "--no-replan", env=script.env, check=1)
    assert len(script.requests()) == 1
    assert not (session / "02" / "message.md").exists()
    # a plan written by hand: no model is asked, the feedback waits in message.md
    (session / "02" / "plan.md").write_text(BAD_EDIT)
    env = {k: v for k, v in script.env.items() if k != "TEDDY_MODEL"}
    out = teddy(project, "execute", "-y", env=env, check=1)
    assert "no automatic re-plan" in out.stderr
    assert len(script.requests()) == 1
    assert (session / "03" / "message.md").read_text().startswith(FEEDBACK_INTRO)
    # `teddy plan` without -m plans from that message
    out = teddy(project, "plan", "--json", env=script.env)
    assert json.loads(out.stdout) == {
        "plan": str(session / "03" / "plan.md"),
        "model": "teddy-scripted",
        "input_tokens": int(meta(session / "03")["input_tokens"]),
        "output_tokens": (len(GOOD_EDIT) + 3) // 4,
        "parses": True,
        "problems": [],
    }
    assert script.requests()[1]["prompt"].endswith((session / "03" / "message.md").read_text())
    assert (session / "03" / "plan.md").read_text() == GOOD_EDIT


# --- manual mode ---------------------------------------------------------------------------


def test_manual_mode_reads_the_plan_from_stdin(project: Path) -> None:
    session = new_session(project)
    t1 = session / "01"
    out = teddy(
        project, "plan", "--manual", "-m", "Read the app", input="```markdown\n" + PLAN + "```\n"
    )
    assert out.stdout.strip() == str(t1 / "plan.md")
    assert (t1 / "plan.md").read_text() == PLAN
    prompt = (t1 / "prompt.md").read_text()
    assert prompt == (
        (t1 / "system_prompt.xml").read_text().rstrip()
        + "\n\n"
        + user_prompt((t1 / "input.md").read_text(), "Read the app")
    )
    assert f"the prompt ({len(prompt):,} characters)" in out.stderr
    assert meta(t1)["model"] == "manual" and "input_tokens" not in meta(t1)
    assert "“A plan”: 1 action (READ)" in out.stderr


def test_without_a_usable_model_planning_falls_back_to_manual(project: Path) -> None:
    session = new_session(project)
    out = teddy(project, "plan", "--no-copy", "-m", "Read it", input=PLAN)
    assert "llm's default cannot be used (model 'gpt-" in out.stderr
    assert "needs an API key): planning by hand" in out.stderr
    assert (session / "01" / "plan.md").read_text() == PLAN
    assert (session / "01" / "prompt.md").is_file()


def test_manual_mode_with_an_editor(tmp_path: Path, project: Path) -> None:
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys, pathlib\n"
        "p = pathlib.Path(sys.argv[1])\n"
        "assert p.name == 'answer.md' and 'Paste' in p.read_text()\n"
        f"p.write_text(p.read_text() + {PLAN!r})\n"
    )
    session = new_session(project)
    env = {**os.environ, "EDITOR": f"{sys.executable} {editor}"}
    teddy(project, "plan", "--manual", "--answer-from", "editor", "-m", "x", env=env, input="")
    assert (session / "01" / "plan.md").read_text() == PLAN
    assert not (session / "01" / "answer.md").exists()


def test_manual_mode_with_nothing_pasted_writes_no_plan(project: Path) -> None:
    session = new_session(project)
    out = teddy(project, "plan", "--manual", "-m", "x", input="\n", check=1)
    assert "planning was cancelled (no plan was given); no plan.md was written" in out.stderr
    assert not (session / "01" / "plan.md").exists()


# --- the library ---------------------------------------------------------------------------


@pytest.fixture
def lib_session(project: Path) -> Session:
    return create_session(project, "lib", get_prompt("Developer"), "Developer")


def scripted_planner(*answers: str | BaseException) -> ModelPlanner:
    scripted_model.script(list(answers))
    return ModelPlanner(load_model("teddy-scripted"), live=False)


def test_plan_turn_refuses_what_it_must_not_overwrite(lib_session: Session) -> None:
    turn = lib_session.latest()
    config = Config()
    with pytest.raises(PlanningError, match="the message is empty"):
        plan_turn(turn, "  \n", scripted_planner(PLAN), config)
    with pytest.raises(PlanningError, match="gave an empty answer; nothing was saved"):
        plan_turn(turn, "go", scripted_planner("\n\n"), config)
    assert not turn.plan_path.exists()
    plan_turn(turn, "go", scripted_planner(PLAN), config)
    with pytest.raises(PlanningError, match=r"already has a plan\.md.*--replace"):
        plan_turn(turn, "go", scripted_planner(PLAN), config)
    other = plan(READ_APP, "Another")
    plan_turn(turn, "again", scripted_planner(other), config, replace_plan=True)
    assert turn.plan_path.read_text() == other
    assert (turn.path / "message.md").read_text() == "again\n"
    execute_turn(turn, approver=AutoApprover(), chat=NoReply(), config=config)
    with pytest.raises(PlanningError, match="turn 01 is not the session's latest turn"):
        plan_turn(turn, "go", scripted_planner(PLAN), config, replace_plan=True)
    shutil.rmtree(lib_session.path / "02")  # an executed turn with no next one
    with pytest.raises(PlanningError, match="was already executed"):
        plan_turn(turn, "go", scripted_planner(PLAN), config, replace_plan=True)


def test_plan_turn_refuses_a_locked_session(lib_session: Session) -> None:
    from filelock import FileLock

    with FileLock(lib_session.path / ".lock"), pytest.raises(PlanningError, match="another teddy"):
        plan_turn(lib_session.latest(), "go", scripted_planner(PLAN), Config())


def test_replan_validates_without_executing(lib_session: Session, project: Path) -> None:
    turn = lib_session.latest()
    (turn.path / "turn.context").write_text("src/app.py\n")
    config = Config()
    plan_turn(turn, "fix", scripted_planner(BAD_EDIT), config)
    outcome = execute_turn(turn, approver=AutoApprover(), chat=NoReply(), config=config)
    assert outcome.validation
    marker = project / "ran.txt"
    corrected = GOOD_EDIT.replace(
        "## Action Plan\n\n",
        f"## Action Plan\n\n### `EXECUTE`\n```shell\ntouch {marker}\n```\n\n",
    )
    result = replan(turn, outcome, scripted_planner(corrected), config)
    assert result.valid and result.attempts == 1 and result.failed_turns == ()
    assert result.turn.name == "02" and result.turn.plan_path.read_text() == corrected
    assert not result.turn.report_path.exists() and not marker.exists()
    [sent] = scripted_model.received()
    assert sent.prompt.endswith((result.turn.path / "message.md").read_text())


# --- resume ------------------------------------------------------------------------------


def test_resume_needs_a_message_when_there_is_no_terminal(project: Path) -> None:
    new_session(project)
    out = teddy(project, "resume", check=1)
    assert out.stderr == "teddy: no message: pass -m MESSAGE (there is no terminal to ask on)\n"


# --- agent prompts -------------------------------------------------------------------------


@pytest.mark.parametrize("agent", ["Pathfinder", "Architect", "Developer", "Debugger"])
def test_bundled_prompts_teach_the_format_and_name_their_handoffs(agent: str) -> None:
    text = get_prompt(agent)
    root = ET.fromstring(text)
    assert root.tag == "agent" and root.get("name") == agent
    assert {child.tag for child in root} >= {
        "role",
        "workflow",
        "agents_you_can_invoke",
        "plan_format",
        "dynamic_fencing",
    }
    fmt = root.findtext("plan_format") or ""
    assert f"- **Agent:** {agent}" in fmt
    for needle in ("## Rationale", "### 4. State Dashboard", "## Action Plan", "`FIND:`", "INVOKE"):
        assert needle in fmt
    assert "strictly longer than the longest" in (root.findtext("dynamic_fencing") or "")
    targets = [a.text for a in root.iter("agent") if a is not root]
    assert targets and agent not in targets
    assert set(targets) <= set(known_agents(None))


@pytest.mark.parametrize("agent", ["Pathfinder", "Architect", "Debugger"])
def test_role_prompts_say_when_to_hand_off_and_how_to_correct_a_plan(agent: str) -> None:
    root = ET.fromstring(get_prompt(agent))
    workflow = " ".join("".join(root.find("workflow").itertext()).split())  # type: ignore[union-attr]
    for target in root.find("agents_you_can_invoke").iter("agent"):  # type: ignore[union-attr]
        assert f"INVOKE the {target.text}" in workflow
    assert "CONCLUDE" in workflow
    assert "failed validation, answer with the whole corrected plan" in workflow


def test_get_prompt_command(project: Path) -> None:
    assert teddy(project, "get-prompt", "architect").stdout == get_prompt("Architect")
    assert teddy(project, "get-prompt").stdout == get_prompt("Developer")
    (project / ".teddy" / "prompts").mkdir(parents=True)
    (project / ".teddy" / "config.yaml").write_text("default_agent: Debugger\n")
    (project / ".teddy" / "prompts" / "debugger.xml").write_text('<agent name="Debugger"/>\n')
    assert teddy(project, "get-prompt").stdout == '<agent name="Debugger"/>\n'
    assert teddy(project, "get-prompt", "--list").stdout.split() == [
        "Architect",
        "Debugger",
        "Developer",
        "Pathfinder",
    ]
    out = teddy(project, "get-prompt", "Finisher", check=1)
    assert out.stderr == (
        "teddy: no prompt for agent 'Finisher'; known agents: Architect, Debugger, Developer, "
        "Pathfinder (add .teddy/prompts/<agent>.xml for a new one)\n"
    )
