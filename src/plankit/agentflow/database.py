"""The control plane's database, whichever it is: the interface both stores implement.

SQL is written once with ``?`` placeholders; ``now_ms()`` is the database's clock in
milliseconds (so that agents on hosts whose clocks differ agree on when a lease
ends).  :mod:`plankit.agentflow.store` adapts it to SQLite and
:mod:`plankit.agentflow.pgstore` to PostgreSQL; :mod:`plankit.agentflow.schema` holds
the tables both create.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

T = TypeVar("T")

WRITE_ATTEMPTS = 8
"""How many times :meth:`Database.write` runs a transaction the database asked to retry."""


def now() -> str:
    """The current time, UTC, ISO 8601 with milliseconds (``2026-01-31T12:00:00.000Z``)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Database:
    """A connection to the control plane's database, whichever it is.

    SQL is written once with ``?`` placeholders; ``now_ms()`` is the database's clock
    in milliseconds.  Subclasses adapt it to their driver.
    """

    dialect = ""
    """``sqlite`` or ``postgresql``."""
    where = ""
    """Where the database is, for messages (a path, or a URL without its password)."""
    read_only = False
    """True when opened only for reading."""
    for_update = ""
    """Appended to a SELECT that locks the rows it reads until the transaction ends."""
    skip_locked = ""
    """Appended to a SELECT that locks the rows it reads, skipping rows others hold."""

    def execute(self, sql: str, params: Sequence[object] = ()) -> Any:
        """Run one statement; a cursor with ``fetchone`` and ``fetchall``."""
        raise NotImplementedError

    def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        """Run one statement for each row of parameters."""
        raise NotImplementedError

    def transaction(self, *, durable: bool = True) -> contextlib.AbstractContextManager[None]:
        """One write transaction: committed at the end, rolled back on any error.

        ``durable=False`` lets a database that can commit without waiting for its disk
        (PostgreSQL's ``synchronous_commit``) do so: for changes that a lost commit
        cannot make wrong, only undone (a claim, which a lease ends anyway).
        """
        raise NotImplementedError

    def close(self) -> None:
        """Close the connection."""
        raise NotImplementedError

    @property
    def closed(self) -> bool:
        """Whether the connection is closed (and a new one is needed)."""
        return False

    def discard_if_broken(self) -> None:
        """After an error: close the connection if it cannot serve another request."""

    def usable(self, write: bool) -> bool:
        """Whether this open connection may serve another request (``write``: one that
        changes the state)."""
        return True

    def is_error(self, exc: BaseException) -> bool:
        """Whether ``exc`` is an error of the database driver."""
        raise NotImplementedError

    def is_retryable(self, exc: BaseException) -> bool:
        """Whether the transaction that raised ``exc`` may simply be run again."""
        return False

    def is_unique_violation(self, exc: BaseException) -> bool:
        """Whether ``exc`` is a UNIQUE constraint refusing a row."""
        raise NotImplementedError

    def lock_session(self, session_id: str) -> None:
        """Inside a transaction: serialize with other writers of the same session."""

    def call(self, function: str, params: Sequence[object]) -> list[Any] | None:
        """The rows of a stored function called in a transaction of its own (again on a
        deadlock), or ``None`` when this database has none (SQLite)."""
        return None

    def write(
        self,
        action: Callable[[Database], T],
        attempts: int = WRITE_ATTEMPTS,
        *,
        durable: bool = True,
    ) -> T:
        """Run ``action`` in a transaction, again when the database asks for it (a
        deadlock or serialization failure between concurrent writers), at most
        ``attempts`` times in all."""
        for attempt in range(attempts):
            try:
                with self.transaction(durable=durable):
                    return action(self)
            except Exception as exc:
                if attempt + 1 < attempts and self.is_retryable(exc):
                    time.sleep(0.002 * (attempt + 1))
                    continue
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    # --- the schema (:mod:`plankit.agentflow.schema`) ---------------------------

    def version(self) -> int:
        """The schema version of this database (0 when it is new)."""
        raise NotImplementedError

    def ddl(self, statement: str) -> str:
        """A migration statement in this database's dialect."""
        raise NotImplementedError
