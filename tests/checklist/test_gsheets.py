"""GoogleSheets through gspread, against Sheets API v4 exchanges replayed at the HTTP
layer (tests/data/checklist/sheets_api/*.json) and against the in-memory FakeSheetsApi.
No network, no credentials."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from plankit.checklist import (
    CellTooLargeError,
    GoogleSheets,
    PhaseInput,
    PlanManager,
    StoreError,
)
from plankit.checklist.render import STARTER_PLAN
from plankit.checklist.stores.gsheets import spreadsheet_id_of
from plankit.checklist.stores.gsheets_fake import (
    FakeSheetsApi,
    RecordingSheetsApi,
    ReplaySheetsApi,
)

SID = "1kPlanKitExampleSpreadsheetId0123456789ab"
API = Path(__file__).resolve().parents[1] / "data" / "checklist" / "sheets_api"
TODAY = dt.date(2026, 1, 15)


def no_sleep(_: float) -> None:
    """The store's pauses between retries, skipped (the delays are in ``store.waits``)."""


def replay(name: str) -> tuple[ReplaySheetsApi, PlanManager]:
    api = ReplaySheetsApi.from_file(API / name)
    store = GoogleSheets(SID, session=api.session(), sleep=no_sleep)
    return api, PlanManager(store, today=lambda: TODAY)


# --- replayed exchanges ------------------------------------------------------------------


def test_replay_init_on_a_new_spreadsheet_then_updates() -> None:
    api, manager = replay("init-and-update.json")
    plan = manager.init_plan(raise_errors=True)
    assert plan.title == "Getting Started with Sheet Agent"
    assert manager.complete_task("1.1").completed_date == "2026-01-15"
    assert manager.block_task("1.2", "Sheet1 headers are merged").status == "blocked"
    nxt = manager.get_next_task()
    assert nxt is not None and nxt.step == "1.3"
    api.assert_done()


def test_replayed_requests_are_the_ones_recorded() -> None:
    exchanges = json.loads((API / "init-and-update.json").read_text(encoding="utf-8"))["exchanges"]
    methods = [(e["request"]["method"], e["request"]["url"].split(SID)[1]) for e in exchanges]
    assert methods[:4] == [
        ("GET", "?includeGridData=false&fields=sheets.properties%28sheetId%2Ctitle%29"),
        ("POST", ":batchUpdate"),
        ("PUT", "/values/AGENT_BASE%21C1?valueInputOption=RAW"),
        ("PUT", "/values/AGENT_BASE%21C2?valueInputOption=RAW"),
    ]
    assert exchanges[3]["request"]["json"]["values"] == [[STARTER_PLAN]]


def test_a_request_that_differs_from_the_recording_fails() -> None:
    _, manager = replay("init-and-update.json")
    with pytest.raises(AssertionError, match="differs from the recording"):
        manager.get_plan()  # the recording starts with a sheet listing, not a read


def test_replay_permission_denied_names_the_fix() -> None:
    _, manager = replay("permission-denied.json")
    with pytest.raises(StoreError, match=r"permission denied on spreadsheet .*share it with"):
        manager.get_plan()


def test_replay_unknown_spreadsheet() -> None:
    _, manager = replay("not-found.json")
    with pytest.raises(StoreError, match=r"has no spreadsheet 1kPlanKit"):
        manager.get_plan()


def test_replay_rate_limited_waits_as_told_then_reads() -> None:
    api, manager = replay("rate-limited.json")
    task = manager.get_next_task()
    assert task is not None and task.step == "1.1"
    assert manager.store.waits == [7.0]  # type: ignore[attr-defined]
    api.assert_done()


def test_recording_the_fake_replays_to_the_same_result(tmp_path: Path) -> None:
    fake = FakeSheetsApi()
    fake.add_spreadsheet(SID, sheets=["Sheet1"])
    recorder = RecordingSheetsApi(inner=fake)
    store = GoogleSheets(SID, session=recorder.session(), sleep=no_sleep)
    manager = PlanManager(store, today=lambda: TODAY)
    manager.create_plan("Rec", "Record it", [PhaseInput("W", ["a", "b"])])
    manager.review_task("1.2", "check b")
    recorder.save(tmp_path / "rec.json")
    text = (tmp_path / "rec.json").read_text(encoding="utf-8")
    assert "Authorization" not in text and "Bearer" not in text
    api = ReplaySheetsApi.from_file(tmp_path / "rec.json")
    again = PlanManager(
        GoogleSheets(SID, session=api.session(), sleep=no_sleep), today=lambda: TODAY
    )
    again.create_plan("Rec", "Record it", [PhaseInput("W", ["a", "b"])])
    again.review_task("1.2", "check b")
    api.assert_done()


# --- the in-memory fake -----------------------------------------------------------------


@pytest.fixture
def fake() -> FakeSheetsApi:
    api = FakeSheetsApi()
    api.add_spreadsheet(SID, title="Q4", sheets=["Sheet1"])
    return api


def manager_for(fake: FakeSheetsApi, cell: str = "AGENT_BASE!C2") -> PlanManager:
    store = GoogleSheets(SID, session=fake.session(), sleep=no_sleep)
    return PlanManager(store, cell, today=lambda: TODAY)


def test_fake_full_workflow_stores_plain_text(fake: FakeSheetsApi) -> None:
    manager = manager_for(fake)
    manager.init_plan(raise_errors=True)
    assert fake.sheet_titles(SID) == ["Sheet1", "AGENT_BASE"]
    assert fake.cell(SID, "AGENT_BASE!C1") == "PLAN.md Contents"
    manager.start_task("1.1")
    assert "- [/] 1.1 List available sheets" in fake.cell(SID, "AGENT_BASE!C2")
    puts = [r for r in fake.requests if r.method == "PUT"]
    assert puts and all(("valueInputOption", "RAW") in r.params for r in puts)


def test_fake_sheet_with_quotes_in_its_name(fake: FakeSheetsApi) -> None:
    manager = manager_for(fake, "'Agent''s plan'!B3")
    manager.init_plan(raise_errors=True)
    assert fake.cell(SID, "'Agent''s plan'!B2") == "PLAN.md Contents"
    assert manager.get_plan().title.startswith("Getting Started")  # type: ignore[union-attr]


def test_missing_sheet_reads_as_no_plan(fake: FakeSheetsApi) -> None:
    assert manager_for(fake).get_plan() is None


def test_plan_over_50000_characters_is_refused_before_any_request(fake: FakeSheetsApi) -> None:
    manager = manager_for(fake)
    manager.init_plan(raise_errors=True)
    sent = len(fake.requests)
    steps = ["z" * 1000 for _ in range(51)]
    with pytest.raises(CellTooLargeError, match=r"50,000 a cell of Google Sheets"):
        manager.create_plan("Big", "Too big", [PhaseInput("W", steps)])
    assert len(fake.requests) == sent
    assert "Getting Started" in fake.cell(SID, "AGENT_BASE!C2")


def test_the_fake_itself_refuses_an_oversized_cell_like_the_api(fake: FakeSheetsApi) -> None:
    fake.add_spreadsheet("other-spreadsheet-id", sheets=["AGENT_BASE"])
    store = GoogleSheets("other-spreadsheet-id", session=fake.session(), sleep=no_sleep)
    store.max_cell_chars = None  # skip our own check to reach the API's
    with pytest.raises(StoreError, match="more than the maximum of 50000 characters"):
        store.set_cell("AGENT_BASE!C2", "q" * 50_001)


def test_network_failure_is_a_clear_error_and_init_falls_back(fake: FakeSheetsApi) -> None:
    manager = manager_for(fake)
    fake.drop_next_connection(times=6)  # the first attempt and five retries
    with pytest.raises(StoreError, match=r"cannot reach Google Sheets.*\(tried 6 times\)"):
        manager.get_plan()
    fake.drop_next_connection(times=6)
    plan = manager.init_plan()
    assert plan.title == "Initialization Error"
    assert "cannot reach Google Sheets" in (plan.analysis or "")
    assert fake.sheet_titles(SID) == ["Sheet1"]


def test_server_error_mid_update_leaves_the_plan(fake: FakeSheetsApi) -> None:
    manager = manager_for(fake)
    manager.init_plan(raise_errors=True)
    before = fake.cell(SID, "AGENT_BASE!C2")
    fake.fail_next(503, "The service is currently unavailable.", times=6)
    with pytest.raises(StoreError, match=r"currently unavailable.*HTTP 503.*tried 6 times"):
        manager.complete_task("1.1")
    assert fake.cell(SID, "AGENT_BASE!C2") == before


# --- credentials and ids ------------------------------------------------------------------


def test_spreadsheet_id_from_url_or_id() -> None:
    url = f"https://docs.google.com/spreadsheets/d/{SID}/edit#gid=0"
    assert spreadsheet_id_of(url) == SID
    assert spreadsheet_id_of(SID) == SID
    with pytest.raises(StoreError, match="not a Google Sheets spreadsheet ID"):
        spreadsheet_id_of("my sheet")


def test_no_credentials_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLANKIT_GOOGLE_CREDENTIALS", raising=False)
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    with pytest.raises(StoreError, match="needs credentials"):
        GoogleSheets(SID).list_sheets()


def test_unusable_credentials_files(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(StoreError, match="cannot read the credentials file"):
        GoogleSheets(SID, missing).get_cell("AGENT_BASE!C2")
    junk = tmp_path / "junk.json"
    junk.write_text("{not json", encoding="utf-8")
    with pytest.raises(StoreError, match="not a JSON credentials file"):
        GoogleSheets(SID, junk).get_cell("AGENT_BASE!C2")
    other = tmp_path / "other.json"
    other.write_text('{"type": "something_else"}', encoding="utf-8")
    with pytest.raises(StoreError, match="neither a service-account key"):
        GoogleSheets(SID, other).get_cell("AGENT_BASE!C2")


def _service_account_file(tmp_path: Path) -> Path:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    info = {
        "type": "service_account",
        "project_id": "plankit-test",
        "private_key_id": "abc123",
        "private_key": pem,
        "client_email": "planner@plankit-test.iam.gserviceaccount.com",
        "client_id": "1234567890",
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    path = tmp_path / "service-account.json"
    path.write_text(json.dumps(info), encoding="utf-8")
    return path


def test_service_account_file_is_loaded_without_network(tmp_path: Path) -> None:
    store = GoogleSheets(SID, _service_account_file(tmp_path))
    http = store._connect()
    assert http.auth.service_account_email == "planner@plankit-test.iam.gserviceaccount.com"


def test_authorized_user_file_is_loaded_without_network(tmp_path: Path) -> None:
    path = tmp_path / "authorized_user.json"
    path.write_text(
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
    http = GoogleSheets(SID, path)._connect()
    assert http.auth.refresh_token == "refresh"


def test_permission_error_names_the_service_account(tmp_path: Path) -> None:
    api = ReplaySheetsApi.from_file(API / "permission-denied.json")
    store = GoogleSheets(SID, _service_account_file(tmp_path), session=api.session())
    with pytest.raises(StoreError, match=r"share it with the service account planner@plankit-test"):
        store.get_cell("AGENT_BASE!C2")
