"""The language calibration of the e5 embedder (``gateway/embedding/language_calibration.py``):
the shift rides in the vectors exactly, stored texts stay comparable by cosine, and a fit on
a store whose languages sit apart brings them together."""

from __future__ import annotations

import numpy as np
import pytest

from gateway.embedding.e5_multilingual import CALIBRATION
from gateway.embedding.language_calibration import (
    EPSILON,
    LANGUAGES,
    Calibration,
    cjk_share,
    fit,
)

DIM = 16


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def calibration(rng: np.random.Generator) -> Calibration:
    shift = {"en": {"en": 0.0, "zh": 0.3}, "zh": {"en": 0.2, "zh": 0.0}}
    return Calibration(rng.normal(size=DIM).astype(np.float32) * 0.1, shift, "test")


def test_cjk_share() -> None:
    assert cjk_share("Alice likes tea") == 0.0
    assert cjk_share("用户不吃香菜") == 1.0
    assert cjk_share("Alice在医院") == pytest.approx(3 / 8)
    assert cjk_share("2026 — !!") == 0.0  # no letter at all


def test_a_query_meets_a_stored_text_at_the_centred_cosine_plus_the_shift() -> None:
    rng = np.random.default_rng(1)
    cal = calibration(rng)
    texts = ["Alice likes green tea", "爱丽丝喜欢绿茶", "Alice喜欢绿茶"]
    raw_docs = unit(rng.normal(size=(3, DIM)))
    raw_q = unit(rng.normal(size=(2, DIM)))
    docs = cal.stored(raw_docs, texts)
    queries = cal.queries(raw_q, ["What does Alice drink?", "爱丽丝喝什么？"])
    assert docs.shape == (3, DIM + 2) and queries.shape == (2, DIM + 2)
    c_docs, c_q = cal.centred(raw_docs), cal.centred(raw_q)
    for qi, ql in enumerate(LANGUAGES):
        for di, text in enumerate(texts):
            z = cjk_share(text)
            want = float(c_q[qi] @ c_docs[di]) + (1 - z) * cal.shift[ql]["en"]
            want += z * cal.shift[ql]["zh"]
            assert float(queries[qi] @ docs[di]) == pytest.approx(want, abs=1e-5)


def test_stored_texts_stay_unit_and_compare_by_their_cosine() -> None:
    rng = np.random.default_rng(2)
    cal = calibration(rng)
    texts = ["one fact", "另一个事实", "a third fact"]
    docs = cal.stored(unit(rng.normal(size=(3, DIM))), texts)
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=EPSILON**2)
    centred = docs[:, :DIM]  # the centred unit vectors
    assert np.allclose(np.linalg.norm(centred, axis=1), 1.0, atol=1e-6)
    gram = docs @ docs.T
    assert np.abs(gram - centred @ centred.T).max() <= EPSILON**2 + 1e-6


def test_fit_brings_two_languages_into_one_ranking() -> None:
    """Synthetic store: each fact's two versions share a meaning vector, and every Chinese text
    carries one language direction on top. A Chinese question then prefers any Chinese fact to
    the English version of its own answer; after the fit it finds its answer first."""
    rng = np.random.default_rng(3)
    n = 40
    meaning = unit(rng.normal(size=(n, DIM)))
    zh_dir = unit(rng.normal(size=DIM)) * 1.5
    en = unit(meaning + 0.08 * rng.normal(size=(n, DIM)))
    zh = unit(meaning + zh_dir + 0.08 * rng.normal(size=(n, DIM)))
    q_zh = unit(meaning + zh_dir + 0.08 * rng.normal(size=(n, DIM)))
    docs = [(en[i], "en", "p") for i in range(n)] + [(zh[i], "zh", "p") for i in range(n)]
    queries = [(q_zh[i], "zh", "p", {i, n + i}) for i in range(n)]
    cal = fit(docs, queries, "synthetic")
    assert cal.shift["zh"]["en"] > 0.1 and cal.shift["zh"]["zh"] == 0.0

    # a mixed store: the even facts in English, the odd ones in Chinese
    mixed = [en[i] if i % 2 == 0 else zh[i] for i in range(n)]
    langs = ["Alice" if i % 2 == 0 else "爱丽丝" for i in range(n)]  # only the script counts
    zh_text = ["爱丽丝"] * n

    def top1(stored: np.ndarray, asked: np.ndarray) -> float:
        return float(np.mean(np.argmax(asked @ stored.T, axis=1) == np.arange(n)))

    raw = top1(unit(np.array(mixed)), q_zh)
    calibrated = top1(cal.stored(np.array(mixed), langs), cal.queries(q_zh, zh_text))
    assert raw <= 0.6 and calibrated >= 0.9, (raw, calibrated)


def test_the_shipped_calibration_loads_and_round_trips(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cal = Calibration.load(CALIBRATION)
    assert cal.mean.shape == (384,) and cal.dim == 386
    assert all(cal.shift[q][q] == 0.0 for q in LANGUAGES)
    assert 0.0 < cal.shift["en"]["zh"] < 1.0 and 0.0 < cal.shift["zh"]["en"] < 1.0
    cal.save(tmp_path / "c.json")
    again = Calibration.load(tmp_path / "c.json")
    assert again.shift == cal.shift and np.allclose(again.mean, cal.mean, atol=1e-6)
