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
result with ``isError`` set and ``{"errors": [{"code", "message", "line", "file"}]}``
as its content (the diagnostic shape of every plankit ``--json`` output; ``code`` is
the rule's name): a failed commit lists every problem of every directory.  Arguments
are checked before the tool runs: an unknown argument, a missing one or one of the
wrong type is such an error too (``argument-unknown``, ``argument-missing``,
``argument-invalid``), never a validation dump.

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

    from plankit.agentflow.model import Problem


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


def argument_problems(schema: dict[str, Any], arguments: dict[str, Any]) -> list[Problem]:
    """What is wrong with a tool call's arguments, against the tool's input schema."""
    from plankit.agentflow.model import problem

    properties: dict[str, Any] = schema.get("properties", {})
    problems = []
    names = ", ".join(properties) or "none"
    for name in arguments:
        if name not in properties:
            problems.append(
                problem(
                    "",
                    None,
                    "argument-unknown",
                    f"unknown argument {name!r}; the arguments are: {names}",
                )
            )
    for name in schema.get("required", []):
        if name not in arguments:
            problems.append(problem("", None, "argument-missing", f"argument {name!r} is missing"))
    for name, value in arguments.items():
        if name not in properties:
            continue
        options = properties[name].get("anyOf", [properties[name]])
        kinds = [option.get("type") for option in options]
        if not any(_fits(kind, value) for kind in kinds):
            wanted = " or ".join("text" if k == "string" else str(k) for k in kinds)
            problems.append(
                problem(
                    "", None, "argument-invalid",
                    f"argument {name!r} must be {wanted}, not {type(value).__name__}",
                )
            )  # fmt: skip
    return problems


def _fits(kind: object, value: object) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    return True


def _strict(server: MCPServer[Any], name: str) -> None:
    """Make the registered tool ``name`` check its arguments first (see
    :func:`argument_problems`) and refuse unknown ones in its schema."""
    from mcp.server.mcpserver.tools.base import Tool

    class StrictTool(Tool):
        async def run(
            self, arguments: dict[str, Any], context: Any, convert_result: bool = False
        ) -> Any:
            problems = argument_problems(self.parameters, arguments)
            if problems:
                result = _result({"errors": [p.to_json() for p in problems]}, error=True)
                return self.fn_metadata.convert_result(result) if convert_result else result
            return await super().run(arguments, context, convert_result)

    manager = getattr(server, "_tool_manager", None)
    tool = manager.get_tool(name) if manager is not None else None
    if tool is None:
        return
    strict = StrictTool.model_construct(
        **{field: getattr(tool, field) for field in type(tool).model_fields}
    )
    strict.parameters = {**tool.parameters, "additionalProperties": False}
    manager._tools[name] = strict  # type: ignore[union-attr]


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

    def plan_show() -> CallToolResult:
        """The latest commit: threads, tasks with their state (waiting, ready, claimed,
        done, failed, blocked) and holder, the ready tasks, and counts by state."""
        from plankit.agentflow.render import progress_dict

        def action() -> dict[str, Any]:
            record, statuses = plane.progress(session)
            return progress_dict(record, statuses)

        return _run(action)

    def task_claim(agent: str | None = None, lease_seconds: int = 600) -> CallToolResult:
        """Claim one ready task of the latest commit: {"task": {...} | null, "remaining"}.

        Work on task.file, then call task_done (or task_fail) with its ref and claim;
        call task_heartbeat before lease_seconds pass on long work.
        """
        return _run(lambda: plane.claim(session, agent=agent, lease=lease_seconds).to_dict())

    def task_done(ref: str, claim: str | None = None) -> CallToolResult:
        """Mark a claimed task done (ref "<thread_id>/<task_id>", claim from task_claim)."""
        return _run(lambda: plane.done(ref, session, claim=claim).to_dict())

    def task_fail(ref: str, reason: str, claim: str | None = None) -> CallToolResult:
        """Mark a claimed task failed, saying why; the tasks that depend on it are blocked."""
        return _run(lambda: plane.fail(ref, reason, session, claim=claim).to_dict())

    def task_heartbeat(
        ref: str, claim: str | None = None, lease_seconds: int = 600
    ) -> CallToolResult:
        """Extend the lease of a claimed task to lease_seconds from now."""
        return _run(
            lambda: plane.heartbeat(ref, session, claim=claim, lease=lease_seconds).to_dict()
        )

    def task_release(ref: str, claim: str | None = None) -> CallToolResult:
        """Give a claimed task back (ready again), or reopen a failed one."""
        return _run(lambda: plane.release(ref, session, claim=claim).to_dict())

    def read_only() -> ToolAnnotations:
        from mcp_types import ToolAnnotations

        return ToolAnnotations(read_only_hint=True, open_world_hint=False)

    # plan_dir only (re)creates the directory when it is missing.
    tools: list[tuple[Callable[..., CallToolResult], ToolAnnotations]] = [
        (plan_dir, annotations(True)),
        (plan_request_thread_dir, annotations(False)),
        (plan_remove_thread, annotations(True, destructive=True)),
        (plan_clear_current, annotations(True, destructive=True)),
        (plan_commit, annotations(False)),
        (set_topic, annotations(True)),
        (plan_show, read_only()),
        (task_claim, annotations(False)),
        (task_done, annotations(False)),
        (task_fail, annotations(False)),
        (task_heartbeat, annotations(True)),
        (task_release, annotations(False)),
    ]
    for tool, hints in tools:
        server.add_tool(tool, annotations=hints)
        _strict(server, tool.__name__)


def build_server(
    home: str | os.PathLike[str] | None = None, database: str | None = None
) -> MCPServer[Any]:
    """An MCP server named ``agentflow`` with exactly the agentflow tools."""
    server: MCPServer[Any] = MCPServer(
        name="agentflow",
        instructions=(
            "Plan directories for this session: write plan.md and tasks/NN-slug.md in the "
            "directory from plan_dir (and in any from plan_request_thread_dir), then call "
            "plan_commit; fix every reported error and commit again."
        ),
    )
    register_agentflow_tools(server, ControlPlane(home, database=database))
    return server


def serve(home: str | os.PathLike[str] | None = None, database: str | None = None) -> None:
    """Serve the agentflow tools over stdio until the client disconnects, answering
    every malformed line (:mod:`plankit.mcp.stdio`)."""
    from plankit.mcp.stdio import run_stdio

    run_stdio(build_server(home, database))
