"""The offline memory-QA evaluation runs in CI (seed 000 §6): cross-session questions only,
real embedder, thresholds that a regression in writing, routing or ranking would break."""

from __future__ import annotations

import json
from pathlib import Path

from bench.memqa import DATA, evaluate
from tests.e2e.conftest import gateway_settings, running_gateway

MIN_RECALL_AT_5 = 0.85
MIN_PRECISION_AT_1 = 0.75


def test_memory_qa(tmp_path: Path, backend: dict[str, str], ns: str) -> None:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    settings = gateway_settings(tmp_path, embedder="minilm", **backend)
    with running_gateway(settings) as gw:
        report = evaluate(gw.address, data, k=5, namespace=ns)
    summary = "\n".join(report.lines())
    assert report.recall_at_k >= MIN_RECALL_AT_5, summary
    assert report.precision_at_1 >= MIN_PRECISION_AT_1, summary
    assert report.consistency == 1.0, summary  # a changed fact never answers with its old value
