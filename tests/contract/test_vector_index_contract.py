"""VectorIndex contract (gateway.core.ports.ports.VectorIndex), run against every way it is deployed:
FAISS in memory, FAISS persisted to a data dir, the persisted one behind the circuit breaker, inside
``BroadcastIndex`` (recall workers) and inside ``ReplicatedIndex`` (replicas).
(FAISS internals — sharding, crash points — are in tests/unit/test_faiss_index.py.)"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from gateway.core.model.models import Layer, VectorItem
from gateway.core.ports.ports import VectorIndex
from gateway.recall_workers.broadcast import BroadcastIndex
from stores.breaker import Breaker, BreakerPolicy, guard
from stores.faiss_index import ShardedFaissIndex
from tests.tags import fresh_tag

DIM = 16


def unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def near(v: np.ndarray, seed: int, noise: float) -> np.ndarray:
    w = v + noise * unit(seed)
    return (w / np.linalg.norm(w)).astype(np.float32)


@pytest.fixture(
    params=[
        "memory",
        "disk",
        "disk+breaker",
        "disk+broadcast",
        pytest.param("replicated", marks=pytest.mark.real),
    ]
)
async def index(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[VectorIndex]:
    data = None if request.param == "memory" else tmp_path / "faiss"
    raw: VectorIndex = ShardedFaissIndex(data, dim=DIM, shards=4)
    if request.param == "replicated":  # a gateway replica's index (stores/redis_changes.py)
        from stores.redis_changes import ReplicatedIndex

        url = request.getfixturevalue("redis_url")
        prefix = f"mgtest-{fresh_tag(10)}"
        raw = ReplicatedIndex(raw, url, records=None, origin="a", dim=DIM, prefix=prefix)  # type: ignore[arg-type]
    if request.param.endswith("+broadcast"):  # the index recall workers follow
        raw = BroadcastIndex(raw, lambda change: None)
    await raw.start()
    store: VectorIndex = raw
    if request.param.endswith("+breaker"):
        store = guard(VectorIndex, raw, Breaker("vectors", raw, BreakerPolicy()))
    try:
        yield store
    finally:
        await raw.close()
        if request.param == "replicated":
            await _drop_keys(request.getfixturevalue("redis_url"), prefix)


async def _drop_keys(url: str, prefix: str) -> None:
    from redis.asyncio import Redis

    r = Redis.from_url(url)
    keys = [k async for k in r.scan_iter(match=f"{prefix}:*", count=1000)]
    if keys:
        await r.delete(*keys)
    await r.aclose()


async def test_search_many_answers_each_row_like_search(index: VectorIndex) -> None:
    items = [
        VectorItem(f"s{i}", "user/a", Layer.SEMANTIC if i % 3 else Layer.EPISODIC, unit(100 + i))
        for i in range(30)
    ] + [VectorItem(f"b{i}", "user/b", Layer.SEMANTIC, unit(200 + i)) for i in range(10)]
    await index.upsert(items)
    queries = np.vstack([unit(300 + i) for i in range(6)])
    for namespaces, layers in (
        (["user/a"], None),
        (["user/a", "user/b"], [Layer.SEMANTIC]),
        (["user/nobody"], None),
    ):
        rows = await index.search_many(queries, namespaces, 4, layers)
        assert len(rows) == len(queries)
        for q, row in zip(queries, rows, strict=True):
            single = await index.search(q, namespaces, 4, layers)
            assert [h[0] for h in row] == [h[0] for h in single]
            assert [h[1] for h in row] == pytest.approx([h[1] for h in single], abs=1e-6)
    assert await index.search_many(np.zeros((0, DIM), np.float32), ["user/a"], 4) == []


async def test_satisfies_the_protocol(index: VectorIndex) -> None:
    assert isinstance(index, VectorIndex)
    await index.ping()


async def test_nearest_first_by_cosine(index: VectorIndex) -> None:
    q = unit(1)
    items = [
        VectorItem("close", "user/a", Layer.SEMANTIC, near(q, 2, 0.1)),
        VectorItem("mid", "user/a", Layer.SEMANTIC, near(q, 3, 1.0)),
        VectorItem("far", "user/a", Layer.SEMANTIC, (-q).astype(np.float32)),
    ]
    await index.upsert(items)
    hits = await index.search(q, ["user/a"], 3)
    assert [h[0] for h in hits] == ["close", "mid", "far"]
    assert hits[0][1] == pytest.approx(float(np.dot(q, items[0].vector)), abs=1e-5)
    assert hits[2][1] == pytest.approx(-1.0, abs=1e-5)
    assert await index.count() == 3


async def test_search_stays_within_namespaces_and_layers(index: VectorIndex) -> None:
    q = unit(4)
    await index.upsert(
        [
            VectorItem("a-sem", "user/a", Layer.SEMANTIC, q),
            VectorItem("a-epi", "user/a", Layer.EPISODIC, q),
            VectorItem("b-sem", "user/b", Layer.SEMANTIC, q),
        ]
    )
    assert {h[0] for h in await index.search(q, ["user/a"], 10)} == {"a-sem", "a-epi"}
    assert [h[0] for h in await index.search(q, ["user/a"], 10, [Layer.EPISODIC])] == ["a-epi"]
    assert {h[0] for h in await index.search(q, ["user/a", "user/b"], 10, [Layer.SEMANTIC])} == {
        "a-sem",
        "b-sem",
    }
    assert await index.search(q, ["user/nobody"], 10) == []


async def test_upsert_replaces_by_id_and_delete_removes(index: VectorIndex) -> None:
    q = unit(5)
    await index.upsert([VectorItem("m", "user/a", Layer.SEMANTIC, (-q).astype(np.float32))])
    await index.upsert([VectorItem("m", "user/a", Layer.SEMANTIC, q)])  # same id: replaced
    hits = await index.search(q, ["user/a"], 5)
    assert hits == [("m", pytest.approx(1.0, abs=1e-5))]
    await index.upsert([VectorItem("m", "user/b", Layer.SEMANTIC, q)])  # moved namespace
    assert await index.search(q, ["user/a"], 5) == []
    assert [h[0] for h in await index.search(q, ["user/b"], 5)] == ["m"]
    await index.delete(["m", "never-there"])
    assert await index.search(q, ["user/b"], 5) == [] and await index.count() == 0


async def test_reset_drops_everything(index: VectorIndex) -> None:
    q = unit(6)
    await index.upsert([VectorItem(f"m{i}", "user/a", Layer.SEMANTIC, unit(i)) for i in range(20)])
    assert await index.count() == 20
    await index.reset()
    assert await index.count() == 0 and await index.search(q, ["user/a"], 5) == []


async def test_flushed_vectors_survive_a_restart(tmp_path: Path) -> None:
    q = unit(7)
    first = ShardedFaissIndex(tmp_path / "f", dim=DIM, shards=4)
    await first.start()
    assert first.needs_rebuild()  # nothing persisted yet
    await first.upsert([VectorItem("kept", "user/a", Layer.SEMANTIC, q)])
    await first.flush()
    await first.close()
    again = ShardedFaissIndex(tmp_path / "f", dim=DIM, shards=4)
    await again.start()
    assert not again.needs_rebuild()
    assert [h[0] for h in await again.search(q, ["user/a"], 1)] == ["kept"]
    await again.close()
