"""Workers: claim a task, run its agent in a fresh worktree, merge, report, repeat.

:class:`Run` holds what the workers of one process share (the control plane, the
session, the integration branch, the agent table, the stop signal).  Each worker
(:func:`worker_loop`) claims a ready task, makes a worktree (detached) at the
integration branch's tip, starts the task's agent there and sends one prompt
(:func:`~.prompts.task_prompt`); while the agent works, the claim's lease is renewed
every third of its length.  When the agent ends its turn with ``end_turn`` the
worktree's changes are committed and merged into the integration branch and the task
is marked done with its evidence; any other ending (another stop reason, a crash, the
timeout, a conflict) fails it with the reason, which blocks its dependents.  A lost
lease cancels the agent and abandons the task to whoever claims it next.  The
worktree is removed at the end in every case, in the background; the work of a task
that conflicted is kept on a branch ``agentflow-conflict/<session>/<task>-<n>``, to
be merged by hand.

On Ctrl-C (SIGINT or SIGTERM) every running agent gets ``session/cancel``, nothing is
merged that had not ended, every claim held is released, and the process exits
once every agent and its process group are gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plankit.orchestrate import gitwork
from plankit.orchestrate.prompts import task_prompt
from plankit.orchestrate.session import AgentFailed, AgentSession

if TYPE_CHECKING:
    from plankit.agentflow.control import ControlPlane
    from plankit.agentflow.records import TaskStatus
    from plankit.orchestrate.agents import AgentTable

POLL = 0.25
"""Seconds between claims while every ready task is taken by others."""


@dataclass(slots=True)
class Outcome:
    """What became of one claim of a task."""

    ref: str
    state: str
    """``done``, ``failed`` or ``released``."""
    reason: str | None = None
    merge_commit: str | None = None
    files: tuple[str, ...] = ()


@dataclass(slots=True)
class Timings:
    """Scheduling figures, in seconds, for the benchmark."""

    claim_to_prompt: list[float] = field(default_factory=list)
    agent_startup: list[float] = field(default_factory=list)
    done_to_claim: list[float] = field(default_factory=list)
    turn_ended: dict[int, float] = field(default_factory=dict)
    """Worker number → when its last agent's turn ended."""


@dataclass
class Run:
    """What the workers of one process share."""

    plane: ControlPlane
    session_id: str
    root: str
    """The repository (the user's project, or this host's clone)."""
    integration: gitwork.Integration
    table: AgentTable
    timeout: float
    lease: float
    state_dir: Path
    """Where worktrees, logs and transcripts of this run go."""
    env: dict[str, str]
    """The session's environment, for every agent."""
    worker_name: str = ""
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    outcomes: list[Outcome] = field(default_factory=list)
    timings: Timings = field(default_factory=Timings)
    _events: set[asyncio.Event] = field(default_factory=set)
    _merge_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _counter: int = 0
    _narratives: dict[str, str] = field(default_factory=dict)
    _cleanups: set[asyncio.Future[Any]] = field(default_factory=set)

    @property
    def logs(self) -> Path:
        """Agent logs and transcripts."""
        return self.state_dir / "logs"

    def interrupt(self) -> None:
        """Ctrl-C: stop claiming, cancel every agent."""
        self.stop.set()
        for event in self._events:
            event.set()
        self._changed.set()

    def planning_worktree(self) -> Path:
        """A worktree of the integration branch for the planner."""
        path = self.state_dir / "worktrees" / "planning"
        gitwork.add_worktree(self.root, str(path), self.integration.tip())
        return path

    def drop_planning_worktree(self) -> None:
        """Remove the planner's worktree."""
        gitwork.remove_worktree(self.root, str(self.state_dir / "worktrees" / "planning"))

    def _branch(self, name: str) -> str:
        return f"agentflow-conflict/{self.session_id}/{name}"

    def _remove_later(self, worktree: Path) -> None:
        """Remove a finished task's worktree in the background (off the path to the
        next claim); :meth:`settle` waits for every removal."""
        job = asyncio.ensure_future(
            _call(gitwork.remove_worktree, self.root, str(worktree), prune=False)
        )
        self._cleanups.add(job)
        job.add_done_callback(self._cleanups.discard)

    async def settle(self) -> None:
        """Wait for the worktree removals still running."""
        while self._cleanups:
            await asyncio.gather(*self._cleanups, return_exceptions=True)
        await _call(gitwork.prune_worktrees, self.root)


async def _call(function: Any, *args: Any, **kwargs: Any) -> Any:
    return await asyncio.to_thread(function, *args, **kwargs)


async def worker_loop(run: Run, number: int) -> None:
    """Claim and run tasks until the session has none left, or the run stops."""
    from plankit.agentflow.records import ControlError

    while not run.stop.is_set():
        try:
            claimed = await _call(
                run.plane.claim, run.session_id, lease=run.lease,
                holder=f"{run.worker_name}/{number}",
            )  # fmt: skip
        except ControlError as exc:
            if exc.rule == "session-ended":
                return
            if exc.rule not in ("commit-none", "busy"):
                raise
            # Planning goes on elsewhere (wait for the session's first commit), or the
            # database is busy: try again shortly.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(run.stop.wait(), POLL * 4)
            continue
        if claimed.task is None:
            if claimed.remaining == 0:
                run._changed.set()
                return
            run._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(run._changed.wait(), POLL)
            continue
        ended = run.timings.turn_ended.pop(number, None)
        if ended is not None:
            run.timings.done_to_claim.append(time.monotonic() - ended)
        await run_task(run, claimed.task, time.monotonic(), number)
        run._changed.set()


async def _heartbeat(run: Run, ref: str, claim: str, lost: asyncio.Event) -> None:
    from plankit.agentflow.records import ControlError

    while True:
        await asyncio.sleep(max(run.lease / 3, 0.2))
        try:
            await _call(run.plane.heartbeat, ref, run.session_id, claim=claim, lease=run.lease)
        except ControlError as exc:
            if exc.rule in ("busy", "state-unusable"):
                continue  # the database is slow or away: try again at the next beat
            lost.set()  # the lease ended and the task went to another: stop the agent
            return


def _dependencies(run: Run, status: TaskStatus) -> list[tuple[str, dict[str, Any] | None]]:
    from plankit.agentflow.evidence import latest_records

    deps = list(status.spec.get("depends_on") or [])
    if not deps:
        return []
    records = latest_records(run.plane, run.session_id)
    return [(dep, records.get(f"{status.thread_id}/{dep}")) for dep in deps]


def _narrative(run: Run, thread_id: str) -> str:
    if not run._narratives:
        record = run.plane.show(run.session_id)
        run._narratives.update((t.thread_id, t.plan.body) for t in record.threads)
    return run._narratives.get(thread_id, "")


async def run_task(run: Run, status: TaskStatus, claimed_at: float, number: int) -> Outcome:
    """Run one claimed task to its end (see the module documentation)."""
    from plankit.agentflow.evidence import write_record

    ref, claim = status.ref, status.claim or ""
    agent_name = status.spec.get("agent") or None
    command = run.table.command(agent_name)
    run._counter += 1
    slug = f"{status.task_id}-{run._counter}"
    record: dict[str, Any] = {
        "worker": f"{run.worker_name}/{number}",
        "host": socket.gethostname(),
        "agent": agent_name or "default",
        "command": command,
        "claimed_at": time.time(),
        "transcript": str(run.logs / f"{slug}.jsonl"),
        "log": str(run.logs / f"{slug}.log"),
    }

    async def finish(outcome: Outcome, **extra: Any) -> Outcome:
        from plankit.agentflow.records import ControlError

        record.update(extra, outcome=outcome.state, reason=outcome.reason)
        record.update(merge_commit=outcome.merge_commit, files_changed=list(outcome.files))
        try:
            await _call(write_record, run.plane, run.session_id, ref, claim, outcome.state,
                        record)  # fmt: skip
            if outcome.state == "done":
                await _call(run.plane.done, ref, run.session_id, claim=claim)
            elif outcome.state == "failed":
                await _call(run.plane.fail, ref, outcome.reason or "failed", run.session_id,
                            claim=claim)  # fmt: skip
            else:
                await _call(run.plane.release, ref, run.session_id, claim=claim)
        except ControlError as exc:
            # The claim ended meanwhile (its lease ran out and another worker has the
            # task): that worker's report counts, not this one.
            outcome = Outcome(ref, "lost", f"{outcome.state} not recorded: {exc}",
                              outcome.merge_commit, outcome.files)  # fmt: skip
        run.outcomes.append(outcome)
        return outcome

    if command is None:
        known = ", ".join(run.table.names()) or "none"
        reason = (
            f"the task names agent {agent_name!r}, which this run was not given (agents: "
            f"{known}); add --agent {agent_name}=CMD or an [agents] entry in .agentflow.toml"
        )
        return await finish(Outcome(ref, "failed", reason))
    worktree = run.state_dir / "worktrees" / slug
    try:
        base = await _call(run.integration.tip)
        record["base"] = base
        await _call(gitwork.add_worktree, run.root, str(worktree), base)
    except gitwork.GitError as exc:
        run._remove_later(worktree)
        return await finish(Outcome(ref, "failed", str(exc)))
    lost = asyncio.Event()
    run._events.add(lost)
    if run.stop.is_set():
        lost.set()
    beat = asyncio.ensure_future(_heartbeat(run, ref, claim, lost))
    try:
        await _call(write_record, run.plane, run.session_id, ref, claim, "running", record)
        text = await _call(
            task_prompt,
            ref,
            status.spec,
            await _call(_narrative, run, status.thread_id),
            await _call(_dependencies, run, status),
        )
        try:
            async with AgentSession(
                command,
                worktree,
                env=run.env,
                log=run.logs / f"{slug}.log",
                transcript=run.logs / f"{slug}.jsonl",
                stop=lost,
            ) as agent:
                run.timings.agent_startup.append(agent.ready - agent.started)
                run.timings.claim_to_prompt.append(
                    (time.monotonic() - claimed_at) - (agent.ready - agent.started)
                )
                end = await agent.prompt(text, run.timeout)
                run.timings.turn_ended[number] = time.monotonic()
                evidence = {
                    "stop_reason": end.stop_reason,
                    "last_message": agent.record.last_message(),
                    "tool_calls": agent.record.calls(agent.client.terminals.exits),
                    "plan_updates": agent.record.plans,
                    "permissions": agent.record.permissions,
                }
        except AgentFailed as exc:
            if run.stop.is_set() or lost.is_set():
                return await finish(Outcome(ref, "released", "the run was stopped"))
            return await finish(Outcome(ref, "failed", str(exc)))
        if run.stop.is_set() or (lost.is_set() and end.stop_reason != "end_turn"):
            why = "the run was stopped" if run.stop.is_set() else "its lease was lost"
            return await finish(Outcome(ref, "released", why), **evidence)
        if end.stop_reason != "end_turn":
            return await finish(Outcome(ref, "failed", end.problem), **evidence)
        beat.cancel()
        message = f"{status.task_id}: {status.spec.get('title', '')} (agentflow task {ref})"
        author = run.integration.author
        commit = await _call(gitwork.commit_worktree, str(worktree), message, author)
        if commit is None:
            return await finish(Outcome(ref, "done", None), **evidence)
        files = await _call(gitwork.changed_files, run.root, base, commit)
        async with run._merge_lock:
            merged = await _call(
                run.integration.merge, commit, f"Merge agentflow task {status.task_id} ({ref})"
            )
        if merged.commit is None:
            branch = run._branch(slug)
            await _call(gitwork.keep, run.root, branch, commit)
            paths = gitwork.names(list(merged.conflicts))
            reason = f"merge conflict in {paths}; its work is on branch {branch}"
            return await finish(Outcome(ref, "failed", reason), task_commit=commit, **evidence)
        outcome = Outcome(ref, "done", None, merged.commit, files)
        return await finish(outcome, task_commit=commit, **evidence)
    except gitwork.GitError as exc:
        return await finish(Outcome(ref, "failed", str(exc)))
    except (OSError, ValueError, RuntimeError) as exc:  # a broken agent stream, a full disk
        return await finish(Outcome(ref, "failed", f"the run failed on this task: {exc}"))
    finally:
        beat.cancel()
        run._events.discard(lost)
        run._remove_later(worktree)


def state_dir(home: str, session_id: str, worker: str) -> Path:
    """Where a worker process keeps its worktrees and logs."""
    path = Path(home) / "runs" / session_id / worker
    path.mkdir(parents=True, exist_ok=True)
    return path


def remove_state(path: Path) -> None:
    """Remove what a worker process left of its worktrees (its logs stay)."""
    shutil.rmtree(path / "worktrees", ignore_errors=True)


def worker_name() -> str:
    """This process's name among the workers: host and process id."""
    return f"{socket.gethostname()}-{os.getpid()}"
