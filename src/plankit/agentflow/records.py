"""What the control plane records: sessions, threads, commits; and its errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from plankit.agentflow.model import Plan, PlanDirError, Problem, Task, problem
from plankit.errors import PlankitError, diagnostics_of


def iso_ms(millis: int | None) -> str | None:
    """Milliseconds since the epoch as the control plane writes times
    (``2026-01-31T12:00:00.000Z``)."""
    if millis is None:
        return None
    from datetime import UTC, datetime

    moment = datetime.fromtimestamp(millis / 1000, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ControlError(PlankitError):
    """A control plane request that cannot be done; nothing was changed.

    ``rule`` is a stable name (``session-unknown``, ``thread-current`` …) and ``str()``
    a complete one-line explanation with the fix.
    """

    def __init__(self, rule: str, message: str):
        super().__init__(message)
        self.rule = rule
        self.message = message

    def problem(self) -> Problem:
        """The error in the shape of a validation problem (no file, no line)."""
        return problem("", None, self.rule, self.message)


def problems_of(error: BaseException) -> list[Problem] | None:
    """What went wrong, as the problems ``agentctl`` and the MCP tools report: every
    problem of a failed validation, a control plane refusal, any other plankit error
    (with its file and line when it has them), or an I/O error; ``None`` for anything
    else (a bug, to be raised)."""
    if isinstance(error, PlanDirError):
        return list(error.problems)
    if isinstance(error, ControlError):
        return [error.problem()]
    if isinstance(error, PlankitError):
        return diagnostics_of(error)
    if isinstance(error, OSError):
        return [problem(str(error.filename or ""), None, "io-error", error.strerror or str(error))]
    return None


@dataclass(frozen=True, slots=True)
class Session:
    """A planning session of one agent."""

    session_id: str
    """The internal id (UUIDv7); also the name of the current thread's plan directory."""
    agent_session_id: str | None
    """The agent's own session id, when the host gave one."""
    topic: str | None
    """What the session is about, set by the agent with ``set-topic``."""
    created_at: str
    """When it started (UTC, ISO 8601)."""
    ended_at: str | None = None
    """When ``agentctl session end`` ended it, or ``None`` while it is open."""
    host: str | None = None
    """The host it was started on, where its plan directories are."""

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "session_id": self.session_id,
            "agent_session_id": self.agent_session_id,
            "topic": self.topic,
            "created_at": self.created_at,
            "ended_at": self.ended_at,
            "host": self.host,
        }


@dataclass(frozen=True, slots=True)
class Thread:
    """A thread plan directory allocated to a session."""

    thread_id: str
    """Its id, ``thread_<n>``; never reused."""
    session_id: str
    """The session it belongs to."""
    current: bool
    """True for the session's current (default) thread, False for an additional one."""
    plan_dir: str
    """Absolute path of its plan directory."""
    created_at: str
    """When it was allocated (UTC, ISO 8601)."""
    removed_at: str | None = None
    """When ``remove-thread`` removed it, or ``None``."""

    def to_dict(self) -> dict[str, object]:
        """JSON form, ``{"thread_id", "plan_dir", …}``."""
        return {
            "thread_id": self.thread_id,
            "plan_dir": self.plan_dir,
            "kind": "current" if self.current else "additional",
            "created_at": self.created_at,
            "removed_at": self.removed_at,
        }


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """A line of ``agentctl session list``."""

    session: Session
    """The session."""
    threads: int
    """Threads allocated and not removed (the current one included)."""
    commits: int
    """Commits recorded."""
    last_commit_at: str | None
    """When the last commit was recorded."""

    def to_dict(self) -> dict[str, object]:
        """JSON form: the session's fields plus the counts."""
        return {
            **self.session.to_dict(),
            "threads": self.threads,
            "commits": self.commits,
            "last_commit_at": self.last_commit_at,
        }


@dataclass(frozen=True, slots=True)
class RuntimeContext:
    """What an agent needs to start planning: its directories and its environment."""

    session: Session
    """The session."""
    home: str
    """The state directory (``AGENTFLOW_HOME``)."""
    current: Thread
    """The current thread and its plan directory (``CURRENT_PLAN_DIR``)."""
    additional: tuple[Thread, ...]
    """Additional threads already allocated and not removed (``ADDITIONAL_PLAN_DIRS``)."""

    def environment(self) -> dict[str, str]:
        """The variables to export for ``agentctl`` in the agent's shell."""
        return {"AGENTFLOW_SESSION_ID": self.session.session_id, "AGENTFLOW_HOME": self.home}

    def to_dict(self) -> dict[str, object]:
        """JSON form (the text block is added by the caller)."""
        return {
            "session_id": self.session.session_id,
            "agent_session_id": self.session.agent_session_id,
            "topic": self.session.topic,
            "thread_id": self.current.thread_id,
            "plan_dir": self.current.plan_dir,
            "additional_plan_dirs": [
                {"thread_id": t.thread_id, "plan_dir": t.plan_dir} for t in self.additional
            ],
            "env": self.environment(),
        }


@dataclass(frozen=True, slots=True)
class CommittedThread:
    """One thread's plan as committed."""

    thread_id: str
    """The thread."""
    current: bool
    """Whether it is the session's current thread."""
    plan: Plan
    """The plan, as validated at commit time."""

    def to_dict(self) -> dict[str, object]:
        """JSON form: thread id, kind, plan directory and the plan with its waves."""
        return {
            "thread_id": self.thread_id,
            "kind": "current" if self.current else "additional",
            "plan_dir": self.plan.path,
            "plan": self.plan.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class CommitRecord:
    """A recorded commit: every committed plan of a session at one moment."""

    session_id: str
    """The session."""
    number: int
    """1 for the session's first commit, then 2, 3 …"""
    committed_at: str
    """When (UTC, ISO 8601)."""
    threads: tuple[CommittedThread, ...]
    """The plans committed, the current thread first."""
    skipped: tuple[str, ...] = ()
    """Threads left out because their directory was empty (only ever the current one)."""

    @property
    def task_count(self) -> int:
        """Tasks across all committed threads."""
        return sum(len(thread.plan.tasks) for thread in self.threads)

    def to_dict(self) -> dict[str, object]:
        """JSON form; also the snapshot stored in the database."""
        return {
            "session_id": self.session_id,
            "commit": self.number,
            "committed_at": self.committed_at,
            "thread_count": len(self.threads),
            "task_count": self.task_count,
            "threads": [thread.to_dict() for thread in self.threads],
            "skipped": list(self.skipped),
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> CommitRecord:
        """Rebuild a commit from its stored snapshot."""
        threads = []
        for item in map(_dict, _list(data["threads"])):
            plan_data = _dict(item["plan"])
            tasks = tuple(
                Task(
                    id=str(task["id"]),
                    sort_index=int(str(task["sort_index"])),
                    file=str(task["file"]),
                    depends_on=tuple(str(dep) for dep in _list(task["depends_on"])),
                    agent=None if task["agent"] is None else str(task["agent"]),
                    subtasks=tuple(str(sub) for sub in _list(task["subtasks"])),
                    body=str(task["body"]),
                )
                for task in map(_dict, _list(plan_data["tasks"]))
            )
            plan = Plan(
                str(plan_data["path"]), str(plan_data["title"]), str(plan_data["body"]), tasks
            )
            threads.append(CommittedThread(str(item["thread_id"]), item["kind"] == "current", plan))
        return cls(
            session_id=str(data["session_id"]),
            number=int(str(data["commit"])),
            committed_at=str(data["committed_at"]),
            threads=tuple(threads),
            skipped=tuple(str(s) for s in _list(data.get("skipped", []))),
        )


TASK_STATES = ("waiting", "ready", "claimed", "done", "failed", "blocked")
"""The states of a tracked task: ``waiting`` for a dependency, ``ready`` to be claimed,
``claimed`` by an agent (until done, failed, released or its lease ends), ``done``,
``failed``, or ``blocked`` because a dependency failed."""


@dataclass(frozen=True, slots=True)
class TaskStatus:
    """A task of a session's latest commit and where its work stands."""

    thread_id: str
    """The thread the task belongs to."""
    task_id: str
    """The task's id in its plan."""
    state: str
    """One of :data:`TASK_STATES`."""
    holder: str | None
    """Who claimed it (``--agent``), while claimed, or who last did."""
    host: str | None
    """The host the claim came from."""
    claim: str | None
    """The claim's id: the holder passes it back with done, fail, heartbeat, release."""
    claims: int
    """How many times it was claimed."""
    lease_expires_at: str | None
    """When the claim's lease ends (UTC, ISO 8601), while claimed."""
    lease_expired: bool
    """True for a claim whose lease has ended: the task is ready again."""
    reason: str | None
    """Why it failed."""
    changed_at: str
    """When its state last changed."""
    spec: dict[str, Any]
    """The task as committed: ``title`` of its plan, ``plan_dir``, ``file``, ``agent``,
    ``depends_on``, ``subtasks``, ``body``, ``commit``."""

    @property
    def ref(self) -> str:
        """``<thread_id>/<task_id>``, how commands name the task."""
        return f"{self.thread_id}/{self.task_id}"

    @property
    def claimable(self) -> bool:
        """Ready, or claimed with an expired lease."""
        return self.state == "ready" or (self.state == "claimed" and self.lease_expired)

    def to_dict(self) -> dict[str, object]:
        """JSON form: ``ref``, ids, state, holder, lease, and the task as committed."""
        return {
            "ref": self.ref,
            "thread_id": self.thread_id,
            "task_id": self.task_id,
            "state": self.state,
            "holder": self.holder,
            "host": self.host,
            "claim": self.claim,
            "claims": self.claims,
            "lease_expires_at": self.lease_expires_at,
            "lease_expired": self.lease_expired,
            "reason": self.reason,
            "changed_at": self.changed_at,
            **self.spec,
        }


@dataclass(frozen=True, slots=True)
class Claim:
    """What ``agentctl task claim`` answers."""

    task: TaskStatus | None
    """The task claimed, or ``None`` when no task is claimable now."""
    remaining: int
    """Tasks with work left (waiting, ready or claimed), the one just claimed included;
    0 means the work is over (every task done, failed or blocked)."""
    reserved: tuple[tuple[str, str], ...] = ()
    """When nothing was claimed for an agent: the ready tasks left alone because they
    are assigned to another agent, as ``(ref, agent)``."""

    def to_dict(self) -> dict[str, object]:
        """``{"task": {...} | null, "remaining": N}``, and ``"reserved": [{"ref",
        "agent"}]`` when ready tasks were left to other agents."""
        out: dict[str, object] = {
            "task": None if self.task is None else self.task.to_dict(),
            "remaining": self.remaining,
        }
        if self.reserved:
            out["reserved"] = [{"ref": ref, "agent": agent} for ref, agent in self.reserved]
        return out


def _list(value: object) -> list[Any]:
    assert isinstance(value, list)
    return value


def _dict(value: object) -> dict[str, object]:
    assert isinstance(value, dict)
    return value
