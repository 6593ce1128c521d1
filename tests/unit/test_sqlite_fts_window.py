"""The embedded store's lexical search past ``LEXICAL_APPROX_MIN`` (``stores.sqlite_fts_window``):
its BM25 is FTS5's own, it returns what the exact search returns while every match is a
candidate, and a term's window is judged per namespace."""

from __future__ import annotations

import random
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gateway.core.model.models import Layer, Memory
from stores import sqlite_fts, sqlite_fts_window, text_analysis
from stores.sqlite_records import SqliteRecordStore

T0 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
WORDS = [
    "tea",
    "coffee",
    "river",
    "mountain",
    "violin",
    "garden",
    "lisbon",
    "bicycle",
    "paint",
    "novel",
    "chess",
    "bread",
]


def _mem(ns: str, i: int, text: str) -> Memory:
    when = T0 + timedelta(minutes=i)
    return Memory(
        id=f"{ns}-{i:04d}",
        namespace=ns,
        layer=Layer.EPISODIC,
        content=text,
        created_at=when,
        updated_at=when,
    )


def _corpus(ns: str, n: int, seed: int = 7) -> list[Memory]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(2, 14))]
        out.append(_mem(ns, i, " ".join(words)))
    return out


async def _store(tmp_path: Path, mems: list[Memory]) -> SqliteRecordStore:
    store = SqliteRecordStore(tmp_path / "records.db")
    await store.start()
    await store.put(mems)
    return store


def test_varints_read_sqlite_varints() -> None:
    assert sqlite_fts_window.varints(b"\xce\x10\x85\xafi\x02") == [10000, 88041, 2]
    assert sqlite_fts_window.varints(b"\x81\x80\x00") == [1 << 14]


async def test_python_bm25_is_fts5_bm25(tmp_path: Path) -> None:
    store = await _store(tmp_path, _corpus("user/a", 300) + _corpus("user/b", 50, seed=9))
    await store.close()
    conn = sqlite3.connect(tmp_path / "records.db")
    rows, avgdl = sqlite_fts_window.totals(conn)
    assert rows == conn.execute("SELECT count(*) FROM memory_fts_docsize").fetchone()[0] == 350
    terms = ["tea", "violin", "lisbon"]
    counts = sqlite_fts.index_counts(conn, terms)
    weights = {t: sqlite_fts_window.idf(rows, counts[t]) for t in terms}
    want = conn.execute(
        "SELECT rowid, bm25(memory_fts, 1.0, 0.0) FROM memory_fts WHERE memory_fts MATCH ?",
        (sqlite_fts.match(terms, ""),),
    ).fetchall()
    assert len(want) > 100
    for rowid, score in want:
        text, size = conn.execute(
            "SELECT c.c0, d.sz FROM memory_fts_content c JOIN memory_fts_docsize d "
            "ON d.id = c.id WHERE c.id = ?",
            (rowid,),
        ).fetchone()
        got = sqlite_fts_window.bm25(
            text, sum(sqlite_fts_window.varints(size)), terms, weights, avgdl
        )
        assert got == pytest.approx(score, rel=1e-9, abs=1e-12)


async def test_every_match_a_candidate_gives_the_exact_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await _store(tmp_path, _corpus("user/a", 120))
    queries = ["tea with a novel", "violin in the garden", "lisbon by bicycle, bread"]
    exact = [await store.keyword_search(["user/a"], [], q, 10) for q in queries]
    monkeypatch.setattr(text_analysis, "LEXICAL_APPROX_MIN", 0)
    monkeypatch.setattr(sqlite_fts_window, "candidates", lambda limit: 10_000)
    approx = [await store.keyword_search(["user/a"], [], q, 10) for q in queries]
    await store.close()
    assert all(len(x) == 10 for x in exact)
    for want, got in zip(exact, approx, strict=True):
        assert [i for i, _ in got] == [i for i, _ in want]
        assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9)


async def test_a_window_is_judged_per_namespace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``global`` says "violin" in 40 memories, the user in 2 old ones: past the window (5) the
    user's keep their match, ``global``'s oldest matches stop being candidates."""
    shared = [_mem("global", i, f"violin lesson number {i}") for i in range(40)]
    user = [
        _mem("user/u", -10 - i, f"my violin from {city}") for i, city in enumerate(["Oslo", "Rome"])
    ]
    store = await _store(tmp_path, shared + user)
    monkeypatch.setattr(text_analysis, "LEXICAL_APPROX_MIN", 0)
    monkeypatch.setattr(text_analysis, "TERM_WINDOW", 5)
    hits = [i for i, _ in await store.keyword_search(["user/u", "global"], [], "violin", 50)]
    await store.close()
    assert {m.id for m in user} <= set(hits)
    held = [m.id for m in shared[-5:]]
    assert set(hits) == {m.id for m in user} | set(held)


async def test_an_index_that_never_held_a_row_has_no_totals(tmp_path: Path) -> None:
    """A fresh store's averages record is empty: the search must not fail on it (it did: a
    gateway's first recall before any write answered INTERNAL)."""
    store = await _store(tmp_path, [])
    assert await store.keyword_search(["user/a"], [], "violin", 5) == []
    await store.close()
    assert sqlite_fts_window.totals(sqlite3.connect(tmp_path / "records.db")) == (0, 0.0)
