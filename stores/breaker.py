"""A circuit breaker in front of any store, keeping its contract (seed 003 §4.2).

Closed: calls go through; a call that fails with BackendUnavailable — or a read slower than
``slow_ms`` — opens the breaker. A read's latency is the backend's own time when the adapter
reports it, and it takes ``slow_after`` slow reads in a row (``stores.timing``: SQLite from when its worker thread holds the connection, Neo4j its
server-side result timings), so queueing behind our own threads under load never trips it. Open: calls fail at once with BackendUnavailable (the core then
serves its fallback: an empty window, a recall without that layer). After ``cooldown_s`` the next
call first probes the backend with ``ping()``; if it answers, the breaker is half-open and lets
calls through; ``recover_after`` consecutive reads faster than ``recover_ms`` close it again.
It also keeps per-store latency samples for the metrics, hands every call's latency to an
``observer`` (store, method, seconds, ok) and runs it inside a tracing span.
"""

from __future__ import annotations

import enum
import functools
import inspect
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from gateway.core.model.errors import BackendUnavailable
from gateway.core.ports.metrics import percentile
from gateway.core.ports.ports import READ_MARK, UNGUARDED_MARK, BreakerStatus, Lifecycle
from gateway.core.ports.tracing import NULL_TRACER, Tracer
from stores import timing

T = TypeVar("T")
#: (store, method, seconds, ok): one finished store call
CallObserver = Callable[[str, str, float, bool], None]


class State(enum.StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


@dataclass(frozen=True, slots=True)
class BreakerPolicy:
    slow_ms: float | None = None  # None: only failures trip
    slow_after: int = 1  # consecutive slow reads that trip (one descheduled read is not a trend)
    recover_after: int = 1
    recover_ms: float | None = None  # None: any successful read counts
    cooldown_s: float = 1.0


class Breaker:
    """The breaker's state machine for one store; ``guard`` puts it in front of the store."""

    def __init__(
        self,
        name: str,
        inner: Lifecycle,
        policy: BreakerPolicy,
        clock: Callable[[], float] = time.monotonic,
        observer: CallObserver | None = None,
        tracer: Tracer = NULL_TRACER,
    ) -> None:
        self.name = name
        self._observer = observer
        self._tracer = tracer
        self.inner = inner
        self.policy = policy
        self._clock = clock
        self.state = State.CLOSED
        self.trips = 0
        self.last_error = ""
        self._opened_at = 0.0
        self._good = 0
        self._slow_run = 0
        self.latencies_ms: deque[float] = deque(maxlen=2048)
        self.calls = 0
        self.failures = 0

    async def call(
        self, method: str, fn: Callable[..., Awaitable[Any]], read: bool, *args: Any, **kw: Any
    ) -> Any:
        """Run one store call through the breaker."""
        with self._tracer.span(f"store.{self.name}.{method}", {"memgate.store": self.name}):
            await self._admit()
            started = time.perf_counter()
            with timing.measuring() as backend:
                try:
                    result = await fn(*args, **kw)
                except BackendUnavailable as exc:
                    self.failures += 1
                    self._report(method, time.perf_counter() - started, False)
                    self._trip(exc.message)
                    raise
                except Exception:
                    self._report(method, time.perf_counter() - started, False)
                    raise
            elapsed = time.perf_counter() - started
            self._report(method, elapsed, True)
            # Judge the backend by its own time when the adapter reported it: waiting for our own
            # worker thread, lock or connection pool is overload, not a sick backend.
            self._observe(method, elapsed * 1000 if backend.ms is None else backend.ms, read)
            return result

    def _report(self, method: str, seconds: float, ok: bool) -> None:
        if self._observer is not None:
            self._observer(self.name, method, seconds, ok)

    def status(self) -> BreakerStatus:
        return BreakerStatus(
            layer=self.name,
            state=str(self.state),
            trips=self.trips,
            last_error=self.last_error,
            p50_ms=self.percentile_ms(50),
            p99_ms=self.percentile_ms(99),
            calls=self.calls,
            failures=self.failures,
        )

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

    def _observe(self, method: str, elapsed_ms: float, read: bool) -> None:
        self.calls += 1
        self.latencies_ms.append(elapsed_ms)
        if not read:
            return
        p = self.policy
        if p.slow_ms is not None and elapsed_ms > p.slow_ms:
            # half-open too: a backend that just came back answers its first queries cold
            # (caches, plans); one slow answer is no failure — it takes ``slow_after`` in a row
            self._slow_run += 1
            if self._slow_run >= p.slow_after:
                self._trip(f"{method} took {elapsed_ms:.0f} ms (limit {p.slow_ms:.0f} ms)")
            return
        self._slow_run = 0
        if self.state is State.HALF_OPEN and (p.recover_ms is None or elapsed_ms < p.recover_ms):
            self._good += 1
            if self._good >= p.recover_after:
                self.state = State.CLOSED

    def _trip(self, why: str) -> None:
        self._slow_run = 0
        if self.state is not State.OPEN:
            self.trips += 1
        self.state = State.OPEN
        self._opened_at = self._clock()
        self.last_error = why

    def percentile_ms(self, p: float) -> float:
        return percentile(self.latencies_ms, p)


def guard(contract: Any, inner: T, breaker: Breaker) -> T:
    """``inner`` behind ``breaker``, as an object that implements ``contract`` and nothing else.

    Which methods read (timed) and which pass straight through is declared on the contract
    (``@reads``, ``@unguarded`` in ``gateway.core.ports.ports``); every other coroutine method is a
    write: guarded, its failures trip the breaker, its latency does not.
    """
    members: dict[str, Any] = {}
    for klass in reversed(contract.__mro__):
        if klass is object or klass.__module__ == "typing":
            continue
        for name, value in vars(klass).items():
            if not name.startswith("_") and callable(value):
                members[name] = value
    wrapper = _Guarded(inner, breaker)
    for name, declared in members.items():
        target = getattr(inner, name)
        if getattr(declared, UNGUARDED_MARK, False) or not inspect.iscoroutinefunction(target):
            setattr(wrapper, name, target)
        else:
            setattr(wrapper, name, _guarded_method(breaker, name, target, declared))
    return cast(T, wrapper)


def _guarded_method(
    breaker: Breaker, name: str, target: Callable[..., Awaitable[Any]], declared: Any
) -> Callable[..., Awaitable[Any]]:
    read = bool(getattr(declared, READ_MARK, False))

    @functools.wraps(target)
    async def call(*args: Any, **kw: Any) -> Any:
        return await breaker.call(name, target, read, *args, **kw)

    return call


class _Guarded:
    """The instance ``guard`` returns; its methods are set per contract."""

    def __init__(self, inner: Any, breaker: Breaker) -> None:
        self.inner = inner
        self.breaker = breaker

    def status(self) -> BreakerStatus:
        return self.breaker.status()
