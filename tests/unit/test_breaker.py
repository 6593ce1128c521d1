"""The circuit breaker around a real (embedded) store: trips, fails fast, probes, recovers."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gateway.core.model.errors import BackendUnavailable
from gateway.core.model.models import Turn
from gateway.core.ports.ports import WorkingStore
from stores import timing
from stores.breaker import Breaker, BreakerPolicy, State, guard
from stores.sqlite_working import SqliteWorkingStore
from tests.tags import fresh_tag


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
            if self.delay:  # the backend itself is slow: it reports the time as its own
                await asyncio.sleep(self.delay)
                timing.report(self.delay * 1000)
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


async def test_queueing_for_our_own_worker_thread_does_not_trip(flaky: Flaky) -> None:
    """Many concurrent reads on a healthy SQLite store queue on its one worker thread: their
    wall time grows past ``slow_ms``, but each read's own time on the worker does not."""
    policy = BreakerPolicy(slow_ms=50, slow_after=3, cooldown_s=60)  # as wired by default
    b = Breaker("working", flaky.inner, policy)
    g = guard(WorkingStore, flaky.inner, b)
    await g.set_state("user/u", "s", {"k": "v"})
    loop = asyncio.get_running_loop()

    async def timed_read() -> float:
        t0 = loop.time()
        assert await g.get_state("user/u", "s") == {"k": "v"}
        return (loop.time() - t0) * 1000

    # the worker thread is busy for 0.3 s (another caller's long transaction), so every read
    # below waits in its queue first, then many concurrent reads queue behind each other
    busy = asyncio.ensure_future(flaky.inner._db.read(lambda c: time.sleep(0.3)))
    await asyncio.sleep(0.01)
    walls = await asyncio.gather(*(timed_read() for _ in range(400)))
    await busy
    assert min(walls) > 50  # the queue was real: judged by wall time, all of these would trip
    assert b.state is State.CLOSED and b.trips == 0, b.last_error


class SlowSqlite(SqliteWorkingStore):
    """A SQLite store whose reads are slow inside the database call itself."""

    async def get_state(self, namespace: str, session_id: str) -> dict[str, str]:
        await self._db.read(lambda c: time.sleep(0.08))
        return await super().get_state(namespace, session_id)


async def test_a_slow_backend_call_still_trips(tmp_path: Path) -> None:
    store = SlowSqlite(tmp_path / "slow.db", ttl_seconds=3600)
    await store.start()
    try:
        b = Breaker("working", store, BreakerPolicy(slow_ms=50, slow_after=3, cooldown_s=60))
        g = guard(WorkingStore, store, b)
        for _ in range(3):
            await g.get_state("user/u", "s")
        assert b.state is State.OPEN and "took" in b.last_error
    finally:
        await store.close()


@pytest.mark.real
async def test_neo4j_reads_are_judged_by_the_server_time(neo4j_uri: str) -> None:
    """Graph reads that wait for a connection slot (our own queue) are not judged slow: the
    breaker takes the time the server reports for each query."""
    from gateway.core.model.models import Event
    from gateway.core.ports.ports import EpisodicGraph
    from stores.neo4j_graph import Neo4jEpisodicGraph

    graph = Neo4jEpisodicGraph(neo4j_uri)
    await graph.start()
    try:
        ns = f"user/breaker-{fresh_tag(8)}"
        now = datetime.now(UTC)
        await graph.record(
            [Event(id=uuid.uuid4().hex, namespace=ns, type="note", summary="x", at=now)]
        )
        b = Breaker("graph", graph, BreakerPolicy(slow_ms=1000, slow_after=3, cooldown_s=60))
        g = guard(EpisodicGraph, graph, b)
        await g.timeline(ns, None, None, 10)  # the server plans the query once
        loop = asyncio.get_running_loop()

        async def timed() -> float:
            t0 = loop.time()
            assert len(await g.timeline(ns, None, None, 10)) == 1
            return (loop.time() - t0) * 1000

        slots = graph._db._slots  # every connection slot busy: the reads queue on our side
        held = 0
        while not slots.locked():
            await slots.acquire()
            held += 1
        reads = asyncio.gather(*(timed() for _ in range(20)))
        await asyncio.sleep(1.5)
        for _ in range(held):
            slots.release()
        walls = await reads
        assert min(walls) > 1000  # judged by wall time, every one of them would be slow
        assert b.state is State.CLOSED and b.trips == 0, b.last_error
        assert b.percentile_ms(99) < 1000
    finally:
        await graph.close()


async def test_a_cold_answer_after_a_restart_does_not_reopen(flaky: Flaky) -> None:
    """A backend that just came back answers its first queries slowly (cold caches): in
    half-open one slow but successful read no longer re-opens the breaker (the next calls all
    failed fast for a cool-down); ``slow_after`` slow reads in a row still do."""
    clock = Clock()
    policy = BreakerPolicy(slow_ms=50, slow_after=3, recover_after=2, recover_ms=20, cooldown_s=1.0)
    b = Breaker("graph", flaky, policy, clock=clock)
    g = guard(WorkingStore, flaky, b)
    flaky.down = True
    with pytest.raises(BackendUnavailable):
        await g.get_state("user/u", "s")
    flaky.down, clock.now = False, 2.0
    flaky.delay = 0.08  # cold
    assert await g.get_state("user/u", "s") == {}
    assert b.state is State.HALF_OPEN
    flaky.delay = 0.0
    for _ in range(2):
        await g.get_state("user/u", "s")
    assert b.state is State.CLOSED and b.trips == 1
    flaky.delay = 0.08  # slow, again and again: that is a trend
    for _ in range(3):
        await g.get_state("user/u", "s")
    assert b.state is State.OPEN and b.trips == 2
