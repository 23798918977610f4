"""The agentflow tools for MCP servers, and ``agentctl mcp`` serving them over stdio.

:func:`register_agentflow_tools` adds twelve tools to an ``MCPServer``; each is one
:class:`~plankit.agentflow.control.ControlPlane` call, like the ``agentctl`` command of
the same name:

==========================  ===========================================================
``plan_dir``                the current thread's ``{"thread_id", "plan_dir"}``
``plan_request_thread_dir`` allocate an additional thread: ``{"thread_id", "plan_dir"}``
``plan_remove_thread``      remove an additional thread (``thread_id``)
``plan_clear_current``      delete the current thread's plan files
``plan_commit``             validate and commit every thread directory
``set_topic``               set the session topic (``topic``, at most 100 characters)
``plan_show``               the latest commit with each task's state and the ready set
``task_claim``              claim a ready task: ``{"task": {...} | null, "remaining"}``
``task_done``               a claimed task is done (``ref``, optional ``claim``)
``task_fail``               a claimed task failed (``ref``, ``reason``, optional ``claim``)
``task_heartbeat``          extend a claim's lease (``ref``, optional ``claim``, ``lease_seconds``)
``task_release``            give a claimed task back, or reopen a failed one
==========================  ===========================================================

Results are structured content (and the same JSON as text).  Every failure is a
result in the servers' one error shape (:mod:`plankit.mcp.tools`): ``isError``, one
line of text, and ``{"errors": [{"code", "message", "line", "file"}]}`` as structured
content (the diagnostic shape of every plankit ``--json`` output; ``code`` is the
rule's name): a failed commit lists every problem of every directory.  Messages name
the tools to call, not the ``agentctl`` commands a person would run (:func:`for_agents`).
Arguments are checked before the tool runs (``argument-unknown``, ``argument-missing``,
``argument-invalid``), never a validation dump.

The session is the one named by ``AGENTFLOW_SESSION_ID`` in the server's environment
(or the ``session`` given to :func:`register_agentflow_tools`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection
from dataclasses import replace
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from plankit.agentflow.control import ControlPlane
from plankit.agentflow.records import problems_of
from plankit.errors import Diagnostic
from plankit.mcp.catalog import AGENTFLOW, AGENTFLOW_INSTRUCTIONS
from plankit.mcp.tools import PlankitServer, ToolFailure, add_tool, json_result

TOOL_NAMES = tuple(tool.name for tool in AGENTFLOW)
"""Every agentflow tool, in the catalogue's order (core first)."""

_COMMANDS = {
    "plan dir": "plan_dir",
    "plan commit": "plan_commit",
    "plan show": "plan_show",
    "plan request-thread-dir": "plan_request_thread_dir",
    "plan remove-thread": "plan_remove_thread",
    "plan clear-current": "plan_clear_current",
    "set-topic": "set_topic",
    "task claim": "task_claim",
    "task done": "task_done",
    "task fail": "task_fail",
    "task heartbeat": "task_heartbeat",
    "task release": "task_release",
}
_COMMAND = re.compile(r"(\brun )?`agentctl (" + "|".join(map(re.escape, _COMMANDS)) + r")\b[^`]*`")


def _tool_named(found: re.Match[str]) -> str:
    tool = f"`{_COMMANDS[found.group(2)]}`"
    return f"call {tool}" if found.group(1) else tool


def for_agents(problem: Diagnostic) -> Diagnostic:
    """A problem as the diagnostic an agent gets: an ``agentctl`` command that has a
    tool is named as that tool (``call `task_release```)."""
    message = _COMMAND.sub(_tool_named, problem.message)
    return replace(problem, message=message)


def _run(action: Callable[[], dict[str, Any]]) -> CallToolResult:
    try:
        return json_result(action())
    except Exception as exc:
        problems = problems_of(exc)
        if problems is None:
            raise
        raise ToolFailure([for_agents(p) for p in problems]) from None


Ref = Annotated[str, Field(description='The task\'s ref from task_claim, "<thread_id>/<task_id>"')]
Claim = Annotated[
    str | None,
    Field(description="The claim token task_claim gave; needed when the task is held by a claim"),
]
Lease = Annotated[
    int, Field(description="Seconds the claim lasts before another agent may take it", ge=1)
]


def register_agentflow_tools(
    server: MCPServer[Any],
    control: ControlPlane | None = None,
    session: str | None = None,
    names: Collection[str] | None = None,
) -> list[str]:
    """Add the agentflow tools to ``server`` (only those in ``names`` when given);
    returns the names added.

    ``control`` defaults to a :class:`ControlPlane` on ``$AGENTFLOW_HOME``; ``session``
    defaults to ``$AGENTFLOW_SESSION_ID``, read at each call.
    """
    plane = control or ControlPlane()

    def annotations(idempotent: bool, destructive: bool = False) -> ToolAnnotations:
        return ToolAnnotations(
            read_only_hint=False,
            destructive_hint=destructive,
            idempotent_hint=idempotent,
            open_world_hint=False,
        )

    def plan_dir() -> CallToolResult:
        def action() -> dict[str, Any]:
            thread = plane.plan_dir(session)
            return {"thread_id": thread.thread_id, "plan_dir": thread.plan_dir}

        return _run(action)

    def plan_request_thread_dir() -> CallToolResult:
        def action() -> dict[str, Any]:
            thread = plane.request_thread_dir(session)
            return {"thread_id": thread.thread_id, "plan_dir": thread.plan_dir}

        return _run(action)

    def plan_remove_thread(
        thread_id: Annotated[str, Field(description="The thread_id plan_request_thread_dir gave")],
    ) -> CallToolResult:
        def action() -> dict[str, Any]:
            thread = plane.remove_thread(thread_id, session)
            return {"thread_id": thread.thread_id, "plan_dir": thread.plan_dir, "removed": True}

        return _run(action)

    def plan_clear_current() -> CallToolResult:
        def action() -> dict[str, Any]:
            thread, removed = plane.clear_current(session)
            return {
                "thread_id": thread.thread_id,
                "plan_dir": thread.plan_dir,
                "files_removed": removed,
            }

        return _run(action)

    def plan_commit() -> CallToolResult:
        return _run(lambda: plane.commit(session).to_dict())

    def set_topic(
        topic: Annotated[str, Field(description="One line, at most 100 characters")],
    ) -> CallToolResult:
        def action() -> dict[str, Any]:
            found = plane.set_topic(topic, session)
            return {"session_id": found.session_id, "topic": found.topic}

        return _run(action)

    def plan_show() -> CallToolResult:
        from plankit.agentflow.render import progress_dict

        def action() -> dict[str, Any]:
            record, statuses = plane.progress(session)
            return progress_dict(record, statuses)

        return _run(action)

    def task_claim(
        agent: Annotated[
            str | None, Field(description="Who claims, shown as the task's holder")
        ] = None,
        lease_seconds: Lease = 600,
    ) -> CallToolResult:
        return _run(lambda: plane.claim(session, agent=agent, lease=lease_seconds).to_dict())

    def task_done(ref: Ref, claim: Claim = None) -> CallToolResult:
        return _run(lambda: plane.done(ref, session, claim=claim).to_dict())

    def task_fail(
        ref: Ref,
        reason: Annotated[str, Field(description="Why it failed, one line")],
        claim: Claim = None,
    ) -> CallToolResult:
        return _run(lambda: plane.fail(ref, reason, session, claim=claim).to_dict())

    def task_heartbeat(ref: Ref, claim: Claim = None, lease_seconds: Lease = 600) -> CallToolResult:
        return _run(
            lambda: plane.heartbeat(ref, session, claim=claim, lease=lease_seconds).to_dict()
        )

    def task_release(ref: Ref, claim: Claim = None) -> CallToolResult:
        return _run(lambda: plane.release(ref, session, claim=claim).to_dict())

    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    # plan_dir only (re)creates the directory when it is missing.
    tools: list[tuple[Callable[..., CallToolResult], ToolAnnotations]] = [
        (plan_dir, annotations(True)),
        (plan_commit, annotations(False)),
        (plan_show, read_only),
        (task_claim, annotations(False)),
        (task_done, annotations(False)),
        (task_fail, annotations(False)),
        (task_heartbeat, annotations(True)),
        (set_topic, annotations(True)),
        (plan_request_thread_dir, annotations(False)),
        (plan_remove_thread, annotations(True, destructive=True)),
        (plan_clear_current, annotations(True, destructive=True)),
        (task_release, annotations(False)),
    ]
    assert [fn.__name__ for fn, _ in tools] == list(TOOL_NAMES)
    return [
        add_tool(server, fn, hints) for fn, hints in tools if names is None or fn.__name__ in names
    ]


def build_server(
    home: str | os.PathLike[str] | None = None, database: str | None = None
) -> MCPServer[Any]:
    """An MCP server named ``agentflow`` with exactly the agentflow tools."""
    server = PlankitServer("agentflow", instructions=AGENTFLOW_INSTRUCTIONS)
    register_agentflow_tools(server, ControlPlane(home, database=database))
    return server


def serve(home: str | os.PathLike[str] | None = None, database: str | None = None) -> None:
    """Serve the agentflow tools over stdio until the client disconnects, answering
    ``initialize`` before the server is built (``agentctl mcp`` goes through
    :func:`plankit.mcp.server.serve_agentflow`, which does not import this module first)."""
    from plankit.mcp.stdio import run_stdio

    run_stdio(lambda: build_server(home, database), "agentflow", AGENTFLOW_INSTRUCTIONS)
