"""The Hypothesis profiles of the suite, and example counts that follow them.

``tests/conftest.py`` registers the profiles and loads one before any test module is
imported:

* ``ci`` (the default, and what CI runs): a quarter of the examples, derandomized (the
  same examples every run, so a run never fails by the luck of the draw), no example
  database, no deadline (a slow example on a busy machine is not a failure);
* ``long`` (``HYPOTHESIS_PROFILE=long``): ten times the examples, random and with the
  example database, for a deep search on a developer's machine after changing a parser;
* ``default`` (``HYPOTHESIS_PROFILE=default``): Hypothesis's own settings, the counts as
  written.

A test that needs more or fewer examples than the profile's default writes
``@settings(max_examples=examples(N))``: N is the count under Hypothesis's default of
100 examples, and each profile scales it (``ci``: N / 4, ``long``: N × 10).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

BASE = 100
"""Hypothesis's default ``max_examples``, which the counts passed to :func:`examples` are
written against."""

PROFILES = {
    "ci": settings(
        max_examples=BASE // 4,
        derandomize=True,
        database=None,
        deadline=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    ),
    "long": settings(
        max_examples=BASE * 10, deadline=None, suppress_health_check=[HealthCheck.too_slow]
    ),
}


def load() -> str:
    """Register the profiles and load the chosen one (``HYPOTHESIS_PROFILE``, else
    ``ci``); its name."""
    for name, profile in PROFILES.items():
        settings.register_profile(name, profile)
    name = os.environ.get("HYPOTHESIS_PROFILE") or "ci"
    settings.load_profile(name)
    return name


def examples(count: int) -> int:
    """``count`` examples (written for Hypothesis's default of 100), scaled to the
    profile in force."""
    return max(1, count * settings.default.max_examples // BASE)
