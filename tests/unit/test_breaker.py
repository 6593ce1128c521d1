"""The circuit breaker around a real (embedded) store: trips, fails fast, probes, recovers."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from gateway.core.errors import BackendUnavailable
from gateway.core.models import Turn
from gateway.core.ports import WorkingStore
from stores.breaker import Breaker, BreakerPolicy, State, guard
from stores.sqlite_working import SqliteWorkingStore


class Flaky:
    """A real store whose backend can be 'down' or 'slow' (the fault, not a mock of a driver)."""

    def __init__(self, inner: SqliteWorkingStore) -> None:
        self.inner = inner
        self.down = False
        self.delay = 0.0
        self.pings = 0

    async def ping(self) -> None:
        self.pings += 1
        if self.down:
            raise BackendUnavailable("working", "connection refused")

    def __getattr__(self, name: str) -> Any:
        fn = getattr(self.inner, name)

        async def call(*a: Any, **kw: Any) -> Any:
            if self.down:
                raise BackendUnavailable("working", "connection refused")
            if self.delay:
                await asyncio.sleep(self.delay)
            return await fn(*a, **kw)

        return call


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def flaky(tmp_path: Path):  # type: ignore[no-untyped-def]
    store = SqliteWorkingStore(tmp_path / "w.db", ttl_seconds=3600)
    await store.start()
    yield Flaky(store)
    await store.close()


async def test_failure_opens_fails_fast_then_recovers_after_probe(flaky: Flaky) -> None:
    clock = Clock()
    b = Breaker("working", flaky, BreakerPolicy(recover_after=2, cooldown_s=1.0), clock=clock)
    g = guard(WorkingStore, flaky, b)
    await g.append("user/u", "s", [Turn(id="t1", role="user", content="hi")], 10)
    flaky.down = True
    with pytest.raises(BackendUnavailable):
        await g.window("user/u", "s")
    assert b.state is State.OPEN and b.trips == 1
    flaky.down = False  # back, but the breaker does not know yet
    with pytest.raises(BackendUnavailable, match="circuit breaker open"):
        await g.window("user/u", "s")  # fails fast during the cool-down
    clock.now = 1.5
    assert await g.window("user/u", "s")  # probe (ping) passes: half-open, call goes through
    assert b.state is State.HALF_OPEN and flaky.pings == 1
    await g.window("user/u", "s")
    assert b.state is State.CLOSED


async def test_probe_failure_keeps_it_open(flaky: Flaky) -> None:
    clock = Clock()
    b = Breaker("working", flaky, BreakerPolicy(cooldown_s=1.0), clock=clock)
    g = guard(WorkingStore, flaky, b)
    flaky.down = True
    with pytest.raises(BackendUnavailable):
        await g.get_state("user/u", "s")
    clock.now = 2.0
    with pytest.raises(BackendUnavailable):
        await g.get_state("user/u", "s")
    assert b.state is State.OPEN and flaky.pings == 1 and b.trips == 1


async def test_slow_read_trips_and_fast_reads_recover(flaky: Flaky) -> None:
    b = Breaker(
        "working", flaky, BreakerPolicy(slow_ms=50, recover_after=3, recover_ms=20, cooldown_s=0.0)
    )
    g = guard(WorkingStore, flaky, b)
    flaky.delay = 0.08
    assert await g.get_state("user/u", "s") == {}  # the slow read still answers…
    assert b.state is State.OPEN and "took" in b.last_error  # …but trips the breaker
    flaky.delay = 0.0
    for _ in range(3):
        await g.get_state("user/u", "s")
    assert b.state is State.CLOSED
    assert b.percentile_ms(99) >= 50 and b.calls == 4


async def test_writes_do_not_trip_on_latency(flaky: Flaky) -> None:
    b = Breaker("working", flaky, BreakerPolicy(slow_ms=10))
    g = guard(WorkingStore, flaky, b)
    flaky.delay = 0.03
    await g.append("user/u", "s", [Turn(id="t1", role="user", content="hi")], 10)
    assert b.state is State.CLOSED


async def test_guard_exposes_only_the_contract(flaky: Flaky) -> None:
    g = guard(WorkingStore, flaky.inner, Breaker("working", flaky.inner, BreakerPolicy()))
    assert isinstance(g, WorkingStore)
    assert not hasattr(g, "_run")  # adapter internals are not reachable through the guard
    assert g.status().layer == "working"
