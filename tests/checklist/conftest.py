"""Fixtures: the same tests run against MemorySheets and against a real xlsx workbook."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

from plankit.checklist import MemorySheets, PlanManager, XlsxWorkbook
from plankit.checklist.refs import parse_ref
from plankit.checklist.stores.base import SheetsClient

DATA = Path(__file__).resolve().parents[1] / "data" / "checklist"
TODAY = dt.date(2026, 1, 15)


class Backend:
    """One store plus test-side access to what it holds, by an independent route."""

    name: str
    store: SheetsClient

    def seed(self, ref: str, value: str) -> None:
        raise NotImplementedError

    def set_sheets(self, names: list[str]) -> None:
        raise NotImplementedError

    def cell(self, ref: str) -> str:
        raise NotImplementedError

    def sheets(self) -> list[str]:
        raise NotImplementedError

    def created_sheets(self) -> list[str]:
        raise NotImplementedError

    def fail_next(self, message: str) -> None:
        raise NotImplementedError

    def state(self) -> object:
        """Everything the store holds, to check that nothing was written."""
        raise NotImplementedError

    def manager(self, cell: str = "AGENT_BASE!C2") -> PlanManager:
        return PlanManager(self.store, cell, today=lambda: TODAY)


class MemoryBackend(Backend):
    name = "memory"

    def __init__(self) -> None:
        self.store = self.memory = MemorySheets()

    def seed(self, ref: str, value: str) -> None:
        sheet = parse_ref(ref).sheet
        if sheet not in self.memory.snapshot() and sheet not in self.memory.list_sheets():
            self.memory.set_sheets([*self.memory.list_sheets(), sheet])
        self.memory.set_cell(ref, value)

    def set_sheets(self, names: list[str]) -> None:
        self.memory.set_sheets(names)

    def cell(self, ref: str) -> str:
        return self.memory.snapshot().get(parse_ref(ref).a1, "")

    def sheets(self) -> list[str]:
        return self.memory.list_sheets()

    def created_sheets(self) -> list[str]:
        return list(self.memory.created_sheets)

    def fail_next(self, message: str) -> None:
        self.memory.fail_next_operation(message)

    def state(self) -> object:
        return (self.memory._sheets[:], self.memory.snapshot())


class XlsxBackend(Backend):
    """A real workbook: seeded with openpyxl, read back with python-calamine."""

    name = "xlsx"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.store = XlsxWorkbook(path)
        self._initial: list[str] = []

    def _workbook(self):  # type: ignore[no-untyped-def]
        import openpyxl

        if self.path.exists():
            return openpyxl.load_workbook(self.path)
        wb = openpyxl.Workbook()
        wb.remove(wb.active)
        return wb

    def seed(self, ref: str, value: str) -> None:
        r = parse_ref(ref)
        wb = self._workbook()
        if r.sheet not in wb.sheetnames:
            wb.create_sheet(r.sheet)
            self._initial.append(r.sheet)
        wb[r.sheet][r.cell] = value or None
        wb.save(self.path)

    def set_sheets(self, names: list[str]) -> None:
        import openpyxl

        if not names:
            if self.path.exists():
                os.unlink(self.path)
        else:
            wb = openpyxl.Workbook()
            wb.active.title = names[0]
            for name in names[1:]:
                wb.create_sheet(name)
            wb.save(self.path)
        self._initial = list(names)

    def cell(self, ref: str) -> str:
        from python_calamine import CalamineWorkbook

        r = parse_ref(ref)
        if not self.path.exists():
            return ""
        book = CalamineWorkbook.from_path(str(self.path))
        if r.sheet not in book.sheet_names:
            return ""
        rows = book.get_sheet_by_name(r.sheet).to_python(skip_empty_area=False)
        row, col = r.row - 1, ord(r.column) - ord("A")
        if row >= len(rows) or col >= len(rows[row]):
            return ""
        value = rows[row][col]
        return "" if value is None else str(value)

    def sheets(self) -> list[str]:
        from python_calamine import CalamineWorkbook

        if not self.path.exists():
            return []
        return list(CalamineWorkbook.from_path(str(self.path)).sheet_names)

    def created_sheets(self) -> list[str]:
        return [s for s in self.sheets() if s not in self._initial]

    def fail_next(self, message: str) -> None:
        # a real failure: the path holds bytes that are not a workbook
        self.path.write_bytes(message.encode())

    def state(self) -> object:
        return self.path.read_bytes() if self.path.exists() else None


@pytest.fixture(params=["memory", "xlsx"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if request.param == "memory":
        return MemoryBackend()
    return XlsxBackend(tmp_path / "plan.xlsx")


@pytest.fixture
def data() -> Path:
    return DATA
