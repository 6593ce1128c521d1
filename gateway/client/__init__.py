"""The typed Python client agents use.

    from gateway.client import GatewayClient
    with GatewayClient("127.0.0.1:50051", agent_id="master") as c:
        mid = c.write(namespace="user/u1", layer="semantic", content="...", wait=True)
        hits = c.recall("...", namespaces=["user/u1"])

Errors come back as typed exceptions (``gateway.client.InvalidArgument`` …) carrying the gRPC
status. Only UNAVAILABLE is retried, and writes always carry an idempotency key (one is made up
when the caller gives none), so a retried write is stored once. The client imports nothing from
the server: its types are in ``gateway.client.types``. The asyncio client with the same methods
is ``gateway.client.aio.GatewayClient``; both are built from the RPCs in ``gateway.client.api``.
"""

from gateway.client.errors import (
    Conflict,
    FailedPrecondition,
    GatewayError,
    InvalidArgument,
    NotFound,
    Overloaded,
    PermissionDenied,
    Unauthenticated,
    Unavailable,
    Unimplemented,
)
from gateway.client.sync import GatewayClient
from gateway.client.types import (
    Event,
    Hit,
    Memory,
    Neighbour,
    Proposal,
    Recall,
    Task,
    Turn,
    Window,
    WriteResult,
)

__all__ = [
    "Conflict",
    "Event",
    "FailedPrecondition",
    "GatewayClient",
    "GatewayError",
    "Hit",
    "InvalidArgument",
    "Memory",
    "Neighbour",
    "NotFound",
    "Overloaded",
    "PermissionDenied",
    "Proposal",
    "Recall",
    "Task",
    "Turn",
    "Unauthenticated",
    "Unavailable",
    "Unimplemented",
    "Window",
    "WriteResult",
]
