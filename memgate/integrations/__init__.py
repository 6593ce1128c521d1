"""Adapters that put memgate where agents already live: ``mcp_server`` (``memgate mcp``, extra
``memgate[mcp]``) and ``langgraph`` (a LangGraph ``BaseStore``, extra ``memgate[langgraph]``).
Each is a client of a running gateway and imports only ``gateway.client``/``gateway.aio``."""
