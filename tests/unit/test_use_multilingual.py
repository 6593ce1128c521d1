"""The multilingual embedder kind (USE multilingual v3, pure numpy): the Embedder promise, one
space for Chinese and English, and recall that survives vectors of another embedder's size."""

from __future__ import annotations

import numpy as np
import pytest

from gateway.core.model.models import Layer, Memory
from gateway.core.recall.fusion import Candidates
from gateway.embedding import build_embedder


@pytest.fixture(scope="module")
def use():  # type: ignore[no-untyped-def]
    return build_embedder("use-multilingual", cache_size=0)


def test_promise(use) -> None:  # type: ignore[no-untyped-def]
    texts = ["The user is allergic to peanuts.", "用户对花生过敏", "Weather is nice in Lisbon."]
    v = use.embed(texts)
    assert v.shape == (3, 512) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert use.name.startswith("use-multilingual-v3/")
    assert np.allclose(use.embed([texts[1]])[0], v[1], atol=1e-5)  # batch-mates do not matter
    assert use.embed([]).shape == (0, 512)


def test_one_space_for_chinese_and_english(use) -> None:  # type: ignore[no-untyped-def]
    en, zh, other = use.embed(
        ["The user is allergic to peanuts.", "用户对花生过敏", "我明天去北京开会"]
    )
    assert float(en @ zh) > float(en @ other) + 0.3


def test_fusion_skips_vectors_of_another_size() -> None:
    query = np.ones(512, dtype=np.float32) / np.sqrt(512)
    old = Memory("a", "user/x", Layer.SEMANTIC, "old", embedding=np.ones(384, dtype=np.float32))
    new = Memory("b", "user/x", Layer.SEMANTIC, "new", embedding=query.copy())
    c = Candidates()
    c.add_similar([old, new], query)
    assert c.dense["a"] == 0.0 and c.dense["b"] == pytest.approx(1.0)
