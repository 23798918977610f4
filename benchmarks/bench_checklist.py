"""PLAN.md checklists: status updates on a large plan, and the xlsx round trip.

1. ``update_task_status`` on a generated 50,000-character plan with about 800 tasks:
   microseconds per update (target ≤ 1 ms), reported as a ratio to 1 ms, and the time
   of updating the *last* task ÷ updating the *first* (target ≤ 2: the cost does not
   depend on where the task is).  *Chained* updates feed each result to the next call,
   as a PlanManager does: the plan's structure is parsed once and kept.  *Cold* updates
   get a text never seen before (a fresh process, another writer): the task line is
   found with regular expressions (``plankit.checklist.scan``), without parsing the
   plan; the detail also gives the cost of a cold update that falls back to parsing
   (Markdown the regular expressions cannot be sure of, here a block quote on top).
2. ``XlsxWorkbook``: ``PlanManager.complete_task`` (lock, read the workbook, update,
   write it to a temporary file, fsync, rename) ÷ openpyxl alone loading and saving
   the same workbook once (target ≤ 1.5), for a workbook holding only the plan and for
   one that also holds a 1,000-row data sheet.

``--rounds N`` sets the rounds.  Prints the figures and the ratios; exits 0.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _bench import Result, interleaved, log, report, require, rounds_from_argv
from plankit.checklist import (
    PlanManager,
    XlsxWorkbook,
    locate,
    parse_plan,
    scan,
    update_task_status,
)

STEP_TARGET_MS = 1.0
POSITION_TARGET = 2.0
XLSX_TARGET = 1.5


def generate_plan(chars: int, *, step_width: int = 64) -> str:
    """A plan of about ``chars`` characters: 10 tasks a phase, sheet ranges in titles."""
    out = [
        "# Plan: Quarterly reconciliation",
        "",
        "Goal: Reconcile every region's orders with the warehouse counts",
        "",
        "## Analysis",
        "",
        "- Spreadsheet: Operations 2026",
        "- Key sheets: Orders, Warehouse, Summary",
        "",
        "## Questions for User",
        "",
        "- Which regions are in scope?",
        "",
    ]
    size = sum(len(line) + 1 for line in out)
    phase = 0
    while size < chars - 200:
        phase += 1
        out += [f"### Phase {phase}: Region {phase}", ""]
        for step in range(1, 11):
            title = f"Read Orders{phase}!A2:F{step}00 (order id, date, SKU, qty)"
            line = f"- [ ] {phase}.{step} {title}".ljust(step_width, ".")
            out.append(line)
            size += len(line) + 1
        out.append("")
    out += ["## Notes", "", "- Counts come from the January export"]
    return "\n".join(out) + "\n"


def _status_cases(text: str, first: str, last: str) -> dict[str, Callable[[], None]]:
    """Chained updates of the first and of the last task, flipping doing/todo."""
    texts = {"first": text, "last": text}
    flips = {"first": False, "last": False}

    def chained(key: str, step: str) -> None:
        flips[key] = not flips[key]
        texts[key] = update_task_status(texts[key], step, "doing" if flips[key] else "todo")

    return {
        "first": lambda: chained("first", first),
        "last": lambda: chained("last", last),
    }


def measure_updates(rounds: int) -> list[Result]:
    text = generate_plan(50_000)
    plan = parse_plan(text)
    tasks = plan.tasks
    require(45_000 <= len(text) <= 55_000, f"plan is {len(text)} characters")
    require(700 <= len(tasks) <= 900, f"plan has {len(tasks)} tasks")
    first, last = tasks[0].step, tasks[-1].step
    log(f"update_task_status: {len(text):,} characters, {len(tasks)} tasks, {rounds} rounds …")

    cases = _status_cases(text, first, last)
    for func in cases.values():
        func()
    medians = interleaved(dict(cases), rounds * 50)
    worst = max(medians.values())
    position = medians["last"] / medians["first"]

    counter = [0]

    def cold(step: str) -> None:
        counter[0] += 1
        fresh = text.replace("Goal: ", f"Goal: ({counter[0]}) ", 1)  # never seen before
        update_task_status(fresh, step, "done")

    quoted = "> A block quote: the regular expressions leave this plan to the parser\n\n" + text

    def fallback() -> None:
        counter[0] += 1
        fresh = quoted.replace("Goal: ", f"Goal: ({counter[0]}) ", 1)
        update_task_status(fresh, last, "done")

    require(scan.task_line_start(text, last) is not scan.UNSURE, "the fast path is unsure")
    require(scan.task_line_start(quoted, last) is scan.UNSURE, "the fallback is not taken")
    cold_medians = interleaved(
        {"first": lambda: cold(first), "last": lambda: cold(last), "fallback": fallback},
        max(5, rounds),
    )
    cold_worst = max(cold_medians["first"], cold_medians["last"])

    # a session: every task started then completed, first to last (1,540 updates)
    walk = text
    locate.analyze(walk)  # the structure is read here, not timed below
    start = time.perf_counter()
    for task in tasks:
        walk = update_task_status(walk, task.step, "doing")
        walk = update_task_status(walk, task.step, "done")
    per_update = (time.perf_counter() - start) / (2 * len(tasks))
    require(all(t.status == "done" for t in parse_plan(walk).tasks), "the walk missed a task")
    detail = (
        f"{len(text):,} chars, {len(tasks)} tasks; first {medians['first'] * 1e6:.0f} µs, "
        f"last {medians['last'] * 1e6:.0f} µs per update; all tasks in turn "
        f"{per_update * 1e6:.0f} µs per update"
    )
    worst = max(worst, per_update)
    return [
        Result("update_task_status chained ÷ 1 ms", worst * 1e3 / STEP_TARGET_MS, 1.0, detail),
        Result(
            "update_task_status last ÷ first task",
            position,
            POSITION_TARGET,
            f"chained; cold: last ÷ first {cold_medians['last'] / cold_medians['first']:.2f}",
        ),
        Result(
            "update_task_status cold ÷ 1 ms",
            cold_worst * 1e3 / STEP_TARGET_MS,
            1.0,
            f"a text never seen, no parse: first {cold_medians['first'] * 1e6:.0f} µs, last "
            f"{cold_medians['last'] * 1e6:.0f} µs; falling back to parsing "
            f"{cold_medians['fallback'] * 1e3:.2f} ms",
        ),
    ]


def _workbook(path: Path, data_rows: int) -> int:
    """Write a workbook with a ~28,000-character plan (and a data sheet); its step count."""
    import openpyxl

    text = generate_plan(28_000, step_width=60)
    wb = openpyxl.Workbook()
    if data_rows:
        data = wb.active
        data.title = "Orders"
        for row in range(1, data_rows + 1):
            data.append([f"ORD-{row:05d}", "2026-01-09", f"SKU-{row % 97}", row % 13, 9.99, "ok"])
        sheet = wb.create_sheet("AGENT_BASE")
    else:
        sheet = wb.active
        sheet.title = "AGENT_BASE"
    sheet["C1"] = "PLAN.md Contents"
    sheet["C2"] = text
    wb.save(path)
    return len(parse_plan(text).tasks)


def _xlsx_case(name: str, folder: Path, data_rows: int, rounds: int) -> Result:
    import openpyxl

    path = folder / f"{name}.xlsx"
    scratch = folder / f"{name}-baseline.xlsx"
    steps = _workbook(path, data_rows)
    require(steps >= rounds + 2, f"{name}: {steps} steps for {rounds} rounds")
    manager = PlanManager(XlsxWorkbook(path))
    plan = manager.get_plan()
    require(plan is not None, f"{name}: no plan in the workbook")
    assert plan is not None
    queue = [t.step for t in plan.tasks]

    def complete() -> None:
        manager.complete_task(queue.pop(0))

    def baseline() -> None:
        wb = openpyxl.load_workbook(path)
        wb.save(scratch)

    complete()
    baseline()  # warm up
    log(f"xlsx {name}: {path.stat().st_size:,} bytes, {rounds} rounds …")
    medians = interleaved({"complete_task": complete, "openpyxl": baseline}, rounds)
    done = manager.get_plan()
    require(
        done is not None and sum(t.status == "done" for t in done.tasks) == rounds + 1,
        f"{name}: not every complete_task was written",
    )
    ratio = medians["complete_task"] / medians["openpyxl"]
    detail = (
        f"complete_task {medians['complete_task'] * 1e3:.1f} ms, openpyxl load+save "
        f"{medians['openpyxl'] * 1e3:.1f} ms"
    )
    return Result(f"xlsx complete_task ÷ openpyxl ({name})", ratio, XLSX_TARGET, detail)


def measure_xlsx(rounds: int) -> list[Result]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        return [
            _xlsx_case("plan only", folder, 0, rounds),
            _xlsx_case("plan + 1,000-row sheet", folder, 1_000, rounds),
        ]


DONE_TARGET = 2.0

_PLAIN_DONE = r"""
import os, re, sys, tempfile
path, step = sys.argv[1], sys.argv[2]
with open(path, encoding="utf-8") as f:
    text = f.read()
text = re.sub(r"^- \[ \] " + re.escape(step) + " ", "- [x] " + step + " ", text, 1, re.M)
fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))
with os.fdopen(fd, "wb") as f:
    f.write(text.encode()); f.flush(); os.fsync(f.fileno())
os.replace(tmp, path)
"""


def measure_cli_done(rounds: int) -> Result:
    """``plankit checklist done STEP`` (the whole process, on a PLAN.md of 50,000
    characters never seen) ÷ a plain Python process that reads the file, replaces the
    checkbox with a regular expression and writes it atomically."""
    import re
    import subprocess

    text = generate_plan(50_000)
    steps = re.findall(r"^- \[ \] (\d+\.\d+) ", text, re.M)
    step = steps[len(steps) // 2]
    plankit = str(Path(sys.executable).parent / "plankit")
    with tempfile.TemporaryDirectory() as tmp:
        folders = {name: Path(tmp) / name for name in ("plankit", "plain")}
        for folder in folders.values():
            folder.mkdir()

        def run(name: str, argv: list[str]) -> None:
            (folders[name] / "PLAN.md").write_text(text, encoding="utf-8")
            done = subprocess.run(argv, cwd=folders[name], capture_output=True, text=True)
            require(done.returncode == 0, done.stderr)

        plain = folders["plain"] / "PLAN.md"
        log(f"plankit checklist done: {rounds} rounds …")
        times = interleaved(
            {
                "plankit": lambda: run("plankit", [plankit, "checklist", "done", step]),
                "plain": lambda: run(
                    "plain", [sys.executable, "-c", _PLAIN_DONE, str(plain), step]
                ),
            },
            rounds,
        )
        require("- [x] " + step in plain.read_text(encoding="utf-8"), "the plain script")
    detail = f"{times['plankit'] * 1e3:.0f} ms ÷ {times['plain'] * 1e3:.0f} ms"
    ratio = times["plankit"] / times["plain"]
    return Result("plankit checklist done ÷ plain read-replace-write", ratio, DONE_TARGET, detail)


def measure(rounds: int = 25) -> list[Result]:
    """Every checklist ratio."""
    results = measure_updates(rounds)
    locate.clear()
    results += measure_xlsx(rounds)
    results.append(measure_cli_done(rounds))
    return results


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(report(measure(rounds_from_argv(25))))
