"""A plan kept in a real ``.xlsx`` workbook, through openpyxl.

Every call (or every :meth:`XlsxWorkbook.transaction`) takes the workbook's
cross-process lock, reads the file afresh, and, when something changed, writes the
whole workbook atomically (:func:`plankit.textio.write_bytes_atomic`: a temporary
file in the same folder, flushed to disk, renamed over the original).  Two processes
updating the same plan therefore never lose each other's changes, and a crash leaves
the old workbook or the new one, never half of one.

The file is created on the first write.  Text is stored with the escapes Excel uses
(``_x000D_`` for a carriage return), so a CRLF plan reads back byte for byte in
Excel, LibreOffice, calamine and here.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from typing import TYPE_CHECKING

from plankit.checklist.errors import StoreError
from plankit.checklist.refs import parse_ref
from plankit.checklist.stores.base import EXCEL_CELL_LIMIT, check_cell_size
from plankit.checklist.stores.files import (
    DEFAULT_LOCK_TIMEOUT,
    LockedFileStore,
    check_writable,
    write_error,
)

if TYPE_CHECKING:
    from openpyxl.workbook.workbook import Workbook  # type: ignore[import-untyped]

_ESCAPE_RE = re.compile(r"_(?=x[0-9A-Fa-f]{4}_)|[\x00-\x08\x0b-\x1f]")
_UNESCAPE_RE = re.compile(r"_x([0-9A-Fa-f]{4})_")


def _escape(text: str) -> str:
    """Text as stored in the file: control characters and literal ``_xHHHH_`` escaped."""
    if "_" not in text and text.isprintable():
        return text
    return _ESCAPE_RE.sub(
        lambda m: "_x005F_" if m.group() == "_" else f"_x{ord(m.group()):04X}_", text
    )


def _unescape(text: str) -> str:
    if "_x" not in text:
        return text
    return _UNESCAPE_RE.sub(lambda m: chr(int(m.group(1), 16)), text)


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return _unescape(value)
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, _dt.datetime | _dt.date | _dt.time):
        return value.isoformat()
    return str(value)


class _Session:
    """One locked visit to the workbook: loaded on first use, saved on commit."""

    def __init__(self, store: XlsxWorkbook) -> None:
        self.store = store
        self._wb: Workbook | None = None
        self._loaded = False
        self.dirty = False

    def _workbook(self) -> Workbook | None:
        if not self._loaded:
            self._wb = self.store._load()
            self._loaded = True
        return self._wb

    def list_sheets(self) -> list[str]:
        wb = self._workbook()
        return [] if wb is None else list(wb.sheetnames)

    def create_sheet(self, name: str) -> None:
        wb = self._workbook()
        if wb is None:
            from openpyxl import Workbook  # type: ignore[import-untyped]

            wb = self._wb = Workbook()
            wb.active.title = name
            self.dirty = True
            return
        if name in wb.sheetnames:
            raise StoreError(f"a sheet named {name!r} already exists", code="sheet-exists")
        wb.create_sheet(name)
        self.dirty = True

    def get_cell(self, ref: str) -> str:
        r = parse_ref(ref)
        wb = self._workbook()
        if wb is None or r.sheet not in wb.sheetnames:
            return ""
        return _cell_text(wb[r.sheet][r.cell].value)

    def set_cell(self, ref: str, value: str) -> None:
        r = parse_ref(ref)
        check_cell_size(r.a1, value, self.store.max_cell_chars, self.store.label)
        wb = self._workbook()
        if wb is None or r.sheet not in wb.sheetnames:
            raise StoreError(
                f"cannot write {r.a1}: {self.store.path} has no sheet named {r.sheet!r}",
                code="no-sheet",
            )
        cell = wb[r.sheet][r.cell]
        cell.value = _escape(value) if value else None
        if cell.data_type == "f":  # text that starts with '=' stays text
            cell.data_type = "s"
        self.dirty = True

    def commit(self) -> None:
        if self.dirty and self._wb is not None:
            self.store._save(self._wb)


class XlsxWorkbook(LockedFileStore["_Session"]):
    """A ``.xlsx`` workbook on disk; see the module docstring."""

    label = "an Excel workbook"
    max_cell_chars: int | None = EXCEL_CELL_LIMIT

    def __init__(self, path: str | os.PathLike[str], *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT):
        """``path`` need not exist; it is created on the first write."""
        self.path = os.fspath(path)
        self.lock_timeout = lock_timeout

    def __repr__(self) -> str:
        return f"XlsxWorkbook({self.path!r})"

    # --- file access ---------------------------------------------------------------------

    def _load(self) -> Workbook | None:
        import zipfile

        from openpyxl import load_workbook

        path = self.path
        if not os.path.lexists(path):
            return None
        if os.path.isdir(path):
            raise StoreError(f"{path} is a directory, not an xlsx workbook", code="not-a-workbook")
        try:
            return load_workbook(path, keep_vba=path.lower().endswith(".xlsm"))
        except zipfile.BadZipFile:
            raise StoreError(
                f"{path} is not an xlsx workbook (it is not a zip file; an encrypted "
                "workbook or an old .xls file cannot be read); nothing was changed",
                code="not-a-workbook",
            ) from None
        except PermissionError:
            raise StoreError(
                f"{path} cannot be read (permission denied)", code="unreadable"
            ) from None
        except Exception as exc:  # openpyxl raises many kinds for a damaged workbook
            raise StoreError(
                f"{path} could not be read as an xlsx workbook ({type(exc).__name__}: {exc}); "
                "nothing was changed",
                code="not-a-workbook",
            ) from None

    def _save(self, wb: Workbook) -> None:
        import io

        from plankit.textio import write_bytes_atomic

        path = self.path
        check_writable(path)
        buffer = io.BytesIO()
        wb.save(buffer)
        try:
            write_bytes_atomic(path, buffer.getvalue())
        except OSError as exc:
            raise write_error(path, exc) from None

    # --- the store -----------------------------------------------------------------------

    def _session(self) -> _Session:
        return _Session(self)
