"""The agentflow tools for MCP servers, and ``agentctl mcp`` serving them over stdio.

:func:`register_agentflow_tools` adds six tools to an ``MCPServer``; each is one
:class:`~plankit.agentflow.control.ControlPlane` call, like the ``agentctl`` command of
the same name:

==========================  ===========================================================
``plan_dir``                the current thread's ``{"thread_id", "plan_dir"}``
``plan_request_thread_dir`` allocate an additional thread: ``{"thread_id", "plan_dir"}``
``plan_remove_thread``      remove an additional thread (``thread_id``)
``plan_clear_current``      delete the current thread's plan files
``plan_commit``             validate and commit every thread directory
``set_topic``               set the session topic (``topic``, at most 100 characters)
==========================  ===========================================================

Results are structured content (and the same JSON as text).  Every failure is a
result with ``isError`` set and ``{"errors": [{"code", "message", "line", "file"}]}``
as its content (the diagnostic shape of every plankit ``--json`` output; ``code`` is
the rule's name): a failed commit lists every problem of every directory.

The session is the one named by ``AGENTFLOW_SESSION_ID`` in the server's environment
(or the ``session`` given to :func:`register_agentflow_tools`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent

from plankit.agentflow.control import ControlPlane
from plankit.agentflow.records import problems_of

if TYPE_CHECKING:
    from mcp_types import ToolAnnotations


def _result(data: dict[str, Any], *, error: bool = False) -> CallToolResult:
    text = json.dumps(data, ensure_ascii=False)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=data, is_error=error
    )


def _run(action: Callable[[], dict[str, Any]]) -> CallToolResult:
    try:
        return _result(action())
    except Exception as exc:
        problems = problems_of(exc)
        if problems is None:
            raise
        return _result({"errors": [problem.to_json() for problem in problems]}, error=True)


def register_agentflow_tools(
    server: MCPServer[Any], control: ControlPlane | None = None, session: str | None = None
) -> None:
    """Add the agentflow tools to ``server``.

    ``control`` defaults to a :class:`ControlPlane` on ``$AGENTFLOW_HOME``; ``session``
    defaults to ``$AGENTFLOW_SESSION_ID``, read at each call.
    """
    plane = control or ControlPlane()

    def annotations(idempotent: bool, destructive: bool = False) -> ToolAnnotations:
        from mcp_types import ToolAnnotations

        return ToolAnnotations(
            read_only_hint=False,
            destructive_hint=destructive,
            idempotent_hint=idempotent,
            open_world_hint=False,
        )

    def plan_dir() -> CallToolResult:
        """The current thread's plan directory: {"thread_id", "plan_dir"}.

        Write plan.md (front matter `title` + narrative) and tasks/NN-slug.md there.
        """

        def action() -> dict[str, Any]:
            thread = plane.plan_dir(session)
            return {"thread_id": thread.thread_id, "plan_dir": thread.plan_dir}

        return _run(action)

    def plan_request_thread_dir() -> CallToolResult:
        """Allocate a plan directory for an additional thread: {"thread_id", "plan_dir"}.

        Use it only for work that should be its own thread; treat the path as opaque.
        """

        def action() -> dict[str, Any]:
            thread = plane.request_thread_dir(session)
            return {"thread_id": thread.thread_id, "plan_dir": thread.plan_dir}

        return _run(action)

    def plan_remove_thread(thread_id: str) -> CallToolResult:
        """Remove an additional thread: its directory is deleted and left out of commits.

        The current thread cannot be removed (use plan_clear_current).
        """

        def action() -> dict[str, Any]:
            thread = plane.remove_thread(thread_id, session)
            return {"thread_id": thread.thread_id, "plan_dir": thread.plan_dir, "removed": True}

        return _run(action)

    def plan_clear_current() -> CallToolResult:
        """Delete the plan files of the current thread; the directory stays allocated."""

        def action() -> dict[str, Any]:
            thread, removed = plane.clear_current(session)
            return {
                "thread_id": thread.thread_id,
                "plan_dir": thread.plan_dir,
                "files_removed": removed,
            }

        return _run(action)

    def plan_commit() -> CallToolResult:
        """Validate every allocated thread plan directory and submit them in one commit.

        On failure, every problem of every directory is returned at once under "errors"
        ({"code", "message", "line", "file"}); fix them all and commit again.
        """
        return _run(lambda: plane.commit(session).to_dict())

    def set_topic(topic: str) -> CallToolResult:
        """Set what this session is about: one line, at most 100 characters."""

        def action() -> dict[str, Any]:
            found = plane.set_topic(topic, session)
            return {"session_id": found.session_id, "topic": found.topic}

        return _run(action)

    # plan_dir only (re)creates the directory when it is missing.
    server.add_tool(plan_dir, annotations=annotations(True))
    server.add_tool(plan_request_thread_dir, annotations=annotations(False))
    server.add_tool(plan_remove_thread, annotations=annotations(True, destructive=True))
    server.add_tool(plan_clear_current, annotations=annotations(True, destructive=True))
    server.add_tool(plan_commit, annotations=annotations(False))
    server.add_tool(set_topic, annotations=annotations(True))


def build_server(home: str | os.PathLike[str] | None = None) -> MCPServer[Any]:
    """An MCP server named ``agentflow`` with exactly the agentflow tools."""
    server: MCPServer[Any] = MCPServer(
        name="agentflow",
        instructions=(
            "Plan directories for this session: write plan.md and tasks/NN-slug.md in the "
            "directory from plan_dir (and in any from plan_request_thread_dir), then call "
            "plan_commit; fix every reported error and commit again."
        ),
    )
    register_agentflow_tools(server, ControlPlane(home))
    return server


def serve(home: str | os.PathLike[str] | None = None) -> None:
    """Serve the agentflow tools over stdio until the client disconnects, answering
    every malformed line (:mod:`plankit.mcp.stdio`)."""
    from plankit.mcp.stdio import run_stdio

    run_stdio(build_server(home))
