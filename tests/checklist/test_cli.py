"""``plankit checklist``: every command, text and --json, on each file store; errors
are one line with exit 1 and no traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from plankit.checklist.render import STARTER_PLAN
from plankit.cli import cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["PLAN.md", "plan.xlsx"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return str(tmp_path / request.param)


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_init_show_next_and_status_commands(store: str) -> None:
    result = run("checklist", "init", "--store", store)
    assert result.exit_code == 0, result.output
    assert "Getting Started with Sheet Agent [0/6 done (0%) · 6 todo]" in result.output

    shown = run("checklist", "show", "--store", store)
    assert shown.exit_code == 0
    assert "Phase 1: Orientation  [0/3 done (0%) · 3 todo]" in shown.output
    assert "Overall: 0/6 done (0%) · 6 todo" in shown.output
    assert "Next: 1.1 List available sheets in the spreadsheet" in shown.output

    assert run("checklist", "next", "--store", store).output == (
        "1.1 List available sheets in the spreadsheet\n"
    )
    assert run("checklist", "start", "1.1", "--store", store).output.startswith("[/] 1.1 ")
    done = run("checklist", "done", "1.1", "--store", store)
    assert done.output.startswith("[x] 1.1 List available sheets in the spreadsheet ✅ ")
    blocked = run("checklist", "block", "1.2", "headers", "are", "merged", "--store", store)
    assert blocked.output.endswith("— headers are merged\n")
    reviewed = run("checklist", "review", "--store", store, "1.3", "check the types")
    assert reviewed.output.endswith("— check the types\n")
    assert run("checklist", "reviews", "--store", store).output.startswith("[!] 1.3 ")

    final = run("checklist", "show", "--store", store)
    assert "Phase 1: Orientation  [1/3 done (33%) · 1 blocked · 1 review]" in final.output
    assert "Overall: 1/6 done (16%) · 1 blocked · 1 review · 3 todo" in final.output
    assert "Waiting for review: 1.3" in final.output


def test_every_command_has_json(store: str) -> None:
    plan = json.loads(run("checklist", "init", "--store", store, "--json").output)
    assert plan["title"] == "Getting Started with Sheet Agent"
    assert plan["raw"] == STARTER_PLAN
    shown = json.loads(run("checklist", "show", "--json", "--store", store).output)
    assert shown["progress"]["total"] == 6
    assert shown["phases"][0]["progress"]["todo"] == 3
    nxt = json.loads(run("checklist", "next", "--json", "--store", store).output)
    assert nxt["step"] == "1.1" and nxt["status"] == "todo"
    for args, status in [
        (("start", "1.1"), "doing"),
        (("done", "1.1"), "done"),
        (("block", "1.2", "why"), "blocked"),
        (("review", "1.3", "look"), "review"),
    ]:
        task = json.loads(run("checklist", *args, "--json", "--store", store).output)
        assert task["status"] == status
    reviews = json.loads(run("checklist", "reviews", "--json", "--store", store).output)
    assert [t["review_note"] for t in reviews] == ["look"]
    noted = json.loads(run("checklist", "note", "a", "finding", "--json", "--store", store).output)
    assert noted == {"note": "a finding"}
    prompt = json.loads(run("checklist", "prompt", "--json").output)
    assert "complete_task" in prompt["prompt"]
    created = run(
        "checklist", "create", "--json", "--force", "--store", store,
        "--title", "T", "--goal", "G", "--phase", "P: a; b",
    )  # fmt: skip
    assert json.loads(created.output)["progress"]["total"] == 2


def test_create_with_phases_and_escaped_semicolons(store: str) -> None:
    result = run(
        "checklist", "create", "--store", store,
        "--title", "Q4 report", "--goal", "Fill the summary",
        "--phase", "Collect: Read Orders!A2:F500 (id\\; date); Read Products!A2:D200",
        "--phase", "Write: Write Summary!B5:E20",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "created 'Q4 report' with 2 phases and 3 steps" in result.output
    md = run("checklist", "show", "--markdown", "--store", store).output
    assert "- [ ] 1.1 Read Orders!A2:F500 (id; date)\n" in md
    assert "- [ ] 2.1 Write Summary!B5:E20\n" in md


def test_create_refuses_to_replace_a_real_plan_without_force(store: str) -> None:
    args = ["checklist", "create", "--store", store, "--title", "A", "--goal", "G"]
    assert run(*args, "--phase", "P: a").exit_code == 0
    second = run(*args[:-4], "--title", "B", "--goal", "G", "--phase", "P: b")
    assert second.exit_code == 1
    # the plan named as its store holds it, the fix in the CLI's words only
    where = store if store.endswith(".md") else f"{store}, AGENT_BASE!C2"
    assert second.output == (
        f"plankit checklist: {where} already holds the plan 'A' (0 of 1 steps done); nothing "
        "was written. To replace it, run `plankit checklist create … --force`\n"
    )
    assert (
        run(*args[:-4], "--title", "B", "--goal", "G", "--phase", "P: b", "--force").exit_code == 0
    )


def test_create_replaces_the_starter_plan_without_force(store: str) -> None:
    run("checklist", "init", "--store", store)
    result = run("checklist", "create", "--store", store, "--title", "T", "--goal", "G",
                 "--phase", "P: a")  # fmt: skip
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("phase", ["no colon here", ": a; b", "Name:  ;  ; "])
def test_bad_phase_option_is_a_usage_error(store: str, phase: str) -> None:
    result = run("checklist", "create", "--store", store, "--title", "T", "--goal", "G",
                 "--phase", phase)  # fmt: skip
    assert result.exit_code == 2
    assert "--phase" in result.output
    assert not Path(store).exists()


def test_errors_are_one_line_exit_1(store: str) -> None:
    run("checklist", "init", "--store", store)
    result = run("checklist", "done", "9.9", "--store", store)
    assert result.exit_code == 1
    assert result.output.strip().startswith("plankit checklist: no task '9.9' in the plan")
    assert "Traceback" not in result.output
    as_json = run("checklist", "done", "9.9", "--store", store, "--json")
    errors = json.loads(as_json.stdout)["errors"]
    assert errors[0]["code"] == "unknown-step"


def test_show_without_a_plan(tmp_path: Path) -> None:
    result = run("checklist", "show", "--store", str(tmp_path / "PLAN.md"))
    assert result.exit_code == 1
    assert "no plan in" in result.output and "plankit checklist init" in result.output
    shown = run("checklist", "show", "--json", "--store", str(tmp_path / "PLAN.md"))
    assert shown.exit_code == 1
    assert json.loads(shown.stdout)["errors"][0]["code"] == "no-plan"
    nxt = run("checklist", "next", "--store", str(tmp_path / "PLAN.md"), "--json")
    assert nxt.exit_code == 0 and nxt.stdout.strip() == "null"


def test_store_that_is_not_a_workbook(tmp_path: Path) -> None:
    bad = tmp_path / "bad.xlsx"
    bad.write_bytes(b"hello")
    result = run("checklist", "init", "--store", str(bad))
    assert result.exit_code == 1
    assert "is not an xlsx workbook" in result.output
    assert bad.read_bytes() == b"hello"


def test_bad_cell_reference(tmp_path: Path) -> None:
    result = run("checklist", "show", "--store", str(tmp_path / "p.md"), "--cell", "C2")
    assert result.exit_code == 1
    assert "has no sheet; write it as SHEET!CELL" in result.output


def test_other_cell_and_environment_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "book.xlsx"
    monkeypatch.setenv("PLANKIT_STORE", str(path))
    monkeypatch.setenv("PLANKIT_CELL", "Plans!B3")
    assert run("checklist", "init").exit_code == 0
    from plankit.checklist import XlsxWorkbook

    assert XlsxWorkbook(path).get_cell("Plans!B2") == "PLAN.md Contents"


def test_gsheets_store_without_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLANKIT_GOOGLE_CREDENTIALS", raising=False)
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    result = run("checklist", "show", "--store", "gsheets:1kPlanKitExampleSpreadsheetId0123")
    assert result.exit_code == 1
    assert "needs credentials" in result.output


def test_prompt_names_the_tools_and_the_cell() -> None:
    text = run("checklist", "prompt", "--cell", "Plan!D4").output
    from plankit.mcp.catalog import CHECKLIST

    for tool in CHECKLIST:  # the default set explained, the others named
        assert f"`{tool.name}" in text
    assert "cell Plan!D4" in text


def test_console_script_reports_errors_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.xlsx"
    bad.write_bytes(b"")
    result = subprocess.run(
        [sys.executable, "-c", "from plankit.cli import main; main()", "checklist", "show",
         "--store", str(bad)],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    usage = subprocess.run(
        [sys.executable, "-c", "from plankit.cli import main; main()", "checklist", "frobnicate"],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    assert usage.returncode == 2


def test_show_lists_real_questions_but_not_template_placeholders(tmp_path: Path) -> None:
    store = str(tmp_path / "PLAN.md")
    run("checklist", "init", "--store", store)
    assert (
        "What spreadsheet would you like to work with?"
        in run("checklist", "show", "--store", store).output
    )
    run("checklist", "create", "--store", store, "--title", "T", "--goal", "G", "--phase", "P: a")
    assert "Questions for the user" not in run("checklist", "show", "--store", store).output


def test_create_with_force_replaces_text_that_is_not_a_plan(tmp_path: Path) -> None:
    path = tmp_path / "PLAN.md"
    path.write_text("old notes, not a plan\n", encoding="utf-8")
    args = ["checklist", "create", "--store", str(path), "--title", "T", "--goal", "G"]
    refused = run(*args, "--phase", "P: a")
    assert refused.exit_code == 1 and "does not hold a PLAN.md plan" in refused.output
    assert path.read_text(encoding="utf-8") == "old notes, not a plan\n"
    assert run(*args, "--phase", "P: a", "--force").exit_code == 0
    assert "# Plan: T" in path.read_text(encoding="utf-8")


def test_commands_leave_nothing_beside_the_plan(store: str) -> None:
    """A PLAN.md or a workbook in a folder of the user's: after every kind of write,
    the folder holds the plan file and nothing else (no `.PLAN.md.lock`, no temporary
    file), so `git status` shows only the plan."""
    folder = Path(store).parent
    (folder / "notes.txt").write_text("the user's own file\n", encoding="utf-8")
    for args in (
        ["init"],
        ["start", "1.1"],
        ["done", "1.1"],
        ["block", "1.2", "merged headers"],
        ["create", "--title", "T", "--goal", "G", "--phase", "P: a; b", "--force"],
        ["answer", "1", "yes"],
    ):
        result = run("checklist", *args, "--store", store)
        assert sorted(p.name for p in folder.iterdir()) == sorted(
            ["notes.txt", Path(store).name]
        ), (args, result.output)


def test_answer_never_takes_the_template_placeholder_for_a_question(tmp_path: Path) -> None:
    store = str(tmp_path / "PLAN.md")
    run("checklist", "create", "--store", store, "--title", "T", "--goal", "G", "--phase", "P: a")
    before = Path(store).read_text(encoding="utf-8")
    assert "- [Any clarifying questions]\n" in before  # what `create` writes
    refused = run("checklist", "answer", "1", "yes", "--store", store)
    assert refused.exit_code == 1
    assert refused.output == (
        "plankit checklist: the plan has no questions to answer (only the placeholder "
        "[Any clarifying questions]); write them under Questions for User\n"
    )
    assert Path(store).read_text(encoding="utf-8") == before
    # a real question written under the placeholder is question 1
    Path(store).write_text(
        before.replace(
            "- [Any clarifying questions]\n",
            "- [Any clarifying questions]\n- Which sheet holds the Q4 sales?\n",
        ),
        encoding="utf-8",
    )
    answered = run("checklist", "answer", "1", "Sales_Q4", "--store", store)
    assert answered.exit_code == 0, answered.output
    text = Path(store).read_text(encoding="utf-8")
    assert "- Which sheet holds the Q4 sales? — Answer: Sales_Q4\n" in text
    assert "- [Any clarifying questions]\n" in text


def test_a_plan_md_file_is_named_by_its_path_never_by_a_cell(tmp_path: Path) -> None:
    store = tmp_path / "PLAN.md"
    assert run("checklist", "init", "--store", str(store)).output.startswith(
        f"{store}: Getting Started with Sheet Agent ["
    )
    store.write_text("meeting notes, not a plan\n", encoding="utf-8")
    shown = run("checklist", "show", "--store", str(store))
    assert shown.exit_code == 1
    assert shown.output == (
        f"plankit checklist: {store} does not hold a PLAN.md plan (no '# Plan:' title and no "
        "'### Phase N:' heading); it holds 'meeting notes, not a plan'. To write a plan over "
        "it, run `plankit checklist create … --force`; or clear the file, or keep the plan in "
        "another file (--store)\n"
    )
