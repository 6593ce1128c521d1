"""Long-dialogue recall (bench/recall_eval.py) at a reduced size, with floors a few points below
what the recall engine measures today, so a regression in writing, routing or ranking breaks it.

2 conversations (~1,100 turns written as episodic memories), 15 questions per category each, the
real MiniLM embedder. The figures are deterministic for a given dataset and engine (the sample is
seeded); the margins absorb small ranking ties.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.dialogues.generate import load
from bench.recall_eval import DATA, evaluate, figures, render, select
from tests.e2e.conftest import gateway_settings, running_gateway

CONVERSATIONS = 2
PER_CATEGORY = 15

# R@k floors (fractions): what the engine measured at this size when the benchmark was added
# (in the comments, embedded / Redis+Neo4j) minus ~5 points (one question is ~3 points of a
# category, ~0.7 of overall). See docs/BENCHMARKS.md "Long-dialogue recall (our benchmark)".
FLOORS: dict[str, dict[str, float]] = {
    "single-hop": {"R@5": 0.21, "R@10": 0.23, "R@25": 0.35},  # 26.7 28.3 40.0
    "multi-hop": {"R@5": 0.14, "R@10": 0.15, "R@25": 0.18},  # 18.9 20.6 23.3
    "temporal": {"R@1": 0.58, "R@5": 0.89, "R@10": 0.89},  # 63.9 94.4 94.4
    "open-domain": {"R@5": 0.10, "R@10": 0.13, "R@25": 0.21},  # 15.0 18.3 26.7
    "adversarial": {"R@5": 0.52, "R@10": 0.52, "R@25": 0.52},  # 57.4 57.4 57.4
    "overall": {"R@1": 0.24, "R@5": 0.38, "R@10": 0.40, "R@25": 0.44},  # 27.9 42.2 43.5 48.2
}


def _check(fig: dict[str, object]) -> list[str]:
    problems = []
    table = fig["categories"]
    assert isinstance(table, dict)
    for cat, floors in FLOORS.items():
        for metric, floor in floors.items():
            value = table[cat][metric]
            if value is None or value < floor:
                problems.append(f"{cat} {metric} = {value} < floor {floor}")
    return problems


def _run(tmp_path: Path, **backend: str) -> dict[str, object]:
    convs = select(load(DATA), CONVERSATIONS, PER_CATEGORY)
    settings = gateway_settings(
        tmp_path, embedder="minilm", recall_cache_ttl_s=0.0, wait_timeout_s=60.0, **backend
    )
    with running_gateway(settings) as gw:
        run = evaluate(gw.address, convs, (1, 5, 10, 25), backend="test", say=lambda _: None)
    fig = figures(run)
    print(render(fig, run.ks))
    assert fig["skipped_writes"] == 0, "every turn must be stored"
    return fig


@pytest.mark.slow
def test_recall_floors_embedded(tmp_path: Path) -> None:
    fig = _run(tmp_path)
    problems = _check(fig)
    assert not problems, "\n".join(problems) + "\n" + render(fig, (1, 5, 10, 25))


@pytest.mark.slow
@pytest.mark.real
def test_recall_floors_real(tmp_path: Path, redis_url: str, neo4j_uri: str) -> None:
    fig = _run(tmp_path, redis_url=redis_url, neo4j_uri=neo4j_uri)
    problems = _check(fig)
    assert not problems, "\n".join(problems) + "\n" + render(fig, (1, 5, 10, 25))
