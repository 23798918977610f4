"""The ACP client side of a run: what an unattended agent is offered and allowed.

An agent of a run works in one directory (a task's worktree, or the planning
worktree): ``fs/*`` reads and writes only inside it (:class:`plankit.acp.host.Files`),
``terminal/*`` starts commands only with a working directory inside it, and permission
requests are answered at once by the unattended policy (:func:`decide`), so a run never
waits for a person:

* a tool call whose locations and diffs all lie inside the directory is allowed once;
* one that names any path outside it is rejected once;
* when the agent offers no option of the kind needed, the request is cancelled.

Everything the agent reports is kept (:class:`Record`): its plan updates, every tool
call with kind, title, status and the exit status of the terminals it ran, its
messages, and each permission decided.  The session updates are also appended as NDJSON
to a transcript file, read live by ``plankit board`` and ``agentctl plan show``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from plankit.acp.client import pick
from plankit.acp.host import FileMethods, Files, TerminalMethods, Terminals

MAX_PLAN_UPDATES = 200
"""Plan updates kept in a task's record (the transcript keeps them all)."""


def _inside(root: Path, path: str) -> bool:
    base = os.path.realpath(root)
    target = os.path.realpath(path if os.path.isabs(path) else os.path.join(base, path))
    return target == base or target.startswith(base.rstrip(os.sep) + os.sep)


def paths_of(tool_call: dict[str, Any]) -> list[str]:
    """Every path a tool call names: its locations and its diffs."""
    found = [str(loc.get("path")) for loc in tool_call.get("locations") or () if loc.get("path")]
    for item in tool_call.get("content") or ():
        if isinstance(item, dict) and item.get("type") == "diff" and item.get("path"):
            found.append(str(item["path"]))
    return found


def decide(root: Path, tool_call: dict[str, Any], options: list[dict[str, Any]]) -> str | None:
    """The unattended policy: the option chosen, or None (cancel the request)."""
    outside = [p for p in paths_of(tool_call) if not _inside(root, p)]
    return pick(options, allow=not outside)


class ConfinedTerminals(Terminals):
    """Terminals whose commands start inside ``root`` only, with the run's environment
    added; each exit status is remembered by terminal id."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        super().__init__(root)
        self.env = env
        self.exits: dict[str, dict[str, Any]] = {}

    async def create(
        self,
        command: str,
        args: list[str] | None,
        env: list[Any] | None,
        cwd: str | None,
        limit: int | None,
    ) -> str:
        from acp.schema import EnvVariable

        # the cwd is confined to the worktree by Terminals.create itself
        extra = [EnvVariable(name=k, value=v) for k, v in self.env.items()]
        return await super().create(command, args, [*extra, *(env or ())], cwd, limit)

    async def wait(self, terminal_id: str) -> dict[str, Any]:
        status = await super().wait(terminal_id)
        self.exits[terminal_id] = status
        return status

    async def output(self, terminal_id: str) -> dict[str, Any]:
        out = await super().output(terminal_id)
        if "exitStatus" in out:
            self.exits[terminal_id] = out["exitStatus"]
        return out


@dataclass(slots=True)
class Record:
    """What an agent reported while it worked."""

    tool_calls: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Tool call id → ``{kind, title, status, terminals}``, in the order announced."""
    plans: list[list[dict[str, Any]]] = field(default_factory=list)
    """Each plan the agent sent (its entries), oldest first, at most the last 200."""
    messages: list[str] = field(default_factory=list)
    """The agent's messages (consecutive chunks joined)."""
    permissions: list[dict[str, str]] = field(default_factory=list)
    """Each permission request: ``{title, choice}``."""
    out: IO[str] | None = None
    """The transcript file, if any."""
    _in_message: bool = False

    def update(self, update: dict[str, Any]) -> None:
        """Keep one session update."""
        if self.out is not None:
            self.out.write(json.dumps({"update": update}) + "\n")
            self.out.flush()
        kind = update.get("sessionUpdate")
        if kind == "agent_message_chunk":
            text = str((update.get("content") or {}).get("text") or "")
            if self._in_message and self.messages:
                self.messages[-1] += text
            else:
                self.messages.append(text)
            self._in_message = True
            return
        self._in_message = False
        if kind == "plan":
            self.plans.append(list(update.get("entries") or []))
            del self.plans[:-MAX_PLAN_UPDATES]
        elif kind in ("tool_call", "tool_call_update"):
            ident = str(update.get("toolCallId"))
            call = self.tool_calls.setdefault(
                ident, {"kind": "other", "title": "", "status": "pending", "terminals": []}
            )
            for key in ("kind", "title", "status"):
                if update.get(key):
                    call[key] = update[key]
            for item in update.get("content") or ():
                if isinstance(item, dict) and item.get("type") == "terminal":
                    call["terminals"].append(item.get("terminalId"))

    def last_message(self) -> str:
        """The agent's last message (empty when it sent none)."""
        return next((m.strip() for m in reversed(self.messages) if m.strip()), "")

    def calls(self, exits: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
        """Every tool call: id, kind, title, status and exit status (the exit code of its
        last terminal, when it ran one; else its final status)."""
        found = []
        for ident, call in self.tool_calls.items():
            exit_status: object = call["status"]
            for terminal in reversed(call["terminals"]):
                status = exits.get(str(terminal))
                if status is not None:
                    exit_status = (
                        status.get("exitCode")
                        if status.get("exitCode") is not None
                        else status.get("signal")
                    )
                    break
            found.append(
                {
                    "id": ident,
                    "kind": call["kind"],
                    "title": call["title"],
                    "status": call["status"],
                    "exit_status": exit_status,
                }
            )
        return found


@dataclass(slots=True)
class RunClient(FileMethods, TerminalMethods):
    """The ``acp.Client`` of a run's agent (see the module documentation)."""

    root: Path
    """The directory the agent works in."""
    env: dict[str, str]
    """Added to the environment of the terminals it starts."""
    record: Record
    """What it reported."""
    files: Files = field(init=False)
    terminals: ConfinedTerminals = field(init=False)

    def __post_init__(self) -> None:
        self.files = Files(self.root)
        self.terminals = ConfinedTerminals(self.root, self.env)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.record.update(update.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> Any:
        from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

        call = tool_call.model_dump(mode="json", by_alias=True, exclude_none=True)
        choices = [o.model_dump(mode="json", by_alias=True, exclude_none=True) for o in options]
        choice = decide(self.root, call, choices)
        title = str(call.get("title") or call.get("toolCallId") or "")
        self.record.permissions.append({"title": title, "choice": choice or "cancelled"})
        if choice is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=choice)
        )
