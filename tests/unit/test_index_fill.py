"""``fill_index``: the one fill of a vector index from the records (start-up, recall workers,
a replica behind the change stream), here from the embedded record store."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from gateway.core.apply.index_fill import fill_index
from gateway.core.model.models import Layer, Memory, VectorItem
from stores.faiss_index import ShardedFaissIndex
from stores.sqlite_records import SqliteRecordStore

DIM = 8


def item(mid: str, dim: int = DIM, seed: int = 0) -> VectorItem:
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return VectorItem(mid, "user/u", Layer.SEMANTIC, v / np.linalg.norm(v))


async def test_vectors_of_another_size_are_left_out_and_the_rest_indexed(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    index = ShardedFaissIndex(None, dim=DIM, shards=2)
    await index.start()
    await index.upsert([item("stale", seed=9)])  # a fill starts from an empty index
    records = SqliteRecordStore(tmp_path / "r.db")
    await records.start()
    vectors = [item("a", seed=1), item("old", dim=DIM * 2), item("b", seed=2), item("c", seed=3)]
    await records.put([Memory(v.id, v.namespace, v.layer, v.id) for v in vectors])
    await records.set_embeddings([(v.id, v.vector) for v in vectors])
    with caplog.at_level(logging.WARNING, logger="memgate.index_fill"):
        assert await fill_index(records, index, DIM) == (3, 1)
    assert await index.count() == 3
    assert [i for i, _ in await index.search(item("c", seed=3).vector, ["user/u"], 1)] == ["c"]
    assert "1 records have embeddings of another size than 8" in caplog.text
    misfits: list[str] = []
    assert await fill_index(records, index, DIM, misfits) == (3, 1)
    assert misfits == ["old"]  # for the runtime to re-embed
    await index.close()
    await records.close()
