"""The formation benchmark, reduced (conversations 1 and 4 of longdialog-v1, every session; one
partly in Chinese; python -m bench.formation_fixture derives it): floors under the rule
extractor's extraction and promotion figures, on both backends. Measured on this fixture
(docs/BENCHMARKS-HISTORY.md "Memory formation"): extraction P 1.0 / R 0.69, promotion P 1.0 (4 formed) /
R 0.17; the floors leave a margin for small changes of the rules, none for a distractor
(someone else's fact, reported speech, a question, a hypothetical, a past habit, a joke, small
talk) becoming a candidate or a memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.formation_eval import run

DATA = Path(__file__).resolve().parents[1] / "data" / "formation_dialogues.json"


@pytest.mark.parametrize("backend", ["embedded", pytest.param("real", marks=pytest.mark.real)])
def test_formation_floors(backend: str, request: pytest.FixtureRequest) -> None:
    if backend == "real":  # the real servers must be there (never skipped in CI)
        request.getfixturevalue("redis_url")
        request.getfixturevalue("neo4j_uri")
    r = run(DATA, backend)
    assert r["turns"] > 1000 and r["stable_facts"] >= 60 and r["promotable_facts"] >= 20
    assert r["extraction_precision"] >= 0.9, r
    assert r["extraction_recall"] >= 0.6, r
    assert r["formed"] >= 3 and r["promotion_precision"] >= 0.9, r
    assert r["promotion_recall"] >= 0.12, r
    assert r["candidates_matching_distractors"] == {}, r
    assert r["candidates_matching_passing_mentions"] == 0, r
