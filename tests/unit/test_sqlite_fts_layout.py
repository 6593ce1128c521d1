"""The embedded record store's FTS5 layout: a database written with the older unscoped
``detail=none`` table is re-indexed on start, keeps every document and ranks as before."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from gateway.core.model.models import Layer, Memory
from stores.sqlite_fts import CREATE
from stores.sqlite_records import SqliteRecordStore

T0 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
TEXTS = [
    "The user prefers dark mode in every editor",
    "Switch the terminal to dark colours, dark everywhere",
    "Likes green tea in the morning",
    "Booked the flights to Lisbon for the conference in May",
    "Mode of transport: bicycle when it is dry",
]


def _mems(ns: str) -> list[Memory]:
    return [
        Memory(
            id=f"{ns}-m{i}",
            namespace=ns,
            layer=Layer.SEMANTIC,
            content=t,
            created_at=T0,
            updated_at=T0,
        )
        for i, t in enumerate(TEXTS)
    ]


def _fts_sql(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        row = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'memory_fts'").fetchone()
    return str(row[0])


async def test_an_older_fts_layout_is_reindexed_with_the_same_ranking(tmp_path: Path) -> None:
    path = tmp_path / "records.db"
    store = SqliteRecordStore(path)
    await store.start()
    await store.put(_mems("user/a"))
    want = await store.keyword_search(["user/a"], [Layer.SEMANTIC], "dark mode editor", 10)
    await store.close()
    assert len(want) == 3 and _fts_sql(path) == CREATE

    # what 0.4 wrote: the same terms in an unscoped detail=none table
    with sqlite3.connect(path) as conn:
        docs = conn.execute("SELECT rowid, terms FROM memory_fts").fetchall()
        conn.execute("DROP TABLE memory_fts")
        conn.execute(
            "CREATE VIRTUAL TABLE memory_fts USING fts5(terms, tokenize = 'ascii', detail = none)"
        )
        conn.executemany("INSERT INTO memory_fts (rowid, terms) VALUES (?, ?)", docs)
    assert "detail = none" in _fts_sql(path)

    store = SqliteRecordStore(path)
    await store.start()
    try:
        assert _fts_sql(path) == CREATE
        got = await store.keyword_search(["user/a"], [Layer.SEMANTIC], "dark mode editor", 10)
        assert got == want
        with sqlite3.connect(path) as conn:
            assert conn.execute("SELECT rowid, terms FROM memory_fts").fetchall() == docs
        # and it goes on indexing new writes
        extra = _mems("user/b")[0]
        await store.put([extra])
        hits = await store.keyword_search(["user/b"], [Layer.SEMANTIC], "editor", 10)
        assert [h[0] for h in hits] == [extra.id]
    finally:
        await store.close()


async def test_a_stale_scope_size_still_finds_the_scoped_matches_pages_down(
    tmp_path: Path,
) -> None:
    """When the remembered size of a scope says it is the whole index, the search leaves the
    scope out of the MATCH: another namespace's better matches then fill the first pages and are
    dropped row by row, and the search must page on until it has the scoped ones."""
    store = SqliteRecordStore(tmp_path / "records.db")
    await store.start()
    try:
        crowd = [
            Memory(
                id=f"big-{i}",
                namespace="user/big",
                layer=Layer.SEMANTIC,
                content=f"dark dark dark note {i}",
                created_at=T0,
                updated_at=T0,
            )
            for i in range(90)
        ]
        await store.put(crowd + _mems("user/a"))
        scoped = ["user/a"], [Layer.SEMANTIC]
        want = await store.keyword_search(*scoped, "dark", 2)
        assert [i for i, _ in want] == ["user/a-m1", "user/a-m0"]

        everything = len(crowd) + len(TEXTS)
        store._scope_stats.remember(store._scope_stats.key(["user/a"], ()), everything)
        store._scope_stats.remember(store._scope_stats.key(*scoped), everything)
        got = await store.keyword_search(*scoped, "dark", 2)
        assert got == want
    finally:
        await store.close()
