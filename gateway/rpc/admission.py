"""Admission control: a bounded number of in-flight reads and writes per server and per agent.

A call beyond the server-wide bound waits in a short FIFO queue (``admission_queue_*``: at most
that many waiting, each at most ``admission_queue_timeout_ms``), and a freed slot passes straight
to the first waiter: a burst is absorbed at the cost of a bounded wait instead of a round trip of
refusals. A call beyond the queue, past its wait, or beyond its agent's own bound gets
RESOURCE_EXHAUSTED with the ``retry-after-ms`` trailing metadata and a message that says what to
do, so an overloaded gateway answers promptly instead of letting every caller's latency grow (and
the stores' breakers see our own queueing as a sick backend). Bounds come from ``Settings``
(``max_inflight_*``); 0 = no bound. Runs inside ``ErrorMapping`` (after authentication), so the
agent id is known.

The ``retry-after-ms`` hint is about when the caller's turn will come: the agents turned away in
the last second divided by the calls admitted per second, at least ``overload_retry_after_ms``
and at most ``overload_retry_after_max_ms``. With 200 agents and 16 slots, a fixed 100 ms hint
makes ~180 agents knock ten times a second, and each refusal costs the gateway ~1 ms of CPU
(docs/BENCHMARKS-HISTORY.md): the hint spreads them over the time the gateway needs to serve them.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc

from gateway.core.model.errors import Overloaded
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
        "Export",
        "ListNamespaces",
    }
)
WRITES = frozenset(
    {
        "Write",
        "BatchWrite",
        "RecordEvent",
        "AppendTurn",
        "AppendTurns",
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
        "Import",
        "ForgetNamespace",
        "ForgetSubject",
    }
)


@dataclass(frozen=True, slots=True)
class Bounds:
    server: int  # 0 = unbounded
    per_agent: int
    queue: int = 0  # calls that may wait for a server-wide slot
    queue_timeout_s: float = 0.0  # how long one may wait


#: the window over which admissions and turned-away agents are counted for the hint
WINDOW_S = 1.0


class InFlight:
    """Counts calls in flight for one class (reads or writes), server-wide and per agent."""

    def __init__(
        self,
        what: str,
        bounds: Bounds,
        retry_after_ms: int,
        max_retry_after_ms: int = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.what = what
        self.bounds = bounds
        self.retry_after_ms = retry_after_ms
        self.max_retry_after_ms = max(retry_after_ms, max_retry_after_ms)
        self.total = 0
        self.by_agent: dict[str, int] = {}
        self.rejected = 0
        self._clock = clock
        self._window = clock()
        self._admitted = 0
        self._turned_away: set[str] = set()
        self._last = (0, 0)  # (admitted, agents turned away) in the last complete window
        self._waiters: deque[asyncio.Future[None]] = deque()

    def _roll(self) -> None:
        now = self._clock()
        if now - self._window >= WINDOW_S:
            fresh = now - self._window < 2 * WINDOW_S  # else the last window was idle
            self._last = (self._admitted, len(self._turned_away)) if fresh else (0, 0)
            self._window, self._admitted = now, 0
            self._turned_away = set()

    def retry_after(self) -> int:
        """ms until a turned-away caller's turn: agents waiting / admissions per second."""
        admitted = self._last[0] or self._admitted  # the last full second, else this one so far
        waiting = max(self._last[1], len(self._turned_away))
        if not admitted:
            return self.retry_after_ms
        hint = round(1000 * WINDOW_S * waiting / admitted)
        return min(self.max_retry_after_ms, max(self.retry_after_ms, hint))

    def _refuse(self, agent: str, why: str) -> Overloaded:
        self.rejected += 1
        self._turned_away.add(agent)
        wait = self.retry_after()
        return Overloaded(f"{why}; retry after {wait} ms", retry_after_ms=wait)

    def enter(self, agent: str) -> None:
        """Admit one call of ``agent`` now or raise ``Overloaded`` (no waiting)."""
        self._roll()
        self._check_agent(agent)
        if self._full():
            raise self._server_full(agent)
        self._take(agent)

    async def admit(self, agent: str) -> None:
        """Admit one call of ``agent``: at once, after a bounded wait in the queue for a
        server-wide slot, or raise ``Overloaded``."""
        self._roll()
        self._check_agent(agent)
        if not self._full():
            self._take(agent)
            return
        b = self.bounds
        if len(self._waiters) >= b.queue:
            raise self._server_full(agent)
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(turn)
        self.by_agent[agent] = self.by_agent.get(agent, 0) + 1  # waiting counts as its own
        try:
            await asyncio.wait((turn,), timeout=b.queue_timeout_s)
        except BaseException:  # the caller went away while waiting
            self._give_up(agent, turn)
            raise
        if not turn.done():
            self._give_up(agent, turn)
            raise self._server_full(agent, waited=True)
        # a leaving call handed its slot over: ``total`` already counts this one

    def _give_up(self, agent: str, turn: asyncio.Future[None]) -> None:
        if turn.done():  # the slot was handed over just now: pass it on
            self.leave(agent)
            return
        turn.cancel()
        self._waiters.remove(turn)
        self._drop(agent)

    def _check_agent(self, agent: str) -> None:
        b = self.bounds
        mine = self.by_agent.get(agent, 0)
        if b.per_agent and mine >= b.per_agent:
            raise self._refuse(
                agent,
                f"agent {agent!r} already has {mine} {self.what} in flight (limit {b.per_agent}): "
                "wait for them",
            )

    def _full(self) -> bool:
        return bool(self.bounds.server) and self.total >= self.bounds.server

    def _server_full(self, agent: str, waited: bool = False) -> Overloaded:
        b = self.bounds
        why = f"the gateway has {self.total} {self.what} in flight (limit {b.server})"
        if waited:
            why += f" and none finished within {round(b.queue_timeout_s * 1000)} ms of waiting"
        elif b.queue:
            why += f" and {len(self._waiters)} waiting (limit {b.queue})"
        return self._refuse(agent, why)

    def _take(self, agent: str) -> None:
        self._admitted += 1
        self.total += 1
        self.by_agent[agent] = self.by_agent.get(agent, 0) + 1

    def _drop(self, agent: str) -> None:
        left = self.by_agent[agent] - 1
        if left:
            self.by_agent[agent] = left
        else:
            del self.by_agent[agent]

    def leave(self, agent: str) -> None:
        """One call of ``agent`` is done: its slot goes to the first waiter, else is freed."""
        self._drop(agent)
        while self._waiters:
            turn = self._waiters.popleft()
            if not turn.done():
                turn.set_result(None)
                self._admitted += 1
                return
        self.total -= 1

    @property
    def waiting(self) -> int:
        return len(self._waiters)


class Admission(grpc.aio.ServerInterceptor):
    """Bounds the reads and writes in flight (one event loop: plain counters suffice)."""

    def __init__(
        self, reads: Bounds, writes: Bounds, retry_after_ms: int, max_retry_after_ms: int = 0
    ) -> None:
        self.reads = InFlight("reads", reads, retry_after_ms, max_retry_after_ms)
        self.writes = InFlight("writes", writes, retry_after_ms, max_retry_after_ms)
        self._wrapped: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

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
        # built once per method: ``ErrorMapping`` sees the same handler and keeps its own wrapper
        seen = self._wrapped.get(details.method)
        if seen is not None and seen[0] is handler:
            return seen[1]
        wrapped = self._admitted(gate, handler)
        self._wrapped[details.method] = (handler, wrapped)
        return wrapped

    @staticmethod
    def _admitted(gate: InFlight, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        inner = handler.unary_unary

        async def admitted(request: Any, context: grpc.aio.ServicerContext) -> Any:
            agent = caller(context)
            await gate.admit(agent)
            try:
                return await inner(request, context)
            finally:
                gate.leave(agent)

        return grpc.unary_unary_rpc_method_handler(
            admitted,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
