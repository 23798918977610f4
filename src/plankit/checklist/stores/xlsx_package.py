"""An ``.xlsx`` package changed part by part: a plan cell written without touching the
rest of the user's workbook.

An ``.xlsx`` file is a zip of XML parts.  Writing a cell through a spreadsheet library
means loading every part into its model and writing them all again: cached formula
values, charts, pivot tables and whatever the library does not model are lost, and
the cost grows with the workbook, not with the plan.  :class:`Package` instead:

- reads the zip's directory and only the parts a call needs: ``workbook.xml`` and its
  relationships for the sheet names, the plan sheet's XML, and the shared strings only
  when the cell read is a shared string;
- changes the plan sheet's XML as text: the one ``<c>`` element is replaced (or
  inserted, in column order, in its ``<row>``, itself inserted in row order), written
  as an inline string (``t="inlineStr"``) so the shared strings part is never
  rewritten; the sheet's ``<dimension>`` is widened when needed.  Every other byte of
  the sheet stays;
- adds a sheet with four small edits: the new worksheet part, a ``<sheet>`` in
  ``workbook.xml``, a relationship, and a content-type override, named in Strict Open
  XML's namespaces when the workbook is Strict;
- writes a new zip in which every part it did not change is copied byte for byte,
  compressed data included (no decompression, no recompression), in the original
  order.

Text is stored with Excel's escapes (``_x000D_`` for a carriage return, ``_xHHHH_``
for control characters, ``_x005F_`` before a literal ``_xHHHH_``).

A workbook is untrusted input: its parts are read within the limits of
:mod:`plankit.checklist.stores.xlsx_limits` (no zip bomb, no entities).
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
import zlib
from dataclasses import dataclass
from xml.etree import ElementTree as ET

from plankit.checklist.errors import StoreError
from plankit.checklist.stores.xlsx_limits import check_part_count, read_part
from plankit.checklist.stores.xlsx_sheet import SheetXml, excel_unescape, prefix_of, xml_text
from plankit.checklist.stores.zipcopy import rebuild

MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
STRICT_MAIN_NS = "http://purl.oclc.org/ooxml/spreadsheetml/main"
STRICT_REL_NS = "http://purl.oclc.org/ooxml/officeDocument/relationships"
PKG_REL_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
WORKSHEET_CONTENT_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"

EXCEL_RESERVED_SHEET_NAMES = ("history",)
"""Sheet names Excel refuses (any case)."""
EXCEL_SHEET_NAME_LIMIT = 31
"""Most characters in an Excel sheet name."""
_SHEET_NAME_FORBIDDEN = set(":\\/?*[]")

_XMLNS_RE = re.compile(r"""\sxmlns(?::([\w.-]+))?\s*=\s*["']([^"']*)["']""")


def check_sheet_name(name: str) -> None:
    """Raise :class:`StoreError` when Excel would refuse ``name`` as a sheet name."""
    why = None
    if not name.strip():
        why = "is empty"
    elif len(name) > EXCEL_SHEET_NAME_LIMIT:
        why = f"is {len(name)} characters; Excel allows at most {EXCEL_SHEET_NAME_LIMIT}"
    elif _SHEET_NAME_FORBIDDEN & set(name):
        bad = " ".join(sorted(_SHEET_NAME_FORBIDDEN & set(name)))
        why = f"contains {bad}, which Excel does not allow"
    elif name.startswith("'") or name.endswith("'"):
        why = "starts or ends with an apostrophe, which Excel does not allow"
    elif name.lower() in EXCEL_RESERVED_SHEET_NAMES:
        why = "is reserved by Excel"
    if why is not None:
        raise StoreError(
            f"sheet name {name!r} {why}; choose another plan cell with --cell, e.g. AGENT_BASE!C2",
            code="bad-sheet-name",
        )


def _xml_attr(text: str) -> str:
    return xml_text(text).replace('"', "&quot;")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _decode(data: bytes, part: str) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise StoreError(
            f"the workbook part {part} is not UTF-8 XML; open and save the workbook in Excel "
            "or LibreOffice, then try again",
            code="not-a-workbook",
        ) from None


def _declarations(xml: str) -> dict[str, str]:
    """prefix ('' for the default) → namespace, from the root element's start tag."""
    start = xml.find("<", xml.find("?>") + 1 if xml.startswith("<?") else 0)
    while xml.startswith("<!--", start):
        start = xml.find("<", xml.find("-->", start) + 3)
    end = xml.find(">", start)
    return {m.group(1) or "": m.group(2) for m in _XMLNS_RE.finditer(xml, start, end)}


def _fragment(xml: str, fragment: str) -> ET.Element:
    """Parse an element cut out of ``xml``, with the root's namespace declarations."""
    decls = "".join(
        f' xmlns{":" + p if p else ""}="{_xml_attr(ns)}"' for p, ns in _declarations(xml).items()
    )
    try:
        return ET.fromstring(f"<wrap{decls}>{fragment}</wrap>")[0]
    except ET.ParseError as exc:
        raise StoreError(
            f"a cell of the workbook is not well-formed XML ({exc}); the workbook is damaged; "
            "nothing was changed",
            code="not-a-workbook",
        ) from None


def _string_item(element: ET.Element) -> str:
    """The text of an ``<is>`` or ``<si>`` element: its ``<t>``, or its runs' ``<t>``
    (phonetic runs left out)."""
    parts: list[str] = []
    for child in element:
        name = _local(child.tag)
        if name == "t":
            parts.append(child.text or "")
        elif name == "r":
            for grand in child:
                if _local(grand.tag) == "t":
                    parts.append(grand.text or "")
    return "".join(parts)


@dataclass(frozen=True, slots=True)
class Sheet:
    """A sheet of the workbook."""

    name: str
    part: str | None
    """The worksheet part (``xl/worksheets/sheet1.xml``), None for a chart sheet."""


class Package:
    """An ``.xlsx`` package read from bytes; see the module docstring."""

    def __init__(self, data: bytes, label: str) -> None:
        self.data = data
        self.label = label
        check_part_count(data, label)
        try:
            self.zip = zipfile.ZipFile(io.BytesIO(data))
            self.infos = self.zip.infolist()
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise StoreError(
                f"{label} is not an xlsx workbook (not a zip file: {exc}; an encrypted "
                "workbook or an old .xls file cannot be read); nothing was changed",
                code="not-a-workbook",
            ) from None
        self.names = {info.filename for info in self.infos}
        self.changed: dict[str, bytes] = {}
        self.added: list[str] = []
        self.removed: set[str] = set()
        self.workbook_part = self._office_document()
        self._sheets: list[Sheet] | None = None
        self._shared: list[str] | None = None

    # --- reading parts ---------------------------------------------------------------

    def read(self, name: str) -> bytes:
        """A part's bytes as they are now (changed in this session or as in the file)."""
        if name in self.changed:
            return self.changed[name]
        try:
            return read_part(self.zip, name, self.label)
        except KeyError:
            raise StoreError(
                f"{self.label} could not be read as an xlsx workbook (the part {name} is "
                "missing); nothing was changed",
                code="not-a-workbook",
            ) from None
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as exc:
            raise StoreError(
                f"{self.label} could not be read as an xlsx workbook (the part {name} is "
                f"damaged: {exc}); nothing was changed",
                code="not-a-workbook",
            ) from None

    def text(self, name: str) -> str:
        return _decode(self.read(name), name)

    def write(self, name: str, text: str) -> None:
        """Replace (or add) a part."""
        if name not in self.names and name not in self.added:
            self.added.append(name)
        self.changed[name] = text.encode("utf-8")

    def _parse(self, name: str) -> ET.Element:
        text = self.text(name)  # UTF-8 only: the DOCTYPE check above saw every byte
        try:
            return ET.fromstring(text)
        except ET.ParseError as exc:
            raise StoreError(
                f"{self.label} could not be read as an xlsx workbook ({name}: {exc}); "
                "nothing was changed",
                code="not-a-workbook",
            ) from None

    def _office_document(self) -> str:
        if "_rels/.rels" in self.names:
            for rel in self._parse("_rels/.rels"):
                if _is_type(rel.get("Type", ""), "officeDocument") and rel.get("Target"):
                    return _resolve("", rel.get("Target", ""))
        return "xl/workbook.xml"

    def rels_part(self, part: str) -> str:
        """The relationships part of ``part``."""
        folder, base = posixpath.split(part)
        return posixpath.join(folder, "_rels", base + ".rels")

    def relationships(self, part: str) -> list[tuple[str, str, str]]:
        """(Id, Type, resolved target) of each relationship of ``part``."""
        rels = self.rels_part(part)
        if rels not in self.names and rels not in self.changed:
            return []
        folder = posixpath.dirname(part)
        return [
            (rel.get("Id", ""), rel.get("Type", ""), _resolve(folder, rel.get("Target", "")))
            for rel in self._parse(rels)
            if rel.get("TargetMode") != "External"
        ]

    # --- sheets and cells ------------------------------------------------------------------

    def sheets(self) -> list[Sheet]:
        """The sheets, in workbook order."""
        if self._sheets is None:
            targets = {
                rid: (kind, target) for rid, kind, target in self.relationships(self.workbook_part)
            }
            out: list[Sheet] = []
            for element in self._parse(self.workbook_part).iter():
                if _local(element.tag) != "sheet":
                    continue
                rid = element.get(f"{{{REL_NS}}}id") or element.get(f"{{{STRICT_REL_NS}}}id") or ""
                kind, target = targets.get(rid, ("", ""))
                part = target if kind.endswith("/worksheet") and target else None
                out.append(Sheet(element.get("name", ""), part))
            self._sheets = out
        return self._sheets

    def sheet(self, name: str) -> Sheet | None:
        """The sheet called ``name`` (Excel's rule: any case), or None."""
        sheets = self.sheets()
        for sheet in sheets:
            if sheet.name == name:
                return sheet
        for sheet in sheets:
            if sheet.name.lower() == name.lower():
                return sheet
        return None

    def shared_string(self, index: int) -> str:
        """Shared string ``index`` (the part is parsed once, only when a cell needs it)."""
        if self._shared is None:
            part = next(
                (t for _, kind, t in self.relationships(self.workbook_part)
                 if _is_type(kind, "sharedStrings")),
                None,
            )  # fmt: skip
            self._shared = (
                [_string_item(si) for si in self._parse(part) if _local(si.tag) == "si"]
                if part is not None
                else []
            )
        if not 0 <= index < len(self._shared):
            raise StoreError(
                f"{self.label}: a cell refers to shared string {index}, which does not "
                "exist; the workbook is damaged",
                code="not-a-workbook",
            )
        return self._shared[index]

    def get_cell(self, sheet_name: str, cell: str) -> str:
        """The text of ``cell`` ('' when empty or the sheet is missing)."""
        sheet = self.sheet(sheet_name)
        if sheet is None or sheet.part is None:
            return ""
        xml = self.text(sheet.part)
        found = SheetXml(xml).find_cell(cell)
        if found is None:
            return ""
        start, end = found
        element = _fragment(xml, xml[start:end])
        kind = element.get("t", "n")
        if kind == "inlineStr":
            inline = next((c for c in element if _local(c.tag) == "is"), None)
            return excel_unescape(_string_item(inline)) if inline is not None else ""
        value = next((c.text or "" for c in element if _local(c.tag) == "v"), None)
        if not value:
            formula = next((c.text for c in element if _local(c.tag) == "f"), None)
            # a formula never calculated reads as itself: not empty, so never overwritten
            return f"={formula}" if formula else ""
        if kind == "s":
            try:
                return excel_unescape(self.shared_string(int(value)))
            except ValueError:
                return ""
        if kind == "b":
            return "TRUE" if value.strip() in ("1", "true") else "FALSE"
        if kind in ("str", "e", "d"):
            return excel_unescape(value)
        return _number_text(value)

    def set_cell(self, sheet_name: str, cell: str, value: str) -> None:
        """Write ``value`` into ``cell`` as an inline string ('' removes the value)."""
        sheet = self.sheet(sheet_name)
        if sheet is None:
            raise StoreError(
                f"cannot write {sheet_name}!{cell}: {self.label} has no sheet named {sheet_name!r}",
                code="no-sheet",
            )
        if sheet.part is None:
            raise StoreError(
                f"cannot write {sheet_name}!{cell}: {sheet.name!r} is a chart sheet",
                code="no-sheet",
            )
        xml = self.text(sheet.part)
        updated, had_formula = SheetXml(xml).with_cell(cell, value)
        self.write(sheet.part, updated)
        if had_formula:
            self._drop_calc_chain()

    def create_sheet(self, name: str) -> None:
        """Add an empty worksheet called ``name`` after the others."""
        check_sheet_name(name)
        existing = self.sheet(name)
        if existing is not None:
            same = "" if existing.name == name else " (Excel ignores case in sheet names)"
            raise StoreError(
                f"a sheet named {existing.name!r} already exists{same}", code="sheet-exists"
            )
        number = 1
        while f"xl/worksheets/sheet{number}.xml" in self.names | set(self.added):
            number += 1
        part = f"xl/worksheets/sheet{number}.xml"
        # a Strict Open XML workbook names its parts and types in Strict's namespaces only
        strict = self._parse(self.workbook_part).tag == f"{{{STRICT_MAIN_NS}}}workbook"
        main, rels = (STRICT_MAIN_NS, STRICT_REL_NS) if strict else (MAIN_NS, REL_NS)
        self.write(
            part,
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
            f'<worksheet xmlns="{main}" xmlns:r="{rels}"><dimension ref="A1"/>'
            "<sheetData/></worksheet>",
        )
        rid = self._add_relationship(self.workbook_part, f"{rels}/worksheet", part)
        self._add_sheet_element(name, rid, rels)
        self._add_override(part, WORKSHEET_CONTENT_TYPE)
        self._sheets = None

    # --- package edits ------------------------------------------------------------------------

    def _add_relationship(self, source: str, kind: str, target: str) -> str:
        rels = self.rels_part(source)
        xml = self.text(rels)
        used = set(re.findall(r'\bId="([^"]*)"', xml))
        n = 1
        while f"rId{n}" in used:
            n += 1
        rid = f"rId{n}"
        relative = posixpath.relpath(target, posixpath.dirname(source) or ".")
        p = prefix_of(xml, "Relationships")
        element = f'<{p}Relationship Id="{rid}" Type="{kind}" Target="{relative}"/>'
        self.write(rels, _insert_before_close(xml, f"{p}Relationships", element, rels))
        return rid

    def _add_sheet_element(self, name: str, rid: str, rels: str) -> None:
        """The ``<sheet>`` of ``workbook.xml`` naming relationship ``rid``, whose id
        attribute is in the namespace ``rels``."""
        xml = self.text(self.workbook_part)
        ids = [int(n) for n in re.findall(r'<(?:[\w.-]+:)?sheet\b[^>]*\bsheetId="(\d+)"', xml)]
        decls = _declarations(xml)
        r_prefix = next((p for p, ns in decls.items() if ns == rels and p), None)
        declare = ""
        if r_prefix is None:
            r_prefix = "r" if "r" not in decls else "plankitr"
            declare = f' xmlns:{r_prefix}="{rels}"'
        p = prefix_of(xml, "sheets")
        element = (
            f'<{p}sheet name="{_xml_attr(name)}" sheetId="{max(ids, default=0) + 1}"'
            f'{declare} {r_prefix}:id="{rid}"/>'
        )
        self.write(
            self.workbook_part,
            _insert_before_close(xml, f"{p}sheets", element, self.workbook_part),
        )

    def _add_override(self, part: str, content_type: str) -> None:
        xml = self.text("[Content_Types].xml")
        p = prefix_of(xml, "Types")
        element = f'<{p}Override PartName="/{part}" ContentType="{content_type}"/>'
        self.write(
            "[Content_Types].xml",
            _insert_before_close(xml, f"{p}Types", element, "[Content_Types].xml"),
        )

    def _drop_calc_chain(self) -> None:
        """Remove the calculation chain (a cache Excel rebuilds): a formula it lists was
        overwritten, and a chain naming a cell without a formula is an error in Excel."""
        for rid, kind, target in self.relationships(self.workbook_part):
            if not _is_type(kind, "calcChain"):
                continue
            self.removed.add(target)
            rels = self.rels_part(self.workbook_part)
            xml = self.text(rels)
            xml = re.sub(
                rf'<(?:[\w.-]+:)?Relationship\b[^>]*\bId="{re.escape(rid)}"[^>]*/>', "", xml
            )
            self.write(rels, xml)
            types = self.text("[Content_Types].xml")
            types = re.sub(
                rf'<(?:[\w.-]+:)?Override\b[^>]*\bPartName="/{re.escape(target)}"[^>]*/>', "", types
            )
            self.write("[Content_Types].xml", types)

    # --- writing the zip --------------------------------------------------------------------

    @property
    def dirty(self) -> bool:
        return bool(self.changed or self.removed)

    def to_bytes(self) -> bytes:
        """The new package: unchanged parts copied as they are, compressed bytes and all."""
        return rebuild(
            self.data,
            self.infos,
            self.changed,
            self.added,
            self.removed,
            self.zip.comment,
            self.label,
        )


def _is_type(kind: str, name: str) -> bool:
    """Whether the relationship type ``kind`` is ``name``, in Transitional or in Strict
    Open XML (Excel's "Strict Open XML Spreadsheet" names every type in its own space)."""
    return kind in (f"{REL_NS}/{name}", f"{STRICT_REL_NS}/{name}")


def _resolve(folder: str, target: str) -> str:
    if target.startswith("/"):
        return posixpath.normpath(target[1:])
    return posixpath.normpath(posixpath.join(folder, target))


def _number_text(value: str) -> str:
    try:
        number = float(value)
    except ValueError:
        return value
    return str(int(number)) if number.is_integer() and abs(number) < 1e15 else value


def _insert_before_close(xml: str, qname: str, element: str, part: str) -> str:
    close = xml.rfind(f"</{qname}>")
    if close < 0:
        raise StoreError(
            f"the workbook part {part} has no </{qname}>; it cannot be changed safely",
            code="not-a-workbook",
        )
    return xml[:close] + element + xml[close:]
