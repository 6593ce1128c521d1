"""Recall in Chinese, English and across the two (bench/multilingual_eval.py), reduced: two
people's 30 short facts each, paraphrased questions, through the gateway. Floors: the fusion
never ranks a short fact below where the embedder alone would (English, MiniLM); with the
paired embedder Chinese recall is close to English and a question finds a fact stored in the
other language. Full figures: docs/BENCHMARKS-HISTORY.md "Recall in Chinese and across languages"."""

from __future__ import annotations

import pytest

from bench.multilingual_eval import run


@pytest.mark.slow
def test_short_facts_keep_the_embedders_own_ranking() -> None:
    t = run("embedded", "minilm", personas=2, conditions=["en→en"], forms=["fact"])["table"]
    en = t["fact en→en"]
    assert en["n"] == 60 and en["r1"] >= en["alone_r1"], t


@pytest.mark.slow
def test_chinese_and_cross_language_recall_with_the_paired_embedder() -> None:
    t = run(
        "embedded", "minilm+use", personas=2, conditions=["en→en", "zh→zh", "en→zh"], forms=["fact"]
    )["table"]
    en, zh, cross = t["fact en→en"], t["fact zh→zh"], t["fact en→zh"]
    assert en["r5"] >= 85 and en["r1"] >= en["alone_r1"], t
    assert zh["r5"] >= 70 and zh["r5"] >= en["r5"] - 20, t
    assert cross["r5"] >= 75, t
