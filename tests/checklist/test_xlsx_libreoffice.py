"""The xlsx store on workbooks LibreOffice saved, and LibreOffice opening the result.

The source workbooks are made with openpyxl (numbers, formulas, a chart, a defined
name, a second sheet) and converted with ``soffice --headless --convert-to xlsx``, so
formulas carry cached values as in any saved workbook.  These tests start LibreOffice
in another process, so mutation runs leave this file out; the checks they share with
the in-process tests live in ``test_xlsx_package.py``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import openpyxl
import pytest

from plankit.checklist import PlanManager, XlsxWorkbook
from tests.checklist.test_xlsx_package import (
    check_new_sheet,
    check_only_part_changed,
    make_source,
    parts,
    raw_members,
    rows,
    run_updates,
    sheet_part,
)

SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")


def convert(sources: list[Path], out: Path, profile: Path) -> None:
    assert SOFFICE is not None
    subprocess.run(
        [
            SOFFICE,
            f"-env:UserInstallation={profile.as_uri()}",
            "--headless",
            "--convert-to",
            "xlsx",
            "--outdir",
            str(out),
            *map(str, sources),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def libreoffice(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two workbooks saved by LibreOffice (one conversion for both): ``new`` without a
    plan sheet, ``existing`` with one; plus the profile folder for more conversions."""
    if SOFFICE is None:
        pytest.skip(
            "LibreOffice is not installed (no soffice or libreoffice on PATH): these tests "
            "need workbooks LibreOffice saved; tools/test-deps installs libreoffice-calc (as root)"
        )
    folder = tmp_path_factory.mktemp("libreoffice")
    new, existing = folder / "new.xlsx", folder / "existing.xlsx"
    make_source(new, plan_sheet=False)
    make_source(existing, plan_sheet=True)
    convert([new, existing], folder / "saved", folder / "profile")
    return {
        "new": folder / "saved" / "new.xlsx",
        "existing": folder / "saved" / "existing.xlsx",
        "profile": folder / "profile",
    }


def test_a_libreoffice_workbook_gets_a_plan_sheet_and_nothing_else_changes(
    libreoffice: dict[str, Path], tmp_path: Path
) -> None:
    path = tmp_path / "book.xlsx"
    shutil.copyfile(libreoffice["new"], path)
    assert rows(path, "Data")[0][:2] == [1.0, 7.0] and rows(path, "Data")[2][0] == 3.0
    before, raw_before = parts(path), raw_members(path)
    assert "xl/charts/chart1.xml" in before and b"Totals" in before["xl/workbook.xml"]

    PlanManager(XlsxWorkbook(path)).init_plan(raise_errors=True)
    plan_part = check_new_sheet(before, path, raw_before)

    settled, raw_settled = parts(path), raw_members(path)
    manager = run_updates(path)
    check_only_part_changed(settled, raw_settled, path, plan_part)

    # read back by an independent reader: the formulas' cached values and the plan
    data = rows(path, "Data")
    assert data[0][:3] == [1.0, 7.0, "Label"] and data[2][0] == 3.0
    assert rows(path, "Notes")[0][0] == "keep me"
    plan = manager.get_plan()
    assert plan is not None
    assert rows(path, "AGENT_BASE")[1][2] == plan.raw
    assert rows(path, "AGENT_BASE")[0][2] == "PLAN.md Contents"
    assert [t.step for t in plan.tasks][:4] == ["1.1", "1.2", "1.3", "1.4"]
    assert openpyxl.load_workbook(path)["AGENT_BASE"]["C2"].value == plan.raw
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None

    # and LibreOffice opens it: converted again, the plan is there
    convert([path], tmp_path / "again", libreoffice["profile"])
    again = tmp_path / "again" / "book.xlsx"
    assert rows(again, "AGENT_BASE")[1][2] == plan.raw
    assert rows(again, "Data")[0][:2] == [1.0, 7.0]


def test_a_plan_sheet_saved_by_libreoffice_is_changed_in_its_one_cell(
    libreoffice: dict[str, Path], tmp_path: Path
) -> None:
    path = tmp_path / "existing.xlsx"
    shutil.copyfile(libreoffice["existing"], path)
    part = sheet_part(path, "AGENT_BASE")
    before, raw_before = parts(path), raw_members(path)
    assert b"Getting Started with Sheet Agent" in before["xl/sharedStrings.xml"]
    manager = PlanManager(XlsxWorkbook(path))
    assert manager.init_plan(raise_errors=True).title == "Getting Started with Sheet Agent"
    assert parts(path) == before  # adopted, nothing written

    manager.complete_task("1.1")
    check_only_part_changed(before, raw_before, path, part)
    cell = r'<c r="C2"[^>]*?(?:/>|>.*?</c>)'
    old_xml, new_xml = before[part].decode(), parts(path)[part].decode()
    assert re.sub(cell, "", old_xml, flags=re.S) == re.sub(cell, "", new_xml, flags=re.S)
    assert 't="inlineStr"' in re.search(cell, new_xml, flags=re.S).group(0)  # type: ignore[union-attr]
    table = rows(path, "AGENT_BASE")
    assert table[0][0] == 42.0 and table[4][3] == 84.0 and table[1][4] == "after the plan"
    assert "- [x] 1.1 List available sheets" in str(table[1][2])
