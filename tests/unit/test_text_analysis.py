"""``stores.text_analysis``: what the lexical search of both record stores remembers about its
scopes (``ScopeStats``)."""

from __future__ import annotations

import sqlite3

import pytest

from gateway.core.model.models import Layer, Memory
from stores import sqlite_fts, text_analysis


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


def test_a_count_over_the_whole_index_is_not_remembered_as_the_namespaces_count() -> None:
    """In a shared index the vocabulary gives a term's count over every namespace: an upper
    bound, enough to keep a term under the line now, but not the namespaces' own count. Kept as
    that count, a later, lower line would leave out a term the namespaces hardly use."""
    conn = sqlite3.connect(":memory:")
    conn.execute(sqlite_fts.CREATE)
    ours, theirs = "user/ours", "user/theirs"
    docs = [(ours, "kayak trip"), *[(theirs, f"kayak club {i}") for i in range(15)]]
    for rowid, (ns, text) in enumerate(docs, 1):
        doc = sqlite_fts.document(
            Memory(id=str(rowid), namespace=ns, layer=Layer.EPISODIC, content=text)
        )
        sqlite_fts.index(conn, rowid, doc)
    scope_tokens = sqlite_fts.scope_of([ours], ())
    stats = text_analysis.ScopeStats()

    def kept(searched: int) -> list[str]:  # common = 0.05: the line is searched // 20
        return sqlite_fts.distinctive(
            conn, ["kayak"], scope_tokens, searched, 10_000, 0.05, stats, [ours]
        )

    assert kept(400) == ["kayak"]  # line 20: 16 in the whole index, so under it here too
    # line 10 (the namespaces' size moved): "kayak" is in 1 of ours, 16 of the whole index
    assert kept(200) == ["kayak"]


def test_common_terms_are_a_fraction_of_the_searched_memories() -> None:
    from stores.text_analysis import COMMON_MIN_DOCS, most_documents

    assert most_documents(COMMON_MIN_DOCS - 1, 0.05) is None  # small scopes keep every term
    assert most_documents(10_000, 0.05) == 500
    assert most_documents(1_000_000, 0.05) == 50_000
    assert most_documents(1_000_000, 0.0) is None  # off
