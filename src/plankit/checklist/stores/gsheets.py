"""A plan kept in a Google Sheets spreadsheet, through gspread (``plankit[gsheets]``).

Four Sheets API v4 calls do all the work: ``spreadsheets.get`` (sheet titles),
``spreadsheets.batchUpdate`` with ``addSheet``, ``spreadsheets.values.get`` and
``spreadsheets.values.update`` with ``valueInputOption=RAW`` (so a plan is stored as
text, never read as a formula).  API and network failures become one-line
:class:`StoreError` messages that say what to do.

Credentials are one of:

- a service-account key file (JSON with ``"type": "service_account"``); share the
  spreadsheet with the account's e-mail address;
- an OAuth client file (``"installed"``) for the user's own account: the first use
  opens a browser, and the token is kept in plankit's config folder;
- an authorized-user file (``"type": "authorized_user"``), as written by that flow;
- a ``google.auth`` credentials object.

Google Sheets has no lock a client can hold: two agents changing one plan at the same
moment can overwrite each other's change (the file stores lock; this one cannot).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import Any, TypeVar

from plankit.checklist.errors import StoreError
from plankit.checklist.refs import parse_ref
from plankit.checklist.stores.base import GOOGLE_CELL_LIMIT, check_cell_size

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


def _token_path() -> str:
    home = os.environ.get("PLANKIT_HOME")
    if home:
        return os.path.join(home, "google-authorized-user.json")
    import platformdirs

    return os.path.join(platformdirs.user_config_dir("plankit"), "google-authorized-user.json")


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
    ) -> None:
        """Nothing is sent until the first call.

        ``session`` is a ``requests.Session`` to send the requests through instead of
        an authorized one (tests pass one that talks to
        :class:`~plankit.checklist.stores.gsheets_fake.FakeSheetsApi`).
        """
        self.spreadsheet_id = spreadsheet_id_of(spreadsheet_id)
        self.credentials = credentials
        self._session = session
        self._http: Any = None

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
        try:
            with open(path, encoding="utf-8") as handle:
                info = json.load(handle)
        except OSError as exc:
            raise StoreError(
                f"cannot read the credentials file {path} ({exc.strerror})", code="no-credentials"
            ) from None
        except ValueError:
            raise StoreError(
                f"{path} is not a JSON credentials file", code="bad-credentials"
            ) from None
        kind = info.get("type") if isinstance(info, dict) else None
        try:
            if kind == "service_account":
                return gspread.service_account(filename=path)
            if kind == "authorized_user":
                from google.oauth2 import credentials as oauth2

                load: Any = oauth2.Credentials.from_authorized_user_file
                user = load(path, gspread.auth.DEFAULT_SCOPES)
                return gspread.authorize(user)
            if isinstance(info, dict) and ("installed" in info or "web" in info):
                token = _token_path()
                os.makedirs(os.path.dirname(token), exist_ok=True)
                return gspread.oauth(credentials_filename=path, authorized_user_filename=token)
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
        import requests
        from gspread.exceptions import APIError

        http = self._connect()
        try:
            return fn(http)
        except APIError as exc:
            raise self._api_error(what, exc) from None
        except requests.exceptions.RequestException as exc:
            raise StoreError(
                f"cannot reach Google Sheets to {what} ({type(exc).__name__}); check the "
                "network connection and try again",
                code="network",
            ) from None
        except Exception as exc:
            from google.auth.exceptions import GoogleAuthError

            if isinstance(exc, GoogleAuthError):
                raise StoreError(
                    f"Google did not accept the credentials ({exc}); check the credentials "
                    "file, or sign in again",
                    code="auth",
                ) from None
            raise

    def _api_error(self, what: str, exc: Any) -> StoreError:
        code = int(getattr(exc, "code", 0) or 0)
        error = getattr(exc, "error", {}) or {}
        message = str(error.get("message", "")) if isinstance(error, dict) else str(error)
        sid = self.spreadsheet_id
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
            return StoreError(
                "Google Sheets is rate-limiting requests (quota exceeded); wait a minute and "
                "try again",
                code="rate-limited",
            )
        return StoreError(
            f"Google Sheets could not {what}: {message or 'error'} (HTTP {code})",
            code="api-error",
        )

    def _account_email(self) -> str | None:
        creds = self.credentials
        path = os.fspath(creds) if isinstance(creds, str | os.PathLike) else None
        if path is None:
            return getattr(creds, "service_account_email", None)
        try:
            with open(path, encoding="utf-8") as handle:
                info = json.load(handle)
        except (OSError, ValueError):
            return None
        email = info.get("client_email") if isinstance(info, dict) else None
        return email if isinstance(email, str) else None

    # --- the store ----------------------------------------------------------------------

    def list_sheets(self) -> list[str]:
        """The spreadsheet's sheet titles, in order."""
        data = self._call(
            "list the sheets",
            lambda http: http.fetch_sheet_metadata(
                self.spreadsheet_id,
                params={"includeGridData": "false", "fields": "sheets.properties.title"},
            ),
        )
        return [s["properties"]["title"] for s in data.get("sheets", [])]

    def create_sheet(self, name: str) -> None:
        """Add a sheet (``addSheet``)."""
        body = {"requests": [{"addSheet": {"properties": {"title": name}}}]}
        self._call(
            f"add the sheet {name!r}",
            lambda http: http.batch_update(self.spreadsheet_id, body),
        )

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
