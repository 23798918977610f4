"""A plan kept in a real ``.xlsx`` workbook, the user's own included.

Only the plan sheet's part of the workbook is ever rewritten
(:mod:`plankit.checklist.stores.xlsx_package`): the other sheets, their cached formula
values, charts, pivot tables, defined names, styles and macros are copied byte for
byte, and an update costs the plan sheet, not the workbook.  A new file is made with
openpyxl (one sheet), then changed the same way.

Every write (a :meth:`XlsxWorkbook.transaction`) takes the workbook's cross-process
lock, reads the file afresh and, when something changed, writes the new package
atomically (:func:`plankit.textio.write_bytes_atomic`: a temporary file in the same
folder, flushed to disk, renamed over the original).  Two processes updating the same
plan therefore never lose each other's changes, and a crash leaves the old workbook or
the new one, never half of one.  Reads take no lock: they see the old file or the new.

Text is stored as inline strings with the escapes Excel uses (``_x000D_`` for a
carriage return), so a CRLF plan reads back byte for byte in Excel, LibreOffice,
calamine and here.  Sheet names follow Excel's rules (31 characters, no ``[]:*?/\\``,
not ``History``, unique in any case).
"""

from __future__ import annotations

import os

from plankit.checklist.errors import StoreError
from plankit.checklist.refs import parse_ref
from plankit.checklist.stores.base import EXCEL_CELL_LIMIT, check_cell_size
from plankit.checklist.stores.files import (
    DEFAULT_LOCK_TIMEOUT,
    LockedFileStore,
    check_writable,
    write_error,
)
from plankit.checklist.stores.xlsx_package import Package, check_sheet_name

MAX_WORKBOOK_BYTES = 512 * 1024 * 1024
"""Largest workbook file read (512 MiB)."""


class _Session:
    """One visit to the workbook: read on first use, written on commit if changed."""

    def __init__(self, store: XlsxWorkbook) -> None:
        self.store = store
        self._package: Package | None = None
        self._loaded = False
        self.created = False

    def package(self) -> Package | None:
        if not self._loaded:
            data = self.store._read()
            self._package = Package(data, self.store.path) if data is not None else None
            self._loaded = True
        return self._package

    def list_sheets(self) -> list[str]:
        package = self.package()
        return [] if package is None else [sheet.name for sheet in package.sheets()]

    def create_sheet(self, name: str) -> None:
        check_sheet_name(name)
        package = self.package()
        if package is None:
            self._package = Package(_new_workbook(name), self.store.path)
            self.created = True
            return
        package.create_sheet(name)

    def get_cell(self, ref: str) -> str:
        r = parse_ref(ref)
        package = self.package()
        return "" if package is None else package.get_cell(r.sheet, r.cell)

    def set_cell(self, ref: str, value: str) -> None:
        r = parse_ref(ref)
        check_cell_size(r.a1, value, self.store.max_cell_chars, self.store.label)
        package = self.package()
        if package is None:
            raise StoreError(
                f"cannot write {r.a1}: {self.store.path} has no sheet named {r.sheet!r}",
                code="no-sheet",
            )
        package.set_cell(r.sheet, r.cell, value)

    def commit(self) -> None:
        package = self._package
        if package is not None and (self.created or package.dirty):
            self.store._save(package.to_bytes())


def _new_workbook(sheet: str) -> bytes:
    """A new workbook with one empty sheet called ``sheet``, as openpyxl writes it."""
    import io

    from openpyxl import Workbook  # type: ignore[import-untyped]

    wb = Workbook()
    wb.active.title = sheet
    buffer = io.BytesIO()
    wb.save(buffer)
    return buffer.getvalue()


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

    def _read(self) -> bytes | None:
        """The file's bytes, or None when there is no file yet."""
        path = self.path
        if not os.path.lexists(path):
            return None
        if os.path.isdir(path):
            raise StoreError(f"{path} is a directory, not an xlsx workbook", code="not-a-workbook")
        from plankit.textio import read_bytes_limited

        try:
            return read_bytes_limited(path, MAX_WORKBOOK_BYTES)
        except IsADirectoryError:
            raise StoreError(
                f"{path} is a directory, not an xlsx workbook", code="not-a-workbook"
            ) from None
        except PermissionError:
            raise StoreError(
                f"{path} cannot be read (permission denied)", code="unreadable"
            ) from None
        except FileNotFoundError:  # replaced between the check and the open: no file
            return None
        except OSError as exc:  # a FIFO or a device (never waited on), over the size limit
            raise StoreError(
                f"{path} cannot be read as a workbook ({exc.strerror})", code="unreadable"
            ) from None

    def _save(self, data: bytes) -> None:
        from plankit.textio import write_bytes_atomic

        path = self.path
        check_writable(path)
        try:
            write_bytes_atomic(path, data)
        except OSError as exc:
            raise write_error(path, exc) from None

    # --- the store -----------------------------------------------------------------------

    def _session(self) -> _Session:
        return _Session(self)
