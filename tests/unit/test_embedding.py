"""Tests for gateway.embedding (MiniLM numpy embedder, hash embedder, cache, factory)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from gateway.embedding import (
    CachedEmbedder,
    Embedder,
    HashEmbedder,
    MiniLMEmbedder,
    build_embedder,
)
from tests.fakes.embedder import CountingEmbedder

REPO_ROOT = Path(__file__).resolve().parents[2]
GOLDEN_DIR = REPO_ROOT / "tests" / "data" / "minilm_golden"
MIN_COSINE = 0.9999
INSTALL_HINT = "memgate model install"


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def golden() -> tuple[list[str], np.ndarray]:
    texts = json.loads((GOLDEN_DIR / "texts.json").read_text(encoding="utf-8"))["texts"]
    vectors = np.load(GOLDEN_DIR / "vectors.npy")
    assert len(texts) == 100
    assert vectors.shape == (100, 384) and vectors.dtype == np.float32
    return texts, vectors


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def _cos_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def _assert_unit_rows(v: np.ndarray, dim: int = 384) -> None:
    assert v.dtype == np.float32
    assert v.ndim == 2 and v.shape[1] == dim
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


# --------------------------------------------------------------------------- MiniLM


def test_minilm_matches_golden_vectors(minilm, golden):
    texts, expected = golden
    got = minilm.embed(texts)
    _assert_unit_rows(got)
    assert got.shape == expected.shape
    cos = _cos_rows(got, expected)
    worst = int(np.argmin(cos))
    print(
        f"\nMiniLM golden check: min cosine {cos.min():.10f} (text #{worst}), "
        f"max |diff| {np.abs(got - expected).max():.2e}"
    )
    assert cos.min() >= MIN_COSINE, f"text #{worst} {texts[worst]!r}: cosine {cos[worst]}"


def test_minilm_protocol_and_attributes(minilm):
    assert isinstance(minilm, Embedder)
    assert minilm.name == "all-MiniLM-L6-v2:numpy"
    assert minilm.dim == 384
    assert minilm.max_tokens == 256


def test_minilm_order_preserved_with_mixed_lengths(golden):
    texts, expected = golden
    # Small batch size forces several length buckets in one call; the input
    # order deliberately interleaves very short, medium and truncated texts.
    model = MiniLMEmbedder(batch_size=4)
    idx = [29, 24, 3, 14, 41, 25, 30, 7, 63, 22, 0, 36, 27, 18, 68, 10, 26, 32]
    lengths = model.token_lengths([texts[i] for i in idx])
    assert len(set(lengths)) > 8 and lengths != sorted(lengths)

    batched = model.embed([texts[i] for i in idx])
    singles = np.vstack([model.embed([texts[i]]) for i in idx])
    np.testing.assert_allclose(batched, singles, atol=1e-5)
    assert _cos_rows(batched, expected[idx]).min() >= MIN_COSINE
    # Same text at different positions of one call gets the same vector.
    again = model.embed([texts[5], texts[29], texts[5]])
    np.testing.assert_allclose(again[0], again[2], atol=1e-6)


def test_minilm_truncates_long_text_like_reference(minilm, golden):
    texts, expected = golden
    long_text = texts[29]
    # The raw text is far longer than the model's limit ...
    assert len(long_text.split()) > 400
    assert minilm.token_lengths([long_text]) == [256]
    vec = minilm.embed([long_text])
    assert _cos_rows(vec, expected[29:30])[0] >= MIN_COSINE
    # ... and anything past the 256th token has no effect.
    longer = minilm.embed([long_text + " completely different trailing words " * 50])
    np.testing.assert_allclose(longer, vec, atol=1e-6)
    # Chinese long text (index 30) too.
    assert _cos_rows(minilm.embed([texts[30]]), expected[30:31])[0] >= MIN_COSINE


def test_minilm_empty_inputs(minilm):
    out = minilm.embed([])
    assert out.shape == (0, 384) and out.dtype == np.float32
    # Empty / whitespace-only strings tokenise to [CLS][SEP] and still embed.
    v = minilm.embed(["", "   ", "a"])
    _assert_unit_rows(v)
    np.testing.assert_allclose(v[0], v[1], atol=1e-6)


def test_minilm_semantic_sanity(minilm):
    v = minilm.embed(
        [
            "I don't like cilantro.",
            "Please never recommend dishes with coriander.",
            "SELECT * FROM memory_items WHERE user_id = ?",
        ]
    )
    assert float(v[0] @ v[1]) > float(v[0] @ v[2])


def test_minilm_concurrent_embed_is_consistent(minilm, golden):
    texts, expected = golden
    short = [i for i in range(len(texts)) if i not in (29, 30)]  # keep the test fast
    chunks = [short[k::4] for k in range(4)] * 2
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda idx: minilm.embed([texts[i] for i in idx]), chunks))
    for idx, res in zip(chunks, results, strict=True):
        assert _cos_rows(res, expected[idx]).min() >= MIN_COSINE


def test_minilm_rejects_bare_string(minilm):
    with pytest.raises(TypeError):
        minilm.embed("not a list")


def test_minilm_missing_model_files_error(tmp_path):
    with pytest.raises(RuntimeError) as exc:
        MiniLMEmbedder(model_dir=tmp_path)
    assert INSTALL_HINT in str(exc.value)


# --------------------------------------------------------------------------- HashEmbedder


def test_hash_embedder_shape_and_protocol():
    emb = HashEmbedder()
    assert isinstance(emb, Embedder)
    assert emb.name == "hash-384" and emb.dim == 384
    assert emb.embed([]).shape == (0, 384)
    assert emb.embed([]).dtype == np.float32
    _assert_unit_rows(emb.embed(["hello world", "", "   ", "a", "我不吃香菜。", "🙂"]))
    assert HashEmbedder(dim=64).embed(["x"]).shape == (1, 64)


def test_hash_embedder_deterministic_in_process():
    texts = ["I don't like cilantro.", "用户偏好简洁的回复。", ""]
    a = HashEmbedder().embed(texts)
    b = HashEmbedder().embed(list(reversed(texts)))[::-1]
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a[0], HashEmbedder().embed([texts[0], texts[0]])[1])


def test_hash_embedder_deterministic_across_processes():
    texts = ["I don't like cilantro.", "用户偏好简洁的回复。", "Order ORD-2024-7891"]
    code = (
        "import json, sys\n"
        "from gateway.embedding import HashEmbedder\n"
        "texts = json.loads(sys.stdin.read())\n"
        "print(json.dumps(HashEmbedder().embed(texts).tolist()))\n"
    )
    outputs = []
    for seed in ("1", "2"):
        env = {
            **os.environ,
            "PYTHONHASHSEED": seed,
            "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]),
        }
        proc = subprocess.run(
            [sys.executable, "-c", code],
            input=json.dumps(texts),
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO_ROOT,
            check=True,
            timeout=60,
        )
        outputs.append(np.array(json.loads(proc.stdout), dtype=np.float32))
    np.testing.assert_array_equal(outputs[0], outputs[1])
    np.testing.assert_array_equal(outputs[0], HashEmbedder().embed(texts))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I don't like cilantro.", "I don't like cilantro!"),
        ("I don't like cilantro.", "i DON'T like   cilantro."),
        (
            "The refund flow: look up the order first, then call the payment API.",
            "The refund flow: look up the order first, then call the payments API.",
        ),
        ("用户偏好简洁的回复。", "用户偏好简洁的回复"),
        ("我不吃香菜。", "我不吃香菜"),
    ],
)
def test_hash_embedder_near_duplicates_are_close(a, b):
    v = HashEmbedder().embed([a, b])
    assert float(v[0] @ v[1]) > 0.9


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I don't like cilantro.", "Project A uses Rust and PostgreSQL 16."),
        (
            "The coffee machine I bought last month leaks water.",
            "SELECT * FROM memory_items WHERE user_id = ?",
        ),
        ("我不吃香菜。", "Project A uses Rust and PostgreSQL 16."),
        ("用户偏好简洁的回复。", "上周帮用户排查了数据库连接超时的问题。"),
    ],
)
def test_hash_embedder_unrelated_texts_are_far(a, b):
    v = HashEmbedder().embed([a, b])
    assert abs(float(v[0] @ v[1])) < 0.3


def test_hash_embedder_identical_texts_identical_vectors():
    v = HashEmbedder().embed(["same text", "same text"])
    np.testing.assert_array_equal(v[0], v[1])


# --------------------------------------------------------------------------- CachedEmbedder


def test_cached_embedder_hits_misses_and_single_inner_call():
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, max_entries=16)
    assert isinstance(cached, Embedder)
    assert cached.name == "counting" and cached.dim == 384

    first = cached.embed(["a", "b", "a"])
    assert (cached.hits, cached.misses) == (1, 2)  # duplicate "a" embedded once
    assert inner.calls == [["a", "b"]]

    second = cached.embed(["b", "c", "a", "d"])
    assert (cached.hits, cached.misses) == (3, 4)
    assert inner.calls[-1] == ["c", "d"]  # only the misses, in one call
    np.testing.assert_array_equal(second[[0, 2]], first[[1, 0]])

    cached.embed(["a", "b", "c", "d"])
    assert len(inner.calls) == 2  # all hits: inner not called
    assert (cached.hits, cached.misses) == (7, 4)

    out = cached.embed([])
    assert out.shape == (0, 384) and out.dtype == np.float32
    assert len(inner.calls) == 2


def test_cached_result_equals_uncached():
    texts = ["I don't like cilantro.", "", "用户偏好简洁的回复。", "I don't like cilantro."]
    plain = HashEmbedder().embed(texts)
    cached = CachedEmbedder(HashEmbedder())
    np.testing.assert_array_equal(cached.embed(texts), plain)  # misses
    np.testing.assert_array_equal(cached.embed(texts), plain)  # hits
    assert cached.misses == 3 and cached.hits == 5


def test_cached_minilm_equals_uncached(minilm, golden):
    texts, _ = golden
    sample = texts[:10]
    cached = CachedEmbedder(minilm, max_entries=8)
    warm = cached.embed(sample[:5])
    mixed = cached.embed(sample)
    np.testing.assert_allclose(mixed, minilm.embed(sample), atol=1e-6)
    np.testing.assert_allclose(mixed[:5], warm, atol=1e-6)
    assert cached.name == "all-MiniLM-L6-v2:numpy"
    assert (cached.hits, cached.misses) == (5, 10)


def test_cached_embedder_results_cannot_corrupt_cache():
    cached = CachedEmbedder(HashEmbedder())
    ref = cached.embed(["x"]).copy()
    out = cached.embed(["x"])
    out[:] = 0.0  # returned arrays are fresh copies
    np.testing.assert_array_equal(cached.embed(["x"]), ref)


def test_cached_embedder_lru_eviction():
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, max_entries=2)
    cached.embed(["a", "b"])
    cached.embed(["a"])  # a is now most recently used
    cached.embed(["c"])  # evicts b
    assert len(cached) == 2
    cached.embed(["a", "c"])
    assert len(inner.calls) == 2
    cached.embed(["b"])
    assert inner.calls[-1] == ["b"]
    with pytest.raises(ValueError):
        CachedEmbedder(HashEmbedder(), max_entries=0)


def test_cached_embedder_thread_safety():
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, max_entries=64)
    texts = [f"text number {i}" for i in range(100)]
    expected = HashEmbedder().embed(texts)

    def work(k: int) -> None:
        chunk = texts[k % 10 :: 7]
        np.testing.assert_array_equal(cached.embed(chunk), expected[k % 10 :: 7])

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(work, range(200)))
    assert len(cached) <= 64
    total_requested = sum(len(texts[k % 10 :: 7]) for k in range(200))
    assert cached.hits + cached.misses == total_requested


# --------------------------------------------------------------------------- factory


def test_factory_unknown_kind():
    with pytest.raises(ValueError) as exc:
        build_embedder("word2vec")
    msg = str(exc.value)
    assert "word2vec" in msg and "minilm" in msg and "hash" in msg


def test_factory_hash_with_and_without_cache():
    cached = build_embedder("hash")
    assert isinstance(cached, CachedEmbedder) and cached.max_entries == 1024
    bare = build_embedder("hash", cache_size=0)
    assert isinstance(bare, HashEmbedder)
    for emb in (cached, bare):
        assert isinstance(emb, Embedder) and emb.dim == 384
    np.testing.assert_array_equal(cached.embed(["q"]), bare.embed(["q"]))
    with pytest.raises(ValueError):
        build_embedder("hash", cache_size=-1)


def test_factory_minilm_numpy(tmp_path):
    emb = build_embedder("minilm-numpy", cache_size=0)
    assert isinstance(emb, MiniLMEmbedder) and emb.name == "all-MiniLM-L6-v2:numpy"
    for kind in ("minilm", "minilm-int8", "minilm-numpy"):
        with pytest.raises(RuntimeError) as exc:
            build_embedder(kind, model_dir=str(tmp_path))
        assert INSTALL_HINT in str(exc.value)
