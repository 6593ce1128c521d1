"""The paired embedder (gateway/embedding/paired.py): two models in one unit vector, weighted per
text by its language, so one dot product is the weighted sum of the two cosines."""

from __future__ import annotations

import numpy as np
import pytest

from gateway.embedding.hashed import HashEmbedder
from gateway.embedding.paired import CJK_SHARE, ENGLISH_SHARE, PairedEmbedder, minilm_share


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
    v = paired.embed(texts)
    assert v.shape == (3, first.dim + second.dim) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    a = np.array([minilm_share(t) for t in texts])
    c1, c2 = first.embed(texts), second.embed(texts)
    expected = np.sqrt(np.outer(a, a)) * (c1 @ c1.T) + np.sqrt(np.outer(1 - a, 1 - a)) * (c2 @ c2.T)
    assert np.allclose(v @ v.T, expected, atol=1e-5)
    assert paired.embed([]).shape == (0, paired.dim)


def test_the_real_pair_meets_a_fact_across_languages() -> None:
    from gateway.embedding import build_embedder

    e = build_embedder("minilm+use", cache_size=0)
    assert e.dim == 384 + 512
    zh, en, other = e.embed(["用户不吃香菜", "The user does not eat cilantro", "Bob has two dogs"])
    assert float(zh @ en) > float(zh @ other) + 0.15
