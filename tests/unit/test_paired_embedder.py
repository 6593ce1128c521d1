"""The paired embedder (gateway/embedding/paired.py): two models in one unit vector — a stored
text half and half, a query weighted by its language — so one dot product is the weighted sum
of the two cosines; the cache keeps query vectors apart from stored texts' vectors."""

from __future__ import annotations

import numpy as np
import pytest

from gateway.embedding.cache import CachedEmbedder
from gateway.embedding.hashed import HashEmbedder
from gateway.embedding.paired import (
    CJK_SHARE,
    ENGLISH_SHARE,
    QUERY_CJK_SHARE,
    STORED_SHARE,
    PairedEmbedder,
    minilm_share,
)


def test_the_share_follows_the_language() -> None:
    assert minilm_share("Alice does not eat cilantro") == ENGLISH_SHARE
    assert minilm_share("用户不吃香菜") == pytest.approx(CJK_SHARE)
    mixed = minilm_share("Alice 不吃香菜")
    assert CJK_SHARE < mixed < ENGLISH_SHARE
    assert minilm_share("2024-05-01 !!") == ENGLISH_SHARE  # no letters: the English default


class _Other(HashEmbedder):
    name = "other"

    def embed(self, texts):  # type: ignore[no-untyped-def]
        return super().embed([t[::-1] for t in texts])  # another space


def test_one_dot_product_is_the_weighted_sum_of_both_cosines() -> None:
    first, second = HashEmbedder(), _Other()
    paired = PairedEmbedder(first, second)
    texts = ["Alice lives in Berlin", "爱丽丝住在柏林", "Bob has two dogs"]
    stored, queries = paired.embed(texts), paired.embed_queries(texts)
    for v in (stored, queries):
        assert v.shape == (3, first.dim + second.dim) and v.dtype == np.float32
        assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    d = np.full(3, STORED_SHARE)
    q = np.array([minilm_share(t, QUERY_CJK_SHARE) for t in texts])
    assert q[1] == pytest.approx(0.0) and q[0] == q[2] == ENGLISH_SHARE  # Chinese: USE alone
    c1, c2 = first.embed(texts), second.embed(texts)
    expected = np.sqrt(np.outer(q, d)) * (c1 @ c1.T) + np.sqrt(np.outer(1 - q, 1 - d)) * (c2 @ c2.T)
    assert np.allclose(queries @ stored.T, expected, atol=1e-5)
    assert paired.embed([]).shape == (0, paired.dim)


def test_the_cache_keeps_query_vectors_apart() -> None:
    paired = PairedEmbedder(HashEmbedder(), _Other())
    cached = CachedEmbedder(paired, max_entries=16)
    text = "用户不吃香菜"
    stored, query = cached.embed([text])[0], cached.embed_queries([text])[0]
    assert not np.allclose(stored, query)  # one text, two vectors: stored and asked
    assert np.allclose(cached.embed_queries([text])[0], query)
    assert np.allclose(cached.embed([text])[0], stored)
    assert (cached.hits, cached.misses) == (2, 2)


def test_the_real_pair_meets_a_fact_across_languages() -> None:
    from gateway.embedding import build_embedder

    e = build_embedder("minilm+use", cache_size=0)
    assert e.dim == 384 + 512
    zh, en, other = e.embed(["用户不吃香菜", "The user does not eat cilantro", "Bob has two dogs"])
    assert float(zh @ en) > float(zh @ other) + 0.15
