"""The protocol every store implements, the cell size limits and small shared helpers.

A store is anything with the four methods of :class:`SheetsClient`, the interface the
spec's ``PlanManager`` is written against.  Stores that can hold a lock across several
calls also offer ``transaction()`` (:class:`Transactional`): a context manager whose
calls see one consistent state and whose writes are kept only when the block ends
without an exception.  :class:`~plankit.checklist.manager.PlanManager` uses it when it
is there, so that a read-update-write is never interleaved with another process's.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

from plankit.checklist.errors import CellTooLargeError

GOOGLE_CELL_LIMIT = 50_000
"""Most characters a Google Sheets cell holds."""
EXCEL_CELL_LIMIT = 32_767
"""Most characters an Excel cell holds."""


@runtime_checkable
class SheetsClient(Protocol):
    """Where a plan is kept: named sheets of cells holding text."""

    def list_sheets(self) -> list[str]:
        """The names of the sheets, in order."""
        ...

    def create_sheet(self, name: str) -> None:
        """Add an empty sheet called ``name``."""
        ...

    def get_cell(self, ref: str) -> str:
        """The text of cell ``ref`` (``Sheet!C2``); '' when empty or the sheet is missing."""
        ...

    def set_cell(self, ref: str, value: str) -> None:
        """Write ``value`` into cell ``ref``; the sheet must exist."""
        ...


@runtime_checkable
class Transactional(Protocol):
    """A store whose calls can be grouped under one lock (see the module docstring)."""

    def transaction(self) -> AbstractContextManager[SheetsClient]:
        """A consistent view of the store; its writes are kept if the block succeeds."""
        ...


def cell_length(text: str) -> int:
    """Length as spreadsheets count it: UTF-16 code units (an emoji counts 2)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def check_cell_size(ref: str, value: str, limit: int | None, store: str) -> None:
    """Raise :class:`CellTooLargeError` when ``value`` does not fit in a cell of ``store``."""
    if limit is None or len(value) * 2 <= limit:  # quick accept: even all surrogates fit
        return
    length = cell_length(value)
    if length > limit:
        raise CellTooLargeError(ref, length, limit, store)


def cell_limit(store: object) -> int | None:
    """The store's ``max_cell_chars``, or None when it declares no limit."""
    limit = getattr(store, "max_cell_chars", None)
    return limit if isinstance(limit, int) else None


def describe_cell(store: object, ref: str) -> str:
    """How messages name the cell ``ref`` of ``store``: the store's own ``where(ref)``
    when it has one (``PLAN.md``, ``plan.xlsx, AGENT_BASE!C2 (the file does not
    exist)``), else ``ref``."""
    where = getattr(store, "where", None)
    if callable(where):
        try:
            text = where(ref)
        except Exception:  # a description must never hide the real error
            return ref
        if isinstance(text, str) and text:
            return text
    return ref


def store_label(store: object) -> str:
    """How messages name the store (``an Excel workbook``, ``Google Sheets`` …)."""
    label = getattr(store, "label", None)
    return label if isinstance(label, str) else type(store).__name__
