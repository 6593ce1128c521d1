"""The formation benchmark, reduced (two conversations, ten sessions each, from longdialog-v1):
floors under the rule extractor's extraction and promotion figures, on both backends."""

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
    assert r["turns"] > 400 and r["stable_facts"] >= 20
    assert r["extraction_precision"] >= 0.45, r
    assert r["extraction_recall"] >= 0.3, r
    assert r["formed"] >= 1 and r["promotion_precision"] >= 0.9, r
    assert r["candidates_matching_passing_mentions"] == 0, r
