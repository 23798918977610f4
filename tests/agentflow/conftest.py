"""Shared fixtures: an isolated AGENTFLOW_HOME, and the control plane on each store.

The PostgreSQL store is tested against the real server of ``tests/pgserver.py``; each
test gets a schema of its own in it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from plankit.agentflow.control import ControlPlane
from tests.pgserver import PostgresServer


@pytest.fixture(autouse=True)
def _no_shared_database(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test uses the database its fixtures choose, never one from the environment."""
    monkeypatch.delenv("AGENTFLOW_DATABASE_URL", raising=False)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """AGENTFLOW_HOME in a temporary directory; no session in the environment."""
    path = tmp_path / "agentflow-home"
    monkeypatch.setenv("AGENTFLOW_HOME", str(path))
    monkeypatch.delenv("AGENTFLOW_SESSION_ID", raising=False)
    return path


# --- the control plane on each store -----------------------------------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, home: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The store under test, set in the environment: ``sqlite`` (under AGENTFLOW_HOME)
    or ``postgresql`` (a schema of the session's server, in AGENTFLOW_DATABASE_URL)."""
    if request.param == "postgresql":
        server: PostgresServer = request.getfixturevalue("postgres")
        monkeypatch.setenv("AGENTFLOW_DATABASE_URL", server.new_schema())
    return str(request.param)


@pytest.fixture
def planes(store: str) -> Iterator[Callable[[], ControlPlane]]:
    """Make control planes on the store under test (closed at the end)."""
    made: list[ControlPlane] = []

    def make() -> ControlPlane:
        plane = ControlPlane()
        made.append(plane)
        return plane

    yield make
    for plane in made:
        plane.close()
