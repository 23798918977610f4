"""The console scripts' click-free start (plankit.launch) answers exactly as click does.

``teddy --help`` and ``plankit checklist start|done STEP`` are answered before click is
imported; everything else goes to the click commands.  Each case runs both ways, in
fresh interpreters, and compares what a user sees: standard output, standard error,
the exit status and the plan file.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from plankit.launch import TEDDY_HELP, status_form

ROOT = Path(__file__).resolve().parents[1]

LAUNCH = (
    "import atexit, os, sys; atexit.register(lambda: open(os.environ['MODULES_OUT'], 'w')"
    ".write(' '.join(sorted(sys.modules)))); from plankit.launch import {0}; {0}()"
)
"""A console script's start; at exit it writes the modules it imported to $MODULES_OUT."""
CLICK = "import sys; from {0} import main; sys.argv[0] = '{1}'; main()"

PLAN = """\
# Plan: Monthly close

Goal: Reconcile the ledger with the bank export

## Questions for User

- Which account first?

### Phase 1: Collect

- [x] 1.1 Read Ledger!A1:F200 ✅ 2026-01-03
- [ ] 1.2 Read Bank!A1:D90 (the export from the 2nd)
- [ ] 1.3 Compare totals — check the fees line too

### Phase 2: Report

- [ ] 2.1 Write Summary!B2 with the difference
"""

MODULES = ".modules"
TODAY = re.compile(r"✅ \d{4}-\d{2}-\d{2}")


def _run(
    code: str, args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k not in ("PLANKIT_STORE", "PLANKIT_CELL")}
    full.update({"COLUMNS": "120", "MODULES_OUT": str(cwd / MODULES), **(env or {})})
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=full,
        check=False,
    )


def _modules(cwd: Path) -> set[str]:
    """The modules the launcher run in ``cwd`` had imported when it exited."""
    return set((cwd / MODULES).read_text(encoding="utf-8").split())


def test_the_help_text_is_what_click_renders_80_columns_wide(tmp_path: Path) -> None:
    for columns in ("80", "120", "200"):  # click never wraps help wider than 80
        shown = _run(
            CLICK.format("plankit.teddy.cli", "teddy"), ["--help"], tmp_path, {"COLUMNS": columns}
        )
        assert shown.returncode == 0
        assert shown.stdout == TEDDY_HELP, f"plankit.launch.TEDDY_HELP is stale:\n{shown.stdout}"


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_teddy_help_is_printed_without_click(tmp_path: Path, flag: str) -> None:
    done = _run(LAUNCH.format("teddy"), [flag], tmp_path)
    assert done.returncode == 0
    assert done.stdout == TEDDY_HELP
    modules = _modules(tmp_path)
    assert done.stderr == ""
    assert "click" not in modules and "plankit.launch" in modules


@pytest.mark.parametrize("columns", ["60", "79"])
def test_a_narrow_terminal_gets_clicks_own_wrapping(tmp_path: Path, columns: str) -> None:
    fast = _run(LAUNCH.format("teddy"), ["--help"], tmp_path, {"COLUMNS": columns})
    slow = _run(
        CLICK.format("plankit.teddy.cli", "teddy"), ["--help"], tmp_path, {"COLUMNS": columns}
    )
    assert fast.returncode == slow.returncode == 0
    assert fast.stdout == slow.stdout != TEDDY_HELP
    assert "click" in _modules(tmp_path)


def test_other_teddy_command_lines_go_to_click(tmp_path: Path) -> None:
    for args in (["--version"], ["parse", "--help"], ["--help", "parse"], []):
        fast = _run(LAUNCH.format("teddy"), args, tmp_path)
        slow = _run(CLICK.format("plankit.teddy.cli", "teddy"), args, tmp_path)
        assert (fast.returncode, fast.stdout) == (slow.returncode, slow.stdout), args
        assert fast.stderr == slow.stderr, args


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["checklist", "done", "1.2"], ("done", "1.2", False)),
        (["checklist", "start", "2.1", "--json"], ("start", "2.1", True)),
        (["checklist", "done", "--json", "1.3"], ("done", "1.3", True)),
        (["checklist", "done"], None),
        (["checklist", "done", "1.2", "1.3"], None),
        (["checklist", "done", "--store", "plan.xlsx", "1.2"], None),
        (["checklist", "done", "-1.2"], None),
        (["checklist", "done", "1.2", "--json", "--json"], None),
        (["checklist", "block", "1.2", "waiting"], None),
        (["checklist", "show"], None),
        (["mcp"], None),
        ([], None),
    ],
)
def test_only_the_plain_status_command_lines_are_taken(
    args: list[str], expected: tuple[str, str, bool] | None
) -> None:
    assert status_form(args) == expected


def _both(tmp_path: Path, args: list[str], env: dict[str, str] | None = None, plan: str = PLAN):
    """Run ``plankit ARGS`` through the launcher and through click, each on its own
    copy of ``plan``; both results and both files."""
    results = []
    for name, code in (
        ("fast", LAUNCH.format("plankit")),
        ("slow", CLICK.format("plankit.cli", "plankit")),
    ):
        folder = tmp_path / name
        folder.mkdir()
        store = (env or {}).get("PLANKIT_STORE", "PLAN.md")
        (folder / store).write_text(plan, encoding="utf-8")
        done = _run(code, args, folder, env)
        results.append((done, (folder / store).read_text(encoding="utf-8")))
    return results


@pytest.mark.parametrize(
    "args",
    [
        ["checklist", "done", "1.2"],
        ["checklist", "start", "1.3"],
        ["checklist", "done", "1.1"],  # already done: the file keeps its date
        ["checklist", "done", "2.1", "--json"],
        ["checklist", "start", "--json", "1.2"],
        ["checklist", "done", "9.9"],  # no such step: click's error, nothing written
        ["checklist", "done", "1.2.3.4"],
    ],
)
def test_a_status_change_reads_and_writes_as_the_click_command_does(
    tmp_path: Path, args: list[str]
) -> None:
    (fast, fast_file), (slow, slow_file) = _both(tmp_path, args)
    assert (fast.returncode, TODAY.sub("✅ D", fast.stdout), fast.stderr) == (
        slow.returncode,
        TODAY.sub("✅ D", slow.stdout),
        slow.stderr,
    )
    assert TODAY.sub("✅ D", fast_file) == TODAY.sub("✅ D", slow_file)


def test_a_marked_step_is_written_and_printed_without_click(tmp_path: Path) -> None:
    (fast, fast_file), _ = _both(tmp_path, ["checklist", "done", "1.2"])
    assert fast.returncode == 0
    assert re.fullmatch(
        r"\[x\] 1\.2 Read Bank!A1:D90 \(the export from the 2nd\) ✅ \d{4}-\d{2}-\d{2}\n",
        fast.stdout,
    )
    assert re.search(
        r"^- \[x\] 1\.2 Read Bank!A1:D90 \(the export from the 2nd\) ✅ ", fast_file, re.M
    )
    modules = _modules(tmp_path / "fast")
    assert "click" not in modules
    assert "plankit.checklist.manager" in modules  # the same library call as the command
    assert not [m for m in modules if m.startswith("plankit.markdown.tree")]


def test_an_unknown_step_is_answered_by_the_click_command(tmp_path: Path) -> None:
    (fast, fast_file), _ = _both(tmp_path, ["checklist", "done", "3.1"])
    assert fast.returncode == 1
    assert "plankit checklist: no task '3.1'" in fast.stderr
    assert fast_file == PLAN
    assert "click" in _modules(tmp_path / "fast")


def test_the_store_named_in_the_environment_is_used(tmp_path: Path) -> None:
    (fast, fast_file), (slow, slow_file) = _both(
        tmp_path, ["checklist", "done", "1.3"], {"PLANKIT_STORE": "close.md"}
    )
    assert fast.returncode == slow.returncode == 0
    assert "- [x] 1.3 Compare totals" in fast_file
    assert TODAY.sub("", fast_file) == TODAY.sub("", slow_file)
    assert "click" not in _modules(tmp_path / "fast")


def test_a_plan_the_scan_is_unsure_of_is_parsed_and_marked_the_same(tmp_path: Path) -> None:
    quoted = "> Written by the planner; edit freely.\n\n" + PLAN
    (fast, fast_file), (slow, slow_file) = _both(
        tmp_path, ["checklist", "done", "1.2"], plan=quoted
    )
    assert fast.returncode == slow.returncode == 0
    assert TODAY.sub("", fast.stdout) == TODAY.sub("", slow.stdout)
    assert TODAY.sub("", fast_file) == TODAY.sub("", slow_file) != TODAY.sub("", quoted)


def test_terminal_escapes_in_a_title_are_stripped_as_click_strips_them(tmp_path: Path) -> None:
    plan = PLAN.replace("Compare totals", "Compare \x1b[31mtotals\x1b[0m")
    (fast, _), (slow, _) = _both(tmp_path, ["checklist", "done", "1.3"], plan=plan)
    assert fast.returncode == slow.returncode == 0
    assert "\x1b" not in fast.stdout
    assert TODAY.sub("", fast.stdout) == TODAY.sub("", slow.stdout)


def _closed_or_gone(code: str, args: list[str], cwd: Path, how: str) -> tuple[int, str]:
    """Run with standard output closed (``closed``) or a pipe nobody reads (``gone``)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PLANKIT_STORE", "PLANKIT_CELL")}
    env["MODULES_OUT"] = str(cwd / MODULES)
    if how == "closed":
        argv = ["sh", "-c", 'exec "$0" "$@" >&-', sys.executable, "-c", code, *args]
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
        return done.returncode, done.stderr
    # the child starts only once the reader is gone: a pipe's writing end then polls
    # as an error, so what it writes next always fails, however the two are scheduled
    wait = "import select; p = select.poll(); p.register(1, select.POLLERR); p.poll(60000); "
    child = subprocess.Popen(
        [sys.executable, "-c", wait + code, *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()
    stderr = child.stderr.read()
    return child.wait(), stderr


@pytest.mark.parametrize("how", ["closed", "gone"])
@pytest.mark.parametrize(
    ("script", "module", "args"),
    [
        ("teddy", "plankit.teddy.cli", ["--help"]),
        ("plankit", "plankit.cli", ["checklist", "done", "1.2"]),
    ],
)
def test_a_closed_or_abandoned_standard_output_ends_as_with_click(
    tmp_path: Path, how: str, script: str, module: str, args: list[str]
) -> None:
    outcomes = []
    for name, code in (("fast", LAUNCH.format(script)), ("slow", CLICK.format(module, script))):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "PLAN.md").write_text(PLAN, encoding="utf-8")
        status, stderr = _closed_or_gone(code, args, folder, how)
        outcomes.append((status, stderr, TODAY.sub("", (folder / "PLAN.md").read_text("utf-8"))))
    assert outcomes[0] == outcomes[1]
    assert "Traceback" not in outcomes[0][1]
    assert "click" not in _modules(tmp_path / "fast")
