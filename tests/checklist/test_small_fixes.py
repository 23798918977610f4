"""The smaller failures of the checklist found by using it as a user would: a
byte-order mark in a cell, a cp1252 console, a misspelt workbook suffix, a missing
file, an empty reason, readers queueing behind writers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from plankit.checklist import (
    MarkdownFile,
    MemorySheets,
    PlanManager,
    StoreError,
    XlsxWorkbook,
    open_store,
)
from plankit.checklist.render import STARTER_PLAN
from plankit.checklist.stores.files import file_lock
from plankit.cli import cli
from plankit.errors import InputError

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


# --- a byte-order mark at the start of a cell ----------------------------------------


@pytest.mark.parametrize("kind", ["memory", "xlsx"])
def test_a_byte_order_mark_in_the_cell_keeps_the_title(kind: str, tmp_path: Path) -> None:
    text = "\ufeff" + STARTER_PLAN
    if kind == "memory":
        store: MemorySheets | XlsxWorkbook = MemorySheets({"AGENT_BASE!C2": text})
    else:
        store = XlsxWorkbook(tmp_path / "plan.xlsx")
        store.create_sheet("AGENT_BASE")
        store.set_cell("AGENT_BASE!C2", text)
    manager = PlanManager(store)
    plan = manager.get_plan()
    assert plan is not None
    assert plan.title == "Getting Started with Sheet Agent"
    assert plan.goal.startswith("Learn the basic tools")
    assert manager.complete_task("1.1").status == "done"
    assert store.get_cell("AGENT_BASE!C2").startswith("\ufeff# Plan: Getting Started")


# --- a console that cannot print ✅ ---------------------------------------------------


def test_a_cp1252_console_gets_the_output_not_a_traceback(tmp_path: Path) -> None:
    plan = tmp_path / "PLAN.md"
    assert run("checklist", "init", "--store", str(plan)).exit_code == 0
    env = {**os.environ, "PYTHONIOENCODING": "cp1252", "PYTHONPATH": str(ROOT / "src")}
    code = "from plankit.cli import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", code, "checklist", "done", "1.1", "--store", str(plan)],
        capture_output=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode("cp1252")
    assert done.stderr == b""
    assert done.stdout.startswith(b"[x] 1.1 List available sheets in the spreadsheet ? ")
    assert "- [x] 1.1 List available sheets in the spreadsheet ✅" in plan.read_text("utf-8")
    shown = subprocess.run(
        [sys.executable, "-c", code, "checklist", "show", "--json", "--store", str(plan)],
        capture_output=True,
        env=env,
        check=False,
    )
    assert shown.returncode == 0
    data = json.loads(shown.stdout.decode("ascii"))  # escaped, so still the same JSON
    assert "✅" in data["raw"]


# --- store names ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("plan.xslx", "plan.xlsx?"),
        ("plan.xlxs", "plan.xlsx?"),
        ("plan.ods", "not .ods files; save a copy as .xlsx"),
        ("plan.xls", "not .xls files"),
        ("plan.csv", "not .csv files"),
    ],
)
def test_a_misspelt_or_foreign_suffix_is_refused(name: str, expected: str, tmp_path: Path) -> None:
    target = tmp_path / name
    with pytest.raises(InputError) as caught:
        open_store(str(target))
    assert expected in str(caught.value)
    if expected.endswith("?"):
        assert f"did you mean {tmp_path / expected}" in str(caught.value)
    result = run("checklist", "init", "--store", str(target))
    assert result.exit_code == 1 and expected in result.stderr
    assert result.stderr.count("\n") == 1
    assert not target.exists()


@pytest.mark.parametrize("name", ["PLAN.md", "plan.markdown", "plan.txt", "PLAN", "p.MD"])
def test_markdown_names_still_open_a_markdown_file(name: str, tmp_path: Path) -> None:
    assert isinstance(open_store(str(tmp_path / name)), MarkdownFile)


def test_a_missing_file_is_named_as_missing(tmp_path: Path) -> None:
    missing = tmp_path / "missing.md"
    for args in (("done", "1.1"), ("show",), ("block", "1.1", "why")):
        result = run("checklist", *args, "--store", str(missing))
        assert result.exit_code == 1
        assert f"{missing} (the file does not exist; check the path)" in result.stderr
        assert "AGENT_BASE!C2" not in result.stderr
    book = tmp_path / "missing.xlsx"
    result = run("checklist", "done", "1.1", "--store", str(book))
    assert f"{book}, AGENT_BASE!C2 (the file does not exist" in result.stderr
    assert not missing.exists() and not book.exists()


# --- empty reasons ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "status", "code"),
    [("block_task", None, "empty-reason"), ("review_task", None, "empty-note")],
)
@pytest.mark.parametrize("reason", ["", "   ", "\n\t"])
def test_blocking_or_review_without_a_reason_is_refused(
    method: str, status: str | None, code: str, reason: str
) -> None:
    store = MemorySheets({"AGENT_BASE!C2": STARTER_PLAN})
    manager = PlanManager(store)
    with pytest.raises(InputError) as caught:
        getattr(manager, method)("1.1", reason)
    assert caught.value.code == code and "step 1.1" in str(caught.value)
    with pytest.raises(InputError):
        manager.set_task_status("1.1", "blocked" if code == "empty-reason" else "review", reason)
    assert store.get_cell("AGENT_BASE!C2") == STARTER_PLAN


def test_block_command_with_an_empty_reason(tmp_path: Path) -> None:
    plan = tmp_path / "PLAN.md"
    run("checklist", "init", "--store", str(plan))
    before = plan.read_bytes()
    result = run("checklist", "block", "1.1", " ", "--store", str(plan))
    assert result.exit_code == 1 and "needs a reason" in result.stderr
    assert plan.read_bytes() == before


# --- readers do not wait for writers ------------------------------------------------------


@pytest.mark.parametrize("name", ["plan.xlsx", "PLAN.md"])
def test_reading_does_not_take_the_lock(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    PlanManager(open_store(str(path))).init_plan(raise_errors=True)
    store = (
        XlsxWorkbook(path, lock_timeout=0.01)
        if name.endswith(".xlsx")
        else MarkdownFile(path, lock_timeout=0.01)
    )
    manager = PlanManager(store)
    with file_lock(str(path), 1):  # a writer is busy with the file
        plan = manager.get_plan()
        assert plan is not None and plan.title == "Getting Started with Sheet Agent"
        task = manager.get_next_task()
        assert task is not None and task.step == "1.1"
        assert manager.get_review_tasks() == []
        assert store.list_sheets() == ["AGENT_BASE"]
        with pytest.raises(StoreError) as caught:  # a write still waits for the lock
            manager.complete_task("1.1")
        assert caught.value.code == "locked"
    assert manager.complete_task("1.1").status == "done"
