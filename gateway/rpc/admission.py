"""Admission control: a bounded number of in-flight reads and writes per server and per agent.

A call beyond a bound is not queued: it gets RESOURCE_EXHAUSTED at once, with the
``retry-after-ms`` trailing metadata and a message that says what to do, so an overloaded gateway
answers promptly instead of letting every caller's latency grow (and the stores' breakers see our
own queueing as a sick backend). Bounds come from ``Settings`` (``max_inflight_*``); 0 = no bound.
Runs inside ``ErrorMapping`` (after authentication), so the agent id is known.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc

from gateway.core.errors import Overloaded
from gateway.rpc.auth import caller

_SERVICE = "/memgate.v1.MemoryGateway/"

#: calls that read (a query embedding, store reads); everything else that changes state writes
READS = frozenset(
    {
        "Recall",
        "MatchSkill",
        "Get",
        "History",
        "GetWindow",
        "GetSessionState",
        "Timeline",
        "Neighbourhood",
        "QueryAudit",
    }
)
WRITES = frozenset(
    {
        "Write",
        "BatchWrite",
        "RecordEvent",
        "AppendTurn",
        "Relate",
        "Forget",
        "UpdateSessionState",
        "CompactWindow",
        "ClearScratch",
        "SubmitResult",
        "ProposeFact",
        "ConfirmFact",
        "RegisterSkill",
        "EndSession",
    }
)


@dataclass(frozen=True, slots=True)
class Bounds:
    server: int  # 0 = unbounded
    per_agent: int


class InFlight:
    """Counts calls in flight for one class (reads or writes), server-wide and per agent."""

    def __init__(self, what: str, bounds: Bounds, retry_after_ms: int) -> None:
        self.what = what
        self.bounds = bounds
        self.retry_after_ms = retry_after_ms
        self.total = 0
        self.by_agent: dict[str, int] = {}
        self.rejected = 0

    def enter(self, agent: str) -> None:
        """Admit one call of ``agent`` or raise ``Overloaded``."""
        b = self.bounds
        mine = self.by_agent.get(agent, 0)
        if b.per_agent and mine >= b.per_agent:
            self.rejected += 1
            raise Overloaded(
                f"agent {agent!r} already has {mine} {self.what} in flight (limit {b.per_agent}); "
                f"wait for them or retry after {self.retry_after_ms} ms",
                retry_after_ms=self.retry_after_ms,
            )
        if b.server and self.total >= b.server:
            self.rejected += 1
            raise Overloaded(
                f"the gateway has {self.total} {self.what} in flight (limit {b.server}); "
                f"retry after {self.retry_after_ms} ms, with backoff",
                retry_after_ms=self.retry_after_ms,
            )
        self.total += 1
        self.by_agent[agent] = mine + 1

    def leave(self, agent: str) -> None:
        self.total -= 1
        left = self.by_agent[agent] - 1
        if left:
            self.by_agent[agent] = left
        else:
            del self.by_agent[agent]


class Admission(grpc.aio.ServerInterceptor):
    """Bounds the reads and writes in flight (one event loop: plain counters suffice)."""

    def __init__(self, reads: Bounds, writes: Bounds, retry_after_ms: int) -> None:
        self.reads = InFlight("reads", reads, retry_after_ms)
        self.writes = InFlight("writes", writes, retry_after_ms)

    def _gate(self, method: str) -> InFlight | None:
        if not method.startswith(_SERVICE):
            return None
        name = method[len(_SERVICE) :]
        if name in READS:
            return self.reads
        if name in WRITES:
            return self.writes
        return None

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        gate = self._gate(details.method)
        if handler is None or gate is None or handler.unary_unary is None:
            return handler
        inner = handler.unary_unary

        async def admitted(request: Any, context: grpc.aio.ServicerContext) -> Any:
            agent = caller(context)
            gate.enter(agent)
            try:
                return await inner(request, context)
            finally:
                gate.leave(agent)

        return grpc.unary_unary_rpc_method_handler(
            admitted,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
