"""Agent Client Protocol: plans as ACP ``plan`` updates, TeDDy as an ACP agent, and a
client that shows an agent's plan live.

- :mod:`plankit.acp.entries` — any plan → v1 plan entries (pure, no ACP library);
- :mod:`plankit.acp.agent` — ``teddy acp``: TeDDy over stdio with the official SDK;
- :mod:`plankit.acp.client` — ``plankit acp run``: drive any ACP agent and show its plan.

Nothing here is imported by ``import plankit.acp``: the SDK (and pydantic) load only
when an agent or a client starts.
"""
