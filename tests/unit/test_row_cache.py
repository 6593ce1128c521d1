"""The embedded record store's row cache (stores/row_cache.py): bounded, all-or-nothing lookups,
copies out; and only the gateway's own store has one (a recall worker's reader store sees another
process's writes, so it must not cache)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from gateway.core.model.models import Layer, Memory, Status
from gateway.settings import Settings
from gateway.wiring import _backends
from stores.row_cache import RowCache, clone
from stores.sqlite_records import SqliteRecordStore

T0 = datetime(2024, 5, 1, tzinfo=UTC)


def m(i: int) -> Memory:
    return Memory(
        id=f"m{i}",
        namespace="user/a",
        layer=Layer.SEMANTIC,
        content=f"note {i}",
        created_at=T0,
        updated_at=T0,
        metadata={"k": str(i)},
        embedding=np.ones(4, dtype=np.float32),
    )


def test_lookup_is_all_or_nothing_and_hands_out_copies_without_embeddings() -> None:
    cache = RowCache(10)
    cache.keep({"m1": m(1), "m2": m(2)})
    assert cache.lookup(["m1", "m3"]) is None
    got = cache.lookup(["m2", "m1"])
    assert got is not None and list(got) == ["m2", "m1"]
    assert got["m1"].content == "note 1" and got["m1"].embedding is None
    got["m1"].content = "mine"
    assert cache.lookup(["m1"]) == {"m1": clone(m(1)).with_changes(embedding=None)}
    found, missing = cache.split(["m3", "m2"])
    assert list(found) == ["m2"] and missing == ["m3"]


def test_clone_copies_every_field_into_a_new_object() -> None:
    # every field set away from its default, so a field the copy forgets shows up
    full = Memory(
        id="m1",
        namespace="user/a",
        layer=Layer.EPISODIC,
        content="turn",
        type="event",
        importance=0.9,
        confidence=0.7,
        source_agent="a1",
        source_session="s1",
        task_id="t1",
        created_at=T0,
        updated_at=T0,
        last_accessed_at=T0,
        access_count=3,
        version=4,
        metadata={"k": "v"},
        evidence=["e1"],
        event_time=T0,
        status=Status.SUPERSEDED,
        fact_key="key",
        entities=["alice"],
        embedding=np.ones(4, dtype=np.float32),
        context="before",
    )
    defaults = Memory(id="", namespace="", layer=Layer.SEMANTIC, content="")
    for f in dataclasses.fields(Memory):
        assert getattr(full, f.name) is not getattr(defaults, f.name) or f.name == "embedding"
    copy = clone(full)
    assert copy is not full
    for f in dataclasses.fields(Memory):
        assert getattr(copy, f.name) is getattr(full, f.name), f.name
    copy.content = "mine"
    assert full.content == "turn"


def test_bounded_dropping_the_oldest_first() -> None:
    cache = RowCache(16)
    for i in range(40):
        cache.keep({f"m{i}": m(i)})
    assert len(cache) <= 16
    assert cache.lookup(["m39"]) is not None and cache.lookup(["m0"]) is None


def test_drop_touched_and_off() -> None:
    cache = RowCache(8)
    cache.keep({"m1": m(1), "m2": m(2)})
    at = datetime(2024, 6, 1, tzinfo=UTC)
    cache.touched(["m1", "m9"], at)
    got = cache.lookup(["m1"])
    assert got is not None and (got["m1"].access_count, got["m1"].last_accessed_at) == (1, at)
    cache.drop(["m1"])
    assert cache.lookup(["m1"]) is None and cache.lookup(["m2"]) is not None
    cache.drop(None)
    assert len(cache) == 0
    off = RowCache(0)
    off.keep({"m1": m(1)})
    assert not off.enabled and off.lookup(["m1"]) is None
    with pytest.raises(ValueError):
        RowCache(-1)


def test_only_the_gateways_own_record_store_caches_rows(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, record_cache_entries=123)
    _, records, _ = _backends(settings)
    _, reader, _ = _backends(settings, reader=True)
    assert isinstance(records, SqliteRecordStore) and isinstance(reader, SqliteRecordStore)
    assert records._rows.enabled and not reader._rows.enabled
    # a replica's data dir is not locked by a SQLite journal: another process may write its
    # records, so it caches nothing either
    replica = Settings(data_dir=tmp_path, journal_backend="redis", redis_url="redis://127.0.0.1:1")
    _, shared, _ = _backends(replica)
    assert isinstance(shared, SqliteRecordStore) and not shared._rows.enabled
    with pytest.raises(ValueError, match="record_cache_entries"):
        Settings(data_dir=tmp_path, record_cache_entries=-1).validate()
