"""The step-by-step Google Sheets setup in docs/checklist.md works as written.

The console blocks of the section "Setting up Google Sheets, step by step" are run
command by command, in process, with the credential files the steps make (a
service-account key, a Desktop OAuth client): the credentials are loaded for real
(file kinds, the spreadsheets scope, the saved token), the Sheets API is
FakeSheetsApi and Google's token endpoint a requests adapter.  Each command's output
must match the lines the docs show (``…`` matches any text within a line, a date
any date).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import gspread
import pytest
import requests
from click.testing import CliRunner
from requests.adapters import BaseAdapter

from plankit.checklist import GoogleSheets
from plankit.checklist.stores import gsheets_auth
from plankit.checklist.stores.gsheets_fake import FakeSheetsApi
from plankit.cli import cli

from .test_gsheets import _service_account_file

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "checklist.md"
SID = "1kPlanKitExampleSpreadsheetId0123456789ab"
STATE = "docs-state-0123456789"


def setup_blocks() -> list[list[tuple[str, list[str]]]]:
    """The section's console blocks: (command, expected output lines) each."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index("#### Setting up Google Sheets, step by step")
    end = text.index("**Testing without Google.**", start)
    blocks = re.findall(r"```console\n(.*?)```", text[start:end], re.S)
    out: list[list[tuple[str, list[str]]]] = []
    for block in blocks:
        steps: list[tuple[str, list[str]]] = []
        for line in block.rstrip("\n").split("\n"):
            if line.startswith("$ "):
                steps.append((line[2:], []))
            else:
                steps[-1][1].append(line)
        out.append(steps)
    return out


def matches(expected: str, actual: str) -> bool:
    pattern = re.escape(expected).replace("…", ".*?")
    pattern = re.sub(r"\d{4}\\-\d{2}\\-\d{2}", r"\\d{4}-\\d{2}-\\d{2}", pattern)
    return re.fullmatch(pattern, actual) is not None


class _TokenEndpoint(BaseAdapter):
    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        response = requests.Response()
        response.status_code = 200
        response._content = json.dumps(
            {
                "access_token": "ya29.docs",
                "expires_in": 3599,
                "refresh_token": "1//docs",
                "scope": gsheets_auth.SCOPES[0],
                "token_type": "Bearer",
            }
        ).encode()
        response.headers["Content-Type"] = "application/json"
        response.request = request
        return response

    def close(self) -> None:
        pass


@pytest.fixture
def google(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeSheetsApi:
    """The fake API behind every GoogleSheets, a fake token endpoint behind sign-ins,
    a scratch folder as the current directory and HOME."""
    fake = FakeSheetsApi()
    fake.add_spreadsheet(SID, sheets=["Sheet1"])
    authorized: list[Any] = []

    def connect(self: GoogleSheets) -> Any:
        if self._http is None:
            authorized.append(self._authorize(gspread))  # the credentials, loaded for real
            self._http = gspread.Client(auth=None, session=fake.session()).http_client  # type: ignore[arg-type]
        return self._http

    monkeypatch.setattr(GoogleSheets, "_connect", connect)
    real_flow = gsheets_auth._new_flow

    def flow(client_file: str) -> Any:
        made = real_flow(client_file)
        made.oauth2session.mount("https://oauth2.googleapis.com/", _TokenEndpoint())
        original = made.authorization_url
        made.authorization_url = lambda **kw: original(state=STATE, **kw)
        return made

    monkeypatch.setattr(gsheets_auth, "_new_flow", flow)
    home = tmp_path / "home"
    home.mkdir()
    for name in ("PLANKIT_HOME", "XDG_CONFIG_HOME", "PLANKIT_GOOGLE_CREDENTIALS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    fake.authorized = authorized  # type: ignore[attr-defined]
    return fake


def run_block(
    steps: list[tuple[str, list[str]]], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    for command, expected in steps:
        words = shlex.split(command)
        if words[0] == "export":
            name, _, value = words[1].partition("=")
            monkeypatch.setenv(name, value)
            continue
        assert words[0] == "plankit", command
        pasted = next(
            (line.split("Paste it here: ", 1)[1] for line in expected if "Paste it here: " in line),
            None,
        )
        given = pasted.replace("state=…", f"state={STATE}") + "\n" if pasted else None
        result = runner.invoke(cli, words[1:], input=given, catch_exceptions=False)
        assert result.exit_code == 0, (command, result.output)
        actual = result.output.replace(str(home), "/home/me").rstrip("\n").split("\n")
        assert len(actual) == len(expected), (command, "\n".join(actual))
        for want, got in zip(expected, actual, strict=True):
            assert matches(want, got), (command, want, got, "\n".join(actual))


def test_the_docs_show_both_ways() -> None:
    blocks = setup_blocks()
    assert len(blocks) == 2
    assert [c for c, _ in blocks[0]][1] == "plankit checklist auth"
    assert blocks[1][0][0].startswith("plankit checklist auth --credentials client_secret.json")


def test_the_service_account_steps(
    google: FakeSheetsApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = _service_account_file(tmp_path)
    info = json.loads(key.read_text(encoding="utf-8"))
    info["client_email"] = "planner@plankit-docs.iam.gserviceaccount.com"
    (tmp_path / "plankit-sa.json").write_text(json.dumps(info), encoding="utf-8")
    run_block(setup_blocks()[0], tmp_path / "home", monkeypatch)
    assert google.sheet_titles(SID) == ["Sheet1", "AGENT_BASE"]
    assert "- [x] 1.1 List available sheets" in google.cell(SID, "AGENT_BASE!C2")
    service = google.authorized[0]  # type: ignore[attr-defined]
    assert service.http_client.auth._scopes == gsheets_auth.SCOPES


def test_the_oauth_steps(
    google: FakeSheetsApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "client_secret.json").write_text(
        json.dumps(
            {
                "installed": {
                    "client_id": "123-docs.apps.googleusercontent.com",
                    "client_secret": "not-a-secret",
                    "auth_uri": "https://accounts.google.com/o/oauth2/auth",
                    "token_uri": "https://oauth2.googleapis.com/token",
                    "redirect_uris": ["http://localhost"],
                }
            }
        ),
        encoding="utf-8",
    )
    run_block(setup_blocks()[1], tmp_path / "home", monkeypatch)
    token = tmp_path / "home" / ".config" / "plankit" / "google-authorized-user.json"
    assert json.loads(token.read_text(encoding="utf-8"))["refresh_token"] == "1//docs"
    assert google.cell(SID, "AGENT_BASE!C1") == "PLAN.md Contents"
    user = google.authorized[-1]  # type: ignore[attr-defined]
    assert user.http_client.auth.refresh_token == "1//docs"
