"""plankit's MCP server: the checklist tools, and the agentflow tools when present.

:func:`plankit.mcp.server.build_server` assembles the server; ``plankit mcp`` runs it
over stdio.  Other systems add their tools with a ``register_…_tools(server)``
function that the server calls.
"""
