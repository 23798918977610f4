"""The xlsx store inside a user's own workbook: only the plan sheet's part changes.

Workbooks written by openpyxl (and, in ``test_xlsx_libreoffice.py``, saved by
LibreOffice) get a plan, then updates.  Every other part of the package is compared
byte for byte before and after (its compressed bytes too); the parts a new sheet must
change (``workbook.xml``, its relationships, the content types) differ by exactly the
one element added.  Values are read back with python-calamine, an independent reader.
These tests run in the test process; the LibreOffice ones start ``soffice``.
"""

from __future__ import annotations

import re
import struct
import zipfile
from pathlib import Path

import openpyxl
import pytest
from python_calamine import CalamineWorkbook

from plankit.checklist import PlanManager, StoreError, XlsxWorkbook, parse_plan
from plankit.checklist.render import STARTER_PLAN
from plankit.checklist.stores.xlsx_package import Package

NEW_SHEET_PARTS = {"xl/workbook.xml", "xl/_rels/workbook.xml.rels", "[Content_Types].xml"}


def parts(path: Path) -> dict[str, bytes]:
    """Every part's bytes, uncompressed."""
    with zipfile.ZipFile(path) as z:
        return {info.filename: z.read(info) for info in z.infolist()}


def raw_members(path: Path) -> dict[str, bytes]:
    """Every member's compressed bytes, as stored in the file."""
    data = path.read_bytes()
    out = {}
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            at = info.header_offset
            name_len, extra_len = struct.unpack("<2H", data[at + 26 : at + 30])
            start = at + 30 + name_len + extra_len
            out[info.filename] = data[start : start + info.compress_size]
    return out


def rows(path: Path, sheet: str) -> list[list[object]]:
    book = CalamineWorkbook.from_path(str(path))
    return book.get_sheet_by_name(sheet).to_python(skip_empty_area=False)


def sheet_part(path: Path, name: str) -> str:
    package = Package(path.read_bytes(), str(path))
    found = package.sheet(name)
    assert found is not None and found.part is not None
    return found.part


def without(xml: bytes, pattern: str) -> bytes:
    """``xml`` with the one element matching ``pattern`` cut out."""
    text = xml.decode("utf-8")
    found = re.findall(pattern, text)
    assert len(found) == 1, (pattern, found)
    return text.replace(found[0], "", 1).encode("utf-8")


def make_source(path: Path, *, plan_sheet: bool) -> None:
    """A workbook as a user has one: numbers, formulas, a styled cell, a chart, a
    defined name, a second sheet; with ``plan_sheet`` also an AGENT_BASE sheet holding
    the starter plan and other cells."""
    from openpyxl.chart import BarChart, Reference
    from openpyxl.styles import Font, PatternFill
    from openpyxl.workbook.defined_name import DefinedName

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Data"
    ws["A1"], ws["A2"], ws["A3"], ws["B1"] = 1, 2, "=SUM(A1:A2)", "=A3*2+1"
    ws["C1"] = "Label"
    ws["C1"].font = Font(bold=True)
    ws["C1"].fill = PatternFill("solid", fgColor="FFFF00")
    for i in range(5, 15):
        ws[f"A{i}"], ws[f"B{i}"] = i, f"item {i}"
    chart = BarChart()
    chart.add_data(Reference(ws, min_col=1, min_row=5, max_row=14))
    ws.add_chart(chart, "E5")
    wb.defined_names["Totals"] = DefinedName("Totals", attr_text="Data!$A$3")
    wb.create_sheet("Notes")["A1"] = "keep me"
    if plan_sheet:
        plan = wb.create_sheet("AGENT_BASE")
        plan["A1"] = 42
        plan["C1"] = "PLAN.md Contents"
        plan["C2"] = STARTER_PLAN
        plan["D5"] = "=A1*2"
        plan["E2"] = "after the plan"
    wb.save(path)


def check_new_sheet(before: dict[str, bytes], path: Path, raw_before: dict[str, bytes]) -> str:
    """Every part but the three a new sheet changes is the same, compressed bytes too;
    those three differ by the one element added.  Returns the new sheet's part."""
    after = parts(path)
    added = sorted(set(after) - set(before))
    assert len(added) == 1 and added[0].startswith("xl/worksheets/sheet"), added
    assert set(before) <= set(after)
    raw_after = raw_members(path)
    for name in set(before) - NEW_SHEET_PARTS:
        assert after[name] == before[name], name
        assert raw_after[name] == raw_before[name], name
    assert (
        without(after["xl/workbook.xml"], r'<sheet name="AGENT_BASE"[^>]*/>')
        == before["xl/workbook.xml"]
    )
    target = added[0].removeprefix("xl/")
    assert (
        without(after["xl/_rels/workbook.xml.rels"], rf'<Relationship [^>]*Target="{target}"/>')
        == before["xl/_rels/workbook.xml.rels"]
    )
    assert (
        without(after["[Content_Types].xml"], rf'<Override PartName="/{added[0]}"[^>]*/>')
        == before["[Content_Types].xml"]
    )
    return added[0]


def check_only_part_changed(
    before: dict[str, bytes], raw_before: dict[str, bytes], path: Path, part: str
) -> None:
    after, raw_after = parts(path), raw_members(path)
    with zipfile.ZipFile(path) as z:  # each part once, in the order it had
        assert z.namelist() == list(before)
    changed = sorted(name for name in after if after[name] != before[name])
    assert changed == [part]
    assert sorted(name for name in raw_after if raw_after[name] != raw_before[name]) == [part]


def run_updates(path: Path) -> PlanManager:
    manager = PlanManager(XlsxWorkbook(path))
    manager.complete_task("1.1")
    manager.block_task("1.2", "headers are merged — unmerge first")
    manager.add_step("Check the chart", after="1.3")
    manager.append_note("the chart on Data reads A5:A14")
    return manager


def test_an_openpyxl_workbook_keeps_every_other_part(tmp_path: Path) -> None:
    path = tmp_path / "book.xlsx"
    make_source(path, plan_sheet=False)
    before, raw_before = parts(path), raw_members(path)
    PlanManager(XlsxWorkbook(path)).init_plan(raise_errors=True)
    plan_part = check_new_sheet(before, path, raw_before)
    # openpyxl declares the relationships namespace on each <sheet>, so the new one does
    assert (
        '<sheet name="AGENT_BASE" sheetId="3" xmlns:r="http://schemas.openxmlformats.org/'
        'officeDocument/2006/relationships" r:id="rId5"/></sheets>'
    ) in parts(path)["xl/workbook.xml"].decode()
    settled, raw_settled = parts(path), raw_members(path)
    manager = run_updates(path)
    check_only_part_changed(settled, raw_settled, path, plan_part)
    plan = manager.get_plan()
    assert plan is not None and rows(path, "AGENT_BASE")[1][2] == plan.raw
    loaded = openpyxl.load_workbook(path)
    assert loaded.sheetnames == ["Data", "Notes", "AGENT_BASE"]
    assert loaded["Data"]["A3"].value == "=SUM(A1:A2)"
    assert "Totals" in loaded.defined_names
    assert "xl/charts/chart1.xml" in parts(path)


# --- Excel's sheet-name rules -----------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("P" * 32, "is 32 characters; Excel allows at most 31"),
        ("History", "is reserved by Excel"),
        ("history", "is reserved by Excel"),
        ("'quoted", "starts or ends with an apostrophe, which Excel does not allow"),
        ("quoted'", "starts or ends with an apostrophe, which Excel does not allow"),
        ("a:b", "contains :, which Excel does not allow"),
        ("a?b", "contains ?, which Excel does not allow"),
        ("Q3 [draft]/*", "contains * / [ ], which Excel does not allow"),
        ("  ", "is empty"),
    ],
)
def test_excel_sheet_name_rules(name: str, why: str, tmp_path: Path) -> None:
    path = tmp_path / "book.xlsx"
    make_source(path, plan_sheet=False)
    before = path.read_bytes()
    with pytest.raises(StoreError, match=re.escape(why)) as caught:
        XlsxWorkbook(path).create_sheet(name)
    assert caught.value.code == "bad-sheet-name"
    assert str(caught.value) == (
        f"sheet name {name!r} {why}; choose another plan cell with --cell, e.g. AGENT_BASE!C2"
    )
    quoted = "'" + name.replace("'", "''") + "'"
    if name.strip() and not set(name) & set("?:[]*/"):  # a cell reference cannot name those
        with pytest.raises(StoreError, match=re.escape(why)):
            PlanManager(XlsxWorkbook(path), f"{quoted}!C2").init_plan(raise_errors=True)
    assert path.read_bytes() == before
    with pytest.raises(StoreError, match=re.escape(why)):  # a new file is not made either
        XlsxWorkbook(tmp_path / "new.xlsx").create_sheet(name)
    assert not (tmp_path / "new.xlsx").exists()
    assert XlsxWorkbook(path).list_sheets() == ["Data", "Notes"]


def test_a_sheet_name_of_31_characters_with_an_inner_apostrophe_is_allowed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "book.xlsx"
    make_source(path, plan_sheet=False)
    name = "Q4 plan for the agent's work 01"
    assert len(name) == 31
    XlsxWorkbook(path).create_sheet(name)
    assert XlsxWorkbook(path).list_sheets() == ["Data", "Notes", name]


def test_sheet_names_are_one_name_in_any_case(tmp_path: Path) -> None:
    path = tmp_path / "book.xlsx"
    wb = openpyxl.Workbook()
    wb.active.title = "agent_base"
    wb.active["C2"] = STARTER_PLAN
    wb.save(path)
    store = XlsxWorkbook(path)
    assert parse_plan(store.get_cell("AGENT_BASE!C2")).title == "Getting Started with Sheet Agent"
    with pytest.raises(StoreError, match=r"'agent_base' already exists \(Excel ignores case"):
        store.create_sheet("AGENT_BASE")
    with pytest.raises(StoreError) as caught:
        store.create_sheet("agent_base")
    assert str(caught.value) == "a sheet named 'agent_base' already exists"
    assert caught.value.code == "sheet-exists"
    assert PlanManager(store).complete_task("1.1").status == "done"
    assert "[x] 1.1" in str(rows(path, "agent_base")[1][2])


# --- the sheet XML ----------------------------------------------------------------------


def test_cells_and_rows_are_inserted_in_order(tmp_path: Path) -> None:
    path = tmp_path / "book.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "S"
    ws["A1"], ws["A3"], ws["A2"], ws["E2"] = "a1", "a3", "a2", "e2"
    wb.save(path)
    store = XlsxWorkbook(path)
    for ref, value in [("S!C2", "c2"), ("S!B5", "b5"), ("S!F1", "f1"), ("S!A4", "a4")]:
        store.set_cell(ref, value)
    table = rows(path, "S")
    assert table[0][:6] == ["a1", "", "", "", "", "f1"]
    assert table[1][:5] == ["a2", "", "c2", "", "e2"]
    assert [r[0] for r in table[2:5]] == ["a3", "a4", ""] and table[4][1] == "b5"
    loaded = openpyxl.load_workbook(path)["S"]
    assert loaded.dimensions == "A1:F5"
    store.set_cell("S!C2", "")  # an empty value removes the cell
    assert rows(path, "S")[1][2] == "" and store.get_cell("S!C2") == ""


def test_a_prefixed_namespace_and_self_closing_rows(tmp_path: Path) -> None:
    path = tmp_path / "book.xlsx"
    wb = openpyxl.Workbook()
    wb.active.title = "S"
    wb.save(path)
    name = sheet_part(path, "S")
    content = parts(path)
    content[name] = (
        b'<?xml version="1.0" encoding="UTF-8"?>\n<x:worksheet xmlns:x="http://schemas.openxmlformats.org/'
        b'spreadsheetml/2006/main"><x:dimension ref="A1"/><x:sheetData><x:row r="2" spans="1:1"/>'
        b'<x:row r="3"><x:c r="A3" t="inlineStr"><x:is><x:t>a3</x:t></x:is></x:c></x:row>'
        b"</x:sheetData></x:worksheet>"
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for part, data in content.items():
            z.writestr(part, data)
    store = XlsxWorkbook(path)
    assert store.get_cell("S!A3") == "a3"
    store.set_cell("S!C2", "<plan> & 'quotes' \r\n_x0041_ \x01")
    xml = parts(path)[name].decode()
    assert '<x:row r="2"><x:c r="C2" t="inlineStr"><x:is><x:t xml:space="preserve">' in xml
    assert store.get_cell("S!C2") == "<plan> & 'quotes' \r\n_x0041_ \x01"
    assert rows(path, "S")[1][2] == "<plan> & 'quotes' \r\n_x0041_ \x01"
    # openpyxl keeps Excel's escapes in inline strings as they are
    loaded = openpyxl.load_workbook(path)["S"]["C2"].value
    assert loaded == "<plan> & 'quotes' _x000D_\n_x005F_x0041_ _x0001_"


def test_overwriting_a_formula_drops_the_calculation_chain(tmp_path: Path) -> None:
    path = tmp_path / "book.xlsx"
    wb = openpyxl.Workbook()
    wb.active.title = "S"
    wb.active["A1"], wb.active["C2"] = 1, "=A1+1"
    wb.save(path)
    content = parts(path)
    content["xl/calcChain.xml"] = (
        b'<?xml version="1.0" encoding="UTF-8"?>\n<calcChain xmlns="http://schemas.openxmlformats.org/'
        b'spreadsheetml/2006/main"><c r="C2" i="1"/></calcChain>'
    )
    rels = content["xl/_rels/workbook.xml.rels"].decode()
    content["xl/_rels/workbook.xml.rels"] = rels.replace(
        "</Relationships>",
        '<Relationship Id="rId99" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/calcChain" Target="calcChain.xml"/></Relationships>',
    ).encode()
    types = content["[Content_Types].xml"].decode()
    content["[Content_Types].xml"] = types.replace(
        "</Types>",
        '<Override PartName="/xl/calcChain.xml" ContentType="application/vnd.openxmlformats-'
        'officedocument.spreadsheetml.calcChain+xml"/></Types>',
    ).encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for part, data in content.items():
            z.writestr(part, data)
    store = XlsxWorkbook(path)
    assert store.get_cell("S!C2") == "=A1+1"  # never calculated: read as the formula
    store.set_cell("S!C2", "text now")
    after = parts(path)
    assert "xl/calcChain.xml" not in after
    assert b"calcChain" not in after["xl/_rels/workbook.xml.rels"]
    assert b"calcChain" not in after["[Content_Types].xml"]
    # the two lists are as they were before the chain was made, every other byte kept
    assert after["xl/_rels/workbook.xml.rels"].decode() == rels
    assert after["[Content_Types].xml"].decode() == types
    assert openpyxl.load_workbook(path)["S"]["C2"].value == "text now"


def test_a_shared_formula_other_cells_use_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "book.xlsx"
    wb = openpyxl.Workbook()
    wb.active.title = "S"
    wb.save(path)
    name = sheet_part(path, "S")
    content = parts(path)
    content[name] = re.sub(
        rb"<sheetData\s*/>|<sheetData>\s*</sheetData>",
        b'<sheetData><row r="2"><c r="C2"><f t="shared" ref="C2:C4" si="0">A2*2</f><v>0</v></c>'
        b"</row></sheetData>",
        content[name],
    )
    assert b"shared" in content[name]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for part, data in content.items():
            z.writestr(part, data)
    before = path.read_bytes()
    with pytest.raises(StoreError, match="shared or array formula") as caught:
        XlsxWorkbook(path).set_cell("S!C2", "plan")
    assert caught.value.code == "formula-cell"
    assert path.read_bytes() == before


def test_a_workbook_without_its_parts_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "book.xlsx"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("hello.txt", "not a workbook inside")
    with pytest.raises(StoreError) as caught:
        PlanManager(XlsxWorkbook(path)).get_plan()
    assert str(caught.value) == (
        f"{path} could not be read as an xlsx workbook (the part xl/workbook.xml is missing); "
        "nothing was changed"
    )
    assert caught.value.code == "not-a-workbook"
