"""Deprecated: the integrations moved to ``gateway.integrations`` (``gateway.integrations.mcp``,
``gateway.integrations.langgraph``). These modules re-export them for one release."""
