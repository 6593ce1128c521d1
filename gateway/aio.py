"""``from gateway.aio import GatewayClient``: the asyncio client (``gateway.client.aio``); its
errors are the same classes as the blocking client's (``gateway.client.GatewayError`` …)."""

from gateway.client.aio import GatewayClient

__all__ = ["GatewayClient"]
