"""The long-dialogue benchmark's references that run without a gateway, and how a run names
its backends (bench/recall_eval.py)."""

from __future__ import annotations

import argparse
from collections import Counter

import pytest

from bench.dialogues.generate import load
from bench.recall_eval import DATA, against_dense, backends_of, figures, run_dense, select


def test_backends_are_named_once_in_order_and_an_unknown_one_is_refused() -> None:
    assert backends_of("embedded") == ["embedded"]
    assert backends_of("both, dense,embedded") == ["embedded", "real", "dense"]
    with pytest.raises(argparse.ArgumentTypeError, match="unknown backend 'neo4j'"):
        backends_of("embedded,neo4j")


def test_the_in_process_dense_reference_finds_a_turn_asked_in_its_own_words() -> None:
    """Each turn is indexed as the gateway is given it ("Speaker: text"); asked with exactly
    that text, the turn comes first (the hash embedder maps equal texts to equal vectors)."""
    conv = select(load(DATA), ids=("conv-01",))[0]
    said = Counter(f"{t['speaker']}: {t['text']}" for s in conv["sessions"] for t in s["turns"])
    turns = [t for t in conv["sessions"][3]["turns"] if said[f"{t['speaker']}: {t['text']}"] == 1]
    turns = turns[:3]
    conv = {
        **conv,
        "questions": [
            {
                "id": f"q{i}",
                "category": "single-hop",
                "kind": "echo",
                "question": f"{t['speaker']}: {t['text']}",
                "evidence": [t["id"]],
            }
            for i, t in enumerate(turns)
        ],
    }
    run = run_dense([conv], (1, 10), "hash", "speaker")
    assert run.turns == sum(len(s["turns"]) for s in conv["sessions"])
    assert len(run.latencies_ms) == 3 and all(ms > 0 for ms in run.latencies_ms)
    assert [r["ranks"] for r in run.results] == [{t["id"]: 1} for t in turns]
    fig = figures(run)
    assert fig["categories"]["overall"]["R@1"] == 1.0


def test_a_gateways_recall_is_given_as_a_multiple_of_the_in_process_librarys() -> None:
    out = {
        "command": "python -m bench.recall_eval --backend embedded,bm25,dense",
        "embedded": {"recall_p50_ms": 12.0},
        "bm25": {"recall_p50_ms": 0.5},
        "dense": {"recall_p50_ms": 8.0},
    }
    lines = against_dense(out)
    assert out["embedded"]["recall_p50_vs_dense"] == 1.5
    assert "recall_p50_vs_dense" not in out["bm25"]
    assert lines == ["recall p50 embedded: 12.0 ms = 1.50x the in-process dense library (8.0 ms)"]
    assert against_dense({"embedded": {"recall_p50_ms": 12.0}}) == []  # no reference run
