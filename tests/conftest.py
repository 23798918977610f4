"""Settings for the whole suite: the Hypothesis profile (see ``tests/profiles.py``) and
state directories of each test's own.

The profile is loaded before any test module is imported, so ``examples(N)`` in a
decorator sees the profile in force. ``HYPOTHESIS_PROFILE=long`` searches ten times
harder.
"""

from __future__ import annotations

import pytest

from tests import profiles
from tests.pgserver import postgres  # noqa: F401  (the fixture, for every test)
from tests.processes import cleanup  # noqa: F401  (the fixture, for every test)

PROFILE = profiles.load()


def pytest_report_header(config: pytest.Config) -> str:
    return f"hypothesis profile: {PROFILE} (HYPOTHESIS_PROFILE=ci|long|default)"


@pytest.fixture(autouse=True)
def _own_state_directories(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where plankit, agentflow and llm keep state between commands, in a directory of
    this test's own: no test reads the user's, and tests running at the same time (one
    per core) never share one. A test or a directory's fixture may set its own."""
    state = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("PLANKIT_HOME", str(state / "plankit"))
    monkeypatch.setenv("AGENTFLOW_HOME", str(state / "agentflow"))
    monkeypatch.setenv("LLM_USER_PATH", str(state / "llm"))
