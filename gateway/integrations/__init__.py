"""Adapters that put memgate where agents already live: ``gateway.integrations.mcp``
(``memgate mcp``, extra ``memgate[mcp]``) and ``gateway.integrations.langgraph`` (a LangGraph
``BaseStore``, extra ``memgate[langgraph]``). Each is a client of a running gateway and imports
only ``gateway.client``; nothing here is imported by the server or the client."""
