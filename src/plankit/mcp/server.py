"""Assembling plankit's MCP server (official ``mcp`` SDK, ``MCPServer``, stdio).

The server is built from parts: :func:`build_server` creates the ``MCPServer``, adds
the checklist tools (:func:`plankit.checklist.mcp_tools.register_checklist_tools`)
and, when the module can be imported, the agentflow tools
(``plankit.agentflow.mcp_tools.register_agentflow_tools``).  A further system adds
itself the same way: a ``register_…_tools(server)`` function called here.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from plankit.checklist.manager import PlanManager

logger = logging.getLogger("plankit.mcp")

SERVER_NAME = "plankit"

INSTRUCTIONS = (
    "plankit keeps a PLAN.md checklist of phases and numbered steps. Call get_plan at the "
    "start; if there is no plan, init_plan, then create_plan once the goal is clear. Work "
    "one step at a time: get_next_task, start_task, do it, complete_task. Use block_task "
    "when stuck and review_task when a person must check. Errors say what to do."
)
"""Short server instructions sent to clients (``plankit checklist prompt`` has more)."""


def manager_factory(
    store: str, cell: str = "AGENT_BASE!C2", credentials: str | os.PathLike[str] | None = None
) -> Callable[[], PlanManager]:
    """A factory giving one :class:`PlanManager` for ``store``, made on first use (so a
    bad ``--store`` is reported by the first tool call, not by a crash at start-up)."""
    made: list[PlanManager] = []

    def factory() -> PlanManager:
        if not made:
            from plankit.checklist.manager import PlanManager
            from plankit.checklist.stores import open_store

            opened = open_store(store, cell=cell, credentials=credentials)
            made.append(PlanManager(opened, cell, front_end="mcp"))
        return made[0]

    return factory


def register_agentflow(server: MCPServer[Any]) -> bool:
    """Add the agentflow tools if ``plankit.agentflow.mcp_tools`` exists; True if added."""
    try:
        from plankit.agentflow.mcp_tools import (  # type: ignore[import-not-found, unused-ignore]
            register_agentflow_tools,
        )
    except ImportError as exc:
        missing = getattr(exc, "name", None)
        if missing in ("plankit.agentflow", "plankit.agentflow.mcp_tools"):
            return False
        logger.warning("agentflow tools not loaded: %s", exc)
        return False
    register_agentflow_tools(server)
    return True


def build_server(factory: Callable[[], PlanManager], *, agentflow: bool = True) -> MCPServer[Any]:
    """The MCP server with the checklist tools (and agentflow's, unless ``agentflow``
    is False)."""
    from mcp.server.mcpserver import MCPServer

    from plankit import __version__
    from plankit.checklist.mcp_tools import register_checklist_tools

    server: MCPServer[Any] = MCPServer(
        SERVER_NAME,
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
    )
    register_checklist_tools(server, factory)
    if agentflow:
        register_agentflow(server)
    return server


def run_stdio(server: MCPServer[Any]) -> None:
    """Serve over standard input and output until the client disconnects, answering
    every malformed line (:mod:`plankit.mcp.stdio`)."""
    from plankit.mcp.stdio import run_stdio as serve

    serve(server)
