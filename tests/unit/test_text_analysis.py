"""``stores.text_analysis``: what the lexical search of both record stores remembers about its
scopes (``ScopeStats``)."""

from __future__ import annotations

import pytest

from stores import text_analysis


def test_scope_stats_remember_term_counts_per_namespaces_and_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [100.0]
    monkeypatch.setattr(text_analysis.time, "monotonic", lambda: now[0])
    stats = text_analysis.ScopeStats(term_ttl_s=30.0, terms=3)
    stats.remember_term(["a"], "leo", 30, 500)
    assert stats.term_count(["a"], "leo", 30) == 31  # more than the bound: bound + 1
    assert stats.term_count(["a", "b"], "leo", 30) is None  # another scope
    # capped at 31: still more than any lower bound; unknown against a higher one
    assert stats.term_count(["a"], "leo", 25) == 26
    assert stats.term_count(["a"], "leo", 40) is None
    stats.remember_term(["a"], "kayak", 30, 3)  # an exact count holds against any bound
    assert stats.term_count(["a"], "kayak", 30) == 3
    assert stats.term_count(["a"], "kayak", 2) == 3
    now[0] += 30.0
    assert stats.term_count(["a"], "kayak", 30) is None  # too old
    for term in ("x", "y", "z", "w"):  # bounded: full, it starts over
        stats.remember_term(["a"], term, 30, 1)
    assert stats.term_count(["a"], "w", 30) == 1
    assert stats.term_count(["a"], "x", 30) is None
