"""Fixtures for the ACP tests: the schema check, scratch projects, and acpx.

acpx (npm) is looked for in ``build/acpx`` (``tools/test-deps`` installs it there) or on
PATH; without it, or without node, the acpx tests are skipped with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.acp.kit import ROOT, SchemaCheck, acpx_sockets

ACPX_VERSION = "0.19.1"
ACPX_DIR = ROOT / "build" / "acpx"


@pytest.fixture(autouse=True)
def _plankit_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path_factory.mktemp("plankit-home")
    monkeypatch.setenv("PLANKIT_HOME", str(home))
    monkeypatch.delenv("TEDDY_SESSION", raising=False)


@pytest.fixture(scope="session")
def schema() -> SchemaCheck:
    return SchemaCheck()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "hostile_peer: the test sends malformed messages on purpose; only what plankit "
        "sends is checked against the schema",
    )


@pytest.fixture(autouse=True)
def _every_message_valid(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    schema: SchemaCheck,
) -> Iterator[None]:
    """Every ACP message a test exchanges through plankit's transport (``teddy acp``
    and ``plankit acp run``, in this process or spawned, whoever the peer is) is traced
    (``PLANKIT_ACP_TRACE``) and checked against the v1 schema after the test."""
    from plankit.acp.wire import TRACE_VARIABLE

    folder = tmp_path_factory.mktemp("acp-trace")
    monkeypatch.setenv(TRACE_VARIABLE, str(folder))
    yield
    ours_only = request.node.get_closest_marker("hostile_peer") is not None
    saved, schema.problems = schema.problems, []
    try:
        found = _check_traces(schema, folder, ours_only)
    finally:
        schema.problems = saved
    assert found == [], f"messages not valid under the v1 schema: {found}"


def _check_traces(check: SchemaCheck, folder: Path, ours_only: bool) -> list[str]:
    for trace in sorted(folder.glob("*.jsonl")):
        asked: dict[str, dict[object, str]] = {"in": {}, "out": {}}
        for line in trace.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            direction, message = record["dir"], record["message"]
            if "method" in message and "id" in message:
                asked[direction][message["id"]] = message["method"]
            if ours_only and direction == "in":
                continue
            if "method" in message:
                check.check(message)
            else:
                other = "in" if direction == "out" else "out"
                check.check(message, asked[other].get(message.get("id")))
    return check.problems


@pytest.fixture
def check(schema: SchemaCheck) -> SchemaCheck:
    """A schema check whose problems must be empty at the end of the test."""
    schema.problems = []
    yield schema
    assert schema.problems == []


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A scratch project with one module."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("x = 1\n", encoding="utf-8")
    return root


def acpx_command() -> list[str]:
    """How to run acpx, or a skip with the reason."""
    node = shutil.which("node")
    local = ACPX_DIR / "node_modules" / "acpx" / "dist" / "cli.js"
    if node is not None and local.is_file():
        return [node, str(local)]
    found = shutil.which("acpx")
    if found is not None:
        return [found]
    why = "node is not installed" if node is None else f"acpx is not installed in {ACPX_DIR}"
    pytest.skip(
        f"{why}: install it with `npm install --prefix build/acpx acpx@{ACPX_VERSION}` "
        "(tools/test-deps does)"
    )
    raise AssertionError  # pragma: no cover


@pytest.fixture
def acpx(tmp_path: Path) -> Iterator[tuple[list[str], dict[str, str]]]:
    """The acpx command and an environment with a scratch HOME; the socket folder acpx
    made for that HOME is removed afterwards, so that the suite leaves nothing in /tmp."""
    home = tmp_path / "acpx-home"
    home.mkdir()
    yield acpx_command(), {**os.environ, "HOME": str(home)}
    shutil.rmtree(acpx_sockets(str(home)), ignore_errors=True)
