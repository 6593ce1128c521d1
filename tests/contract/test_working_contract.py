"""One contract suite for every ``WorkingStore`` adapter (embedded SQLite and real Redis).

Each test works in its own uuid namespace/session, so the Redis half can share one server with
other runs without wiping it. The suite also runs through the circuit breaker (``guard``), which
must keep the contract. TTL tests use tiny TTLs (override with ``@pytest.mark.parametrize`` on
the ``wm_ttl`` fixture) and move time with ``advance``: the SQLite store's injected clock, real
time (at most ~1.5 s) for Redis, whose expiry the server keeps.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from gateway.core.model.errors import BackendUnavailable, InvalidArgument
from gateway.core.model.models import Turn, Zone
from gateway.core.model.state_budget import StateShare, StateTotals
from gateway.core.ports.ports import WorkingStore
from stores.breaker import Breaker, BreakerPolicy, guard
from stores.redis_working import RedisWorkingStore
from stores.sqlite_working import SqliteWorkingStore
from tests.tags import fresh_tag

D, T, I, S = Zone.DIALOGUE, Zone.TASK, Zone.INSTRUCTIONS, Zone.SCRATCH  # noqa: E741


@pytest.fixture
def wm_ttl() -> int:
    return 120  # short: keys left on a shared test server expire soon


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(
    params=[
        "sqlite",
        "sqlite+breaker",
        pytest.param("redis", marks=pytest.mark.real),
        pytest.param("redis-cluster", marks=[pytest.mark.real, pytest.mark.slow]),
    ]
)
async def working_store(
    request: pytest.FixtureRequest, wm_ttl: int, tmp_path: Path, clock: Clock
) -> AsyncIterator[WorkingStore]:
    store = _open(request.param, request, wm_ttl, tmp_path, clock)
    await store.start()
    try:
        if request.param.endswith("+breaker"):
            yield guard(WorkingStore, store, Breaker("working", store, BreakerPolicy()))
        else:
            yield store
    finally:
        await store.close()


def _open(
    kind: str, request: pytest.FixtureRequest, wm_ttl: int, tmp_path: Path, clock: Clock
) -> SqliteWorkingStore | RedisWorkingStore:
    """A store of ``kind`` (a ``working_store`` param); every call opens the same data (another
    process, or a restart)."""
    if kind.startswith("sqlite"):
        return SqliteWorkingStore(tmp_path / "working.sqlite3", ttl_seconds=wm_ttl, clock=clock)
    if kind == "redis":
        return RedisWorkingStore(request.getfixturevalue("redis_url"), ttl_seconds=wm_ttl)
    # a node of the local 3-master cluster: sessions spread over the masters
    node = f"redis://127.0.0.1:{request.getfixturevalue('cluster')[0]}/0"
    return RedisWorkingStore(node, ttl_seconds=wm_ttl, cluster=True)


@pytest.fixture
async def reopen(
    request: pytest.FixtureRequest, wm_ttl: int, tmp_path: Path, clock: Clock
) -> AsyncIterator[Callable[[], Awaitable[WorkingStore]]]:
    """Opens another store over the data of the test's ``working_store`` (started; closed at
    the end of the test)."""
    kind = request.node.callspec.params["working_store"]
    opened: list[WorkingStore] = []

    async def run() -> WorkingStore:
        store = _open(kind, request, wm_ttl, tmp_path, clock)
        await store.start()
        opened.append(store)
        return store

    yield run
    for store in opened:
        await store.close()


@pytest.fixture
def advance(request: pytest.FixtureRequest, clock: Clock):  # type: ignore[no-untyped-def]
    """Let ``seconds`` pass for the store under test."""
    real = "redis" in request.node.callspec.params.get("working_store", "")

    async def run(seconds: float) -> None:
        if real:
            await asyncio.sleep(seconds)
        else:
            clock.now += seconds

    return run


def new_session() -> tuple[str, str]:
    return f"test-ns-{uuid.uuid4().hex}", f"sess-{uuid.uuid4().hex}"


def turn(tid: str, zone: Zone = D, content: str | None = None, **kw: object) -> Turn:
    return Turn(id=tid, role="user", content=content or f"content of {tid}", zone=zone, **kw)


def ids(turns: list[Turn]) -> list[str]:
    return [t.id for t in turns]


def test_adapters_satisfy_the_protocol(tmp_path: Path) -> None:
    assert isinstance(SqliteWorkingStore(tmp_path / "x.sqlite3"), WorkingStore)
    assert isinstance(RedisWorkingStore("redis://127.0.0.1:1/0"), WorkingStore)


async def test_ping_answers_while_up_and_fails_once_closed(tmp_path: Path) -> None:
    store = SqliteWorkingStore(tmp_path / "p.sqlite3")
    await store.start()
    await store.ping()
    await store.close()
    with pytest.raises(BackendUnavailable):
        await store.ping()
    down = RedisWorkingStore("redis://127.0.0.1:1/0")  # nothing listens on port 1
    with pytest.raises(BackendUnavailable):
        await down.ping()
    await down.close()


async def test_append_keeps_order_and_separates_zones(working_store: WorkingStore) -> None:
    ns, sid = new_session()
    lens = await working_store.append(
        ns, sid, [turn("d1"), turn("t1", T), turn("d2"), turn("i1", I)], max_len=10
    )
    assert lens == {D: 2, T: 1, I: 1}
    lens = await working_store.append(ns, sid, [turn("d3"), turn("s1", S)], max_len=10)
    assert lens == {D: 3, S: 1}  # only the zones touched by this call

    window = await working_store.window(ns, sid)
    assert set(window) == set(Zone)
    assert ids(window[D]) == ["d1", "d2", "d3"]
    assert ids(window[T]) == ["t1"]
    assert ids(window[I]) == ["i1"]
    assert ids(window[S]) == ["s1"]
    assert all(t.zone == zone for zone, turns in window.items() for t in turns)


async def test_sessions_and_namespaces_are_isolated(working_store: WorkingStore) -> None:
    base = uuid.uuid4().hex
    # Separator and hash-tag characters must not let two (namespace, session) pairs collide.
    pairs = [
        (f"{base}a|b", "c"),
        (f"{base}a", "b|c"),
        (f"{base}a}}x", "{y}"),
        (f"{base}a", "}x|{y}"),
        (f"{base}a%7Cb", "c"),
    ]
    for n, (ns, sid) in enumerate(pairs):
        await working_store.append(ns, sid, [turn(f"t{n}")], max_len=10)
        await working_store.set_state(ns, sid, {"n": str(n)})
    for n, (ns, sid) in enumerate(pairs):
        assert ids((await working_store.window(ns, sid, [D]))[D]) == [f"t{n}"]
        assert await working_store.get_state(ns, sid) == {"n": str(n)}


async def test_trim_keeps_newest(working_store: WorkingStore) -> None:
    ns, sid = new_session()
    lens = await working_store.append(ns, sid, [turn(f"d{i}") for i in range(5)], max_len=3)
    assert lens == {D: 3}
    assert ids((await working_store.window(ns, sid))[D]) == ["d2", "d3", "d4"]

    lens = await working_store.append(ns, sid, [turn("d5"), turn("t0", T)], max_len=3)
    assert lens == {D: 3, T: 1}
    window = await working_store.window(ns, sid)
    assert ids(window[D]) == ["d3", "d4", "d5"]
    assert ids(window[T]) == ["t0"]


async def test_append_is_idempotent_by_turn_id(working_store: WorkingStore) -> None:
    ns, sid = new_session()
    batch = [turn("a"), turn("b"), turn("c", T)]
    assert await working_store.append(ns, sid, batch, max_len=10) == {D: 2, T: 1}
    # Replay of the whole call, and a call mixing old and new ids.
    assert await working_store.append(ns, sid, batch, max_len=10) == {D: 2, T: 1}
    assert await working_store.append(ns, sid, [turn("b"), turn("d")], max_len=10) == {D: 3}
    # The same id twice in one call: the first one wins.
    await working_store.append(
        ns, sid, [turn("e", content="first"), turn("e", content="second")], max_len=10
    )
    window = await working_store.window(ns, sid)
    assert ids(window[D]) == ["a", "b", "d", "e"]
    assert window[D][-1].content == "first"
    assert ids(window[T]) == ["c"]


async def test_replay_of_trimmed_or_taken_turns_is_skipped(working_store: WorkingStore) -> None:
    ns, sid = new_session()
    await working_store.append(ns, sid, [turn(f"d{i}") for i in range(4)], max_len=2)
    assert ids(await working_store.take_oldest(ns, sid, D, 1)) == ["d2"]
    # d0, d1 were trimmed and d2 taken: replaying them must not bring them back.
    lens = await working_store.append(ns, sid, [turn(f"d{i}") for i in range(4)], max_len=2)
    assert lens == {D: 1}
    assert ids((await working_store.window(ns, sid))[D]) == ["d3"]


async def test_unknown_session_reads_empty(working_store: WorkingStore) -> None:
    ns, sid = new_session()
    assert await working_store.window(ns, sid) == {zone: [] for zone in Zone}
    assert await working_store.window(ns, sid, [T]) == {T: []}
    assert await working_store.take_oldest(ns, sid, D, 5) == []
    assert await working_store.get_state(ns, sid) == {}
    assert await working_store.ttl_seconds(ns, sid) == -2
    await working_store.clear(ns, sid)
    await working_store.clear(ns, sid, D)
    # Reads, clears and empty writes must not bring a session into existence.
    assert await working_store.append(ns, sid, [], max_len=5) == {}
    assert await working_store.set_state(ns, sid, {}, remove=["x"]) == {}
    assert await working_store.ttl_seconds(ns, sid) == -2


async def test_window_zone_filter(working_store: WorkingStore) -> None:
    ns, sid = new_session()
    await working_store.append(ns, sid, [turn("d1"), turn("t1", T), turn("s1", S)], max_len=10)
    window = await working_store.window(ns, sid, [T, S])
    assert set(window) == {T, S}
    assert ids(window[T]) == ["t1"]
    assert ids(window[S]) == ["s1"]
    assert await working_store.window(ns, sid, [I]) == {I: []}
    assert await working_store.window(ns, sid, []) == {}


async def test_take_oldest_removes_oldest_first(working_store: WorkingStore) -> None:
    ns, sid = new_session()
    await working_store.append(ns, sid, [turn(f"d{i}") for i in range(5)], max_len=10)
    await working_store.append(ns, sid, [turn("t1", T)], max_len=10)

    assert ids(await working_store.take_oldest(ns, sid, D, 2)) == ["d0", "d1"]
    assert ids((await working_store.window(ns, sid))[D]) == ["d2", "d3", "d4"]
    assert ids(await working_store.take_oldest(ns, sid, D, 10)) == ["d2", "d3", "d4"]
    assert await working_store.take_oldest(ns, sid, D, 1) == []
    assert await working_store.take_oldest(ns, sid, I, 1) == []
    assert await working_store.take_oldest(ns, sid, D, 0) == []
    assert ids((await working_store.window(ns, sid))[T]) == ["t1"]  # other zones untouched
    # New turns after the take keep their order.
    await working_store.append(ns, sid, [turn("d5"), turn("d6")], max_len=10)
    assert ids(await working_store.take_oldest(ns, sid, D, 1)) == ["d5"]


async def test_concurrent_take_oldest_never_duplicates(working_store: WorkingStore) -> None:
    ns, sid = new_session()
    all_ids = [f"d{i:03d}" for i in range(60)]
    await working_store.append(ns, sid, [turn(i) for i in all_ids], max_len=100)

    results = await asyncio.gather(*(working_store.take_oldest(ns, sid, D, 4) for _ in range(20)))
    taken = [t.id for batch in results for t in batch]
    assert len(taken) == len(set(taken)) == 60
    assert sorted(taken) == all_ids
    for batch in results:  # every batch is a contiguous oldest-first run
        got = ids(batch)
        assert got == sorted(got)
    assert (await working_store.window(ns, sid))[D] == []


async def test_clear_one_zone(working_store: WorkingStore) -> None:
    ns, sid = new_session()
    await working_store.append(ns, sid, [turn("d1"), turn("s1", S), turn("t1", T)], max_len=10)
    await working_store.set_state(ns, sid, {"goal": "ship"})
    await working_store.clear(ns, sid, S)

    window = await working_store.window(ns, sid)
    assert window[S] == []
    assert ids(window[D]) == ["d1"]
    assert ids(window[T]) == ["t1"]
    assert await working_store.get_state(ns, sid) == {"goal": "ship"}
    assert await working_store.ttl_seconds(ns, sid) > 0


async def test_clear_whole_session(working_store: WorkingStore) -> None:
    ns, sid = new_session()
    other_ns, other_sid = new_session()
    await working_store.append(ns, sid, [turn("d1"), turn("t1", T)], max_len=10)
    await working_store.set_state(ns, sid, {"goal": "ship"})
    await working_store.append(other_ns, other_sid, [turn("o1")], max_len=10)

    await working_store.clear(ns, sid)
    assert await working_store.window(ns, sid) == {zone: [] for zone in Zone}
    assert await working_store.get_state(ns, sid) == {}
    assert await working_store.ttl_seconds(ns, sid) == -2
    assert ids((await working_store.window(other_ns, other_sid))[D]) == ["o1"]
    # The session is gone entirely, seen ids included: the same id starts it afresh.
    assert await working_store.append(ns, sid, [turn("d1")], max_len=10) == {D: 1}


async def test_state_merge_and_remove(working_store: WorkingStore) -> None:
    ns, sid = new_session()
    assert await working_store.set_state(ns, sid, {"a": "1", "b": "2"}) == {"a": "1", "b": "2"}
    assert await working_store.set_state(ns, sid, {"b": "20", "c": "3"}, remove=["a"]) == {
        "b": "20",
        "c": "3",
    }
    assert await working_store.set_state(ns, sid, {}, remove=["missing", "c"]) == {"b": "20"}
    # updates are merged first, then remove is applied
    assert await working_store.set_state(ns, sid, {"x": "1"}, remove=["x"]) == {"b": "20"}
    assert await working_store.set_state(ns, sid, {"目标": "发布 🚀", "": "empty key"}) == {
        "b": "20",
        "目标": "发布 🚀",
        "": "empty key",
    }
    assert await working_store.get_state(ns, sid) == {
        "b": "20",
        "目标": "发布 🚀",
        "": "empty key",
    }
    # State alone keeps a session alive; turns do not disturb it.
    await working_store.append(ns, sid, [turn("d1")], max_len=10)
    assert (await working_store.get_state(ns, sid))["b"] == "20"


@pytest.mark.parametrize("wm_ttl", [3])
async def test_ttl_is_set_and_refreshed_by_every_use(working_store: WorkingStore, advance) -> None:  # type: ignore[no-untyped-def]
    sessions = [new_session() for _ in range(7)]
    for ns, sid in sessions:
        await working_store.append(ns, sid, [turn("d1"), turn("d2")], max_len=10)
        await working_store.set_state(ns, sid, {"k": "v"})
        assert await working_store.ttl_seconds(ns, sid) == 3
    await advance(1.1)

    control, *used = sessions
    operations = [
        lambda ns, sid: working_store.append(ns, sid, [turn("d3")], max_len=10),
        lambda ns, sid: working_store.window(ns, sid),
        lambda ns, sid: working_store.take_oldest(ns, sid, D, 1),
        lambda ns, sid: working_store.clear(ns, sid, S),
        lambda ns, sid: working_store.get_state(ns, sid),
        lambda ns, sid: working_store.set_state(ns, sid, {"k": "w"}),
    ]
    for (ns, sid), operation in zip(used, operations, strict=True):
        await operation(ns, sid)
        assert await working_store.ttl_seconds(ns, sid) == 3, operation
    # ttl_seconds itself only reads.
    assert 0 < await working_store.ttl_seconds(*control) <= 2
    assert 0 < await working_store.ttl_seconds(*control) <= 2


@pytest.mark.parametrize("wm_ttl", [1])
async def test_expired_session_reads_empty(working_store: WorkingStore, advance) -> None:  # type: ignore[no-untyped-def]
    ns, sid = new_session()
    await working_store.append(ns, sid, [turn("d1"), turn("t1", T)], max_len=10)
    await working_store.set_state(ns, sid, {"k": "v"})
    assert await working_store.ttl_seconds(ns, sid) in (0, 1)
    await advance(1.5)

    assert await working_store.ttl_seconds(ns, sid) == -2
    assert await working_store.window(ns, sid) == {zone: [] for zone in Zone}
    assert await working_store.get_state(ns, sid) == {}
    assert await working_store.take_oldest(ns, sid, D, 5) == []
    # Expiry forgets the seen ids too: the session starts afresh.
    assert await working_store.append(ns, sid, [turn("d1")], max_len=10) == {D: 1}
    assert await working_store.get_state(ns, sid) == {}


async def test_turn_fields_round_trip(working_store: WorkingStore) -> None:
    ns, sid = new_session()
    shanghai = timezone(timedelta(hours=8))
    at_local = datetime(2025, 3, 1, 20, 30, 15, 123456, tzinfo=shanghai)
    at_utc = datetime(2024, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
    at_naive = datetime(2025, 1, 2, 3, 4, 5)
    sent = [
        Turn(
            id="u-1",
            role="user",
            content="你好，世界！请总结一下今天的会议 🌏🚀👩‍💻",
            zone=D,
            at=at_local,
            metadata={"工具": "搜索", "emoji": "👍", "quote": 'say "hi"\n'},
        ),
        Turn(id="a-1", role="assistant", content="", zone=T, at=at_utc),
        Turn(id="s-1", role="tool", content="x" * 10_000, zone=S, at=at_naive),
    ]
    await working_store.append(ns, sid, sent, max_len=10)
    window = await working_store.window(ns, sid)
    got = {t.id: t for zone in Zone for t in window[zone]}

    assert got["u-1"] == Turn(
        id="u-1",
        role="user",
        content="你好，世界！请总结一下今天的会议 🌏🚀👩‍💻",
        zone=D,
        at=at_local,
        metadata={"工具": "搜索", "emoji": "👍", "quote": 'say "hi"\n'},
    )
    assert got["a-1"].content == "" and got["a-1"].metadata == {}
    assert got["s-1"].content == "x" * 10_000
    assert got["s-1"].at == at_naive.replace(tzinfo=UTC)  # naive is taken as UTC
    for t in got.values():
        assert t.at.tzinfo is not None and t.at.utcoffset() == timedelta(0)
    assert got["u-1"].at == at_local and got["a-1"].at == at_utc

    taken = await working_store.take_oldest(ns, sid, D, 1)
    assert taken == [got["u-1"]]


async def test_invalid_arguments(working_store: WorkingStore) -> None:
    ns, sid = new_session()
    with pytest.raises(InvalidArgument):
        await working_store.append(ns, sid, [turn("d1")], max_len=0)
    with pytest.raises(InvalidArgument):
        await working_store.append("", sid, [turn("d1")], max_len=5)
    with pytest.raises(InvalidArgument):
        await working_store.window(ns, "")
    assert await working_store.ttl_seconds(ns, sid) == -2


async def test_unreachable_redis_fails_fast() -> None:
    store = RedisWorkingStore("redis://127.0.0.1:1/0", ttl_seconds=60, socket_timeout=1.0)
    ns, sid = new_session()
    try:
        for call in (
            lambda: store.append(ns, sid, [turn("d1")], max_len=5),
            lambda: store.window(ns, sid),
            store.ping,
        ):
            started = time.monotonic()
            with pytest.raises(BackendUnavailable) as info:
                await call()
            assert time.monotonic() - started < 3
            assert info.value.backend == "redis"
            assert info.value.status == "UNAVAILABLE"
    finally:
        await store.close()


# ------------------------------------------------------------------ erasure


async def test_remove_turns_from_every_zone(working_store: WorkingStore) -> None:
    ns, sid = new_session()
    await working_store.append(
        ns, sid, [turn("a"), turn("b", Zone.TASK), turn("c"), turn("b2", Zone.SCRATCH)], 10
    )
    assert await working_store.remove_turns(ns, sid, ["a", "b", "missing"]) == 2
    window = await working_store.window(ns, sid)
    assert ids(window[D]) == ["c"] and window[Zone.TASK] == []
    assert ids(window[Zone.SCRATCH]) == ["b2"]
    await working_store.append(ns, sid, [turn("a")], 10)  # a replay does not bring it back
    assert ids((await working_store.window(ns, sid))[D]) == ["c"]
    assert await working_store.remove_turns(ns, sid, []) == 0


async def test_erase_namespace_drops_every_session(working_store: WorkingStore) -> None:
    ns, sid = new_session()
    other_ns = ns + "x"  # a namespace that merely starts the same stays
    for session in (sid, sid + "-2", "a|b{c}*"):
        await working_store.append(ns, session, [turn(f"t-{session}")], 10)
        await working_store.set_state(ns, session, {"k": "v"})
    await working_store.append(other_ns, sid, [turn("kept")], 10)
    assert await working_store.erase_namespace(ns) == 3
    for session in (sid, sid + "-2", "a|b{c}*"):
        assert await working_store.window(ns, session) == {z: [] for z in Zone}
        assert await working_store.get_state(ns, session) == {}
    assert ids((await working_store.window(other_ns, sid))[D]) == ["kept"]
    assert await working_store.erase_namespace(ns) == 0


# ------------------------------------------------------------------ session state per agent


@pytest.mark.parametrize("wm_ttl", [2])
async def test_state_budget_is_shared_by_every_process_on_the_store(
    working_store: WorkingStore,
    reopen,
    advance,  # type: ignore[no-untyped-def]
) -> None:
    """Issue 33 M8: the agent's count lives in the store, so a restarted gateway (SQLite) or
    another replica (Redis) goes on from it; a session counts for the agent that last changed
    its state; an empty share, a release and the TTL free the budget."""
    ns, _ = new_session()
    a, b = f"a-{fresh_tag(8)}", f"b-{fresh_tag(8)}"

    async def reserve(
        store: WorkingStore, agent: str, session: str, keys: int, size: int
    ) -> StateTotals:
        return await store.reserve_state(StateShare(agent, ns, session, keys, size), 10, 250)

    assert await reserve(working_store, a, "s0", 4, 100) == StateTotals(4, 100)
    assert await reserve(working_store, a, "s1", 4, 100) == StateTotals(8, 200)
    other = await reopen()  # another process on the same store, or this one restarted
    assert await reserve(other, a, "s2", 3, 40) == StateTotals(11, 240, "keys")
    assert await reserve(other, a, "s2", 2, 60) == StateTotals(10, 260, "bytes")
    assert await reserve(other, a, "s2", 2, 50) == StateTotals(10, 250)
    assert await reserve(working_store, a, "s3", 1, 1) == StateTotals(11, 251, "keys")
    # shrinking a share over the limit is allowed; replacing a session's share is not adding
    assert await reserve(working_store, a, "s0", 3, 90) == StateTotals(9, 240)
    # the session now counts for b (the last to change it), not for a
    assert await reserve(other, b, "s1", 1, 10) == StateTotals(1, 10)
    assert await reserve(working_store, a, "s3", 4, 100) == StateTotals(9, 240)
    assert await reserve(other, a, "s0", 0, 0) == StateTotals(6, 150)  # emptied: dropped
    await working_store.release_state(a, ns, "s3")
    assert await reserve(other, a, "s4", 8, 200) == StateTotals(10, 250)
    await advance(2.5)  # every share outlived the TTL
    assert await reserve(working_store, a, "s5", 10, 250) == StateTotals(10, 250)
    assert await reserve(other, b, "s6", 10, 250) == StateTotals(10, 250)
