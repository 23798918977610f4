"""Google Sheets at the network edge, for tests without network or credentials.

These are ``requests`` transport adapters: mount one on a ``requests.Session`` and
give that session to :class:`~plankit.checklist.stores.gsheets.GoogleSheets` (or to
``gspread.Client(auth=None, session=…)``), and every HTTP request that would go to
``sheets.googleapis.com`` is answered here instead, in the Sheets API v4 wire format.

- :class:`FakeSheetsApi` keeps spreadsheets in memory and answers the calls the store
  makes (spreadsheets.get, batchUpdate with addSheet and findReplace, values.get,
  values.update) the way the API does, errors included: an unknown spreadsheet is a
  404, a missing sheet is a 400 ``Unable to parse range``, a value over 50,000
  characters is a 400.  :meth:`FakeSheetsApi.fail_next` (with a ``Retry-After``) and
  :meth:`FakeSheetsApi.drop_next_connection` script failures; ``before_request`` lets a
  test act between requests (another writer changing a cell, say).  Requests from
  several threads are answered one at a time.
- :class:`ReplaySheetsApi` answers with a list of recorded exchanges, in order, and
  fails on any request that differs from the recorded one.
- :class:`RecordingSheetsApi` passes requests on (to the real API by default) and
  records the exchanges, without the ``Authorization`` header, for replaying later.

Needs the ``gsheets`` extra (``requests`` comes with gspread).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import requests
from requests.adapters import BaseAdapter, HTTPAdapter

from plankit.checklist.refs import column_letters, parse_ref
from plankit.errors import InputError

API_ROOT = "https://sheets.googleapis.com/"
"""Where the Sheets API lives; the adapters are mounted on this prefix."""

_STATUS_TEXT = {
    400: "INVALID_ARGUMENT",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


@dataclass(frozen=True, slots=True)
class ApiRequest:
    """One request received by a fake."""

    method: str
    """``GET``, ``PUT``, ``POST`` …"""
    path: str
    """The URL path, percent-decoded (``/v4/spreadsheets/ID/values/AGENT_BASE!C2``)."""
    params: tuple[tuple[str, str], ...]
    """The query parameters, sorted."""
    json: Any
    """The decoded JSON body, or None."""


def _request_parts(request: requests.PreparedRequest) -> ApiRequest:
    url = urlsplit(request.url or "")
    raw = request.body
    body = raw.decode("utf-8") if isinstance(raw, bytes) else raw if isinstance(raw, str) else ""
    return ApiRequest(
        method=(request.method or "GET").upper(),
        path=unquote(url.path),
        params=tuple(sorted(parse_qsl(url.query, keep_blank_values=True))),
        json=json.loads(body) if body else None,
    )


def _response(
    request: requests.PreparedRequest,
    status: int,
    body: Any,
    headers: Mapping[str, str] | None = None,
) -> requests.Response:
    response = requests.Response()
    response.status_code = status
    response.reason = "OK" if status == 200 else _STATUS_TEXT.get(status, "ERROR")
    response._content = json.dumps(body, ensure_ascii=False, indent=2).encode("utf-8")
    response.headers["Content-Type"] = "application/json; charset=UTF-8"
    response.headers.update(headers or {})
    response.encoding = "utf-8"
    response.url = request.url or ""
    response.request = request
    return response


def api_error(status: int, message: str) -> dict[str, Any]:
    """The body of an API error response."""
    return {
        "error": {"code": status, "message": message, "status": _STATUS_TEXT.get(status, "UNKNOWN")}
    }


def mount(adapter: BaseAdapter, base: requests.Session | None = None) -> requests.Session:
    """``base`` (a new session by default) with its Sheets API requests sent to
    ``adapter``."""
    session = base if base is not None else requests.Session()
    session.mount(API_ROOT, adapter)
    return session


@dataclass
class _Spreadsheet:
    title: str
    sheets: list[tuple[int, str]]
    cells: dict[tuple[str, str], str] = field(default_factory=dict)
    next_id: int = 1_000_000


class FakeSheetsApi(BaseAdapter):
    """An in-memory Sheets API v4 (see the module docstring)."""

    cell_limit = 50_000

    def __init__(self) -> None:
        super().__init__()
        self.spreadsheets: dict[str, _Spreadsheet] = {}
        self.requests: list[ApiRequest] = []
        """Every request received, in order."""
        self.before_request: Callable[[ApiRequest], None] | None = None
        """Called with each request before it is answered (under the fake's lock)."""
        self._script: list[tuple[int, str, float | str | None] | None] = []
        self._lock = threading.RLock()

    # --- set-up --------------------------------------------------------------------------

    def add_spreadsheet(
        self,
        spreadsheet_id: str,
        *,
        title: str = "Untitled spreadsheet",
        sheets: Iterable[str] = ("Sheet1",),
        cells: Mapping[str, str] | None = None,
    ) -> None:
        """Create a spreadsheet with ``sheets`` and ``cells`` (``{"Sheet1!A1": "x"}``)."""
        book = _Spreadsheet(title, [(i, name) for i, name in enumerate(sheets)])
        self.spreadsheets[spreadsheet_id] = book
        for ref, value in (cells or {}).items():
            r = parse_ref(ref)
            if r.sheet not in [n for _, n in book.sheets]:
                book.sheets.append((book.next_id, r.sheet))
                book.next_id += 1
            book.cells[(r.sheet, r.cell)] = value

    def cell(self, spreadsheet_id: str, ref: str) -> str:
        """What a cell holds now ('' when empty)."""
        r = parse_ref(ref)
        return self.spreadsheets[spreadsheet_id].cells.get((r.sheet, r.cell), "")

    def sheet_titles(self, spreadsheet_id: str) -> list[str]:
        """The spreadsheet's sheet titles, in order."""
        return [name for _, name in self.spreadsheets[spreadsheet_id].sheets]

    def fail_next(
        self,
        status: int = 503,
        message: str = "The service is currently unavailable.",
        *,
        retry_after: float | str | None = None,
        times: int = 1,
    ) -> None:
        """Answer the next request (the next ``times`` requests) with an API error,
        with a ``Retry-After`` header when ``retry_after`` is given (seconds or an HTTP
        date)."""
        self._script += [(status, message, retry_after)] * times

    def drop_next_connection(self, times: int = 1) -> None:
        """Make the next request (the next ``times``) fail as if the network were down."""
        self._script += [None] * times

    def session(self) -> requests.Session:
        """A ``requests.Session`` that talks to this fake."""
        return mount(self)

    # --- the adapter ---------------------------------------------------------------------

    def send(  # type: ignore[override]
        self, request: requests.PreparedRequest, **kwargs: Any
    ) -> requests.Response:
        """Answer one request."""
        parts = _request_parts(request)
        with self._lock:
            self.requests.append(parts)
            if self.before_request is not None:
                self.before_request(parts)
            if self._script:
                scripted = self._script.pop(0)
                if scripted is None:
                    raise requests.exceptions.ConnectionError("connection dropped (scripted)")
                status, message, wait = scripted
                headers = {"Retry-After": str(wait)} if wait is not None else None
                return _response(request, status, api_error(status, message), headers)
            status, body = self._answer(parts)
            return _response(request, status, body)

    def close(self) -> None:
        """Nothing to release."""

    def _answer(self, req: ApiRequest) -> tuple[int, Any]:
        prefix = "/v4/spreadsheets/"
        if not req.path.startswith(prefix):
            return 404, api_error(404, "Method not found.")
        rest = req.path[len(prefix) :]
        sid, sep, tail = rest.partition("/")
        action = ""
        if not sep and ":" in sid:
            sid, _, action = sid.partition(":")
        book = self.spreadsheets.get(sid)
        if book is None:
            return 404, api_error(404, "Requested entity was not found.")
        params = dict(req.params)
        if not tail and not action and req.method == "GET":
            return 200, self._metadata(sid, book, params.get("fields"))
        if action == "batchUpdate" and req.method == "POST":
            return self._batch_update(sid, book, req.json or {})
        if tail.startswith("values/"):
            return self._values(sid, book, req, tail[len("values/") :])
        return 404, api_error(404, "Method not found.")

    def _metadata(self, sid: str, book: _Spreadsheet, fields: str | None) -> dict[str, Any]:
        sheets = [
            {
                "properties": {
                    "sheetId": sheet_id,
                    "title": name,
                    "index": index,
                    "sheetType": "GRID",
                    "gridProperties": {"rowCount": 1000, "columnCount": 26},
                }
            }
            for index, (sheet_id, name) in enumerate(book.sheets)
        ]
        if fields == "sheets.properties.title":
            return {"sheets": [{"properties": {"title": name}} for _, name in book.sheets]}
        if fields == "sheets.properties(sheetId,title)":
            return {
                "sheets": [
                    {"properties": {"sheetId": sheet_id, "title": name}}
                    for sheet_id, name in book.sheets
                ]
            }
        return {
            "spreadsheetId": sid,
            "properties": {
                "title": book.title,
                "locale": "en_US",
                "autoRecalc": "ON_CHANGE",
                "timeZone": "Etc/GMT",
            },
            "sheets": sheets,
            "spreadsheetUrl": f"https://docs.google.com/spreadsheets/d/{sid}/edit",
        }

    def _batch_update(self, sid: str, book: _Spreadsheet, body: Any) -> tuple[int, Any]:
        replies: list[Any] = []
        for i, item in enumerate(body.get("requests", [])):
            find = item.get("findReplace") if isinstance(item, dict) else None
            if find is not None:
                status, reply = self._find_replace(book, i, find)
                if status != 200:
                    return status, reply
                replies.append(reply)
                continue
            add = item.get("addSheet") if isinstance(item, dict) else None
            if add is None:
                return 400, api_error(400, f"Invalid requests[{i}]: unsupported by the fake")
            title = add.get("properties", {}).get("title", f"Sheet{len(book.sheets) + 1}")
            if title in [n for _, n in book.sheets]:
                return 400, api_error(
                    400,
                    f'Invalid requests[{i}].addSheet: A sheet with the name "{title}" already '
                    "exists. Please enter another name.",
                )
            sheet_id = book.next_id
            book.next_id += 1
            book.sheets.append((sheet_id, title))
            replies.append(
                {
                    "addSheet": {
                        "properties": {
                            "sheetId": sheet_id,
                            "title": title,
                            "index": len(book.sheets) - 1,
                            "sheetType": "GRID",
                            "gridProperties": {"rowCount": 1000, "columnCount": 26},
                        }
                    }
                }
            )
        return 200, {"spreadsheetId": sid, "replies": replies}

    def _find_replace(self, book: _Spreadsheet, i: int, find: Any) -> tuple[int, Any]:
        """``findReplace`` over a grid range, as the store sends it: plain text, whole
        cell, case-sensitive (the other options are not modelled)."""
        grid = find.get("range") or {}
        names = dict(book.sheets)
        name = names.get(int(grid.get("sheetId", -1)))
        if name is None:
            return 400, api_error(400, f"Invalid requests[{i}].findReplace: No grid with id")
        if not find.get("find"):
            return 400, api_error(400, f"Invalid requests[{i}].findReplace: find must not be empty")
        if (
            find.get("searchByRegex")
            or not find.get("matchEntireCell")
            or not find.get("matchCase")
        ):
            return 400, api_error(400, f"Invalid requests[{i}]: unsupported by the fake")
        changed = 0
        for row in range(grid.get("startRowIndex", 0), grid.get("endRowIndex", 0)):
            for col in range(grid.get("startColumnIndex", 0), grid.get("endColumnIndex", 0)):
                key = (name, f"{column_letters(col + 1)}{row + 1}")
                if book.cells.get(key) == find["find"]:
                    book.cells[key] = str(find.get("replacement", ""))
                    changed += 1
        if not changed:
            return 200, {"findReplace": {}}  # the API leaves out zero counts
        return 200, {
            "findReplace": {
                "valuesChanged": changed,
                "rowsChanged": changed,
                "sheetsChanged": 1,
                "occurrencesChanged": changed,
            }
        }

    def _values(self, sid: str, book: _Spreadsheet, req: ApiRequest, a1: str) -> tuple[int, Any]:
        try:
            ref = parse_ref(a1)
        except InputError:
            return 400, api_error(400, f"Unable to parse range: {a1}")
        if ref.sheet not in [n for _, n in book.sheets]:
            return 400, api_error(400, f"Unable to parse range: {a1}")
        key = (ref.sheet, ref.cell)
        if req.method == "GET":
            out: dict[str, Any] = {"range": ref.a1, "majorDimension": "ROWS"}
            if book.cells.get(key):
                out["values"] = [[book.cells[key]]]
            return 200, out
        if req.method == "PUT":
            values = (req.json or {}).get("values") or [[""]]
            value = values[0][0] if values and values[0] else ""
            text = value if isinstance(value, str) else json.dumps(value)
            if len(text.encode("utf-16-le")) // 2 > self.cell_limit:
                return 400, api_error(
                    400,
                    "Invalid values[0][0]: Your input contains more than the maximum of "
                    f"{self.cell_limit} characters in a single cell.",
                )
            book.cells[key] = text
            return 200, {
                "spreadsheetId": sid,
                "updatedRange": ref.a1,
                "updatedRows": 1,
                "updatedColumns": 1,
                "updatedCells": 1,
            }
        return 404, api_error(404, "Method not found.")


class ReplaySheetsApi(BaseAdapter):
    """Answers with recorded exchanges, in order (see the module docstring)."""

    def __init__(self, exchanges: Iterable[Mapping[str, Any]]) -> None:
        super().__init__()
        self.exchanges = list(exchanges)
        self.position = 0

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> ReplaySheetsApi:
        """Load ``{"exchanges": [{"request": {...}, "response": {...}}, …]}``."""
        with open(path, encoding="utf-8") as handle:
            return cls(json.load(handle)["exchanges"])

    def session(self) -> requests.Session:
        """A ``requests.Session`` that talks to this replay."""
        return mount(self)

    def send(  # type: ignore[override]
        self, request: requests.PreparedRequest, **kwargs: Any
    ) -> requests.Response:
        """Check the request against the next recorded one and answer with its response."""
        got = _request_parts(request)
        if self.position >= len(self.exchanges):
            raise AssertionError(f"unexpected request after the recording ended: {got}")
        recorded = self.exchanges[self.position]
        self.position += 1
        want = recorded["request"]
        url = urlsplit(want["url"])
        expected = ApiRequest(
            method=want["method"].upper(),
            path=unquote(url.path),
            params=tuple(sorted(parse_qsl(url.query, keep_blank_values=True))),
            json=want.get("json"),
        )
        if got != expected:
            raise AssertionError(
                f"request {self.position} differs from the recording:\n  sent:     {got}\n"
                f"  recorded: {expected}"
            )
        answer = recorded["response"]
        return _response(request, int(answer["status"]), answer.get("json"), answer.get("headers"))

    def close(self) -> None:
        """Nothing to release."""

    def assert_done(self) -> None:
        """Fail when recorded exchanges were not used."""
        left = len(self.exchanges) - self.position
        if left:
            raise AssertionError(f"{left} recorded exchange(s) were never requested")


class RecordingSheetsApi(BaseAdapter):
    """Sends requests through ``inner`` (the network by default) and records them."""

    def __init__(self, inner: BaseAdapter | None = None) -> None:
        super().__init__()
        self.inner = inner if inner is not None else HTTPAdapter()
        self.exchanges: list[dict[str, Any]] = []

    def session(self, base: requests.Session | None = None) -> requests.Session:
        """A session whose Sheets API requests are recorded: pass an authorised one
        (``google.auth.transport.requests.AuthorizedSession(credentials)``) to record
        the real API."""
        return mount(self, base)

    def send(  # type: ignore[override]
        self, request: requests.PreparedRequest, **kwargs: Any
    ) -> requests.Response:
        """Send, record (without credentials), and return the response."""
        response = self.inner.send(request, **kwargs)
        parts = _request_parts(request)
        try:
            answer = response.json()
        except ValueError:
            answer = response.text
        recorded: dict[str, Any] = {"status": response.status_code, "json": answer}
        kept = {k: v for k, v in response.headers.items() if k.lower() == "retry-after"}
        if kept:
            recorded["headers"] = kept
        self.exchanges.append(
            {
                "request": {"method": parts.method, "url": request.url, "json": parts.json},
                "response": recorded,
            }
        )
        return response

    def close(self) -> None:
        """Close the inner adapter."""
        self.inner.close()

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the recording in the format :meth:`ReplaySheetsApi.from_file` reads."""
        from plankit.textio import write_text_atomic

        text = json.dumps({"exchanges": self.exchanges}, ensure_ascii=False, indent=2)
        write_text_atomic(path, text + "\n")
