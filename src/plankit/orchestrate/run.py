"""``agentctl run`` and ``agentctl worker`` as library calls: from a goal (or a session)
to a report of what was merged.

:func:`run_goal` starts a session, makes the integration branch ``agentflow/<session
id>`` from the user's HEAD (without checking it out), lets the planner commit a plan
(:mod:`.planning`) and runs every task with N workers (:mod:`.runner`).
:func:`join_session` does the second half for a session started elsewhere: the branch
is in a git remote both hosts reach, the control plane in a shared PostgreSQL.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from plankit.orchestrate import gitwork
from plankit.orchestrate.runner import Run, remove_state, state_dir, worker_loop, worker_name

if TYPE_CHECKING:
    from plankit.agentflow.control import ControlPlane
    from plankit.orchestrate.agents import AgentTable

DEFAULT_TIMEOUT = 1800.0
"""Seconds one agent turn may last (30 minutes)."""
DEFAULT_LEASE = 120.0
"""Seconds a claim lasts without a heartbeat; renewed every third of it."""

EXIT_OK, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 130


@dataclass
class Report:
    """What a run did."""

    session_id: str
    branch: str
    base: str
    """The commit the integration branch was made from (or found at, for a worker)."""
    tip: str | None = None
    """The integration branch's tip at the end."""
    tasks: list[dict[str, Any]] = field(default_factory=list)
    """Every task of the commit: ref, state, reason, merge commit, files changed."""
    diffstat: list[str] = field(default_factory=list)
    """``git diff --stat`` from ``base`` to ``tip``."""
    error: str | None = None
    """Why the run stopped early (planning failed), if it did."""
    interrupted: bool = False
    run: Run | None = None

    @property
    def failed(self) -> list[dict[str, Any]]:
        """The tasks not done."""
        return [task for task in self.tasks if task["state"] != "done"]

    @property
    def exit_code(self) -> int:
        """0 when every task is done; 130 when interrupted; 1 otherwise."""
        if self.interrupted:
            return EXIT_INTERRUPTED
        return EXIT_FAILED if self.error or self.failed else EXIT_OK

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "session_id": self.session_id,
            "branch": self.branch,
            "base": self.base,
            "tip": self.tip,
            "tasks": self.tasks,
            "diffstat": self.diffstat,
            "error": self.error,
            "interrupted": self.interrupted,
            "exit_code": self.exit_code,
        }


def _environment(plane: ControlPlane, session_id: str) -> dict[str, str]:
    from plankit.agentflow.paths import ENV_DATABASE

    env = {"AGENTFLOW_SESSION_ID": session_id, "AGENTFLOW_HOME": plane.home}
    if plane.database:
        env[ENV_DATABASE] = plane.database
    return env


def _check_remote(root: str, remote: str) -> None:
    if gitwork.git(root, "remote", "get-url", remote, check=False).returncode != 0:
        raise gitwork.GitError(
            f"{root} has no git remote {remote!r}: add the remote every host reaches "
            f"(git remote add {remote} URL), or name another with --remote"
        )


def _finish(report: Report, run: Run) -> None:
    from plankit.agentflow.evidence import latest_records
    from plankit.agentflow.records import ControlError

    with contextlib.suppress(ControlError):
        _, statuses = run.plane.progress(report.session_id)
        records = latest_records(run.plane, report.session_id)  # whichever host ran it
        for status in statuses or ():
            record = records.get(status.ref) or {}
            report.tasks.append(
                {
                    "ref": status.ref,
                    "state": status.state,
                    "agent": status.spec.get("agent"),
                    "reason": status.reason,
                    "merge_commit": record.get("merge_commit"),
                    "files_changed": list(record.get("files_changed") or ()),
                }
            )
    with contextlib.suppress(gitwork.GitError):
        report.tip = run.integration.tip()
        report.diffstat = gitwork.diffstat(run.root, report.base, report.tip)


async def _work(run: Run, workers: int) -> None:
    from concurrent.futures import ThreadPoolExecutor

    loop = asyncio.get_running_loop()
    # Every worker waits on git and the database in threads, and its heartbeat too.
    loop.set_default_executor(ThreadPoolExecutor(max_workers=2 * workers + 4))
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, run.interrupt)
    try:
        await asyncio.gather(*(worker_loop(run, n + 1) for n in range(workers)))
    finally:
        await run.settle()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)


def run_goal(
    project: str,
    goal: str,
    table: AgentTable,
    *,
    plane: ControlPlane,
    workers: int = 1,
    timeout: float = DEFAULT_TIMEOUT,
    lease: float = DEFAULT_LEASE,
    remote: str | None = None,
    on_session: Callable[[str], None] | None = None,
) -> Report:
    """``agentctl run``: plan ``goal`` and run every task (see the module docs);
    ``on_session`` is told the session's id as soon as it exists."""
    root = gitwork.repository_root(project)
    if remote is not None:
        _check_remote(root, remote)
    head = gitwork.rev(root, "HEAD")
    assert head is not None
    context = plane.start_session()
    session_id = context.session.session_id
    if on_session is not None:
        on_session(session_id)
    branch = f"agentflow/{session_id}"
    integration = gitwork.Integration(root, branch, remote)
    integration.create(head)
    report = Report(session_id, branch, head)

    async def main() -> None:
        from plankit.orchestrate.planning import PlanningFailed, plan

        name = worker_name()
        run = Run(
            plane, session_id, root, integration, table, timeout, lease,
            state_dir(plane.home, session_id, name), _environment(plane, session_id), name,
        )  # fmt: skip
        report.run = run
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, run.interrupt)
        try:
            try:
                await plan(run, goal, context)
            except PlanningFailed as exc:
                report.error = str(exc)
                report.interrupted = run.stop.is_set()
                if remote is None:  # nothing was merged: the branch goes
                    gitwork.git(root, "branch", "-D", branch, check=False)
                return
            await _work(run, workers)
            report.interrupted = run.stop.is_set()
        finally:
            await asyncio.to_thread(remove_state, run.state_dir)
            await asyncio.to_thread(_finish, report, run)

    asyncio.run(main())
    return report


def join_session(
    project: str,
    session: str | None,
    table: AgentTable,
    *,
    plane: ControlPlane,
    workers: int = 1,
    timeout: float = DEFAULT_TIMEOUT,
    lease: float = DEFAULT_LEASE,
    remote: str | None = "origin",
) -> Report:
    """``agentctl worker``: run tasks of a session started elsewhere until none is left."""
    root = gitwork.repository_root(project)
    if remote is not None:
        _check_remote(root, remote)
    found = plane.context(session, live=True).session
    session_id = found.session_id
    branch = f"agentflow/{session_id}"
    integration = gitwork.Integration(root, branch, remote)
    head = gitwork.rev(root, "HEAD")
    assert head is not None
    base = integration.create(head)
    report = Report(session_id, branch, base)

    async def main() -> None:
        name = worker_name()
        run = Run(
            plane, session_id, root, integration, table, timeout, lease,
            state_dir(plane.home, session_id, name), _environment(plane, session_id), name,
        )  # fmt: skip
        report.run = run
        try:
            await _work(run, workers)
            report.interrupted = run.stop.is_set()
        finally:
            await asyncio.to_thread(remove_state, run.state_dir)
            await asyncio.to_thread(_finish, report, run)

    asyncio.run(main())
    return report
