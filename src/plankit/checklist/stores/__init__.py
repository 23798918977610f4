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
    "is_markdown_store",
    "open_store",
]

GSHEETS_PREFIX = "gsheets:"
"""``--store gsheets:<spreadsheet id>`` names a Google spreadsheet."""


def is_markdown_store(spec: str) -> bool:
    """Whether ``spec`` (a ``--store`` value) names a Markdown file."""
    text = spec.strip().lower()
    return not text.startswith(GSHEETS_PREFIX) and not text.endswith((".xlsx", ".xlsm"))


def open_store(
    spec: str,
    *,
    cell: str = "AGENT_BASE!C2",
    credentials: str | os.PathLike[str] | None = None,
) -> SheetsClient:
    """The store a ``--store`` value names: ``gsheets:<id>``, a ``.xlsx``/``.xlsm``
    workbook, or any other path as a Markdown file."""
    text = spec.strip()
    if text.lower().startswith(GSHEETS_PREFIX):
        from plankit.checklist.stores.gsheets import GoogleSheets

        return GoogleSheets(text[len(GSHEETS_PREFIX) :], credentials)
    if text.lower().endswith((".xlsx", ".xlsm")):
        from plankit.checklist.stores.xlsx import XlsxWorkbook

        return XlsxWorkbook(text)
    from plankit.checklist.stores.markdown_file import MarkdownFile

    return MarkdownFile(text, cell)


__getattr__ = lazy_exports(__name__, _WHERE)
