"""Gateway replicas' vector indexes over one Redis change stream (stores/redis_changes.py): what
one replica indexes or drops, another sees at its next search; its own changes are not applied
twice; a replica that missed trimmed changes rebuilds from the records."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import numpy as np
import pytest
from redis.asyncio import Redis

from gateway.core.model.models import Layer, Memory, VectorItem
from stores.faiss_index import ShardedFaissIndex
from stores.redis_changes import ReplicatedIndex
from tests.tags import fresh_tag

pytestmark = pytest.mark.real
DIM = 16


def unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


class Records:
    """The durable records a rebuild reads (only what ReplicatedIndex calls)."""

    def __init__(self) -> None:
        self.items: list[VectorItem] = []

    async def iter_vectors(self, batch_size: int = 1000) -> AsyncIterator[list[VectorItem]]:
        yield list(self.items)

    async def get(self, ids: Sequence[str]) -> dict[str, Memory]:
        return {}

    async def namespaces(self) -> list[str]:
        return sorted({i.namespace for i in self.items})


@pytest.fixture
async def pair(redis_url: str) -> AsyncIterator[tuple[ReplicatedIndex, ReplicatedIndex, list]]:
    prefix = f"mgtest-{fresh_tag(10)}"
    changed: list[frozenset[str]] = []
    records = Records()
    a, b = (
        ReplicatedIndex(
            ShardedFaissIndex(None, dim=DIM, shards=2),
            redis_url,
            records,  # type: ignore[arg-type]
            origin=name,
            dim=DIM,
            prefix=prefix,
            on_change=changed.append if name == "b" else None,
        )
        for name in ("a", "b")
    )
    for idx in (a, b):
        await idx.start()
        await idx.reset()
        await idx.flush()  # the start-up rebuild is over: changes are published from now on
    yield a, b, changed
    await a.close()
    await b.close()
    r = Redis.from_url(redis_url)
    keys = [k async for k in r.scan_iter(match=f"{prefix}:*", count=1000)]
    if keys:
        await r.delete(*keys)
    await r.aclose()


async def test_one_replicas_changes_reach_the_other_at_its_next_search(pair) -> None:  # type: ignore[no-untyped-def]
    a, b, changed = pair
    items = [VectorItem(f"m{i}", "user/u", Layer.SEMANTIC, unit(i)) for i in range(5)]
    await a.upsert(items)
    assert await b.count() == 0  # not yet: b follows on its next search
    hits = await b.search(unit(3), ["user/u"], 1)
    assert hits[0][0] == "m3" and hits[0][1] > 0.99
    assert await b.count() == 5 and changed == [frozenset({"user/u"})]
    await a.delete(["m3"])
    assert "m3" not in [i for i, _ in await b.search(unit(3), ["user/u"], 5)]
    await b.upsert([VectorItem("n1", "user/v", Layer.SEMANTIC, unit(9))])
    await b.sync()
    assert b.followed == 6  # its own change is not applied twice
    assert [i for i, _ in await a.search(unit(9), ["user/v"], 1)] == ["n1"]


async def test_a_replica_behind_the_trimmed_stream_rebuilds(pair, redis_url: str) -> None:  # type: ignore[no-untyped-def]
    """It rebuilds from the records, and lets go of the texts it holds: the changes it never
    read may have been erasures."""
    from gateway.core.recall import timecues
    from gateway.core.screening import memo

    a, b, _ = pair
    await b.sync()
    timecues.dated("met Zorblax at the harbour last week")  # what a recall on b remembers
    assert memo.held() >= 1
    items = [VectorItem(f"m{i}", "user/u", Layer.SEMANTIC, unit(i)) for i in range(4)]
    for item in items:
        await a.upsert([item])
    b._records.items = items  # type: ignore[attr-defined]  # what the records hold by now
    r = Redis.from_url(redis_url)
    await r.xtrim(a._key, maxlen=1, approximate=False)  # b never read the first three
    await r.aclose()
    assert [i for i, _ in await b.search(unit(0), ["user/u"], 1)] == ["m0"]
    assert b.rebuilds == 1 and await b.count() == 4
    assert memo.held() == 0


async def test_a_rebuild_leaves_out_records_of_another_embedding_size(pair, redis_url: str) -> None:  # type: ignore[no-untyped-def]
    """Records written under an earlier embedder keep vectors of its size: a rebuild indexes the
    others, as the start-up rebuild does, instead of failing every search of the replica."""
    a, b, _ = pair
    await b.sync()
    items = [VectorItem(f"m{i}", "user/u", Layer.SEMANTIC, unit(i)) for i in range(3)]
    for item in items:
        await a.upsert([item])
    old = VectorItem("old", "user/u", Layer.SEMANTIC, np.ones(DIM * 2, dtype=np.float32))
    b._records.items = [items[0], old, *items[1:]]  # type: ignore[attr-defined]
    r = Redis.from_url(redis_url)
    await r.xtrim(a._key, maxlen=1, approximate=False)
    await r.aclose()
    assert [i for i, _ in await b.search(unit(1), ["user/u"], 1)] == ["m1"]
    assert b.rebuilds == 1 and await b.count() == 3


async def test_changes_of_a_replica_with_another_embedding_size_are_left_out(
    pair, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    """During a rolling change of embedder, replicas publish vectors of two sizes: each indexes
    the ones of its own size, and its searches go on."""
    a, b, _ = pair
    c = ReplicatedIndex(
        ShardedFaissIndex(None, dim=DIM * 2, shards=2),
        redis_url,
        Records(),  # type: ignore[arg-type]
        origin="c",
        dim=DIM * 2,
        prefix=a._key.split(":")[0],
    )
    await c.start()
    try:
        await c.reset()
        await c.flush()
        await c.upsert([VectorItem("wide", "user/u", Layer.SEMANTIC, np.ones(DIM * 2, "f4"))])
        await a.upsert([VectorItem("m1", "user/u", Layer.SEMANTIC, unit(1))])
        assert [i for i, _ in await b.search(unit(1), ["user/u"], 5)] == ["m1"]
        assert await b.count() == 1 and b.followed == 1
        assert b.foreign == 1 and "left out 1 vectors of another size than 16" in caplog.text
    finally:
        await c.close()


@pytest.mark.parametrize(
    "fields",
    [
        {"op": "u", "o": "z", "i": "not json", "v": b""},
        {"op": "u", "o": "z"},  # no ids
        {"op": "u", "o": "z", "i": '[["x", "user/u", "semantic"]]', "v": b"\x00\x00"},
        {"op": "u", "o": "z", "i": "[[1, 2, 3]]", "v": b""},
        {"op": "d", "o": "z", "i": "[7]"},
    ],
    ids=["not-json", "no-ids", "short-vector", "not-strings", "delete-not-strings"],
)
async def test_a_change_that_does_not_decode_makes_the_replica_rebuild(
    pair, redis_url: str, caplog: pytest.LogCaptureFixture, fields: dict[str, Any]
) -> None:  # type: ignore[no-untyped-def]
    """A change this replica cannot read (another memgate version's format, a damaged entry) is
    not retried forever, failing every search: the replica rebuilds from the records instead."""
    a, b, _ = pair
    await b.sync()
    items = [VectorItem(f"m{i}", "user/u", Layer.SEMANTIC, unit(i)) for i in range(2)]
    await a.upsert(items[:1])
    r = Redis.from_url(redis_url)
    n = await r.incr(a._counter)  # the next id in the gapless numbering, as a replica takes it
    await r.xadd(a._key, fields, id=f"{n}-0")
    await r.aclose()
    await a.upsert(items[1:])
    b._records.items = items  # type: ignore[attr-defined]
    assert [i for i, _ in await b.search(unit(1), ["user/u"], 1)] == ["m1"]
    assert b.rebuilds == 1 and await b.count() == 2
    assert "could not read" in caplog.text
    await a.upsert([VectorItem("m9", "user/u", Layer.SEMANTIC, unit(9))])
    assert [i for i, _ in await b.search(unit(9), ["user/u"], 1)] == ["m9"]  # following again


async def test_a_delete_from_another_replica_empties_this_ones_caches_of_texts(pair) -> None:  # type: ignore[no-untyped-def]
    """An erasure applied on one replica: the others let go of the texts they hold too (the
    recall path's memos, the embedder's cache), when they follow its deletes. A status change
    (an archive: the text stays in the records) leaves their caches alone. An erasure's delete
    is published as older versions publish every delete (no ``k`` field)."""
    from gateway.core.recall import timecues
    from gateway.core.screening import memo

    a, b, _ = pair
    await a.upsert([VectorItem(f"m{i}", "user/u", Layer.SEMANTIC, unit(i)) for i in (1, 2)])
    await b.sync()
    timecues.dated("met Zorblax at the harbour last week")  # what a recall on b remembers
    held = memo.held()
    assert held >= 1
    await a.delete(["m1"], erased=False)
    await b.sync()
    assert memo.held() == held and await b.count() == 1
    await a.delete(["m2"])
    await b.sync()
    assert memo.held() == 0 and await b.count() == 0


async def test_deletes_of_records_erased_outright_invalidate_every_namespace(pair) -> None:  # type: ignore[no-untyped-def]
    """Followed deletes whose records are gone (a namespace erased on another replica) cannot be
    named by namespace: every cached recall goes (``EVERY_NAMESPACE``)."""
    from gateway.core.model.events import EVERY_NAMESPACE

    a, b, changed = pair
    await a.upsert([VectorItem("m1", "user/u", Layer.SEMANTIC, unit(1))])
    await b.sync()
    await a.delete(["m1"])  # the fake records hold nothing: erased outright
    await b.sync()
    assert changed[-1] == EVERY_NAMESPACE
