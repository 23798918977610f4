"""The plan kept inside a user's large workbook: an update rewrites the plan sheet only.

A workbook with a 100,000-row data sheet (numbers, text, a formula a row) and the plan
sheet.  ``PlanManager.complete_task`` / ``start_task`` on the plan (lock, read the zip
directory and the plan sheet, change one cell, write the new package with every other
part copied as it is, fsync, rename) ÷ openpyxl loading and saving the same workbook
once, which is what an update cost when the whole workbook went through openpyxl
(target ≤ 0.3).

``--rounds N`` sets the rounds.  Prints the figures and the ratio; exits 0.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from _bench import Result, interleaved, log, report, require, rounds_from_argv
from plankit.checklist import PlanManager, XlsxWorkbook

TARGET = 0.3
ROWS = 100_000


def make_workbook(path: Path, rows: int) -> None:
    """A workbook with a ``Data`` sheet of ``rows`` rows, then the plan sheet."""
    import openpyxl

    wb = openpyxl.Workbook(write_only=True)
    data = wb.create_sheet("Data")
    data.append(["SKU", "Region", "Quantity", "Unit price", "Total"])
    for i in range(2, rows + 2):
        data.append([f"SKU-{i:06d}", f"Region {i % 17}", i % 500, (i % 97) * 1.25, f"=C{i}*D{i}"])
    wb.save(path)
    PlanManager(XlsxWorkbook(path)).init_plan(raise_errors=True)


def measure(rounds: int = 3) -> list[Result]:
    """The ratio for the 100,000-row workbook."""
    import openpyxl

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / "large.xlsx"
        scratch = folder / "large-openpyxl.xlsx"
        log(f"xlsx large workbook: writing {ROWS:,} rows …")
        make_workbook(path, ROWS)
        manager = PlanManager(XlsxWorkbook(path))
        state = {"done": False}

        def update() -> None:
            if state["done"]:
                manager.start_task("1.1")
            else:
                manager.complete_task("1.1")
            state["done"] = not state["done"]

        def baseline() -> None:
            wb = openpyxl.load_workbook(path)
            wb.save(scratch)

        log(f"xlsx large workbook: {path.stat().st_size:,} bytes, {rounds} rounds …")
        medians = interleaved({"update": update, "openpyxl": baseline}, rounds)
        plan = manager.get_plan()
        require(plan is not None and plan.task("1.1") is not None, "the plan is readable")
        ratio = medians["update"] / medians["openpyxl"]
        detail = (
            f"update {medians['update'] * 1e3:.0f} ms, openpyxl load+save "
            f"{medians['openpyxl'] * 1e3:.0f} ms, {path.stat().st_size / 1e6:.1f} MB"
        )
        return [Result(f"xlsx update ÷ openpyxl ({ROWS:,}-row data sheet)", ratio, TARGET, detail)]


def main() -> int:
    return report(measure(rounds_from_argv(3)))


if __name__ == "__main__":
    sys.exit(main())
