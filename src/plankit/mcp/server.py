"""Assembling plankit's MCP server (official ``mcp`` SDK, ``MCPServer``, stdio).

The server is built from parts: :func:`build_server` creates the server
(:class:`plankit.mcp.tools.PlankitServer`), adds
the checklist tools (:func:`plankit.checklist.mcp_tools.register_checklist_tools`)
and, when the module can be imported, the agentflow tools
(``plankit.agentflow.mcp_tools.register_agentflow_tools``).  A further system adds
itself the same way: a ``register_…_tools(server, names)`` function called here, its
tools named in :mod:`plankit.mcp.catalog`.  ``plankit mcp`` serves the core set
unless ``--tools all`` is given; :func:`build_server` builds every tool unless told.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from plankit.mcp.catalog import Selection, instructions, selected

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from plankit.checklist.manager import PlanManager

logger = logging.getLogger("plankit.mcp")

SERVER_NAME = "plankit"


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


def register_agentflow(server: MCPServer[Any], names: Collection[str] | None = None) -> bool:
    """Add the agentflow tools (those in ``names`` when given) if
    ``plankit.agentflow.mcp_tools`` exists; True if added."""
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
    register_agentflow_tools(server, names=names)
    return True


def build_server(
    factory: Callable[[], PlanManager], *, agentflow: bool = True, tools: Selection = "all"
) -> MCPServer[Any]:
    """The MCP server with the checklist tools and agentflow's (unless ``agentflow``
    is False): the core set or ``all`` (:mod:`plankit.mcp.catalog`)."""
    from plankit.checklist.mcp_tools import register_checklist_tools
    from plankit.mcp.tools import PlankitServer

    server = PlankitServer(SERVER_NAME, instructions=instructions(tools, agentflow=agentflow))
    names = {tool.name for tool in selected(tools, agentflow=agentflow)}
    register_checklist_tools(server, factory, names)
    if agentflow:
        register_agentflow(server, names)
    return server


def serve(
    factory: Callable[[], PlanManager], *, agentflow: bool = True, tools: Selection = "core"
) -> None:
    """Serve over standard input and output until the client disconnects, answering
    ``initialize`` before the SDK is loaded and every malformed line
    (:mod:`plankit.mcp.stdio`)."""
    from plankit.mcp.stdio import run_stdio

    run_stdio(
        lambda: build_server(factory, agentflow=agentflow, tools=tools),
        SERVER_NAME,
        instructions(tools, agentflow=agentflow),
    )


def serve_agentflow(home: str | os.PathLike[str] | None, database: str | None) -> None:
    """``agentctl mcp``: the agentflow tools alone, served as :func:`serve` does."""
    from plankit.mcp.catalog import AGENTFLOW_INSTRUCTIONS
    from plankit.mcp.stdio import run_stdio

    def build() -> MCPServer[Any]:
        from plankit.agentflow.mcp_tools import build_server as build_agentflow

        return build_agentflow(home, database)

    run_stdio(build, "agentflow", AGENTFLOW_INSTRUCTIONS)
