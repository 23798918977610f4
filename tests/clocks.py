"""A machine whose clock is not on UTC, for tests of time stamps that must be UTC.

Many machines keep local time (a laptop in New York is five hours behind UTC in
winter); a stamp written with ``datetime.now()`` instead of ``datetime.now(UTC)`` is
right only where local time is UTC, as on most CI machines.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

NEW_YORK = "EST5EDT,M3.2.0,M11.1.0"
"""New York's rules as a POSIX TZ value: the C library needs no time zone files for it."""


@contextmanager
def new_york_clock() -> Iterator[None]:
    """Local time is New York's while the block runs (``TZ`` and the C library's zone)."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = NEW_YORK
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = before
        time.tzset()


def utc_now() -> dt.datetime:
    """Now, in UTC, to the whole second (as the stamps that leave out fractions)."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0)
