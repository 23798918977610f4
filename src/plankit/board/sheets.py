"""PLAN.md checklists kept in Google Sheets, on the board.

A spreadsheet is shown when the board is told about it (``plankit board --sheet
gsheets:ID``, or ``PLANKIT_STORE`` naming one), with the credentials the checklist
commands use.  :class:`SheetsSource` reads each plan cell every :data:`POLL` seconds,
less often when there are many (the Sheets API allows 60 reads a minute per user;
the board takes :data:`READS_PER_MINUTE` of them at most) and keeps, like for a
checklist file, a version each time the text changed, for the page's diffs.  A
spreadsheet that cannot be read (not shared, no network, no sign-in) is listed with
the error, as the checklist commands word it.

Its plan id is ``checklist:gsheets:<spreadsheet id>``, its path ``gsheets:<id>``.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from plankit.board.sources import Source
from plankit.board.views import checklist_head, checklist_page, error

POLL = 5.0
"""Seconds between two reads of each spreadsheet, at least."""
READS_PER_MINUTE = 30
"""Reads the board makes of Google Sheets a minute, at most, however many spreadsheets
it shows: half the Sheets API's 60 reads a minute per user, the other half left to the
checklist commands of the same user.  Up to two spreadsheets are read every
:data:`POLL` seconds, more of them each less often (at 5 seconds each, five would
take the whole quota and the commands would be refused)."""
MAX_VERSIONS = 50
"""Versions kept per spreadsheet."""


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(slots=True)
class _Sheet:
    spreadsheet_id: str
    store: Any
    text: str | None = None
    error: dict[str, Any] | None = None
    read: bool = False
    updated: str | None = None
    versions: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def path(self) -> str:
        return f"gsheets:{self.spreadsheet_id}"

    @property
    def id(self) -> str:
        return f"checklist:{self.path}"


def spreadsheet_ids(specs: Sequence[str]) -> list[str]:
    """The spreadsheet ids that ``gsheets:ID`` (or ``gsheets:URL``) specs name, each
    once; a spec of another kind or a malformed id raises the store's one-line error."""
    from plankit.checklist.stores import GSHEETS_PREFIX
    from plankit.checklist.stores.gsheets import spreadsheet_id_of
    from plankit.errors import InputError

    found: list[str] = []
    for spec in specs:
        text = spec.strip()
        if not text.lower().startswith(GSHEETS_PREFIX):
            raise InputError(
                f"--sheet {spec!r}: give a Google spreadsheet as gsheets:ID (the code in its "
                "address); checklist files under the directory are found without it"
            )
        sid = spreadsheet_id_of(text[len(GSHEETS_PREFIX) :])
        if sid not in found:
            found.append(sid)
    return found


class SheetsSource(Source):
    """The checklists in the plan cell (``cell``) of each spreadsheet.

    ``open_store(spreadsheet_id)`` makes the store of one spreadsheet; by default a
    :class:`~plankit.checklist.stores.gsheets.GoogleSheets` with ``credentials`` that
    never asks for a sign-in (tests give one talking to the shipped fake API)."""

    name = "Google Sheets"
    interval = POLL

    def __init__(
        self,
        spreadsheets: Sequence[str],
        *,
        credentials: str | None = None,
        cell: str | None = None,
        open_store: Callable[[str], Any] | None = None,
    ) -> None:
        from plankit.checklist.manager import DEFAULT_CELL
        from plankit.checklist.refs import parse_ref

        super().__init__()
        self.cell = parse_ref(cell or DEFAULT_CELL).a1  # a bad reference: refused now
        if open_store is None:
            from plankit.checklist.stores.gsheets import GoogleSheets

            def open_store(sid: str) -> Any:
                return GoogleSheets(sid, credentials, interactive=False)

        self._sheets = [_Sheet(sid, open_store(sid)) for sid in spreadsheet_ids(spreadsheets)]
        self.where = ", ".join(sheet.path for sheet in self._sheets)
        self.interval = max(POLL, 60.0 * len(self._sheets) / READS_PER_MINUTE)
        self._publish([self._summary(sheet) for sheet in self._sheets])

    def poll(self) -> list[dict[str, Any]]:
        from plankit.errors import PlankitError

        before = {sheet.id: (sheet.text, sheet.error) for sheet in self._sheets}
        for sheet in self._sheets:
            try:
                text = sheet.store.get_cell(self.cell)
            except PlankitError as exc:
                code = getattr(exc, "code", None) or "unreadable"
                sheet.error = error(code, str(exc), sheet.path)
                sheet.read = True
                continue
            except Exception as exc:  # the network's edge: whatever it raises is shown
                sheet.error = error("unreadable", f"{type(exc).__name__}: {exc}", sheet.path)
                sheet.read = True
                continue
            sheet.error, sheet.read = None, True
            if text != sheet.text:
                sheet.text, sheet.updated = text, _now()
                with self._lock:
                    sheet.versions.append((f"seen {sheet.updated}", sheet.updated, text))
                    del sheet.versions[:-MAX_VERSIONS]
        # a change the list does not show (a note, a step's text, another error) still
        # changes the page, as an edit of a checklist file does
        touched = {s.id for s in self._sheets if before[s.id] != (s.text, s.error)}
        return self._publish([self._summary(sheet) for sheet in self._sheets], touched)

    def _summary(self, sheet: _Sheet) -> dict[str, Any]:
        base = {"kind": "checklist", "id": sheet.id, "path": sheet.path, "source": "gsheets"}
        empty = {"progress": {"done": 0, "total": 0}, "updated": sheet.updated}
        if not sheet.read:
            return base | empty | {"title": sheet.path, "status": "reading…"}
        if sheet.error is not None:
            return base | empty | {"title": sheet.path, "status": "unreadable"}
        head = checklist_head(sheet.text or "", sheet.path, sheet.updated)
        if head is None:
            return base | empty | {"title": sheet.path, "status": "no plan in " + self.cell}
        return base | head

    def _sheet(self, plan_id: str) -> _Sheet | None:
        return next((s for s in self._sheets if s.id == plan_id), None)

    def detail(self, plan_id: str, query: Mapping[str, str]) -> dict[str, Any] | None:
        sheet = self._sheet(plan_id)
        if sheet is None:
            return None
        summary = self._summary(sheet)
        if sheet.error is not None:
            return summary | {"errors": [sheet.error], "warnings": [], "plan": None}
        if sheet.text is None:
            return summary | {"errors": [], "warnings": [], "plan": None}
        page = checklist_page(sheet.text, sheet.path, sheet.path, sheet.updated)
        if page is None:
            return summary | {"errors": [], "warnings": [], "plan": None}
        return {**summary, **page, "status": summary["status"]}

    def versions(self, plan_id: str) -> list[tuple[str, str, str]]:
        sheet = self._sheet(plan_id)
        with self._lock:
            return list(sheet.versions) if sheet is not None else []
