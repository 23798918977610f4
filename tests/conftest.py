"""Settings for the whole suite: the Hypothesis profile (see ``tests/profiles.py``).

Loaded before any test module is imported, so ``examples(N)`` in a decorator sees the
profile in force. ``HYPOTHESIS_PROFILE=long`` searches ten times harder.
"""

from __future__ import annotations

import pytest

from tests import profiles

PROFILE = profiles.load()


def pytest_report_header(config: pytest.Config) -> str:
    return f"hypothesis profile: {PROFILE} (HYPOTHESIS_PROFILE=ci|long|default)"
