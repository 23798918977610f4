"""What a cell of a user's workbook reads as, and how a sheet is added to it.

The workbooks here are written part by part the way Excel and LibreOffice write them
(shared strings with rich-text runs, booleans, errors, cached formula values, a
prefixed relationships namespace on the root), since openpyxl writes only some of
these shapes.  Each read is what Excel shows in the cell.
"""

from __future__ import annotations

import re
import struct
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from python_calamine import CalamineWorkbook

from plankit.checklist import PlanManager, StoreError, XlsxWorkbook
from plankit.checklist.stores.xlsx_package import Package
from tests.security.zipbombs import declaring_parts

MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PKG = "http://schemas.openxmlformats.org/package/2006/relationships"
XML_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n'


def excel_parts(sheet_data: str, shared: list[str] | None = None) -> dict[str, str]:
    """The parts of a one-sheet workbook called ``Data`` as Excel saves it."""
    rels = (
        f'<Relationship Id="rId1" Type="{RELS}/worksheet" Target="worksheets/sheet1.xml"/>'
        f'<Relationship Id="rId2" Type="{RELS}/styles" Target="styles.xml"/>'
    )
    types = (
        '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-'
        'officedocument.spreadsheetml.sheet.main+xml"/>'
        '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.'
        'openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    )
    parts = {
        "[Content_Types].xml": XML_HEAD
        + '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
        'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
        f"{types}</Types>",
        # Excel lists the document properties before the workbook
        "_rels/.rels": XML_HEAD + f'<Relationships xmlns="{PKG}"><Relationship Id="rId3" '
        f'Type="{RELS}/extended-properties" Target="docProps/app.xml"/><Relationship '
        f'Id="rId1" Type="{RELS}/officeDocument" Target="xl/workbook.xml"/></Relationships>',
        "docProps/app.xml": XML_HEAD + '<Properties xmlns="http://schemas.openxmlformats.org/'
        'officeDocument/2006/extended-properties"><Application>Microsoft Excel</Application>'
        "</Properties>",
        "xl/workbook.xml": XML_HEAD + f'<workbook xmlns="{MAIN}" xmlns:r="{RELS}"><sheets>'
        '<sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>',
        "xl/styles.xml": XML_HEAD + f'<styleSheet xmlns="{MAIN}"/>',
        "xl/worksheets/sheet1.xml": XML_HEAD + f'<worksheet xmlns="{MAIN}" xmlns:r="{RELS}">'
        f'<dimension ref="A1:D9"/><sheetData>{sheet_data}</sheetData></worksheet>',
    }
    if shared is not None:
        parts["xl/sharedStrings.xml"] = (
            XML_HEAD + f'<sst xmlns="{MAIN}" count="{len(shared)}" uniqueCount="{len(shared)}">'
            f"{''.join(shared)}</sst>"
        )
        parts["xl/_rels/workbook.xml.rels"] = (
            XML_HEAD + f'<Relationships xmlns="{PKG}">{rels}<Relationship Id="rId3" '
            f'Type="{RELS}/sharedStrings" Target="sharedStrings.xml"/></Relationships>'
        )
    else:
        parts["xl/_rels/workbook.xml.rels"] = (
            XML_HEAD + f'<Relationships xmlns="{PKG}">{rels}</Relationships>'
        )
    return parts


def save(path: Path, parts: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in parts.items():
            z.writestr(name, text.encode("utf-8"))
    return path


def book(tmp_path: Path, sheet_data: str, shared: list[str] | None = None) -> XlsxWorkbook:
    return XlsxWorkbook(save(tmp_path / "book.xlsx", excel_parts(sheet_data, shared)))


def calamine(path: Path, sheet: str) -> list[list[object]]:
    return (
        CalamineWorkbook.from_path(str(path))
        .get_sheet_by_name(sheet)
        .to_python(skip_empty_area=False)
    )


# --- what each kind of cell reads as -------------------------------------------------------


def test_numbers_read_as_excel_shows_them(tmp_path: Path) -> None:
    store = book(
        tmp_path,
        '<row r="1"><c r="A1"><v>42</v></c><c r="B1"><v>3.5</v></c><c r="C1"><v>2.0</v></c>'
        '<c r="D1"><v>-7</v></c></row>'
        '<row r="2"><c r="A2"><v>1E+15</v></c><c r="B2"><v>999999999999999</v></c>'
        '<c r="C2" t="n"><v>1.5E-3</v></c><c r="D2"><v>n/a</v></c></row>',
    )
    assert [store.get_cell(f"Data!{c}1") for c in "ABCD"] == ["42", "3.5", "2", "-7"]
    # from 10^15 on a whole number keeps the text Excel wrote: a float has no exact digits
    assert store.get_cell("Data!A2") == "1E+15"
    assert store.get_cell("Data!B2") == "999999999999999"
    assert store.get_cell("Data!C2") == "1.5E-3"
    assert store.get_cell("Data!D2") == "n/a"


def test_booleans_errors_dates_and_formula_text(tmp_path: Path) -> None:
    store = book(
        tmp_path,
        '<row r="1"><c r="A1" t="b"><v>1</v></c><c r="B1" t="b"><v>0</v></c>'
        '<c r="C1" t="b"><v>true</v></c><c r="D1" t="b"><v> 1 </v></c></row>'
        '<row r="2"><c r="A2" t="e"><f>1/0</f><v>#DIV/0!</v></c>'
        '<c r="B2" t="str"><f>"a"&amp;CHAR(13)</f><v>a_x000D_</v></c>'
        '<c r="C2" t="d"><v>2026-11-26T00:00:00</v></c></row>',
    )
    assert [store.get_cell(f"Data!{c}1") for c in "ABCD"] == ["TRUE", "FALSE", "TRUE", "TRUE"]
    assert store.get_cell("Data!A2") == "#DIV/0!"
    assert store.get_cell("Data!B2") == "a\r"
    assert store.get_cell("Data!C2") == "2026-11-26T00:00:00"


def test_a_formula_reads_as_its_cached_value_or_else_as_itself(tmp_path: Path) -> None:
    store = book(
        tmp_path,
        '<row r="1"><c r="A1"><v>21</v></c><c r="B1"><f>A1*2</f><v>42</v></c>'
        '<c r="C1"><f>A1*3</f><v></v></c><c r="D1"><f>A1*4</f></c></row>'
        '<row r="2"><c r="A2" s="3"/><c r="B2"><f></f></c></row>',
    )
    assert store.get_cell("Data!B1") == "42"
    assert store.get_cell("Data!C1") == "=A1*3"
    assert store.get_cell("Data!D1") == "=A1*4"
    assert store.get_cell("Data!A2") == ""  # a styled empty cell
    assert store.get_cell("Data!B2") == ""


def test_shared_strings_with_rich_text_and_phonetic_runs(tmp_path: Path) -> None:
    shared = [
        "<si><t>plain</t></si>",
        '<si><r><rPr><b/></rPr><t>Bold</t></r><r><t/></r><r><t xml:space="preserve"> and not</t></r>'
        "</si>",
        '<si><t>東京</t><rPh sb="0" eb="2"><t>トウキョウ</t></rPh><phoneticPr fontId="1"/></si>',
        "<si><t/></si>",
        "<si><t>line_x000D_</t></si>",
    ]
    store = book(
        tmp_path,
        '<row r="1">'
        + "".join(f'<c r="{c}1" t="s"><v>{i}</v></c>' for i, c in enumerate("ABCDE"))
        + '</row><row r="2"><c r="A2" t="s"><v>x</v></c></row>',
        shared,
    )
    got = [store.get_cell(f"Data!{c}1") for c in "ABCDE"]
    assert got == ["plain", "Bold and not", "東京", "", "line\r"]
    assert store.get_cell("Data!A2") == ""  # not an index: nothing to show


@pytest.mark.parametrize("index", ["5", "-1"])
def test_a_shared_string_that_does_not_exist_is_a_damaged_workbook(
    tmp_path: Path, index: str
) -> None:
    store = book(
        tmp_path, f'<row r="2"><c r="C2" t="s"><v>{index}</v></c></row>', ["<si><t>a</t></si>"]
    )
    with pytest.raises(StoreError, match=f"shared string {index}, which does not exist") as e:
        store.get_cell("Data!C2")
    assert e.value.code == "not-a-workbook"


def test_a_workbook_without_shared_strings_has_none_to_refer_to(tmp_path: Path) -> None:
    store = book(tmp_path, '<row r="2"><c r="C2" t="s"><v>0</v></c></row>')
    with pytest.raises(StoreError, match="shared string 0, which does not exist"):
        store.get_cell("Data!C2")


def test_a_sheet_that_is_not_there_reads_as_empty(tmp_path: Path) -> None:
    store = book(tmp_path, '<row r="2"><c r="C2"><v>5</v></c></row>')
    assert store.get_cell("AGENT_BASE!C2") == ""
    assert store.get_cell("data!C2") == "5"  # Excel's rule: a name in any case


def test_inline_strings_with_and_without_text(tmp_path: Path) -> None:
    store = book(
        tmp_path,
        '<row r="1"><c r="A1" t="inlineStr"><is><t>a_x0009_b</t></is></c>'
        '<c r="B1" t="inlineStr"></c>'
        '<c r="C1" t="inlineStr"><is><r><t>x</t></r><r><t>y</t></r></is></c></row>',
    )
    assert store.get_cell("Data!A1") == "a\tb"
    assert store.get_cell("Data!B1") == ""
    assert store.get_cell("Data!C1") == "xy"


# --- a sheet added to a workbook Excel wrote -----------------------------------------------


def test_a_plan_sheet_added_beside_excels_prefixed_relationships(tmp_path: Path) -> None:
    parts = excel_parts('<row r="1"><c r="A1"><v>1</v></c></row>')
    parts["xl/worksheets/sheet3.xml"] = parts["xl/worksheets/sheet1.xml"]
    parts["xl/workbook.xml"] = parts["xl/workbook.xml"].replace(
        "</sheets>", '<sheet name="Old" sheetId="4" r:id="rId7"/></sheets>'
    )
    parts["xl/_rels/workbook.xml.rels"] = parts["xl/_rels/workbook.xml.rels"].replace(
        "</Relationships>",
        f'<Relationship Id="rId7" Type="{RELS}/worksheet" Target="/xl/worksheets/sheet3.xml"/>'
        "</Relationships>",
    )
    # the styles' relationship renumbered, as after a sheet was deleted: rId2 is free
    for name in ("xl/_rels/workbook.xml.rels",):
        parts[name] = parts[name].replace('Id="rId2"', 'Id="rId8"')
    path = save(tmp_path / "book.xlsx", parts)
    manager = PlanManager(XlsxWorkbook(path))
    manager.init_plan(raise_errors=True)
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        workbook = z.read("xl/workbook.xml").decode()
        rels = z.read("xl/_rels/workbook.xml.rels").decode()
        types = z.read("[Content_Types].xml").decode()
    # the next free part, relationship id and sheet id; the r prefix the root declares
    assert "xl/worksheets/sheet2.xml" in names
    assert '<sheet name="AGENT_BASE" sheetId="5" r:id="rId2"/></sheets>' in workbook
    assert (
        f'<Relationship Id="rId2" Type="{RELS}/worksheet" Target="worksheets/sheet2.xml"/>' in rels
    )
    assert (
        '<Override PartName="/xl/worksheets/sheet2.xml" ContentType="application/vnd.'
        'openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>'
    ) in types
    assert XlsxWorkbook(path).list_sheets() == ["Data", "Old", "AGENT_BASE"]
    assert XlsxWorkbook(path).get_cell("Old!A1") == "1"
    plan = manager.get_plan()
    assert plan is not None
    assert calamine(path, "AGENT_BASE")[1][2] == plan.raw


def test_a_plan_sheet_added_to_a_package_laid_out_by_another_tool(tmp_path: Path) -> None:
    """The workbook part at the package root, relationship ids that are not rIdN (as the
    Open XML SDK writes them) and a prefixed relationships namespace: all valid."""
    parts: dict[str, str] = {}
    for name, text in excel_parts('<row r="1"><c r="A1"><v>1</v></c></row>').items():
        text = text.replace('Target="xl/workbook.xml"', 'Target="/workbook.xml"')
        text = text.replace('PartName="/xl/', 'PartName="/')
        text = text.replace('Id="rId1"', 'Id="R9a1f"').replace('Id="rId2"', 'Id="R4c2e"')
        text = text.replace('r:id="rId1"', 'r:id="R9a1f"')
        text = text.replace(
            f'<Relationships xmlns="{PKG}">', f'<pr:Relationships xmlns:pr="{PKG}">'
        )
        text = text.replace("<Relationship ", "<pr:Relationship ")
        text = text.replace("</Relationships>", "</pr:Relationships>")
        if name == "xl/workbook.xml":
            text = text.replace(f'<workbook xmlns="{MAIN}"', f'<x:workbook xmlns:x="{MAIN}"')
            text = re.sub(r"<(/?)(workbook|sheets|sheet)\b", r"<\1x:\2", text)
        if name == "[Content_Types].xml":
            text = re.sub(r"<(/?)(Types|Default|Override)\b", r"<\1ct:\2", text)
            text = text.replace("<ct:Types xmlns=", "<ct:Types xmlns:ct=")
        parts[name.removeprefix("xl/")] = text
    assert "_rels/workbook.xml.rels" in parts and "workbook.xml" in parts
    path = save(tmp_path / "book.xlsx", parts)
    PlanManager(XlsxWorkbook(path)).init_plan(raise_errors=True)
    with zipfile.ZipFile(path) as z:
        rels = z.read("_rels/workbook.xml.rels").decode()
        types = z.read("[Content_Types].xml").decode()
        names = z.namelist()
    # the new sheet goes where Excel puts sheets; its target is relative to the root
    assert "xl/worksheets/sheet1.xml" in names and "worksheets/sheet1.xml" in names
    assert (
        f'<pr:Relationship Id="rId1" Type="{RELS}/worksheet" Target="xl/worksheets/sheet1.xml"/>'
        "</pr:Relationships>"
    ) in rels
    assert '<ct:Override PartName="/xl/worksheets/sheet1.xml" ' in types
    workbook = zipfile.ZipFile(path).read("workbook.xml").decode()
    assert '<x:sheet name="AGENT_BASE" sheetId="2" r:id="rId1"/></x:sheets>' in workbook
    assert XlsxWorkbook(path).list_sheets() == ["Data", "AGENT_BASE"]
    assert calamine(path, "AGENT_BASE")[0][2] == "PLAN.md Contents"
    assert XlsxWorkbook(path).get_cell("Data!A1") == "1"


@pytest.mark.parametrize(
    ("part", "damage", "closing"),
    [
        ("[Content_Types].xml", lambda t: t.removesuffix("</Types>"), "</Types>"),
        (
            "xl/_rels/workbook.xml.rels",
            lambda t: XML_HEAD + f'<Relationships xmlns="{PKG}"/>',
            "</Relationships>",
        ),
        ("xl/workbook.xml", lambda t: re.sub("<sheets>.*</sheets>", "<sheets/>", t), "</sheets>"),
    ],
)
def test_a_workbook_part_cut_short_or_emptied_is_left_alone(
    tmp_path: Path, part: str, damage: Callable[[str], str], closing: str
) -> None:
    parts = excel_parts('<row r="1"><c r="A1"><v>1</v></c></row>')
    parts[part] = damage(parts[part])
    path = save(tmp_path / "book.xlsx", parts)
    before = path.read_bytes()
    with pytest.raises(StoreError) as caught:
        PlanManager(XlsxWorkbook(path)).init_plan(raise_errors=True)
    assert str(caught.value) == (
        f"the workbook part {part} has no {closing}; it cannot be changed safely"
    )
    assert caught.value.code == "not-a-workbook"
    assert path.read_bytes() == before


def test_a_sheet_name_with_quotes_is_escaped_in_the_workbook(tmp_path: Path) -> None:
    path = save(tmp_path / "book.xlsx", excel_parts('<row r="1"><c r="A1"><v>1</v></c></row>'))
    store = XlsxWorkbook(path)
    store.create_sheet('Plan "v2" & <notes>')
    assert store.list_sheets() == ["Data", 'Plan "v2" & <notes>']
    store.set_cell("'Plan \"v2\" & <notes>'!C2", "kept")
    assert calamine(path, 'Plan "v2" & <notes>')[1][2] == "kept"


SHEET_PREFIXED = (
    '<x:worksheet xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
    '<x:dimension ref="A1:C2"/><x:sheetData>{rows}</x:sheetData></x:worksheet>'
)


@pytest.mark.parametrize(
    "head",
    [
        "",  # no XML declaration, as openpyxl writes parts
        '<?xml version="1.0"?>\n<!-- written by a report generator -->\n',
        '<?xml version="1.0"?><!-- one --><!-- two -->',
        "<!-- generated -->",
        # a note ending in a comparison: the comment still ends at its "-->"
        '<?xml version="1.0"?>\n<!-- plan rows <10-->\n',
        # a byte-order mark, as some generators write it before the declaration
        '\ufeff<?xml version="1.0" encoding="UTF-8"?>\n',
    ],
)
def test_a_prefixed_sheet_after_a_declaration_and_comments(tmp_path: Path, head: str) -> None:
    rows = (
        '<x:row r="1"><x:c r="A1" t="inlineStr"><x:is><x:t>a1</x:t></x:is></x:c></x:row>'
        "<!-- totals below -->"
        '<x:row r="2"><x:c r="B2"><x:v>7</x:v></x:c></x:row>'
    )
    parts = excel_parts("")
    parts["xl/worksheets/sheet1.xml"] = head + SHEET_PREFIXED.format(rows=rows)
    path = save(tmp_path / "book.xlsx", parts)
    store = XlsxWorkbook(path)
    assert store.get_cell("Data!A1") == "a1"
    assert store.get_cell("Data!B2") == "7"
    store.set_cell("Data!C2", "plan")
    assert store.get_cell("Data!C2") == "plan"
    assert calamine(path, "Data")[1][1:3] == [7.0, "plan"]


def test_a_damaged_cell_is_a_clear_error(tmp_path: Path) -> None:
    store = book(tmp_path, '<row r="2"><c r="C2" t="inlineStr"><is><t>a</is></c></row>')
    with pytest.raises(StoreError) as caught:
        store.get_cell("Data!C2")
    message = str(caught.value)
    assert message.startswith("a cell of the workbook is not well-formed XML (mismatched tag")
    assert message.endswith("); the workbook is damaged; nothing was changed")
    assert caught.value.code == "not-a-workbook"


STRICT_MAIN = "http://purl.oclc.org/ooxml/spreadsheetml/main"
STRICT_RELS = "http://purl.oclc.org/ooxml/officeDocument/relationships"


def as_strict(parts: dict[str, str]) -> dict[str, str]:
    """The parts of a workbook saved as Excel's "Strict Open XML Spreadsheet"."""
    return {
        name: text.replace(MAIN, STRICT_MAIN).replace(RELS, STRICT_RELS)
        for name, text in parts.items()
    }


def test_a_strict_open_xml_workbook_keeps_its_plan_in_shared_strings(tmp_path: Path) -> None:
    """Excel's "Strict Open XML Spreadsheet" names every relationship type in its own
    namespace; a plan Excel saved there is a shared string like any other text."""
    from plankit.checklist.render import STARTER_PLAN

    plan = STARTER_PLAN.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    parts = excel_parts(
        '<row r="1"><c r="C1" t="s"><v>0</v></c></row><row r="2"><c r="C2" t="s"><v>1</v></c>'
        '<c r="D2"><f>1+1</f><v>2</v></c></row>',
        ["<si><t>PLAN.md Contents</t></si>", f'<si><t xml:space="preserve">{plan}</t></si>'],
    )
    parts["xl/workbook.xml"] = parts["xl/workbook.xml"].replace(">Data<", ">AGENT_BASE<")
    parts["xl/workbook.xml"] = parts["xl/workbook.xml"].replace('"Data"', '"AGENT_BASE"')
    parts["xl/calcChain.xml"] = (
        XML_HEAD + f'<calcChain xmlns="{MAIN}"><c r="D2" i="1"/></calcChain>'
    )
    parts["xl/_rels/workbook.xml.rels"] = parts["xl/_rels/workbook.xml.rels"].replace(
        "</Relationships>",
        f'<Relationship Id="rId4" Type="{RELS}/calcChain" Target="calcChain.xml"/></Relationships>',
    )
    strict = as_strict(parts)
    path = save(tmp_path / "book.xlsx", strict)
    store = XlsxWorkbook(path)
    assert store.get_cell("AGENT_BASE!C1") == "PLAN.md Contents"
    manager = PlanManager(store)
    assert manager.init_plan(raise_errors=True).title == "Getting Started with Sheet Agent"
    manager.complete_task("1.1")
    assert "- [x] 1.1 List available sheets" in store.get_cell("AGENT_BASE!C2")
    with zipfile.ZipFile(path) as z:
        assert z.read("xl/sharedStrings.xml").decode() == strict["xl/sharedStrings.xml"]
        assert z.read("xl/calcChain.xml").decode() == strict["xl/calcChain.xml"]
    store.set_cell("AGENT_BASE!D2", "two")  # a formula overwritten: the chain must go
    with zipfile.ZipFile(path) as z:
        assert "xl/calcChain.xml" not in z.namelist()
        assert "calcChain" not in z.read("xl/_rels/workbook.xml.rels").decode()
    assert store.get_cell("AGENT_BASE!D2") == "two"


def test_a_sheet_added_to_a_strict_workbook_is_named_in_strict_terms(tmp_path: Path) -> None:
    """Strict Open XML uses its own namespaces and relationship types throughout; a sheet
    added in Transitional's would make a package that mixes the two, which it must not."""
    path = save(
        tmp_path / "book.xlsx", as_strict(excel_parts('<row r="1"><c r="A1"><v>3</v></c></row>'))
    )
    store = XlsxWorkbook(path)
    store.create_sheet("AGENT_BASE")
    store.set_cell("AGENT_BASE!C1", "PLAN.md Contents")
    with zipfile.ZipFile(path) as z:
        parts = {name: z.read(name).decode() for name in z.namelist()}
    sheet = parts["xl/worksheets/sheet2.xml"]
    assert f'<worksheet xmlns="{STRICT_MAIN}" xmlns:r="{STRICT_RELS}">' in sheet
    assert (
        f'Type="{STRICT_RELS}/worksheet" Target="worksheets/sheet2.xml"'
        in (parts["xl/_rels/workbook.xml.rels"])
    )
    assert re.search(
        r'<sheet name="AGENT_BASE" sheetId="2" r:id="rId\d+"/>', parts["xl/workbook.xml"]
    )
    for name, text in parts.items():  # nothing in Transitional's namespaces
        assert MAIN not in text, name
        assert RELS not in text, name
    again = XlsxWorkbook(path)
    assert again.list_sheets() == ["Data", "AGENT_BASE"]
    assert again.get_cell("AGENT_BASE!C1") == "PLAN.md Contents"
    assert again.get_cell("Data!A1") == "3"
    assert calamine(path, "AGENT_BASE")[0][2] == "PLAN.md Contents"  # an independent reader


# --- damaged and unusual parts: a clear error naming the file and the part ----------------


def test_parts_that_start_with_a_byte_order_mark_are_read(tmp_path: Path) -> None:
    parts = excel_parts('<row r="2"><c r="C2" t="s"><v>0</v></c></row>', ["<si><t>plan</t></si>"])
    path = tmp_path / "book.xlsx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in parts.items():
            z.writestr(name, b"\xef\xbb\xbf" + text.encode("utf-8"))
    store = XlsxWorkbook(path)
    assert store.get_cell("Data!C2") == "plan"
    store.set_cell("Data!C2", "new plan")
    assert store.get_cell("Data!C2") == "new plan"


def test_a_part_that_is_not_utf8_is_a_clear_error(tmp_path: Path) -> None:
    parts = excel_parts('<row r="2"><c r="C2"><v>1</v></c></row>')
    path = tmp_path / "book.xlsx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in parts.items():
            z.writestr(name, text.encode("utf-16" if name.endswith("sheet1.xml") else "utf-8"))
    with pytest.raises(StoreError) as caught:
        XlsxWorkbook(path).get_cell("Data!C2")
    assert str(caught.value) == (
        "the workbook part xl/worksheets/sheet1.xml is not UTF-8 XML; open and save the "
        "workbook in Excel or LibreOffice, then try again"
    )
    assert caught.value.code == "not-a-workbook"


def test_a_part_that_is_not_xml_names_the_file_and_the_part(tmp_path: Path) -> None:
    parts = excel_parts("")
    parts["xl/workbook.xml"] = parts["xl/workbook.xml"][:-30]  # cut off in the middle
    path = save(tmp_path / "book.xlsx", parts)
    with pytest.raises(StoreError) as caught:
        XlsxWorkbook(path).list_sheets()
    message = str(caught.value)
    assert message.startswith(f"{path} could not be read as an xlsx workbook (xl/workbook.xml: ")
    assert message.endswith("); nothing was changed")
    assert caught.value.code == "not-a-workbook"


def test_a_part_declaring_entities_names_the_file(tmp_path: Path) -> None:
    parts = excel_parts("")
    parts["xl/worksheets/sheet1.xml"] = parts["xl/worksheets/sheet1.xml"].replace(
        "<worksheet", '<!DOCTYPE w [<!ENTITY plan "x">]><worksheet', 1
    )
    path = save(tmp_path / "book.xlsx", parts)
    with pytest.raises(StoreError) as caught:
        XlsxWorkbook(path).get_cell("Data!C2")
    assert str(caught.value).startswith(
        f"{path}: the workbook part xl/worksheets/sheet1.xml declares a DOCTYPE or entities"
    )


def test_a_part_whose_compressed_bytes_are_damaged_is_a_clear_error(tmp_path: Path) -> None:
    rows = "".join(f'<row r="{i}"><c r="A{i}"><v>{i * 7}</v></c></row>' for i in range(1, 400))
    path = save(tmp_path / "book.xlsx", excel_parts(rows))
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("xl/worksheets/sheet1.xml")
    name_len, extra_len = struct.unpack(
        "<2H", data[info.header_offset + 26 : info.header_offset + 30]
    )
    start = info.header_offset + 30 + name_len + extra_len
    middle = start + info.compress_size // 2
    data[middle : middle + 16] = b"\xff" * 16  # a disk error in the middle of the sheet
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError) as caught:
        XlsxWorkbook(path).get_cell("Data!A1")
    message = str(caught.value)
    assert message.startswith(
        f"{path} could not be read as an xlsx workbook (the part xl/worksheets/sheet1.xml is "
        "damaged: "
    )
    assert message.endswith("); nothing was changed")
    assert caught.value.code == "not-a-workbook"


def test_a_zip_declaring_millions_of_parts_is_refused_naming_the_file(tmp_path: Path) -> None:
    # the Zip64 end record says 40 million parts: refused before the directory is read
    path = save(tmp_path / "book.xlsx", excel_parts(""))
    path.write_bytes(declaring_parts(path.read_bytes(), 40_000_000))
    with pytest.raises(StoreError) as caught:
        XlsxWorkbook(path).get_cell("Data!C2")
    assert str(caught.value).startswith(f"{path} declares 40,000,000 parts, over the 65,535")
    assert caught.value.code == "not-a-workbook"


def stored_zip(members: list[tuple[str, bytes]]) -> bytes:
    """A zip of ``members``, stored uncompressed, built directly (``zipfile`` would take
    seconds to write tens of thousands of members)."""
    local: list[bytes] = []
    central: list[bytes] = []
    offset = 0
    for name, body in members:
        raw, crc = name.encode(), zlib.crc32(body)
        sizes = (crc, len(body), len(body), len(raw))
        header = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 33, *sizes, 0)
        central.append(
            struct.pack(
                "<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 33, *sizes, 0, 0, 0, 0, 0, offset
            )
            + raw
        )
        local.append(header + raw + body)
        offset += len(local[-1])
    directory = b"".join(central)
    count = min(len(members), 0xFFFF)
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count, count, len(directory), offset, 0)
    return b"".join(local) + directory + end


def test_a_workbook_at_the_zip_part_limit_is_not_rewritten(tmp_path: Path) -> None:
    # 65,535 parts (a workbook of tens of thousands of images): a plain zip directory
    # cannot list them all, so the workbook is refused by name, and left as it was
    members = [(name, text.encode()) for name, text in excel_parts("").items()]
    members += [(f"xl/media/image{n}.png", b"") for n in range(1, 0xFFFF - len(members) + 1)]
    path = tmp_path / "book.xlsx"
    path.write_bytes(stored_zip(members))
    before = path.read_bytes()
    with pytest.raises(StoreError) as caught:
        XlsxWorkbook(path).set_cell("Data!C2", "plan")
    assert str(caught.value) == (f"{path} is too large to be rewritten (over 4 GB or 65,535 parts)")
    assert path.read_bytes() == before


def test_a_chart_sheet_has_no_cells(tmp_path: Path) -> None:
    parts = excel_parts('<row r="2"><c r="C2"><v>1</v></c></row>')
    parts["xl/workbook.xml"] = parts["xl/workbook.xml"].replace(
        "</sheets>", '<sheet name="Chart1" sheetId="2" r:id="rId9"/></sheets>'
    )
    parts["xl/_rels/workbook.xml.rels"] = parts["xl/_rels/workbook.xml.rels"].replace(
        "</Relationships>",
        f'<Relationship Id="rId9" Type="{RELS}/chartsheet" Target="chartsheets/sheet1.xml"/>'
        "</Relationships>",
    )
    path = save(tmp_path / "book.xlsx", parts)
    store = XlsxWorkbook(path)
    assert store.list_sheets() == ["Data", "Chart1"]
    assert store.get_cell("Chart1!C2") == ""
    before = path.read_bytes()
    with pytest.raises(StoreError) as caught:
        store.set_cell("Chart1!C2", "plan")
    assert str(caught.value) == "cannot write Chart1!C2: 'Chart1' is a chart sheet"
    assert caught.value.code == "no-sheet"
    with pytest.raises(StoreError) as caught:
        Package(before, "book.xlsx").set_cell("Plan", "C2", "plan")
    assert str(caught.value) == "cannot write Plan!C2: book.xlsx has no sheet named 'Plan'"
    assert caught.value.code == "no-sheet"
    assert path.read_bytes() == before


def test_a_package_without_its_relationships_list_is_read_where_excel_puts_the_workbook(
    tmp_path: Path,
) -> None:
    parts = excel_parts('<row r="2"><c r="C2"><v>3</v></c></row>')
    del parts["_rels/.rels"]
    store = XlsxWorkbook(save(tmp_path / "book.xlsx", parts))
    assert store.list_sheets() == ["Data"]
    assert store.get_cell("Data!C2") == "3"
