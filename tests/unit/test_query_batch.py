"""QueryBatcher: concurrent query embeddings share a run; a lone query is not held back."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

import numpy as np
import pytest

from gateway.core.recall.query_batch import QueryBatcher
from gateway.embedding import HashEmbedder


class Gated:
    """HashEmbedder whose first run waits for ``release`` (so requests queue behind it)."""

    def __init__(self, fail_on: str = "") -> None:
        self.inner = HashEmbedder()
        self.dim = self.inner.dim
        self.name = "gated"
        self.calls: list[list[str]] = []
        self.started = threading.Event()
        self.release = threading.Event()
        self.fail_on = fail_on

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        self.started.set()
        self.release.wait(10)
        if self.fail_on in texts:
            raise RuntimeError("model failed")
        return self.inner.embed(texts)


async def test_lone_query_runs_alone_at_once() -> None:
    emb = Gated()
    emb.release.set()
    batcher = QueryBatcher(emb)
    try:
        out = await asyncio.wait_for(batcher.embed(["hello"]), 5)
    finally:
        batcher.close()
    assert emb.calls == [["hello"]]
    np.testing.assert_array_equal(out, HashEmbedder().embed(["hello"]))


async def test_waiting_queries_share_one_run_and_get_their_own_rows() -> None:
    emb = Gated()
    batcher = QueryBatcher(emb, workers=1, max_texts=32)
    try:
        first = asyncio.ensure_future(batcher.embed(["first"]))
        await asyncio.to_thread(emb.started.wait, 5)
        # the worker is busy: these queue up behind the first run
        texts = [[f"q{i}"] for i in range(10)] + [["w1", "w2", "w3"]]
        rest = [asyncio.ensure_future(batcher.embed(t)) for t in texts]
        await asyncio.sleep(0.05)
        emb.release.set()
        results = await asyncio.wait_for(asyncio.gather(first, *rest), 5)
    finally:
        batcher.close()
    assert len(emb.calls) == 2  # the first alone, then every waiting request in one run
    assert sorted(emb.calls[1]) == sorted(t for group in texts for t in group)
    ref = HashEmbedder()
    for group, got in zip([["first"], *texts], results, strict=True):
        np.testing.assert_array_equal(got, ref.embed(group))
    assert batcher.runs == 2 and batcher.texts == 1 + 13


async def test_batch_is_capped() -> None:
    emb = Gated()
    batcher = QueryBatcher(emb, workers=1, max_texts=4)
    try:
        first = asyncio.ensure_future(batcher.embed(["first"]))
        await asyncio.to_thread(emb.started.wait, 5)
        rest = [asyncio.ensure_future(batcher.embed([f"q{i}"])) for i in range(10)]
        await asyncio.sleep(0.05)
        emb.release.set()
        await asyncio.wait_for(asyncio.gather(first, *rest), 5)
    finally:
        batcher.close()
    assert [len(c) for c in emb.calls] == [1, 4, 4, 2]


async def test_a_failed_run_fails_the_requests_in_it_and_the_worker_goes_on() -> None:
    emb = Gated(fail_on="bad")
    batcher = QueryBatcher(emb, workers=1)
    try:
        first = asyncio.ensure_future(batcher.embed(["first"]))
        await asyncio.to_thread(emb.started.wait, 5)
        bad = asyncio.ensure_future(batcher.embed(["bad"]))
        other = asyncio.ensure_future(batcher.embed(["other"]))
        await asyncio.sleep(0.05)
        emb.release.set()
        assert (await asyncio.wait_for(first, 5)).shape == (1, emb.dim)
        with pytest.raises(RuntimeError, match="model failed"):
            await asyncio.wait_for(bad, 5)
        with pytest.raises(RuntimeError, match="model failed"):  # it shared the failed run
            await asyncio.wait_for(other, 5)
        # the worker survives: the next query is embedded
        assert (await asyncio.wait_for(batcher.embed(["after"]), 5)).shape == (1, emb.dim)
    finally:
        batcher.close()
