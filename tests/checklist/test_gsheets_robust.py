"""Google Sheets under load and without a browser: retries that honour Retry-After, no
update lost when two writers share a plan, network failures named as such, the
headless OAuth sign-in and the one scope it asks for.  No network: the API is
FakeSheetsApi and the token endpoint a requests adapter."""

from __future__ import annotations

import datetime as dt
import email.utils
import json
import stat
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from click.testing import CliRunner
from requests.adapters import BaseAdapter

from plankit.checklist import GoogleSheets, PhaseInput, PlanManager, StoreError, parse_plan
from plankit.checklist.errors import WriteConflictError
from plankit.checklist.render import STARTER_PLAN
from plankit.checklist.stores import gsheets_auth
from plankit.checklist.stores.gsheets_fake import ApiRequest, FakeSheetsApi
from plankit.checklist.stores.gsheets_net import Backoff
from plankit.cli import cli

SID = "1kPlanKitExampleSpreadsheetId0123456789ab"
TODAY = dt.date(2026, 1, 15)
SPREADSHEETS_SCOPE = "https://www.googleapis.com/auth/spreadsheets"


@pytest.fixture
def fake() -> FakeSheetsApi:
    api = FakeSheetsApi()
    api.add_spreadsheet(SID, sheets=["Sheet1"], cells={"AGENT_BASE!C2": STARTER_PLAN})
    return api


def store_for(fake: FakeSheetsApi, **kwargs: Any) -> GoogleSheets:
    return GoogleSheets(SID, session=fake.session(), sleep=lambda _: None, **kwargs)


def manager(store: GoogleSheets) -> PlanManager:
    return PlanManager(store, today=lambda: TODAY)


# --- retries ----------------------------------------------------------------------------


def test_a_rate_limit_waits_as_long_as_the_server_says(fake: FakeSheetsApi) -> None:
    store = store_for(fake)
    fake.fail_next(429, "Quota exceeded", retry_after=3)
    fake.fail_next(429, "Quota exceeded", retry_after=5)
    assert manager(store).complete_task("1.1").status == "done"
    assert store.waits == [3.0, 5.0]


def test_retry_after_as_an_http_date(fake: FakeSheetsApi) -> None:
    store = store_for(fake)
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    fake.fail_next(503, "Backend error", retry_after=when)
    assert manager(store).get_plan() is not None
    assert len(store.waits) == 1 and 20 < store.waits[0] <= 31


def test_server_failures_back_off_exponentially_with_jitter(fake: FakeSheetsApi) -> None:
    store = store_for(fake)
    for status in (500, 502, 503, 504):
        fake.fail_next(status, "Internal error")
    fake.drop_next_connection()
    assert manager(store).complete_task("1.1").status == "done"
    assert len(store.waits) == 5
    for attempt, wait in enumerate(store.waits):
        full = min(32.0, 2.0**attempt)
        assert full / 2 <= wait <= full


def test_retries_end_with_a_one_line_error(fake: FakeSheetsApi) -> None:
    store = store_for(fake, backoff=Backoff(retries=2))
    fake.fail_next(429, "Quota exceeded", times=3)
    with pytest.raises(StoreError) as caught:
        manager(store).complete_task("1.1")
    assert caught.value.code == "rate-limited"
    assert "tried 3 times" in str(caught.value) and "\n" not in str(caught.value)
    assert fake.cell(SID, "AGENT_BASE!C2") == STARTER_PLAN


def test_a_wait_longer_than_two_minutes_is_not_waited(fake: FakeSheetsApi) -> None:
    store = store_for(fake)
    fake.fail_next(429, "Quota exceeded", retry_after=600)
    with pytest.raises(StoreError, match="it asks to wait 600 s"):
        manager(store).get_plan()
    assert store.waits == []


def test_client_errors_are_not_retried(fake: FakeSheetsApi) -> None:
    store = store_for(fake)
    fake.fail_next(403, "The caller does not have permission")
    with pytest.raises(StoreError, match="permission denied"):
        manager(store).get_plan()
    assert store.waits == []


def test_a_sheet_added_by_an_attempt_whose_answer_was_lost(fake: FakeSheetsApi) -> None:
    fake.add_spreadsheet(SID, sheets=["Sheet1"])
    dropped: list[bool] = []

    def lose_the_answer(req: ApiRequest) -> None:
        if req.method == "POST" and "addSheet" in json.dumps(req.json) and not dropped:
            dropped.append(True)
            book = fake.spreadsheets[SID]
            book.sheets.append((book.next_id, "AGENT_BASE"))
            book.next_id += 1
            raise requests.exceptions.ConnectionError("connection reset after the write")

    fake.before_request = lose_the_answer
    plan = manager(store_for(fake)).init_plan(raise_errors=True)
    assert plan.title == "Getting Started with Sheet Agent"
    assert fake.sheet_titles(SID) == ["Sheet1", "AGENT_BASE"]


# --- no lost update -------------------------------------------------------------------------


def test_a_write_over_a_changed_cell_is_refused_and_redone(fake: FakeSheetsApi) -> None:
    a = manager(store_for(fake))
    b = manager(store_for(fake))
    interfered: list[bool] = []

    def other_writer_first(req: ApiRequest) -> None:
        # B completes 1.2 after A has read the plan and before A's write arrives
        if req.method == "POST" and "findReplace" in json.dumps(req.json) and not interfered:
            interfered.append(True)
            fake.before_request = None
            b.complete_task("1.2")

    fake.before_request = other_writer_first
    a.complete_task("1.1")
    plan = parse_plan(fake.cell(SID, "AGENT_BASE!C2"))
    assert [t.status.value for t in plan.tasks[:3]] == ["done", "done", "todo"]
    finds = [r for r in fake.requests if r.method == "POST" and "findReplace" in json.dumps(r.json)]
    assert len(finds) == 3  # A's refused write, B's write, A's second write


def test_two_writers_lose_no_update(fake: FakeSheetsApi) -> None:
    m = manager(store_for(fake))
    m.create_plan(
        "Shared",
        "Every update survives",
        [
            PhaseInput("A", [f"a{i}" for i in range(20)]),
            PhaseInput("B", [f"b{i}" for i in range(20)]),
        ],
    )
    errors: list[BaseException] = []

    def worker(phase: int) -> None:
        own = manager(store_for(fake))
        try:
            for step in range(1, 21):
                own.complete_task(f"{phase}.{step}")
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(p,)) for p in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads) and errors == []
    plan = parse_plan(fake.cell(SID, "AGENT_BASE!C2"))
    assert len(plan.tasks) == 40
    assert [t.step for t in plan.tasks if t.status.value != "done"] == []


def test_a_writer_that_keeps_losing_gives_up_with_one_line(fake: FakeSheetsApi) -> None:
    m = manager(store_for(fake))

    def always_someone_else(req: ApiRequest) -> None:
        if req.method == "POST" and "findReplace" in json.dumps(req.json):
            cells = fake.spreadsheets[SID].cells
            cells[("AGENT_BASE", "C2")] += "\n- another note"

    fake.before_request = always_someone_else
    with pytest.raises(WriteConflictError, match="10 times in a row") as caught:
        m.complete_task("1.1")
    assert caught.value.code == "conflict" and "\n" not in str(caught.value)
    assert "- [x] 1.1" not in fake.cell(SID, "AGENT_BASE!C2")


def test_without_find_replace_the_store_checks_then_writes(fake: FakeSheetsApi) -> None:
    store = store_for(fake)
    m = manager(store)
    m.get_plan()

    def refuse_find(req: ApiRequest) -> None:
        if req.method == "POST" and "findReplace" in json.dumps(req.json):
            fake.fail_next(400, "Invalid requests[0].findReplace: find is too long")

    fake.before_request = refuse_find
    assert m.complete_task("1.1").status == "done"
    fake.before_request = None
    assert m.complete_task("1.2").status == "done"
    assert "- [x] 1.2" in fake.cell(SID, "AGENT_BASE!C2")
    assert [r.method for r in fake.requests[-2:]] == ["GET", "PUT"]  # no findReplace now


# --- network failures named as such ------------------------------------------------------


class _NoDns(BaseAdapter):
    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        raise requests.exceptions.ConnectionError(
            "HTTPSConnectionPool(host='sheets.googleapis.com', port=443): Max retries exceeded "
            "(Caused by NameResolutionError(\"Failed to resolve 'sheets.googleapis.com' "
            '([Errno -3] Temporary failure in name resolution)"))'
        )

    def close(self) -> None:
        pass


def test_a_dns_failure_is_a_network_error_without_retries() -> None:
    session = requests.Session()
    session.mount("https://", _NoDns())
    store = GoogleSheets(SID, session=session, sleep=lambda _: None)
    with pytest.raises(StoreError) as caught:
        store.get_cell("AGENT_BASE!C2")
    assert caught.value.code == "network"
    assert "the host name could not be resolved (DNS)" in str(caught.value)
    assert store.waits == []


class _Creds:
    """google.auth credentials whose token refresh fails as told."""

    def __new__(cls, error: Exception) -> Any:
        from google.auth import credentials

        class Failing(credentials.Credentials):
            def refresh(self, request: Any) -> None:
                raise error

        return Failing()


def test_a_dns_failure_while_refreshing_the_token_is_not_called_bad_credentials() -> None:
    from google.auth.exceptions import TransportError

    error = TransportError(
        "HTTPSConnectionPool(host='oauth2.googleapis.com', port=443): Failed to resolve "
        "'oauth2.googleapis.com' ([Errno -3] Temporary failure in name resolution)"
    )
    store = GoogleSheets(SID, _Creds(error), sleep=lambda _: None)
    with pytest.raises(StoreError) as caught:
        store.list_sheets()
    assert caught.value.code == "network"
    assert "cannot reach Google's sign-in service" in str(caught.value)
    assert "DNS" in str(caught.value) and "did not accept" not in str(caught.value)


def test_a_revoked_token_is_an_auth_error_that_says_how_to_sign_in() -> None:
    from google.auth.exceptions import RefreshError

    store = GoogleSheets(
        SID, _Creds(RefreshError("invalid_grant: Token has been expired or revoked."))
    )
    with pytest.raises(StoreError) as caught:
        store.list_sheets()
    assert caught.value.code == "auth"
    assert "plankit checklist auth" in str(caught.value)


# --- sign-in and scope --------------------------------------------------------------------


def _client_file(tmp_path: Path, kind: str = "installed") -> Path:
    path = tmp_path / "client_secret.json"
    path.write_text(
        json.dumps(
            {
                kind: {
                    "client_id": "123-abc.apps.googleusercontent.com",
                    "client_secret": "not-a-secret",
                    "auth_uri": "https://accounts.google.com/o/oauth2/auth",
                    "token_uri": "https://oauth2.googleapis.com/token",
                    "redirect_uris": ["http://localhost"],
                }
            }
        ),
        encoding="utf-8",
    )
    return path


class _TokenEndpoint(BaseAdapter):
    """Google's token endpoint: a code in, a token out (or a network failure)."""

    def __init__(self, fail: bool = False) -> None:
        super().__init__()
        self.fail = fail
        self.codes: list[str] = []

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        if self.fail:
            raise requests.exceptions.ConnectionError("Failed to resolve 'oauth2.googleapis.com'")
        body = request.body.decode() if isinstance(request.body, bytes) else str(request.body)
        self.codes.append(parse_qs(body)["code"][0])
        response = requests.Response()
        response.status_code = 200
        response._content = json.dumps(
            {
                "access_token": "ya29.test",
                "expires_in": 3599,
                "refresh_token": "1//refresh-test",
                "scope": SPREADSHEETS_SCOPE,
                "token_type": "Bearer",
            }
        ).encode()
        response.headers["Content-Type"] = "application/json"
        response.request = request
        response.url = request.url or ""
        return response

    def close(self) -> None:
        pass


@pytest.fixture
def token_endpoint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> _TokenEndpoint:
    monkeypatch.setenv("PLANKIT_HOME", str(tmp_path / "home"))
    endpoint = _TokenEndpoint()
    real = gsheets_auth._new_flow

    def flow(client_file: str) -> Any:
        made = real(client_file)
        made.oauth2session.mount("https://oauth2.googleapis.com/", endpoint)
        return made

    monkeypatch.setattr(gsheets_auth, "_new_flow", flow)
    return endpoint


def _pasted(output: str, code: str = "4/0Abc-code") -> str:
    """What a user pastes: the localhost address the browser ended on."""
    url = next(word for word in output.split() if word.startswith("https://accounts.google.com"))
    state = parse_qs(urlsplit(url).query)["state"][0]
    return f"http://localhost:8765/?state={state}&code={code}&scope={SPREADSHEETS_SCOPE}"


def test_auth_prints_an_address_takes_the_pasted_one_and_keeps_the_token(
    token_endpoint: _TokenEndpoint, tmp_path: Path
) -> None:
    client = _client_file(tmp_path)
    answers: list[str] = []

    def prompt(text: str) -> str:
        answers.append(_pasted(printed.getvalue()))
        return answers[-1]

    import io

    printed = io.StringIO()
    creds = gsheets_auth.sign_in(str(client), prompt=prompt, out=printed)
    url = next(w for w in printed.getvalue().split() if w.startswith("https://accounts.google.com"))
    query = parse_qs(urlsplit(url).query)
    assert query["scope"] == [SPREADSHEETS_SCOPE]  # not drive
    assert query["redirect_uri"] == ["http://localhost:8765/"]
    assert query["access_type"] == ["offline"]
    assert token_endpoint.codes == ["4/0Abc-code"]
    assert creds.refresh_token == "1//refresh-test"
    token = tmp_path / "home" / "google-authorized-user.json"
    assert stat.S_IMODE(token.stat().st_mode) == 0o600
    saved = json.loads(token.read_text(encoding="utf-8"))
    assert saved["refresh_token"] == "1//refresh-test" and saved["scopes"] == [SPREADSHEETS_SCOPE]
    # the store now uses the saved token, with no prompt
    user = GoogleSheets(SID, client)._authorize(__import__("gspread"))
    assert user.http_client.auth.refresh_token == "1//refresh-test"


def test_auth_command_end_to_end_and_its_errors(
    token_endpoint: _TokenEndpoint, tmp_path: Path
) -> None:
    client = _client_file(tmp_path)

    runner = CliRunner()
    # a code pasted alone works too
    result = runner.invoke(
        cli, ["checklist", "auth", "--credentials", str(client)], input="4/0Only-code\n"
    )
    assert result.exit_code == 0, result.output
    assert "Open this address in a browser" in result.stderr and "Signed in." in result.stderr
    assert token_endpoint.codes == ["4/0Only-code"]

    bad_state = "http://localhost:8765/?state=other&code=x\n"
    result = runner.invoke(
        cli, ["checklist", "auth", "--credentials", str(client)], input=bad_state
    )
    assert result.exit_code == 1 and "belongs to another sign-in" in result.stderr
    denied = "http://localhost:8765/?error=access_denied\n"
    result = runner.invoke(cli, ["checklist", "auth", "--credentials", str(client)], input=denied)
    assert result.exit_code == 1 and "did not grant access (access_denied)" in result.stderr
    token_endpoint.fail = True
    result = runner.invoke(cli, ["checklist", "auth", "--credentials", str(client)], input="4/0x\n")
    assert result.exit_code == 1
    assert "cannot reach Google's sign-in service" in result.stderr and "DNS" in result.stderr
    assert "Traceback" not in result.output
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("plankit checklist: cannot reach Google's sign-in service")


def test_without_a_terminal_a_sign_in_is_asked_for_not_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANKIT_HOME", str(tmp_path / "home"))
    client = _client_file(tmp_path)
    store = GoogleSheets(SID, client)  # interactive=False: the MCP server's case
    with pytest.raises(StoreError) as caught:
        store.list_sheets()
    assert caught.value.code == "auth-required"
    assert f"plankit checklist auth --credentials {client}" in str(caught.value)
    result = CliRunner().invoke(
        cli, ["checklist", "show", "--store", f"gsheets:{SID}", "--credentials", str(client)]
    )
    assert result.exit_code == 1 and "one-time sign-in" in result.stderr
    assert "Traceback" not in result.output


def test_a_web_client_is_refused_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANKIT_HOME", str(tmp_path / "home"))
    client = _client_file(tmp_path, kind="web")
    with pytest.raises(StoreError, match="type 'Desktop app'"):
        GoogleSheets(SID, client, interactive=True).list_sheets()


def test_every_kind_of_credentials_asks_for_the_spreadsheets_scope_only(tmp_path: Path) -> None:
    import gspread

    from .test_gsheets import _service_account_file

    service = GoogleSheets(SID, _service_account_file(tmp_path))._authorize(gspread)
    assert service.http_client.auth._scopes == [SPREADSHEETS_SCOPE]
    user_file = tmp_path / "authorized_user.json"
    user_file.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "id.apps.googleusercontent.com",
                "client_secret": "secret",
                "refresh_token": "refresh",
            }
        ),
        encoding="utf-8",
    )
    user = GoogleSheets(SID, user_file)._authorize(gspread)
    assert user.http_client.auth.scopes == [SPREADSHEETS_SCOPE]
    assert gsheets_auth.SCOPES == [SPREADSHEETS_SCOPE]
