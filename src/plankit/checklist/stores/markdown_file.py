"""A plan kept as a plain Markdown file (``PLAN.md``).

The file plays the part of one sheet holding two cells: the plan cell (``C2`` by
default) is the file's Markdown, and the marker cell above it (``C1``) is a leading
HTML comment line, ``<!-- PLAN.md Contents -->``, which Markdown viewers do not show.
Any other first line is part of the plan, so an existing PLAN.md is never misread.
The file is read afresh under a cross-process lock for every call and replaced
atomically when it changes; its byte-order mark and line endings are kept.
"""

from __future__ import annotations

import os
import re

from plankit.checklist.errors import StoreError
from plankit.checklist.refs import CellRef, parse_ref
from plankit.checklist.render import PLAN_MARKER
from plankit.checklist.stores.files import (
    DEFAULT_LOCK_TIMEOUT,
    LockedFileStore,
    check_writable,
    write_error,
)
from plankit.errors import InputError

MARKER_LINE = f"<!-- {PLAN_MARKER} -->"
"""The first line of a PLAN.md that :meth:`PlanManager.init_plan` has set up."""

_FIRST_LINE_RE = re.compile(r"([^\r\n]*)(\r\n|\r|\n|$)")


class _Session:
    def __init__(self, store: MarkdownFile) -> None:
        self.store = store
        self.exists = False
        self.bom = False
        self.marker = ""
        self.body = ""
        self.dirty = False
        self._load()

    def _load(self) -> None:
        from plankit.textio import read_text

        path = self.store.path
        if not os.path.lexists(path):
            return
        doc = read_text(path, allow_empty=True)
        self.exists, self.bom = True, doc.bom
        m = _FIRST_LINE_RE.match(doc.text)
        assert m is not None
        if m.group(1).strip() == MARKER_LINE:
            self.marker = PLAN_MARKER
            self.body = doc.text[m.end() :]
        else:
            self.body = doc.text

    def _which(self, ref: str) -> str:
        r = parse_ref(ref)
        plan = self.store.cell
        if r == plan:
            return "plan"
        if r == plan.above():
            return "marker"
        raise StoreError(
            f"a Markdown file holds only the plan ({plan.a1}) and its marker "
            f"({plan.above().a1}); {r.a1} is neither",
            code="no-such-cell",
        )

    def list_sheets(self) -> list[str]:
        return [self.store.cell.sheet] if self.exists else []

    def create_sheet(self, name: str) -> None:
        if name != self.store.cell.sheet:
            raise StoreError(
                f"a Markdown file holds one sheet, {self.store.cell.sheet!r}; cannot add {name!r}",
                code="no-such-sheet",
            )
        if self.exists:
            raise StoreError(f"a sheet named {name!r} already exists", code="sheet-exists")
        self.exists = True
        self.dirty = True

    def get_cell(self, ref: str) -> str:
        which = self._which(ref)
        if not self.exists:
            return ""
        return self.body if which == "plan" else self.marker

    def set_cell(self, ref: str, value: str) -> None:
        which = self._which(ref)
        if not self.exists:
            raise StoreError(
                f"cannot write {ref}: {self.store.path} does not exist yet (create the "
                "sheet first, as init_plan does)",
                code="no-sheet",
            )
        if which == "plan":
            self.body = value
        else:
            if value not in ("", PLAN_MARKER):
                raise StoreError(
                    f"the marker line of a Markdown file holds only {PLAN_MARKER!r}",
                    code="bad-marker",
                )
            self.marker = value
        self.dirty = True

    def text(self) -> str:
        if not self.marker:
            return self.body
        m = re.search(r"\r\n|\r|\n", self.body)
        return MARKER_LINE + (m.group(0) if m is not None else "\n") + self.body

    def commit(self) -> None:
        if self.dirty:
            self.store._write(self.text(), self.bom)


class MarkdownFile(LockedFileStore["_Session"]):
    """A PLAN.md file; see the module docstring."""

    label = "a Markdown file"
    plan_is_file = True
    """The plan is the whole file: messages name the file, never a cell."""
    max_cell_chars: int | None = None

    def __init__(
        self,
        path: str | os.PathLike[str],
        cell: str = "AGENT_BASE!C2",
        *,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    ) -> None:
        """``cell`` is the plan cell the manager uses; the marker is the cell above it."""
        self.path = os.fspath(path)
        self.cell: CellRef = parse_ref(cell)
        if self.cell.row < 2:
            raise InputError(f"the plan cell {cell} must be below row 1", code="bad-cell-ref")
        self.lock_timeout = lock_timeout

    def __repr__(self) -> str:
        return f"MarkdownFile({self.path!r})"

    def where(self, ref: str) -> str:
        """How messages name the plan: the file (a Markdown file has no cells to name)."""
        if os.path.lexists(self.path):
            return self.path
        return f"{self.path} (the file does not exist; check the path)"

    def _write(self, text: str, bom: bool) -> None:
        from plankit.textio import write_text_atomic

        check_writable(self.path)
        try:
            write_text_atomic(self.path, text, bom=bom)
        except OSError as exc:
            raise write_error(self.path, exc) from None

    def _session(self) -> _Session:
        return _Session(self)
