"""Deprecated: ``gateway.integrations.mcp`` (this path works for one release and warns)."""

import warnings

from gateway.integrations.mcp import *  # noqa: F403
from gateway.integrations.mcp import build_server, serve_http, serve_stdio  # noqa: F401

warnings.warn(
    "memgate.integrations.mcp_server moved to gateway.integrations.mcp",
    DeprecationWarning,
    stacklevel=2,
)
