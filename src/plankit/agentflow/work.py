"""Work tracking through the control plane: claim a task, report it done or failed.

:class:`WorkMixin` gives :class:`~plankit.agentflow.control.ControlPlane` its task
methods; each finds the session, then runs one transaction of
:mod:`plankit.agentflow.tracking` or :mod:`plankit.agentflow.claims` (again, when
concurrent writers on PostgreSQL deadlock).  Tasks are named ``<thread_id>/<task_id>``, as a
claim prints them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from plankit.agentflow import claims, tracking
from plankit.agentflow.records import Claim, ControlError, TaskStatus

if TYPE_CHECKING:
    from plankit.agentflow.database import Database
    from plankit.agentflow.records import Session

DEFAULT_LEASE = 600.0
"""Seconds a claim lasts unless its holder sends a heartbeat (10 minutes)."""

MAX_LEASE = 7 * 86400.0
"""Longest lease accepted (a week)."""


class WorkMixin:
    """The task methods of the control plane."""

    host: str
    """This host's name, recorded with each claim."""
    _session_ids: dict[str, str]
    """Session references already resolved to internal ids."""

    def _db(self, write: bool = True) -> contextlib.AbstractContextManager[Database]:
        raise NotImplementedError

    def _find(self, conn: Database, session: str | None, *, live: bool = False) -> Session:
        raise NotImplementedError

    # --- work tracking --------------------------------------------------------------

    def claim(
        self,
        session: str | None = None,
        *,
        agent: str | None = None,
        lease: float = DEFAULT_LEASE,
        holder: str | None = None,
    ) -> Claim:
        """Claim one ready task of the session's latest commit, for ``lease`` seconds.

        With ``agent``, tasks assigned to another agent are left alone.  ``holder`` is
        who the claim is recorded for (default: ``agent``).  The answer's
        ``task`` is ``None`` when nothing is claimable now; ``remaining`` 0 means that
        no work is left.
        """
        lease_ms = _lease_ms(lease)
        with self._db() as conn:
            sid = self._session_id(conn, session)
            who = holder or agent
            called = claims.claim_call(
                conn, sid, agent=agent, holder=who, host=self.host, lease_ms=lease_ms
            )
            task, left = called or conn.write(
                lambda db: claims.claim(
                    db, sid, agent=agent, holder=who, host=self.host, lease_ms=lease_ms
                ),
                durable=False,  # a lost claim only returns its task early
            )
            reserved: tuple[tuple[str, str], ...] = ()
            if task is None:
                found = self._find(conn, session, live=True)  # ended since?
                if left == 0 and tracking.tracked_commit(conn, found.session_id) is None:
                    raise ControlError(
                        "commit-none",
                        f"session {found.session_id} has no commit yet: there is nothing to claim",
                    )
                if agent is not None and left:  # say why a ready task was not given
                    reserved = tuple(
                        (s.ref, str(s.spec.get("agent")))
                        for s in tracking.statuses(conn, sid)
                        if s.state == "ready" and s.spec.get("agent") not in (None, agent)
                    )
        return Claim(task, left, reserved)

    def _session_id(self, conn: Database, session: str | None) -> str:
        """The internal id of the session ``session`` names (as :meth:`_find`), from a
        cache: task commands of one agent name the same session again and again, and its
        id never changes."""
        import os

        from plankit.agentflow.paths import ENV_SESSION

        ref = session if session is not None else (os.environ.get(ENV_SESSION) or None)
        if ref is not None and ref in self._session_ids:
            return self._session_ids[ref]
        found = self._find(conn, session)
        if ref is not None:
            self._session_ids[ref] = found.session_id
        return found.session_id

    def _task_write(
        self,
        session: str | None,
        action: Callable[[Database, str], TaskStatus],
        *,
        durable: bool = True,
    ) -> TaskStatus:
        with self._db() as conn:
            sid = self._session_id(conn, session)
            return conn.write(lambda db: action(db, sid), durable=durable)

    def done(
        self, ref: str, session: str | None = None, *, claim: str | None = None,
        agent: str | None = None,
    ) -> TaskStatus:  # fmt: skip
        """Mark a task done: its dependents with nothing else to wait for become ready.

        ``claim`` (the id the claim printed) makes sure the caller still holds it.
        """
        if claim is not None:
            with self._db() as conn:
                done = tracking.done_ref(conn, self._session_id(conn, session), ref, claim)
            if done is not None:
                return done
        return self._task_write(
            session,
            lambda db, sid: tracking.finish(
                db, sid, ref, claim_id=claim, failed=False, reason=None, holder=agent
            ),
        )

    def fail(
        self, ref: str, reason: str, session: str | None = None, *, claim: str | None = None,
        agent: str | None = None,
    ) -> TaskStatus:  # fmt: skip
        """Mark a task failed, with a reason: its dependents are blocked."""
        text = " ".join(reason.split())
        if not text:
            raise ControlError("reason-missing", "say why the task failed: --reason TEXT")
        return self._task_write(
            session,
            lambda db, sid: tracking.finish(
                db, sid, ref, claim_id=claim, failed=True, reason=text[:1000], holder=agent
            ),
        )

    def heartbeat(
        self, ref: str, session: str | None = None, *, claim: str | None = None,
        lease: float = DEFAULT_LEASE,
    ) -> TaskStatus:  # fmt: skip
        """Extend the lease of a claimed task to ``lease`` seconds from now."""
        lease_ms = _lease_ms(lease)
        return self._task_write(
            session,
            lambda db, sid: tracking.heartbeat(db, sid, ref, claim_id=claim, lease_ms=lease_ms),
            durable=False,  # a lost heartbeat only ends the lease sooner
        )

    def release(
        self, ref: str, session: str | None = None, *, claim: str | None = None
    ) -> TaskStatus:
        """Give a claimed task back (it is ready again), or reopen a failed one."""
        return self._task_write(
            session, lambda db, sid: tracking.release(db, sid, ref, claim_id=claim)
        )


def _lease_ms(seconds: float) -> int:
    if not 1 <= seconds <= MAX_LEASE:
        raise ControlError(
            "lease-invalid",
            f"a lease of {seconds:g} s is out of range; give 1 s to {MAX_LEASE / 86400:g} days",
        )
    return int(seconds * 1000)
