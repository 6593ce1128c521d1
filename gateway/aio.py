"""Deprecated: the asyncio client is ``gateway.client.aio.GatewayClient`` (this path works for
one release and warns)."""

import warnings

from gateway.client.aio import GatewayClient

warnings.warn(
    "gateway.aio moved: use `from gateway.client.aio import GatewayClient`",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["GatewayClient"]
