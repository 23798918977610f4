"""A plan kept in a Google Sheets spreadsheet, through gspread (``plankit[gsheets]``).

Sheets API v4 calls do the work: ``spreadsheets.get`` (sheet titles and ids),
``spreadsheets.batchUpdate`` with ``addSheet`` and ``findReplace``,
``spreadsheets.values.get`` and ``spreadsheets.values.update`` with
``valueInputOption=RAW`` (so a plan is stored as text, never read as a formula).

- **Retries.** A rate limit (429) or a server failure (500, 502, 503, 504), and a
  dropped connection, are tried again after a delay: the ``Retry-After`` the server
  gives, else 1, 2, 4 … s (with jitter, at most 32 s), five times before the error.
- **No lost update.** Google Sheets has no lock a client can hold, so a
  read-update-write (a :meth:`GoogleSheets.transaction`) writes the plan cell only if
  it still holds what was read: one ``findReplace`` of the whole old text by the new
  one, limited to that cell and applied atomically by the API.  When the cell changed
  meanwhile nothing is replaced; the write is refused with :class:`WriteConflictError`
  and :class:`~plankit.checklist.manager.PlanManager` reads the plan again and redoes
  the update.  (Should ``findReplace`` ever fail to match a cell that did not change,
  the store falls back to checking the cell just before writing it.)
- **Errors** are one line saying what to do: sharing (403), the ID (404), a rate limit
  still there after the retries, a network failure named as such (a name that does not
  resolve, a timeout), credentials refused, a sign-in needed.

Credentials are one of:

- a service-account key file (JSON with ``"type": "service_account"``); share the
  spreadsheet with the account's e-mail address;
- an OAuth client file (``"installed"``) for the user's own account: sign in once with
  ``plankit checklist auth`` (:mod:`plankit.checklist.stores.gsheets_auth`);
- an authorized-user file (``"type": "authorized_user"``), as written by that sign-in;
- a ``google.auth`` credentials object.

All ask for the ``spreadsheets`` scope only.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from plankit.checklist.errors import StoreError, WriteConflictError
from plankit.checklist.refs import column_index, parse_ref
from plankit.checklist.stores.base import GOOGLE_CELL_LIMIT, check_cell_size
from plankit.checklist.stores.gsheets_auth import SCOPES, read_json, user_credentials
from plankit.checklist.stores.gsheets_net import (
    RETRY_STATUSES,
    Backoff,
    is_dns_failure,
    network_reason,
    retry_after,
)

T = TypeVar("T")

CREDENTIALS_ENV = "PLANKIT_GOOGLE_CREDENTIALS"
"""Environment variable naming the credentials file when none is passed."""

_URL_ID_RE = re.compile(r"/spreadsheets/d/([A-Za-z0-9_-]+)")
_ID_RE = re.compile(r"[A-Za-z0-9_-]{10,}")


def spreadsheet_id_of(text: str) -> str:
    """The spreadsheet ID in ``text``: the ID itself or a ``docs.google.com`` URL."""
    text = text.strip()
    m = _URL_ID_RE.search(text)
    if m is not None:
        return m.group(1)
    if _ID_RE.fullmatch(text):
        return text
    raise StoreError(
        f"{text!r} is not a Google Sheets spreadsheet ID (the long code in the "
        "spreadsheet's URL, between /d/ and /edit)",
        code="bad-spreadsheet-id",
    )


class _Session:
    """One read-update-write: cells read are remembered, writes kept until commit."""

    def __init__(self, store: GoogleSheets) -> None:
        self.store = store
        self.read: dict[str, str] = {}
        self.pending: dict[str, str] = {}

    def list_sheets(self) -> list[str]:
        return self.store.list_sheets()

    def create_sheet(self, name: str) -> None:
        self.store.create_sheet(name)

    def get_cell(self, ref: str) -> str:
        key = parse_ref(ref).a1
        if key in self.pending:
            return self.pending[key]
        if key not in self.read:
            self.read[key] = self.store.get_cell(key)
        return self.read[key]

    def set_cell(self, ref: str, value: str) -> None:
        r = parse_ref(ref)
        check_cell_size(r.a1, value, self.store.max_cell_chars, self.store.label)
        self.pending[r.a1] = value

    def commit(self) -> None:
        for ref, value in self.pending.items():
            if ref not in self.read:
                self.store.set_cell(ref, value)
            elif value != self.read[ref]:
                self.store.replace_cell(ref, self.read[ref], value)


class GoogleSheets:
    """A spreadsheet in Google Sheets; see the module docstring."""

    label = "Google Sheets"
    max_cell_chars: int | None = GOOGLE_CELL_LIMIT

    def __init__(
        self,
        spreadsheet_id: str,
        credentials: str | os.PathLike[str] | Any | None = None,
        *,
        session: Any | None = None,
        interactive: bool = False,
        backoff: Backoff | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Nothing is sent until the first call.

        ``session`` is a ``requests.Session`` to send the requests through instead of
        an authorized one (tests pass one that talks to
        :class:`~plankit.checklist.stores.gsheets_fake.FakeSheetsApi`).  ``interactive``
        lets an OAuth client file without a saved token sign in on the terminal; without
        it, such a store fails at once saying to run ``plankit checklist auth``.
        ``backoff`` and ``sleep`` set the retries.
        """
        self.spreadsheet_id = spreadsheet_id_of(spreadsheet_id)
        self.credentials = credentials
        self.interactive = interactive
        self.backoff = backoff or Backoff()
        self.sleep = sleep
        self._session = session
        self._http: Any = None
        self._sheet_ids: dict[str, int] = {}
        self._find_replace = True
        self.waits: list[float] = []
        """Every delay waited before trying a request again, in seconds."""

    def __repr__(self) -> str:
        return f"GoogleSheets({self.spreadsheet_id!r})"

    def where(self, ref: str) -> str:
        """How messages name the cell ``ref``."""
        return f"{ref} of Google spreadsheet {self.spreadsheet_id}"

    # --- connection ---------------------------------------------------------------------

    def _connect(self) -> Any:
        if self._http is not None:
            return self._http
        try:
            import gspread
        except ImportError:
            raise StoreError(
                "Google Sheets needs the gsheets extra: pip install 'plankit[gsheets]'",
                code="missing-extra",
            ) from None
        if self._session is not None:
            no_auth: Any = None  # the session carries whatever authorisation it needs
            self._http = gspread.Client(auth=no_auth, session=self._session).http_client
            return self._http
        self._http = self._authorize(gspread).http_client
        return self._http

    def _authorize(self, gspread: Any) -> Any:
        creds = self.credentials
        if creds is None:
            creds = os.environ.get(CREDENTIALS_ENV) or os.environ.get(
                "GOOGLE_APPLICATION_CREDENTIALS"
            )
        if creds is None:
            raise StoreError(
                "Google Sheets needs credentials: pass --credentials FILE (a service-account "
                f"key or an OAuth client file) or set {CREDENTIALS_ENV}",
                code="no-credentials",
            )
        if not isinstance(creds, str | os.PathLike):
            return gspread.authorize(creds)
        path = os.fspath(creds)
        info = read_json(path)
        kind = info.get("type")
        try:
            if kind == "service_account":
                return gspread.service_account(filename=path, scopes=SCOPES)
            if kind == "authorized_user" or (kind is None and "refresh_token" in info):
                from plankit.checklist.stores.gsheets_auth import load_token

                return gspread.authorize(load_token(path))
            if "installed" in info or "web" in info:
                user = user_credentials(path, info, interactive=self.interactive)
                return gspread.authorize(user)
        except (ValueError, KeyError) as exc:
            raise StoreError(
                f"{path}: unusable credentials ({exc})", code="bad-credentials"
            ) from None
        raise StoreError(
            f"{path} is neither a service-account key, an OAuth client file nor an "
            "authorized-user file",
            code="bad-credentials",
        )

    def _call(self, what: str, fn: Callable[[Any], T]) -> T:
        """``fn(http)``, tried again on rate limits, server failures and dropped
        connections; any failure left is a one-line :class:`StoreError`."""
        http = self._connect()  # first: without the gsheets extra it says how to install it
        import requests
        from gspread.exceptions import APIError

        attempt = 0
        while True:
            try:
                return fn(http)
            except APIError as exc:
                code = int(getattr(exc, "code", 0) or 0)
                server = retry_after(getattr(exc, "response", None))
                if code not in RETRY_STATUSES or not self._wait(attempt, server):
                    raise self._api_error(what, exc, attempt, server) from None
            except requests.exceptions.RequestException as exc:
                if is_dns_failure(exc) or not self._wait(attempt, None):
                    raise self._network_error(what, exc, attempt) from None
            except Exception as exc:
                from google.auth.exceptions import GoogleAuthError, TransportError

                if isinstance(exc, TransportError) or (
                    isinstance(exc, GoogleAuthError) and _transport_cause(exc)
                ):
                    raise StoreError(
                        f"cannot reach Google's sign-in service to {what}: "
                        f"{network_reason(exc)}; check the network connection and try again",
                        code="network",
                    ) from None
                if isinstance(exc, GoogleAuthError):
                    raise StoreError(
                        f"Google did not accept the credentials ({_one_line(exc)}); check the "
                        "credentials file, or sign in again with `plankit checklist auth`",
                        code="auth",
                    ) from None
                raise
            attempt += 1

    def _wait(self, attempt: int, server: float | None) -> bool:
        """Wait before the next attempt; False when there is none left (or the server
        asks for a longer wait than is reasonable)."""
        if attempt >= self.backoff.retries:
            return False
        if server is not None and server > self.backoff.longest_wait:
            return False
        delay = self.backoff.delay(attempt, server)
        self.waits.append(delay)
        self.sleep(delay)
        return True

    def _network_error(self, what: str, exc: BaseException, attempt: int) -> StoreError:
        tried = f" (tried {attempt + 1} times)" if attempt else ""
        return StoreError(
            f"cannot reach Google Sheets to {what}: {network_reason(exc)}{tried}; check the "
            "network connection (and any proxy) and try again",
            code="network",
        )

    def _api_error(self, what: str, exc: Any, attempt: int, server: float | None) -> StoreError:
        code = int(getattr(exc, "code", 0) or 0)
        error = getattr(exc, "error", {}) or {}
        message = str(error.get("message", "")) if isinstance(error, dict) else str(error)
        sid = self.spreadsheet_id
        tried = f" (tried {attempt + 1} times)" if attempt else ""
        if code == 403:
            email = self._account_email()
            who = f"the service account {email}" if email else "the signed-in account"
            return StoreError(
                f"Google Sheets refused to {what}: permission denied on spreadsheet {sid}; "
                f"share it with {who} as an editor",
                code="permission-denied",
            )
        if code == 404:
            return StoreError(
                f"Google Sheets has no spreadsheet {sid} (or it is not shared with this "
                "account); check the ID",
                code="not-found",
            )
        if code == 429:
            wait = f"; it asks to wait {server:.0f} s" if server else ""
            return StoreError(
                f"Google Sheets is rate-limiting requests (quota exceeded){tried}{wait}; "
                "wait a minute and try again",
                code="rate-limited",
            )
        return StoreError(
            f"Google Sheets could not {what}: {message or 'error'} (HTTP {code}){tried}",
            code="api-error",
        )

    def _account_email(self) -> str | None:
        creds = self.credentials
        path = os.fspath(creds) if isinstance(creds, str | os.PathLike) else None
        if path is None:
            return getattr(creds, "service_account_email", None)
        try:
            info = read_json(path)
        except StoreError:
            return None
        email = info.get("client_email")
        return email if isinstance(email, str) else None

    # --- the store ----------------------------------------------------------------------

    def list_sheets(self) -> list[str]:
        """The spreadsheet's sheet titles, in order."""
        data = self._call(
            "list the sheets",
            lambda http: http.fetch_sheet_metadata(
                self.spreadsheet_id,
                params={"includeGridData": "false", "fields": "sheets.properties(sheetId,title)"},
            ),
        )
        titles = []
        for sheet in data.get("sheets", []):
            props = sheet.get("properties", {})
            titles.append(props.get("title", ""))
            if isinstance(props.get("sheetId"), int):
                self._sheet_ids[props["title"]] = props["sheetId"]
        return titles

    def create_sheet(self, name: str) -> None:
        """Add a sheet (``addSheet``)."""
        body = {"requests": [{"addSheet": {"properties": {"title": name}}}]}
        waits = len(self.waits)
        try:
            reply = self._call(
                f"add the sheet {name!r}",
                lambda http: http.batch_update(self.spreadsheet_id, body),
            )
        except StoreError as exc:
            retried = len(self.waits) > waits
            if retried and exc.code == "api-error" and "already exists" in str(exc):
                return  # an attempt that failed on the way back had added it
            raise
        replies = reply.get("replies") or [{}]
        props = (replies[0].get("addSheet") or {}).get("properties") or {}
        if isinstance(props.get("sheetId"), int):
            self._sheet_ids[name] = props["sheetId"]

    def get_cell(self, ref: str) -> str:
        """The cell's text; '' when empty or when the sheet does not exist."""
        r = parse_ref(ref)
        try:
            data = self._call(
                f"read {r.a1}",
                lambda http: http.values_get(
                    self.spreadsheet_id, r.a1, params={"valueRenderOption": "FORMATTED_VALUE"}
                ),
            )
        except StoreError as exc:
            if exc.code == "api-error" and "Unable to parse range" in str(exc):
                return ""  # the sheet does not exist
            raise
        values = data.get("values") or [[]]
        row = values[0] if values else []
        return str(row[0]) if row else ""

    def set_cell(self, ref: str, value: str) -> None:
        """Write a cell as plain text (``valueInputOption=RAW``)."""
        r = parse_ref(ref)
        check_cell_size(r.a1, value, self.max_cell_chars, self.label)
        body = {"range": r.a1, "majorDimension": "ROWS", "values": [[value]]}
        try:
            self._call(
                f"write {r.a1}",
                lambda http: http.values_update(
                    self.spreadsheet_id, r.a1, params={"valueInputOption": "RAW"}, body=body
                ),
            )
        except StoreError as exc:
            if exc.code == "api-error" and "Unable to parse range" in str(exc):
                raise StoreError(
                    f"cannot write {r.a1}: the spreadsheet has no sheet named {r.sheet!r}",
                    code="no-sheet",
                ) from None
            raise

    # --- writes that refuse a changed cell ------------------------------------------------

    @contextlib.contextmanager
    def transaction(self) -> Iterator[_Session]:
        """A read-update-write: the cells it writes are written only if they still hold
        what it read (else :class:`WriteConflictError`, nothing of it written)."""
        session = _Session(self)
        yield session
        session.commit()

    def _sheet_id(self, sheet: str) -> int:
        if sheet not in self._sheet_ids:
            self.list_sheets()
        if sheet not in self._sheet_ids:
            raise StoreError(f"the spreadsheet has no sheet named {sheet!r}", code="no-sheet")
        return self._sheet_ids[sheet]

    def replace_cell(self, ref: str, expected: str, value: str) -> None:
        """Write ``value`` into ``ref`` only if it holds ``expected``; raise
        :class:`WriteConflictError` when it holds something else."""
        r = parse_ref(ref)
        check_cell_size(r.a1, value, self.max_cell_chars, self.label)
        if not expected or not self._find_replace:
            self._checked_write(r.a1, expected, value)
            return
        row, column = r.row - 1, column_index(r.column) - 1
        find = {
            "find": expected,
            "replacement": value,
            "matchCase": True,
            "matchEntireCell": True,
            "searchByRegex": False,
            "includeFormulas": False,
            "range": {
                "sheetId": self._sheet_id(r.sheet),
                "startRowIndex": row,
                "endRowIndex": row + 1,
                "startColumnIndex": column,
                "endColumnIndex": column + 1,
            },
        }
        body = {"requests": [{"findReplace": find}]}
        try:
            reply = self._call(
                f"write {r.a1}", lambda http: http.batch_update(self.spreadsheet_id, body)
            )
        except StoreError as exc:
            if exc.code != "api-error":
                raise
            self._find_replace = False  # the API would not take this find: check, then write
            self._checked_write(r.a1, expected, value)
            return
        replies = reply.get("replies") or [{}]
        changed = (replies[0].get("findReplace") or {}).get("occurrencesChanged", 0)
        if changed:
            return
        current = self.get_cell(r.a1)
        if current == value:
            return  # already written (an attempt whose answer was lost, or the same change)
        if current != expected:
            raise WriteConflictError(r.a1)
        self._find_replace = False  # unchanged yet not matched: check, then write
        self.set_cell(r.a1, value)

    def _checked_write(self, ref: str, expected: str, value: str) -> None:
        current = self.get_cell(ref)
        if current == value:
            return
        if current != expected:
            raise WriteConflictError(ref)
        self.set_cell(ref, value)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _transport_cause(exc: BaseException) -> bool:
    """Whether a google-auth error was caused by the network (a refresh that could not
    reach the token endpoint), not by the credentials."""
    import requests

    seen: list[BaseException | None] = [exc.__cause__, exc.__context__]
    seen += [a for a in getattr(exc, "args", ()) if isinstance(a, BaseException)]
    for item in seen:
        if isinstance(item, requests.exceptions.RequestException | ConnectionError | OSError):
            return True
        if item is not None and type(item).__name__ == "TransportError":
            return True
    return is_dns_failure(exc)
