"""Shared fixtures: an isolated AGENTFLOW_HOME."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """AGENTFLOW_HOME in a temporary directory; no session in the environment."""
    path = tmp_path / "agentflow-home"
    monkeypatch.setenv("AGENTFLOW_HOME", str(path))
    monkeypatch.delenv("AGENTFLOW_SESSION_ID", raising=False)
    return path
