"""The apply lane's look-ahead: texts embedded ahead are used, only the rest is embedded, and a
failed look-ahead is redone rather than lost."""

from __future__ import annotations

import numpy as np
import pytest

from gateway.core.apply.embed_ahead import EmbedAhead
from tests.fakes.embedder import CountingEmbedder


async def test_ahead_rows_are_reused_and_only_the_rest_is_embedded() -> None:
    emb = CountingEmbedder()
    ahead = EmbedAhead(emb)
    ahead.start([("w1", "alpha"), ("w2", "beta")])
    got = await ahead.vectors([("w1", "alpha"), ("w2", "beta"), ("w3", "gamma")])
    assert emb.calls == [["alpha", "beta"], ["gamma"]]
    assert np.allclose(got, emb.inner.embed(["alpha", "beta", "gamma"]))


async def test_unused_or_failed_look_ahead_is_redone() -> None:
    emb = CountingEmbedder(failures=1)
    ahead = EmbedAhead(emb)
    ahead.start([("w1", "alpha")])
    got = await ahead.vectors([("w1", "alpha")])
    assert emb.calls == [["alpha"], ["alpha"]]
    assert np.allclose(got, emb.inner.embed(["alpha"]))
    ahead.start([("w9", "other")])  # never asked for: dropped
    got = await ahead.vectors([("w2", "beta")])
    assert np.allclose(got, emb.inner.embed(["beta"]))
    assert (await ahead.vectors([])).shape == (0, emb.dim)


@pytest.mark.parametrize("n", [1, 5])
async def test_order_is_kept(n: int) -> None:
    emb = CountingEmbedder()
    ahead = EmbedAhead(emb)
    items = [(f"w{i}", f"text {i}") for i in range(n)]
    ahead.start(items[::2])
    got = await ahead.vectors(items)
    assert np.allclose(got, emb.inner.embed([t for _, t in items]))
