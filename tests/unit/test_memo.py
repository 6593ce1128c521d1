"""The recall path's per-text memos forget every text on ``memo.forget`` (called by every
erasure), so erased content does not stay in the gateway's memory."""

from __future__ import annotations

from gateway.core.recall import query_text, scoring, timecues
from gateway.core.screening import memo


def test_memos_remember_texts_until_an_erasure_forgets_them() -> None:
    memo.forget()
    secret = "Met Zorblax at the harbour last week, code 4471"
    assert timecues.dated(secret)
    assert scoring.estimate_tokens(secret) > 5
    assert query_text.names(secret, "Zorblax")
    assert memo.held() >= 3
    assert timecues.dated(secret) and timecues.dated.cache_info().hits >= 1  # remembered
    memo.forget()
    assert memo.held() == 0
    # the answers do not change with the memo
    assert timecues.dated(secret) and not timecues.dated("no time here")
    assert not query_text.names(secret, "Zorb")


def test_caches_of_texts_elsewhere_are_emptied_too_and_held_weakly() -> None:
    import gc

    from gateway.embedding import CachedEmbedder, HashEmbedder

    memo.forget()
    cache = CachedEmbedder(HashEmbedder(dim=16), max_entries=8)
    memo.also(cache)
    cache.embed(["the locker code word is pumpkin", "another secret"])
    assert memo.held() == 2
    memo.forget()
    assert memo.held() == 0 and len(cache) == 0
    assert cache.misses == 2  # an erasure keeps the counters
    cache.embed(["the locker code word is pumpkin"])
    assert cache.misses == 3  # embedded again: nothing was kept
    del cache
    gc.collect()
    assert memo.held() == 0  # a holder no one else keeps is let go


def test_the_gateways_embedder_cache_is_emptied_by_an_erasure(tmp_path: object) -> None:
    """The composition root registers the embedder's cache (query texts, memories' texts)."""
    from pathlib import Path

    from gateway.embedding import CachedEmbedder
    from gateway.settings import Settings
    from gateway.wiring import build_service

    service = build_service(
        Settings(data_dir=Path(str(tmp_path)), embedder="hash", injection_embedder="")
    )
    embedder = service.embedder
    assert isinstance(embedder, CachedEmbedder)
    embedder.embed(["where is the spare key hidden"])
    assert len(embedder) == 1
    memo.forget()
    assert len(embedder) == 0
