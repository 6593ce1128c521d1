"""The recall path's per-text memos forget every text on ``memo.forget`` (called by every
erasure), so erased content does not stay in the gateway's memory."""

from __future__ import annotations

from gateway.core import memo, query_text, scoring, timecues


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
