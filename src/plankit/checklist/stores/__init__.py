"""Where a plan is kept: the :class:`SheetsClient` protocol and its four stores.

======================  =============================================  ===============
store                   what                                           cell limit
======================  =============================================  ===============
:class:`MemorySheets`   a dictionary, for tests (``fail_next_operation``)  50,000
:class:`XlsxWorkbook`   a ``.xlsx`` file through openpyxl, locked          32,767
:class:`GoogleSheets`   a Google spreadsheet through gspread               50,000
:class:`MarkdownFile`   a plain ``PLAN.md`` file, locked                   none
======================  =============================================  ===============

The store classes are imported on first use; :func:`open_store` picks one from the
``--store`` text of the command line.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from plankit.checklist.stores.base import (
    EXCEL_CELL_LIMIT,
    GOOGLE_CELL_LIMIT,
    SheetsClient,
    Transactional,
)
from plankit.errors import InputError
from plankit.lazy import lazy_exports

if TYPE_CHECKING:
    from plankit.checklist.stores.gsheets import GoogleSheets
    from plankit.checklist.stores.markdown_file import MarkdownFile
    from plankit.checklist.stores.memory import MemorySheets
    from plankit.checklist.stores.xlsx import XlsxWorkbook

_WHERE = {
    "MemorySheets": "memory",
    "XlsxWorkbook": "xlsx",
    "GoogleSheets": "gsheets",
    "MarkdownFile": "markdown_file",
}

__all__ = [
    "EXCEL_CELL_LIMIT",
    "GOOGLE_CELL_LIMIT",
    "GoogleSheets",
    "MarkdownFile",
    "MemorySheets",
    "SheetsClient",
    "Transactional",
    "XlsxWorkbook",
    "check_store_spec",
    "is_markdown_store",
    "open_store",
]

GSHEETS_PREFIX = "gsheets:"
"""``--store gsheets:<spreadsheet id>`` names a Google spreadsheet."""


MARKDOWN_SUFFIXES = ("", ".md", ".markdown", ".mdown", ".mkd", ".txt")
"""File suffixes (any case) of a Markdown store; no suffix counts as Markdown too."""
WORKBOOK_SUFFIXES = (".xlsx", ".xlsm")
"""File suffixes (any case) of an Excel workbook store."""
_OTHER_SPREADSHEETS = (".xls", ".xlsb", ".ods", ".fods", ".numbers", ".csv", ".tsv")


def _suffix(spec: str) -> str:
    return os.path.splitext(spec.strip())[1].lower()


def is_markdown_store(spec: str) -> bool:
    """Whether ``spec`` (a ``--store`` value) names a Markdown file."""
    text = spec.strip()
    return not text.lower().startswith(GSHEETS_PREFIX) and _suffix(text) in MARKDOWN_SUFFIXES


def check_store_spec(spec: str) -> None:
    """Raise :class:`InputError` when ``spec`` is neither ``gsheets:…``, a workbook nor a
    Markdown file: ``plan.xslx`` is a typo, not a Markdown file to create."""
    text = spec.strip()
    if not text:
        raise InputError(
            "--store is empty; give a .md file, a .xlsx workbook or gsheets:<id>", code="bad-store"
        )
    if text.lower().startswith(GSHEETS_PREFIX):
        return
    suffix = _suffix(text)
    if suffix in MARKDOWN_SUFFIXES or suffix in WORKBOOK_SUFFIXES:
        return
    kinds = (
        "a store is a Markdown file (.md), an Excel workbook (.xlsx, .xlsm) or "
        "gsheets:<spreadsheet id>"
    )
    if suffix in _OTHER_SPREADSHEETS:
        raise InputError(
            f"{text}: plankit keeps plans in .xlsx workbooks, not {suffix} files; save a copy "
            f"as .xlsx (Excel or LibreOffice: Save As) and use that ({kinds})",
            code="bad-store",
        )
    import difflib

    close = difflib.get_close_matches(suffix, [*WORKBOOK_SUFFIXES, ".md"], n=1, cutoff=0.5)
    hint = f"; did you mean {text[: -len(suffix)]}{close[0]}?" if close else ""
    raise InputError(f"{text}: unknown kind of store ({suffix}){hint} ({kinds})", code="bad-store")


def open_store(
    spec: str,
    *,
    cell: str = "AGENT_BASE!C2",
    credentials: str | os.PathLike[str] | None = None,
    interactive: bool = False,
) -> SheetsClient:
    """The store a ``--store`` value names: ``gsheets:<id>``, a ``.xlsx``/``.xlsm``
    workbook, or a Markdown file (``.md``, ``.markdown``, ``.txt`` or no suffix); any
    other suffix raises :class:`InputError` (``plan.xslx`` is a typo, not Markdown).
    ``interactive`` lets Google Sheets ask for a sign-in on the terminal."""
    check_store_spec(spec)
    text = spec.strip()
    if text.lower().startswith(GSHEETS_PREFIX):
        from plankit.checklist.stores.gsheets import GoogleSheets

        return GoogleSheets(text[len(GSHEETS_PREFIX) :], credentials, interactive=interactive)
    if _suffix(text) in WORKBOOK_SUFFIXES:
        from plankit.checklist.stores.xlsx import XlsxWorkbook

        return XlsxWorkbook(text)
    from plankit.checklist.stores.markdown_file import MarkdownFile

    return MarkdownFile(text, cell)


__getattr__ = lazy_exports(__name__, _WHERE)
