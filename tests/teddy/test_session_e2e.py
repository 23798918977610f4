"""End to end with the `teddy` command in a temporary project.

Commands run in this process through the console script's own entry point
(:func:`tests.console.run_console`); the tests about signals and about two commands at
once start the real `teddy` script.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from plankit.teddy.cli import main
from plankit.teddy.format.parse import RATIONALE_SECTIONS
from tests.console import run_console
from tests.terminal import as_foreground_job
from tests.waiting import DEADLINE, record_group, wait_for_group_end, wait_until

TEDDY = str(Path(sys.executable).parent / "teddy")
RATIONALE = "\n".join(
    ["## Rationale", "````text"]
    + [f"### {i}. {name}\nx" for i, name in enumerate(RATIONALE_SECTIONS, 1)]
    + ["````"]
)
DEBUGGER_PROMPT = '<agent name="Debugger">\n  <role>Find root causes.</role>\n</agent>\n'


def plan(actions: str, memos: str = "", title: str = "A plan") -> str:
    memo_part = f"## Memos\n````\n{memos}\n````\n\n" if memos else ""
    return f"# {title}\n- **Status:** Green 🟢\n\n{RATIONALE}\n\n{memo_part}## Action Plan\n\n{actions}\n"


def teddy(
    cwd: Path, *args: str, input: str | None = None, check: int | None = 0
) -> subprocess.CompletedProcess[str]:
    result = run_console(main, *args, cwd=cwd, input=input)
    if check is not None:
        assert result.returncode == check, result.stdout + result.stderr
    return result


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "src" / "app.py").write_text("def answer():\n    return 41\n", encoding="utf-8")
    (root / "docs" / "bug.md").write_text("# Bug\nThe answer is off by one.\n", encoding="utf-8")
    return root


def start_session(root: Path, name: str = "demo") -> Path:
    out = teddy(root, "new", name).stdout.strip()
    session = Path(out)
    assert session.parent == root / ".teddy"
    return session


def lines(path: Path) -> list[str]:
    return [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


def meta(turn: Path) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for ln in lines(turn / "meta.yaml"):
        key, _, value = ln.partition(":")
        value = value.strip()
        out[key] = None if value == "null" else value.strip('"')
    return out


def write_plan(turn: Path, text: str) -> None:
    (turn / "plan.md").write_text(text, encoding="utf-8")


def test_new_creates_the_layout(project: Path) -> None:
    session = start_session(project)
    assert session.name.endswith("-demo") and session.name[:8].isdigit()
    turn = session / "01"
    assert sorted(p.name for p in turn.iterdir()) == [
        "meta.yaml",
        "system_prompt.xml",
        "turn.context",
    ]
    assert (session / "session.context").read_text() == ""
    assert '<agent name="Developer">' in (turn / "system_prompt.xml").read_text()
    assert meta(turn) == {
        "turn_id": "01",
        "parent_turn_id": None,
        "caller_turn_id": None,
        "agent": "Developer",
    }


@pytest.mark.parametrize("name", ["Bad Name", "under_score", "double--dash", "trail-", "UPPER"])
def test_new_refuses_names_that_are_not_kebab_case(project: Path, name: str) -> None:
    result = teddy(project, "new", name, check=1)
    assert "is not a kebab-case name" in result.stderr
    assert not (project / ".teddy").exists() or not any((project / ".teddy").iterdir())


def test_new_refuses_an_existing_name(project: Path) -> None:
    start_session(project)
    result = teddy(project, "new", "demo", check=1)
    assert "already exists" in result.stderr
    assert len(list((project / ".teddy").iterdir())) == 1


def test_full_turn_sequence(project: Path) -> None:
    (project / ".teddy").mkdir()
    (project / ".teddy" / "prompts").mkdir()
    (project / ".teddy" / "prompts" / "debugger.xml").write_text(DEBUGGER_PROMPT)
    session = start_session(project)
    s = session.name
    report = {n: f".teddy/{s}/{n}/report.md" for n in ("01", "02", "03", "04")}

    # 01: READ
    write_plan(session / "01", plan("### `READ`\n- **Resource:** [src/app.py](/src/app.py)"))
    teddy(project, "execute", "-y")
    assert "Completed 🟢" in (session / "01" / "report.md").read_text()
    t2 = session / "02"
    assert lines(t2 / "turn.context") == ["src/app.py", report["01"]]
    assert (t2 / "system_prompt.xml").read_text() == (
        session / "01" / "system_prompt.xml"
    ).read_text()
    assert meta(t2) == {
        "turn_id": "02",
        "parent_turn_id": "01",
        "caller_turn_id": None,
        "agent": "Developer",
    }
    payload = teddy(project, "context").stdout.strip()
    assert Path(payload) == t2 / "input.md"
    assert "return 41" in (t2 / "input.md").read_text()

    # 02: EDIT a file in context
    write_plan(
        t2,
        plan(
            "### `EDIT`\n- **File Path:** [src/app.py](/src/app.py)\n\n"
            "`FIND:`\n```python\n    return 41\n```\n`REPLACE:`\n```python\n    return 42\n```"
        ),
    )
    teddy(project, "execute", "-y")
    assert (project / "src" / "app.py").read_text() == "def answer():\n    return 42\n"
    report02 = (t2 / "report.md").read_text()
    assert "-    return 41\n+    return 42" in report02
    t3 = session / "03"
    assert lines(t3 / "turn.context") == ["src/app.py", report["01"], report["02"]]

    # 03: INVOKE the Debugger with a handoff resource
    write_plan(
        t3,
        plan(
            "### `INVOKE`\n- **Agent:** Debugger\n- **Handoff Resources:**\n"
            "  - [docs/bug.md](/docs/bug.md)\n\nPlease find the root cause."
        ),
    )
    teddy(project, "execute", "-y")
    t4 = session / "04"
    assert lines(t4 / "turn.context") == ["docs/bug.md", report["03"]]
    assert (t4 / "system_prompt.xml").read_text() == DEBUGGER_PROMPT
    assert meta(t4) == {
        "turn_id": "04",
        "parent_turn_id": "03",
        "caller_turn_id": "03",
        "agent": "Debugger",
    }

    # 04: CONCLUDE back to the caller with a new document
    write_plan(
        t4,
        plan(
            "### `CREATE`\n- **File Path:** [docs/rca.md](/docs/rca.md)\n```\nOff by one.\n```\n\n"
            "### `CONCLUDE`\n- **Handoff Resources:**\n  - [docs/rca.md](/docs/rca.md)\n\nFound it."
        ),
    )
    teddy(project, "execute", "-y")
    t5 = session / "05"
    assert lines(t5 / "turn.context") == [
        "src/app.py", report["01"], report["02"], "docs/rca.md", report["04"],
    ]  # fmt: skip
    assert (t5 / "system_prompt.xml").read_text() == (t3 / "system_prompt.xml").read_text()
    assert meta(t5) == {
        "turn_id": "05",
        "parent_turn_id": "03",
        "caller_turn_id": None,
        "agent": "Developer",
    }
    for turn in ("01", "02", "03", "04"):
        files = sorted(p.name for p in (session / turn).iterdir())
        assert {"meta.yaml", "plan.md", "report.md", "system_prompt.xml", "turn.context"} <= set(
            files
        )


def test_turns_go_past_99_in_numeric_order(project: Path) -> None:
    session = start_session(project)
    for n in range(2, 101):
        turn = session / f"{n:02d}"
        turn.mkdir()
        (turn / "system_prompt.xml").write_text("<agent name='Developer'/>")
        (turn / "turn.context").write_text("")
        (turn / "meta.yaml").write_text(f'turn_id: "{n:02d}"\n')
    write_plan(session / "100", plan("### `READ`\n- **Resource:** [docs/bug.md](/docs/bug.md)"))
    teddy(project, "execute", "-y")
    assert (session / "100" / "report.md").exists()
    assert meta(session / "101")["parent_turn_id"] == "100"


def _validation_case(project: Path, text: str, setup: str = "") -> tuple[str, Path]:
    session = start_session(project)
    if setup:
        (session / "01" / "turn.context").write_text(setup)
    write_plan(session / "01", text)
    result = teddy(project, "execute", "-y", check=1)
    report = (session / "01" / "report.md").read_text()
    assert "- **Overall Status:** Validation Failed 🔴" in report
    assert "## 3. Validation Errors" in report and "## 4. Action Log" not in report
    next_context = lines(session / "02" / "turn.context")
    assert all("report.md" not in entry for entry in next_context)
    assert result.stderr
    return report, session


@pytest.mark.parametrize(
    ("actions", "memos", "context", "expected"),
    [
        ("### `CREATE`\n- **File Path:** [src/app.py](/src/app.py)\n```\nx\n```", "", "",
         "`CREATE` on `src/app.py`: the file already exists"),
        ("### `EDIT`\n- **File Path:** [src/none.py](/src/none.py)\n\n`FIND:`\n```\na\n```\n"
         "`REPLACE:`\n```\nb\n```", "", "src/none.py\n", "`EDIT` on `src/none.py`: the file does not exist"),
        ("### `EDIT`\n- **File Path:** [src/app.py](/src/app.py)\n\n`FIND:`\n```\nreturn 41\n```\n"
         "`REPLACE:`\n```\nreturn 42\n```", "", "", "the file is not in the turn's context"),
        ("### `EDIT`\n- **File Path:** [src/app.py](/src/app.py)\n\n`FIND:`\n```\nreturn 7\n```\n"
         "`REPLACE:`\n```\nreturn 8\n```", "", "src/app.py\n", "the FIND block matches nowhere"),
        ("### `EDIT`\n- **File Path:** [src/app.py](/src/app.py)\n\n`FIND:`\n```\nreturn 41\n```\n"
         "`REPLACE:`\n```\nreturn 41\n```", "", "src/app.py\n", "the REPLACE block is the same as the FIND"),
        ("### `PRUNE`\n- **Resource:** [docs/bug.md](/docs/bug.md)", "", "",
         "`PRUNE` on `docs/bug.md`: the resource is not in the turn's context"),
        ("### `READ`\n- **Resource:** [a](/docs/bug.md)", "[-] never remembered", "",
         "Memos: [-] 'never remembered' is not in memos.yaml"),
    ],
)  # fmt: skip
def test_each_preflight_check(
    project: Path, actions: str, memos: str, context: str, expected: str
) -> None:
    report, _ = _validation_case(project, plan(actions, memos), context)
    assert expected in report


def test_memo_already_present_and_all_errors_at_once(project: Path) -> None:
    (project / ".teddy").mkdir()
    (project / ".teddy" / "memos.yaml").write_text("- Use tabs.\n")
    (project / "src" / "twice.py").write_text("x = 1\nx = 1\n")
    text = plan(
        "### `CREATE`\n- **File Path:** [src/app.py](/src/app.py)\n```\nx\n```\n\n"
        "### `EDIT`\n- **File Path:** [src/twice.py](/src/twice.py)\n\n`FIND:`\n```\nx = 1\n```\n"
        "`REPLACE:`\n```\nx = 2\n```",
        memos="[+] Use tabs.",
    )
    report, _ = _validation_case(project, text, "src/twice.py\n")
    errors = [ln for ln in report.splitlines() if ln.startswith("- ") and "**" not in ln]
    assert errors == [
        "- memo-conflict Memos: [+] 'Use tabs.' is already in memos.yaml",
        "- line 23: file-exists `CREATE` on `src/app.py`: the file already exists; use EDIT to "
        "change it",
        "- line 29: find-ambiguous `EDIT` on `src/twice.py`: pair 1: the FIND block matches 2 "
        "times (at lines 1, 2); include more surrounding lines so that it matches once",
    ]
    assert (project / "src" / "twice.py").read_text() == "x = 1\nx = 1\n"


@pytest.mark.parametrize(
    ("path_markdown", "why"),
    [
        ("[../outside.txt](/../outside.txt)", "'..' is refused"),
        ("[abs](//etc/passwd)", "absolute paths are refused"),
        ("`~/.bashrc`", "paths starting with ~ are refused"),
        ("[link/x.txt](/link/x.txt)", "symbolic link that leads outside"),
        ("[nul](/a%00b.txt)", "NUL byte"),
    ],
)
def test_hostile_paths_are_refused(
    project: Path, tmp_path: Path, path_markdown: str, why: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "link").symlink_to(outside, target_is_directory=True)
    text = plan(f"### `CREATE`\n- **File Path:** {path_markdown}\n```\npwned\n```")
    report, _ = _validation_case(project, text)
    assert why in report
    assert list(outside.iterdir()) == []
    assert not (tmp_path / "outside.txt").exists()


def test_execute_cwd_must_exist_inside(project: Path) -> None:
    text = plan(
        "### `EXECUTE`\n- **cwd:** [nowhere](/nowhere)\n```shell\nls\n```\n\n"
        "### `EXECUTE`\n- **cwd:** [up](/../)\n```shell\nls\n```"
    )
    report, _ = _validation_case(project, text)
    assert "cwd 'nowhere' is not an existing directory" in report
    assert "'..' is refused" in report


def test_edit_keeps_crlf_line_endings(project: Path) -> None:
    (project / "src" / "win.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    session = start_session(project)
    (session / "01" / "turn.context").write_text("src/win.txt\n")
    write_plan(
        session / "01",
        plan(
            "### `EDIT`\n- **File Path:** [src/win.txt](/src/win.txt)\n\n"
            "`FIND:`\n```\ntwo\nthree\n```\n`REPLACE:`\n```\n2\n3\n```"
        ),
    )
    teddy(project, "execute", "-y")
    assert (project / "src" / "win.txt").read_bytes() == b"one\r\n2\r\n3\r\n"
    assert "CRLF line endings were kept" in (session / "01" / "report.md").read_text()


def test_edit_accepts_a_unique_indentation_shift(project: Path) -> None:
    (project / "src" / "nested.py").write_text("class A:\n    def f(self):\n        return 1\n")
    session = start_session(project)
    (session / "01" / "turn.context").write_text("src/nested.py\n")
    write_plan(
        session / "01",
        plan(
            "### `EDIT`\n- **File Path:** [src/nested.py](/src/nested.py)\n\n"
            "`FIND:`\n```\ndef f(self):\n    return 1\n```\n"
            "`REPLACE:`\n```\ndef f(self):\n    return 2\n```"
        ),
    )
    teddy(project, "execute", "-y")
    assert (project / "src" / "nested.py").read_text() == (
        "class A:\n    def f(self):\n        return 2\n"
    )
    assert "ignoring differences in indentation" in (session / "01" / "report.md").read_text()


def test_execute_records_output_and_failure_skips_the_rest(project: Path) -> None:
    session = start_session(project)
    write_plan(
        session / "01",
        plan(
            '### `EXECUTE`\n- **env:**\n    - `GREETING`: "hello"\n'
            '```shell\necho "$GREETING from $(pwd)"; echo oops >&2; exit 3\n```\n\n'
            "### `CREATE`\n- **File Path:** [never.txt](/never.txt)\n```\nx\n```"
        ),
    )
    result = teddy(project, "execute", "-y", check=1)
    report = (session / "01" / "report.md").read_text()
    assert "- **Overall Status:** Failed 🔴" in report
    assert f"hello from {project.resolve()}" in report
    assert "oops" in report and "- **Exit code:** 3" in report
    assert "Skipped 🟡 (skipped after the failure of `EXECUTE` above)" in report
    assert not (project / "never.txt").exists()
    assert "Failed" in result.stderr


def test_execute_times_out(project: Path) -> None:
    (project / ".teddy").mkdir()
    (project / ".teddy" / "config.yaml").write_text("execute:\n  timeout: 1\n")
    session = start_session(project)
    group = project / "group"
    command = f"{record_group(group)}; sleep 30; touch finished"
    write_plan(session / "01", plan(f"### `EXECUTE`\n```shell\n{command}\n```"))
    teddy(project, "execute", "-y", check=1)
    wait_for_group_end(group)
    assert not (project / "finished").exists()  # stopped, not waited for
    report = (session / "01" / "report.md").read_text()
    assert "timed out after 1 s" in report
    assert "stopped after 1 s" in report


def _wait_for(path: Path) -> None:
    wait_until(path.exists, f"{path} to appear")


def test_sigint_stops_the_command_and_still_writes_the_report(project: Path) -> None:
    session = start_session(project)
    write_plan(
        session / "01",
        plan(
            f"### `EXECUTE`\n```shell\n{record_group(project / 'group')}; "
            "touch started; sleep 30; touch finished\n```\n\n"
            "### `CREATE`\n- **File Path:** [after.txt](/after.txt)\n```\nx\n```"
        ),
    )
    proc = subprocess.Popen(
        [TEDDY, "execute", "-y"],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_foreground_job,
    )
    _wait_for(project / "started")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=DEADLINE)
    assert proc.returncode == 130, err
    report = (session / "01" / "report.md").read_text()
    assert "execution was interrupted (Ctrl-C)" in report
    assert "stopped by Ctrl-C" in report
    assert "Skipped 🟡 (skipped: execution was interrupted)" in report
    assert not (project / "after.txt").exists()
    wait_for_group_end(project / "group")  # the whole process group was stopped …
    assert not (project / "finished").exists()  # … long before its sleep ended
    leftovers = [
        p for p in project.rglob("*") if p.name.endswith(".tmp") or p.name.startswith(".next-")
    ]
    assert leftovers == []
    assert (session / "02" / "meta.yaml").exists()


def test_second_execute_on_the_same_session_is_refused(project: Path) -> None:
    session = start_session(project)
    # the first run holds the session until the test releases it, however slow the second
    hold = "touch started; for i in $(seq 1200); do [ -e release ] && break; sleep 0.05; done"
    write_plan(session / "01", plan(f"### `EXECUTE`\n```shell\n{hold}\n```"))
    first = subprocess.Popen(
        [TEDDY, "execute", "-y"],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(project / "started")
        second = teddy(project, "execute", "-y", check=1)
        assert "another `teddy execute` is running on session" in second.stderr
    finally:
        (project / "release").touch()
        first.communicate(timeout=120)
    assert first.returncode == 0
    assert (session / "02").is_dir() and not (session / "03").exists()


def test_no_terminal_and_no_yes_executes_nothing(project: Path) -> None:
    session = start_session(project)
    write_plan(
        session / "01", plan("### `CREATE`\n- **File Path:** [new.txt](/new.txt)\n```\nx\n```")
    )
    result = teddy(project, "execute", input="a\n", check=1)
    assert "standard input is not a terminal" in result.stderr
    assert not (project / "new.txt").exists()
    assert not (session / "01" / "report.md").exists()
    assert not (session / "02").exists()


def test_stateless_mode_prints_the_report_and_writes_nothing_else(
    project: Path, tmp_path: Path
) -> None:
    plan_file = tmp_path / "loose-plan.md"
    plan_file.write_text(
        plan(
            "### `CREATE`\n- **File Path:** [docs/new.md](/docs/new.md)\n```\nhello\n```\n\n"
            "### `EXECUTE`\n```shell\ncat docs/new.md\n```"
        )
    )
    before = sorted(p.relative_to(project) for p in project.rglob("*"))
    result = teddy(project, "execute", "-y", str(plan_file))
    assert result.stdout.startswith(
        "# Execution Report: A plan\n- **Overall Status:** Completed 🟢"
    )
    assert "stateless mode" in result.stdout
    after = sorted(p.relative_to(project) for p in project.rglob("*"))
    assert [p for p in after if p not in before] == [Path("docs/new.md")]


def test_already_executed_turn_is_refused(project: Path) -> None:
    session = start_session(project)
    write_plan(session / "01", plan("### `READ`\n- **Resource:** [docs/bug.md](/docs/bug.md)"))
    teddy(project, "execute", "-y")
    result = teddy(project, "execute", "-y", str(session / "01" / "plan.md"), check=1)
    assert "is not the session's latest turn" in result.stderr


def test_research_with_the_shipped_fixture_backend(project: Path) -> None:
    (project / ".teddy").mkdir()
    (project / "results.json").write_text(
        '{"markdown parser": [{"title": "markdown-it-py", "url": "https://example.com/mdit", '
        '"snippet": "CommonMark in Python"}], "*": []}'
    )
    (project / ".teddy" / "config.yaml").write_text("research:\n  backend: fixture:results.json\n")
    session = start_session(project)
    write_plan(
        session / "01", plan("### `RESEARCH`\n```text\nmarkdown parser\n```\n```text\nnothing\n```")
    )
    teddy(project, "execute", "-y")
    report = (session / "01" / "report.md").read_text()
    assert "- [markdown-it-py](<https://example.com/mdit>): CommonMark in Python" in report
    assert "#### nothing\nNo results." in report


def test_memos_are_applied(project: Path) -> None:
    (project / ".teddy").mkdir()
    (project / ".teddy" / "memos.yaml").write_text("# conventions\n- Old rule.\n- Keep me.\n")
    session = start_session(project)
    write_plan(
        session / "01",
        plan(
            "### `READ`\n- **Resource:** [docs/bug.md](/docs/bug.md)",
            memos="[+] New rule. # why\n[-] Old rule.",
        ),
    )
    teddy(project, "execute", "-y")
    assert (
        project / ".teddy" / "memos.yaml"
    ).read_text() == "# conventions\n- Keep me.\n- New rule.\n"
    report = (session / "01" / "report.md").read_text()
    assert "- `[+]` New rule. — applied" in report


def test_invoke_of_an_unknown_agent_lists_the_known_ones(project: Path) -> None:
    report, _ = _validation_case(project, plan("### `INVOKE`\n- **Agent:** Nobody\n\nGo."))
    assert (
        "unknown agent 'Nobody'; known agents: Architect, Debugger, Developer, Pathfinder" in report
    )
