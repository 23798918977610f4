"""An in-memory store for tests: yours and ours.

:class:`MemorySheets` behaves like a spreadsheet (a cell on a missing sheet reads as
empty and cannot be written; a cell holds at most 50,000 characters, as in Google
Sheets) and lets a test make the next call fail with :meth:`fail_next_operation`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager

from plankit.checklist.errors import StoreError
from plankit.checklist.refs import parse_ref, quote_sheet
from plankit.checklist.stores.base import GOOGLE_CELL_LIMIT, check_cell_size


class MemorySheets:
    """Sheets of cells in a dictionary; thread-safe."""

    label = "the in-memory store"

    def __init__(
        self,
        cells: Mapping[str, str] | None = None,
        *,
        sheets: Iterable[str] = (),
        max_cell_chars: int | None = GOOGLE_CELL_LIMIT,
    ) -> None:
        """Start with ``sheets`` and ``cells`` (``{"AGENT_BASE!C2": "# Plan: …"}``); the
        sheets named in ``cells`` are created too."""
        self.max_cell_chars = max_cell_chars
        self.created_sheets: list[str] = []
        """Sheets added by :meth:`create_sheet`, in order."""
        self.writes: list[tuple[str, str]] = []
        """Every ``(ref, value)`` written by :meth:`set_cell` and kept, in order."""
        self._lock = threading.RLock()
        self._sheets: list[str] = list(sheets)
        self._cells: dict[tuple[str, str], str] = {}
        self._failures: list[tuple[int, str]] = []
        for ref, value in (cells or {}).items():
            r = parse_ref(ref)
            if r.sheet not in self._sheets:
                self._sheets.append(r.sheet)
            self._cells[(r.sheet, r.cell)] = value

    # --- test helpers ------------------------------------------------------------------

    def set_sheets(self, names: Iterable[str]) -> None:
        """Replace the list of sheets (cells of sheets no longer there are dropped)."""
        with self._lock:
            self._sheets = list(names)
            self._cells = {k: v for k, v in self._cells.items() if k[0] in self._sheets}

    def fail_next_operation(
        self, message: str = "simulated store failure", *, after: int = 0
    ) -> None:
        """Make the next call (any of the four) raise :class:`StoreError` with ``message``
        (or the call after ``after`` more calls have succeeded); call again to fail more
        than one."""
        with self._lock:
            self._failures.append((after, message))

    def snapshot(self) -> dict[str, str]:
        """Every non-empty cell as ``{"Sheet!C2": value}`` (``'My sheet'!C2`` quoted)."""
        with self._lock:
            return {f"{quote_sheet(s)}!{c}": v for (s, c), v in self._cells.items() if v}

    def _maybe_fail(self) -> None:
        if self._failures:
            wait, message = self._failures[0]
            if wait:
                self._failures[0] = (wait - 1, message)
                return
            self._failures.pop(0)
            raise StoreError(message, code="simulated")

    # --- SheetsClient ------------------------------------------------------------------

    def list_sheets(self) -> list[str]:
        """The sheet names, in order."""
        with self._lock:
            self._maybe_fail()
            return list(self._sheets)

    def create_sheet(self, name: str) -> None:
        """Add a sheet; one of that name must not exist."""
        with self._lock:
            self._maybe_fail()
            if name in self._sheets:
                raise StoreError(f"a sheet named {name!r} already exists", code="sheet-exists")
            self._sheets.append(name)
            self.created_sheets.append(name)

    def get_cell(self, ref: str) -> str:
        """The cell's text; '' when empty or when the sheet does not exist."""
        r = parse_ref(ref)
        with self._lock:
            self._maybe_fail()
            return self._cells.get((r.sheet, r.cell), "")

    def set_cell(self, ref: str, value: str) -> None:
        """Write a cell of an existing sheet."""
        r = parse_ref(ref)
        with self._lock:
            self._maybe_fail()
            if r.sheet not in self._sheets:
                raise StoreError(
                    f"cannot write {r.a1}: there is no sheet named {r.sheet!r}",
                    code="no-sheet",
                )
            check_cell_size(r.a1, value, self.max_cell_chars, self.label)
            self._cells[(r.sheet, r.cell)] = value
            self.writes.append((r.a1, value))

    @contextmanager
    def transaction(self) -> Iterator[MemorySheets]:
        """Hold the store's lock; on an exception, undo every change made in the block."""
        with self._lock:
            saved = (
                list(self._sheets),
                dict(self._cells),
                len(self.created_sheets),
                len(self.writes),
            )
            try:
                yield self
            except BaseException:
                self._sheets, self._cells = saved[0], saved[1]
                del self.created_sheets[saved[2] :]
                del self.writes[saved[3] :]
                raise
