"""A1 cell references: ``AGENT_BASE!C2``, ``'My sheet'!B3``.

Every store takes references in this form.  :func:`parse_ref` checks one and says what
is wrong with it; :class:`CellRef` gives the sheet, the column letters and the row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from plankit.errors import InputError

_CELL_RE = re.compile(r"([A-Za-z]{1,3})([1-9][0-9]{0,6})")
_SHEET_FORBIDDEN = set(":\\/?*[]")
MAX_COLUMN = 16384
"""Columns go up to XFD in Excel (Google Sheets allows no more in practice)."""
MAX_ROW = 1_048_576
"""Rows go up to 1,048,576 in Excel."""


@dataclass(frozen=True, slots=True)
class CellRef:
    """One cell: a sheet name, a column and a row."""

    sheet: str
    """The sheet (tab) name, unquoted."""
    column: str
    """Column letters, upper case (``C``)."""
    row: int
    """1-based row."""

    @property
    def cell(self) -> str:
        """The cell part alone: ``C2``."""
        return f"{self.column}{self.row}"

    @property
    def a1(self) -> str:
        """The full reference, the sheet quoted when it needs to be: ``'My sheet'!C2``."""
        return f"{quote_sheet(self.sheet)}!{self.cell}"

    def above(self) -> CellRef:
        """The cell one row up (the row must be 2 or more)."""
        return CellRef(self.sheet, self.column, self.row - 1)

    def __str__(self) -> str:
        return self.a1


def quote_sheet(name: str) -> str:
    """``name`` as written before ``!``: quoted when it is not a plain identifier."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name) and not _CELL_RE.fullmatch(name):
        return name
    return "'" + name.replace("'", "''") + "'"


def column_number(letters: str) -> int:
    """1-based index of upper-case column letters (``A`` → 1, ``AA`` → 27)."""
    number = 0
    for ch in letters:
        number = number * 26 + (ord(ch) - 64)
    return number


def column_letters(number: int) -> str:
    """The letters of the 1-based column ``number`` (1 → ``A``, 27 → ``AA``)."""
    out = ""
    while number:
        number, rem = divmod(number - 1, 26)
        out = chr(65 + rem) + out
    return out


def parse_ref(ref: str) -> CellRef:
    """Parse ``Sheet!C2`` (or ``'Sheet name'!C2``); raise :class:`InputError` if invalid."""
    text = ref.strip()
    if text.startswith("'"):
        end = 1
        name_chars: list[str] = []
        while True:
            quote = text.find("'", end)
            if quote < 0:
                raise InputError(
                    f"cell reference {ref!r} has an unclosed quote; write 'My sheet'!C2",
                    code="bad-cell-ref",
                )
            name_chars.append(text[end:quote])
            if text.startswith("''", quote):
                name_chars.append("'")
                end = quote + 2
                continue
            break
        sheet = "".join(name_chars)
        rest = text[quote + 1 :]
        if not rest.startswith("!"):
            raise InputError(
                f"cell reference {ref!r}: expected '!' after the quoted sheet name",
                code="bad-cell-ref",
            )
        cell = rest[1:]
    else:
        sheet, bang, cell = text.rpartition("!")
        if not bang:
            raise InputError(
                f"cell reference {ref!r} has no sheet; write it as SHEET!CELL, e.g. AGENT_BASE!C2",
                code="bad-cell-ref",
            )
    if not sheet.strip():
        raise InputError(f"cell reference {ref!r} has an empty sheet name", code="bad-cell-ref")
    bad = sorted(_SHEET_FORBIDDEN & set(sheet))
    if bad or len(sheet) > 100:
        why = f"contains {' '.join(bad)}" if bad else "is over 100 characters"
        raise InputError(f"sheet name {sheet!r} {why}", code="bad-cell-ref")
    m = _CELL_RE.fullmatch(cell)
    if m is None:
        raise InputError(
            f"cell reference {ref!r}: {cell!r} is not a single cell like C2 (ranges are "
            "not accepted)",
            code="bad-cell-ref",
        )
    column, row = m.group(1).upper(), int(m.group(2))
    if column_number(column) > MAX_COLUMN or row > MAX_ROW:
        raise InputError(
            f"cell reference {ref!r} is outside the sheet (at most XFD1048576)",
            code="bad-cell-ref",
        )
    return CellRef(sheet, column, row)


def column_index(column: str) -> int:
    """1-based index of column letters (``A`` → 1, ``AA`` → 27)."""
    return column_number(column.upper())
