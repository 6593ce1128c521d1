"""The on-demand vector index (``stores/vector_cache.py``) over each record store: it answers as a
full index over the same records would, loads a namespace only when a search needs it, evicts past
its budget and reloads fresh, and never brings back a deleted vector."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import numpy as np
import pytest

from gateway.core.apply.index_fill import fill_index
from gateway.core.model.models import Layer, Memory, VectorItem
from gateway.core.ports.ports import RecordStore
from stores.faiss_index import ShardedFaissIndex
from stores.vector_cache import OnDemandVectorIndex
from tests.tags import fresh_tag

DIM = 16


@pytest.fixture(params=["sqlite", pytest.param("neo4j", marks=pytest.mark.real)])
def make_records(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], RecordStore]:
    if request.param == "sqlite":
        from stores.sqlite_records import SqliteRecordStore

        return lambda: SqliteRecordStore(tmp_path / "records.db")
    uri = request.getfixturevalue("neo4j_uri")
    from stores.neo4j_records import Neo4jRecordStore

    return lambda: Neo4jRecordStore(uri)


@pytest.fixture
async def records(make_records: Callable[[], RecordStore]) -> AsyncIterator[RecordStore]:
    store = make_records()
    await store.start()
    try:
        yield store
    finally:
        await store.close()


def ns_name(tag: str) -> str:
    return f"test/{tag}-{fresh_tag(10)}"


def vec(rng: np.random.Generator) -> np.ndarray:
    v = rng.standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


async def put(records: RecordStore, ns: str, n: int, seed: int) -> list[Memory]:
    rng = np.random.default_rng(seed)
    mems = [
        Memory(
            id=f"{ns}#{i:04d}",
            namespace=ns,
            layer=Layer.SEMANTIC if i % 3 else Layer.PROCEDURAL,
            content=f"memory {i}",
            embedding=vec(rng),
        )
        for i in range(n)
    ]
    await records.put(mems)
    return mems


def item(m: Memory) -> VectorItem:
    assert m.embedding is not None
    return VectorItem(m.id, m.namespace, m.layer, m.embedding)


async def cache(
    records: RecordStore, budget_mb: int = 64, pinned: tuple[str, ...] = ()
) -> OnDemandVectorIndex:
    index = OnDemandVectorIndex(
        records=records, dim=DIM, shards=4, budget_mb=budget_mb, pinned=pinned
    )
    await index.start()
    return index


async def test_answers_exactly_as_a_full_index_over_the_same_records(records: RecordStore) -> None:
    spaces = [ns_name(t) for t in ("a", "b", "c")]
    for i, ns in enumerate(spaces):
        await put(records, ns, 40 + 10 * i, seed=i)
    full = ShardedFaissIndex(None, dim=DIM, shards=4)
    for ns in spaces:
        async for batch in records.iter_vectors(7, namespace=ns):
            await full.upsert(batch)
    lazy = await cache(records)
    rng = np.random.default_rng(99)
    for _ in range(20):
        q = vec(rng)
        for scope in ([spaces[0]], spaces[1:], spaces):
            for layers in (None, [Layer.SEMANTIC]):
                want = await full.search(q, scope, 10, layers)
                got = await lazy.search(q, scope, 10, layers)
                assert [m for m, _ in got] == [m for m, _ in want]
                assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-6)
    many = await lazy.search_many(np.stack([vec(rng), vec(rng)]), spaces, 5)
    assert [len(r) for r in many] == [5, 5]


async def test_iter_vectors_of_one_namespace_only(records: RecordStore) -> None:
    a, b = ns_name("a"), ns_name("b")
    mine = await put(records, a, 25, seed=1)
    await put(records, b, 5, seed=2)
    got = [i for batch in [x async for x in records.iter_vectors(4, namespace=a)] for i in batch]
    assert [i.id for i in got] == sorted(m.id for m in mine)
    assert {i.namespace for i in got} == {a}
    assert np.allclose(got[0].vector, next(m for m in mine if m.id == got[0].id).embedding)


async def test_start_loads_only_pinned_namespaces(records: RecordStore) -> None:
    hot, cold = ns_name("hot"), ns_name("cold")
    await put(records, hot, 12, seed=3)
    await put(records, cold, 30, seed=4)
    index = await cache(records, pinned=(hot,))
    assert await index.count() == 12
    assert index.stats()["namespaces_held"] == 1
    hits = await index.search(vec(np.random.default_rng(5)), [cold], 3)
    assert len(hits) == 3 and all(mid.startswith(cold) for mid, _ in hits)
    assert await index.count() == 42
    assert index.stats()["loads"] == 2 and index.stats()["misses"] == 1


async def test_fill_index_on_a_cache_only_empties_it(records: RecordStore) -> None:
    ns = ns_name("x")
    await put(records, ns, 10, seed=6)
    index = await cache(records)
    await index.search(vec(np.random.default_rng(1)), [ns], 3)
    assert await index.count() == 10
    assert await fill_index(records, index, DIM) == (0, 0)
    assert await index.count() == 0 and index.on_demand() and not index.needs_rebuild()


async def test_eviction_past_the_budget_then_a_fresh_reload(records: RecordStore) -> None:
    # 1 MB holds ~1,370 16-d vectors (764 B each, ids counted): three of 2,000 cannot all stay
    spaces = [ns_name(f"n{i}") for i in range(3)]
    for i, ns in enumerate(spaces):
        await put(records, ns, 2000, seed=10 + i)
    index = await cache(records, budget_mb=1)
    q = vec(np.random.default_rng(7))
    first = await index.search(q, [spaces[0]], 5)
    await index.search(q, [spaces[1]], 5)
    await index.search(q, [spaces[2]], 5)
    assert index.stats()["evictions"] >= 1
    assert index.held_bytes() <= 1024 * 1024
    # a write to an evicted namespace lands in the records only; the reload reads it
    new = Memory(
        id=f"{spaces[0]}#new", namespace=spaces[0], layer=Layer.SEMANTIC, content="new", embedding=q
    )
    await records.put([new])
    await index.upsert([item(new)])
    again = await index.search(q, [spaces[0]], 5)
    assert again[0][0] == new.id
    assert [m for m, _ in again[1:]] == [m for m, _ in first[:4]]


async def test_a_search_never_loses_its_namespaces_to_eviction(records: RecordStore) -> None:
    spaces = [ns_name(f"n{i}") for i in range(4)]
    for i, ns in enumerate(spaces):
        await put(records, ns, 1500, seed=20 + i)
    index = await cache(records, budget_mb=1)
    q = vec(np.random.default_rng(8))
    # four namespaces at once (6,000 vectors) exceed the budget: all are searched, then trimmed
    hits = await index.search(q, spaces, 6000)
    assert len(hits) == 6000
    assert index.stats()["evictions"] >= 1
    assert index.held_bytes() <= 1024 * 1024


async def test_changes_to_held_namespaces_apply_and_others_wait_for_a_load(
    records: RecordStore,
) -> None:
    a, b = ns_name("a"), ns_name("b")
    await put(records, a, 5, seed=30)
    await put(records, b, 5, seed=31)
    index = await cache(records)
    q = vec(np.random.default_rng(9))
    await index.search(q, [a], 1)
    fresh_a = Memory(id=f"{a}#x", namespace=a, layer=Layer.SEMANTIC, content="x", embedding=q)
    fresh_b = Memory(id=f"{b}#x", namespace=b, layer=Layer.SEMANTIC, content="x", embedding=q)
    await records.put([fresh_a, fresh_b])
    await index.upsert([item(fresh_a), item(fresh_b)])
    assert await index.count() == 6  # b is not held: nothing of it in memory
    assert (await index.search(q, [a], 1))[0][0] == fresh_a.id
    assert (await index.search(q, [b], 1))[0][0] == fresh_b.id


async def test_a_deleted_vector_never_comes_back_through_a_load(records: RecordStore) -> None:
    ns = ns_name("erase")
    mems = await put(records, ns, 8, seed=40)
    index = await cache(records)
    victim = mems[0]
    assert victim.embedding is not None
    # an erasure drops the vector first, the record after: a load in between reads the record
    await index.delete([victim.id])
    hits = await index.search(victim.embedding, [ns], 8)
    assert victim.id not in {m for m, _ in hits}
    assert len(hits) == 7


async def test_changes_during_a_load_are_applied_after_it(records: RecordStore) -> None:
    ns = ns_name("race")
    mems = await put(records, ns, 3000, seed=50)
    index = await cache(records)
    q = vec(np.random.default_rng(10))
    late = Memory(id=f"{ns}#late", namespace=ns, layer=Layer.SEMANTIC, content="late", embedding=q)
    gone = mems[5]

    async def meanwhile() -> None:
        await asyncio.sleep(0)  # the load has started reading
        await records.put([late])
        await index.upsert([item(late)])
        await index.delete([gone.id])

    hits, _ = await asyncio.gather(index.search(q, [ns], 3000), meanwhile())
    ids = {m for m, _ in await index.search(q, [ns], 4000)}
    assert late.id in ids and gone.id not in ids
    assert len(ids) == 3000
    assert hits  # the first search answered


async def test_reset_drops_everything_and_reloads_the_pinned(records: RecordStore) -> None:
    hot, other = ns_name("hot"), ns_name("o")
    await put(records, hot, 4, seed=60)
    await put(records, other, 6, seed=61)
    index = await cache(records, pinned=(hot,))
    await index.search(vec(np.random.default_rng(1)), [other], 2)
    assert await index.count() == 10
    await index.reset()
    assert await index.count() == 4


async def test_vectors_of_another_size_are_left_out(records: RecordStore) -> None:
    ns = ns_name("misfit")
    await put(records, ns, 4, seed=70)
    odd = Memory(
        id=f"{ns}#odd",
        namespace=ns,
        layer=Layer.SEMANTIC,
        content="odd",
        embedding=np.ones(DIM * 2, dtype=np.float32) / np.sqrt(DIM * 2),
    )
    await records.put([odd])
    index = await cache(records)
    hits = await index.search(vec(np.random.default_rng(2)), [ns], 10)
    assert len(hits) == 4 and index.misfits == 1
