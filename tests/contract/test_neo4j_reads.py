"""Neo4j reads on the blocking driver in worker threads (``stores/neo4j_reads.py``), against the
real server: many reads through few threads, the server time reported to the breaker, a caller
that gives up, and a closed store."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from gateway.core.model.errors import BackendUnavailable
from gateway.core.model.models import Layer, Memory
from stores import timing
from stores.neo4j_records import Neo4jRecordStore
from tests.tags import fresh_tag

pytestmark = pytest.mark.real


async def _store(neo4j_uri: str, threads: int) -> tuple[Neo4jRecordStore, list[Memory]]:
    store = Neo4jRecordStore(neo4j_uri, read_threads=threads)
    await store.start()
    ns = f"user/reads-{fresh_tag(8)}"
    mems = [Memory(uuid.uuid4().hex, ns, Layer.SEMANTIC, f"fact number {i}") for i in range(30)]
    await store.put(mems)
    return store, mems


async def test_many_concurrent_reads_through_two_threads_all_answer(neo4j_uri: str) -> None:
    store, mems = await _store(neo4j_uri, threads=2)
    try:
        wanted = [[m.id for m in mems[i : i + 5]] for i in range(0, 30, 5)] * 10
        got = await asyncio.gather(*(store.get(ids) for ids in wanted))
        assert [sorted(g) for g in got] == [sorted(ids) for ids in wanted]
        assert got[0][mems[0].id].content == "fact number 0"
    finally:
        await store.close()


async def test_the_server_time_reaches_the_breaker_collector(neo4j_uri: str) -> None:
    store, mems = await _store(neo4j_uri, threads=1)
    try:
        collector = timing.BackendTime()
        token = timing._CURRENT.set(collector)
        try:
            await store.get([m.id for m in mems])
        finally:
            timing._CURRENT.reset(token)
        assert collector.ms is not None and collector.ms >= 0  # the server's own time
    finally:
        await store.close()


async def test_a_caller_that_gives_up_leaves_the_reader_usable(neo4j_uri: str) -> None:
    store, mems = await _store(neo4j_uri, threads=1)
    try:
        # a read abandoned by its caller still finishes on its thread; the next one is answered
        task = asyncio.ensure_future(store.get([m.id for m in mems]))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert len(await store.get([mems[0].id])) == 1
    finally:
        await store.close()


async def test_a_closed_store_answers_unavailable(neo4j_uri: str) -> None:
    store, mems = await _store(neo4j_uri, threads=1)
    await store.close()
    with pytest.raises(BackendUnavailable):
        await store.get([mems[0].id])


async def test_a_property_no_node_has_yet_logs_no_warning(
    neo4j_uri: str, caplog: pytest.LogCaptureFixture
) -> None:
    # on a fresh database every statement names properties that do not exist yet: the server's
    # "property key does not exist" notification must not reach the log
    store, mems = await _store(neo4j_uri, threads=1)
    key = f"never_{fresh_tag(8)}"
    try:
        with caplog.at_level("INFO", logger="neo4j"):
            await store._db.read(f"MATCH (m:Memory) WHERE m.{key} IS NOT NULL RETURN m.id", {})
        assert not [r for r in caplog.records if "does not exist" in r.getMessage()]
    finally:
        await store.close()
