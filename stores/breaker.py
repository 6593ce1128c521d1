"""A circuit breaker that wraps any store and keeps its contract (seed 003 §4.2).

Closed: calls go through; a call that fails with BackendUnavailable — or a read slower than
``slow_ms`` — opens the breaker. Open: calls fail at once with BackendUnavailable (the core then
serves its fallback: an empty window, a recall without that layer). After ``cooldown_s`` the next
call first probes the backend with ``ping()``; if it answers, the breaker is half-open and lets
calls through; ``recover_after`` consecutive reads faster than ``recover_ms`` close it again.
It also keeps per-store latency samples for the metrics.
"""

from __future__ import annotations

import enum
import functools
import inspect
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gateway.core.errors import BackendUnavailable

#: methods that only read: their latency counts toward tripping and recovering
READS = frozenset(
    {
        "window",
        "get_state",
        "ttl_seconds",
        "get",
        "history",
        "query",
        "keyword_search",
        "find_fact",
        "timeline",
        "neighbourhood",
        "search",
        "count",
    }
)
_UNGUARDED = frozenset({"start", "close", "ping", "iter_vectors"})


class State(enum.StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


@dataclass(frozen=True, slots=True)
class BreakerPolicy:
    slow_ms: float | None = None  # None: only failures trip
    recover_after: int = 1
    recover_ms: float | None = None  # None: any successful read counts
    cooldown_s: float = 1.0


class Breaker:
    def __init__(
        self,
        name: str,
        inner: Any,
        policy: BreakerPolicy,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.inner = inner
        self.policy = policy
        self._clock = clock
        self.state = State.CLOSED
        self.trips = 0
        self.last_error = ""
        self._opened_at = 0.0
        self._good = 0
        self.latencies_ms: deque[float] = deque(maxlen=2048)
        self.calls = 0
        self.failures = 0

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self.inner, attr)
        if attr in _UNGUARDED or not inspect.iscoroutinefunction(value):
            return value

        @functools.wraps(value)
        async def guarded(*args: Any, **kwargs: Any) -> Any:
            await self._admit()
            started = self._clock()
            try:
                result = await value(*args, **kwargs)
            except BackendUnavailable as exc:
                self.failures += 1
                self._trip(exc.message)
                raise
            elapsed_ms = (self._clock() - started) * 1000
            self._observe(attr, elapsed_ms)
            return result

        return guarded

    async def _admit(self) -> None:
        if self.state is not State.OPEN:
            return
        if self._clock() - self._opened_at < self.policy.cooldown_s:
            raise BackendUnavailable(self.name, f"circuit breaker open after: {self.last_error}")
        try:
            await self.inner.ping()
        except BackendUnavailable as exc:
            self._trip(exc.message)
            raise
        self.state = State.HALF_OPEN
        self._good = 0

    def _observe(self, method: str, elapsed_ms: float) -> None:
        self.calls += 1
        self.latencies_ms.append(elapsed_ms)
        if method not in READS:
            return
        p = self.policy
        if p.slow_ms is not None and elapsed_ms > p.slow_ms:
            self._trip(f"{method} took {elapsed_ms:.0f} ms (limit {p.slow_ms:.0f} ms)")
            return
        if self.state is State.HALF_OPEN and (p.recover_ms is None or elapsed_ms < p.recover_ms):
            self._good += 1
            if self._good >= p.recover_after:
                self.state = State.CLOSED

    def _trip(self, why: str) -> None:
        if self.state is not State.OPEN:
            self.trips += 1
        self.state = State.OPEN
        self._opened_at = self._clock()
        self.last_error = why

    def percentile_ms(self, p: float) -> float:
        if not self.latencies_ms:
            return 0.0
        values = sorted(self.latencies_ms)
        return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]
