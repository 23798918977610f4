"""A worksheet's XML searched and changed as text: one cell found, replaced or inserted
(its row too), every other byte of the sheet kept.  Text is written as an inline
string with Excel's escapes."""

from __future__ import annotations

import re

from plankit.checklist.errors import StoreError
from plankit.checklist.refs import column_letters, column_number

_ESCAPE_RE = re.compile(r"_(?=x[0-9A-Fa-f]{4}_)|[\x00-\x08\x0b-\x1f\ufffe\uffff\ud800-\udfff]")
_UNESCAPE_RE = re.compile(r"_x([0-9A-Fa-f]{4})_")
_CELL_REF_RE = re.compile(r"([A-Z]{1,3})([0-9]+)")


def excel_escape(text: str) -> str:
    """Text as a cell stores it: control characters, a carriage return and a literal
    ``_xHHHH_`` escaped the way Excel does."""
    if "_" not in text and text.isprintable():
        return text
    return _ESCAPE_RE.sub(
        lambda m: "_x005F_" if m.group() == "_" else f"_x{ord(m.group()):04X}_", text
    )


def excel_unescape(text: str) -> str:
    """The text an escaped cell value stands for."""
    if "_x" not in text:
        return text
    return _UNESCAPE_RE.sub(lambda m: chr(int(m.group(1), 16)), text)


def xml_text(text: str) -> str:
    """``text`` escaped for XML character data."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def prefix_of(xml: str, local: str) -> str:
    """The prefix (``''`` or ``'x:'``) the element ``local`` is written with."""
    m = re.search(rf"<(?:([\w.-]+):)?{local}\b", xml)
    return f"{m.group(1)}:" if m is not None and m.group(1) else ""


class SheetXml:
    """A worksheet's XML, searched and changed as text (see the module docstring)."""

    def __init__(self, xml: str) -> None:
        self.xml = xml
        self.p = prefix_of(xml, "sheetData")
        m = re.search(rf"<{re.escape(self.p)}sheetData\b[^>]*?(/?)>", xml)
        if m is None:
            raise StoreError(
                "a worksheet has no <sheetData>; the workbook is damaged", code="not-a-workbook"
            )
        self.open_end = m.end()
        self.empty = m.group(1) == "/"
        self.data_start = m.start()
        self.close = -1 if self.empty else xml.find(f"</{self.p}sheetData>", self.open_end)
        if not self.empty and self.close < 0:
            raise StoreError(
                "a worksheet's <sheetData> is not closed; the workbook is damaged",
                code="not-a-workbook",
            )

    def _rows(self) -> list[tuple[int, int, int, int, bool]]:
        """(row number, start, start-tag end, end, self-closing) of every row."""
        out: list[tuple[int, int, int, int, bool]] = []
        if self.empty:
            return out
        row_re = re.compile(rf"<{re.escape(self.p)}row\b([^>]*?)(/?)>")
        close = f"</{self.p}row>"
        pos, number = self.open_end, 0
        while True:
            m = row_re.search(self.xml, pos, self.close)
            if m is None:
                return out
            r = re.search(r'\br=["\'](\d+)["\']', m.group(1))
            number = int(r.group(1)) if r is not None else number + 1
            if m.group(2) == "/":
                out.append((number, m.start(), m.end(), m.end(), True))
                pos = m.end()
                continue
            end = self.xml.find(close, m.end(), self.close)
            if end < 0:
                raise StoreError(
                    "a worksheet row is not closed; the workbook is damaged", code="not-a-workbook"
                )
            out.append((number, m.start(), m.end(), end + len(close), False))
            pos = end + len(close)

    def _cells(self, start: int, end: int, row: int) -> list[tuple[int, int, int]]:
        """(column number, start, end) of every cell between ``start`` and ``end``."""
        out: list[tuple[int, int, int]] = []
        cell_re = re.compile(rf"<{re.escape(self.p)}c\b([^>]*?)(/?)>")
        close = f"</{self.p}c>"
        pos, column = start, 0
        while True:
            m = cell_re.search(self.xml, pos, end)
            if m is None:
                return out
            ref = re.search(r'\br=["\']([A-Z]{1,3})(\d+)["\']', m.group(1))
            column = column_number(ref.group(1)) if ref is not None else column + 1
            if m.group(2) == "/":
                stop = m.end()
            else:
                found = self.xml.find(close, m.end(), end)
                if found < 0:
                    raise StoreError(
                        "a worksheet cell is not closed; the workbook is damaged",
                        code="not-a-workbook",
                    )
                stop = found + len(close)
            out.append((column, m.start(), stop))
            pos = stop

    def find_cell(self, cell: str) -> tuple[int, int] | None:
        """(start, end) of the ``<c>`` element of ``cell``, or None."""
        m = _CELL_REF_RE.fullmatch(cell)
        assert m is not None
        column, row = column_number(m.group(1)), int(m.group(2))
        for number, _, body, end, closed in self._rows():
            if number == row:
                if closed:
                    return None
                for col, start, stop in self._cells(body, end, row):
                    if col == column:
                        return start, stop
                return None
        return None

    def with_cell(self, cell: str, value: str) -> tuple[str, bool]:
        """The XML with ``cell`` holding ``value``, and whether a formula was replaced."""
        m = _CELL_REF_RE.fullmatch(cell)
        assert m is not None
        column, row = column_number(m.group(1)), int(m.group(2))
        p, xml = self.p, self.xml
        style = ""
        had_formula = False
        rows = self._rows()
        target = next((r for r in rows if r[0] == row), None)
        if target is not None and not target[4]:
            _, rstart, body, rend, _ = target
            cells = self._cells(body, rend, row)
            old = next((c for c in cells if c[0] == column), None)
            if old is not None:
                old_xml = xml[old[1] : old[2]]
                s = re.search(r'\bs=["\'](\d+)["\']', old_xml[: old_xml.find(">")])
                style = f' s="{s.group(1)}"' if s is not None else ""
                formula = re.search(rf"<{re.escape(p)}f\b([^>]*)", old_xml)
                if formula is not None:
                    if re.search(r'\bref="', formula.group(1)):
                        raise StoreError(
                            f"{cell} holds a shared or array formula other cells depend on; "
                            "choose another plan cell with --cell",
                            code="formula-cell",
                        )
                    had_formula = True
                new = _cell_xml(p, cell, style, value)
                return self._dimension(
                    xml[: old[1]] + new + xml[old[2] :], column, row
                ), had_formula
            new = _cell_xml(p, cell, style, value)
            if not new:
                return xml, False
            at = next((c[1] for c in cells if c[0] > column), rend - len(f"</{p}row>"))
            updated = xml[:at] + new + xml[at:]
            updated = updated[:rstart] + _without_spans(updated[rstart:body]) + updated[body:]
            return self._dimension(updated, column, row), False
        new = _cell_xml(p, cell, style, value)
        if not new:
            return xml, False
        if target is not None:  # a self-closing <row .../>: open it
            _, rstart, body, rend, _ = target
            tag = _without_spans(xml[rstart : body - 2].rstrip() + ">")
            updated = xml[:rstart] + tag + new + f"</{p}row>" + xml[rend:]
            return self._dimension(updated, column, row), False
        row_xml = f'<{p}row r="{row}">{new}</{p}row>'
        if self.empty:
            tag_end = self.open_end
            opening = xml[self.data_start : tag_end - 2].rstrip() + ">"
            updated = (
                xml[: self.data_start] + opening + row_xml + f"</{p}sheetData>" + xml[tag_end:]
            )
            return self._dimension(updated, column, row), False
        at = next((r[1] for r in rows if r[0] > row), self.close)
        return self._dimension(xml[:at] + row_xml + xml[at:], column, row), False

    @staticmethod
    def _dimension(xml: str, column: int, row: int) -> str:
        m = re.search(r'(<(?:[\w.-]+:)?dimension\b[^>]*\bref=")([^"]*)(")', xml)
        if m is None:
            return xml
        refs = [_CELL_REF_RE.fullmatch(part) for part in m.group(2).split(":")]
        if not refs or any(r is None for r in refs):
            return xml
        cols = [column_number(r.group(1)) for r in refs if r is not None]
        rows = [int(r.group(2)) for r in refs if r is not None]
        lo_c, hi_c = min(*cols, column), max(*cols, column)
        lo_r, hi_r = min(*rows, row), max(*rows, row)
        first, last = f"{column_letters(lo_c)}{lo_r}", f"{column_letters(hi_c)}{hi_r}"
        ref = first if first == last else f"{first}:{last}"
        if ref == m.group(2):
            return xml
        return xml[: m.start(2)] + ref + xml[m.end(2) :]


def _without_spans(tag: str) -> str:
    """A row's start tag without its optional ``spans`` hint (it may no longer hold)."""
    return re.sub(r'\sspans="[^"]*"', "", tag)


def _cell_xml(p: str, cell: str, style: str, value: str) -> str:
    if not value:
        return f'<{p}c r="{cell}"{style}/>' if style else ""
    text = xml_text(excel_escape(value))
    return (
        f'<{p}c r="{cell}"{style} t="inlineStr"><{p}is><{p}t xml:space="preserve">{text}'
        f"</{p}t></{p}is></{p}c>"
    )
