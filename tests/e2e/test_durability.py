"""M11: an acknowledged write survives an OS crash, not only a process crash. The journal drops a
payload only after the stores returned from applying it, so each store must have made the write
durable by then: the SQLite stores fsync every commit (synchronous=FULL), Neo4j forces its
transaction log at commit, and Redis must run with ``appendfsync always`` — checked at start
(refused with ``strict_durability``, a warning without)."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path

import pytest

from gateway.core.model.errors import FailedPrecondition
from gateway.core.writing.inputs import WriteInput
from gateway.settings import Settings
from gateway.wiring import build_service, build_stores
from stores.sqlite_base import SqliteDb


def test_every_sqlite_store_fsyncs_each_commit(tmp_path: Path) -> None:
    async def run() -> None:
        stores = build_stores(Settings(data_dir=tmp_path, embedder="hash", injection_embedder=""))
        for store in stores.all():
            await store.start()
        try:
            assert [await s.durability() for s in stores.all()] == ["", "", "", ""]
        finally:
            for store in stores.all():
                await store.close()
        # the level each connection really runs at (2 = FULL)
        db = SqliteDb(tmp_path / "probe.db", "", "probe")
        await db.start()
        assert await db.read(lambda c: c.execute("PRAGMA synchronous").fetchone()[0]) == 2
        await db.close()
        lax = SqliteDb(tmp_path / "lax.db", "", "lax store", synchronous="NORMAL")
        assert "synchronous=NORMAL" in lax.durability()

    asyncio.run(run())


def test_payloads_stay_in_the_journal_until_the_stores_have_the_write(tmp_path: Path) -> None:
    """The ordering M11 rests on: while a store has not returned (here: it fails), the entry
    stays pending with its payload; once it returned, the payload is gone."""

    async def run() -> None:
        svc = build_service(
            Settings(data_dir=tmp_path, embedder="hash", injection_embedder="", decay_interval_s=0)
        )
        await svc.start()
        try:
            records = svc.stores.records
            real_put = records.put
            gate = asyncio.Event()

            async def slow_put(memories):  # type: ignore[no-untyped-def]
                await gate.wait()
                await real_put(memories)

            records.put = slow_put  # type: ignore[method-assign]
            item = WriteInput(namespace="user/d", layer="semantic", content="durable tea")
            (out,) = await svc.writer.write("master", [item], False)
            await asyncio.sleep(0.3)
            path = tmp_path / "journal.db"
            with sqlite3.connect(path) as c:
                row = c.execute(
                    "SELECT applied, payload FROM journal WHERE write_id = ?", (out.id,)
                ).fetchone()
            assert row[0] == 0 and "durable tea" in row[1]
            gate.set()
            for _ in range(100):
                if (await svc.journal.counts())[0] == 0:
                    break
                await asyncio.sleep(0.05)
            with sqlite3.connect(path) as c:
                row = c.execute(
                    "SELECT applied, payload FROM journal WHERE write_id = ?", (out.id,)
                ).fetchone()
            assert row == (1, None)
            assert (await svc.stores.records.get([out.id]))[out.id].content == "durable tea"
        finally:
            await svc.close()

    asyncio.run(run())


@pytest.mark.real
def test_a_redis_without_appendfsync_always_is_refused_when_strict(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A Redis of the test's own with appendfsync everysec (the common default)."""
    from tests.e2e.gateways import PrivateRedis, free_port

    server = PrivateRedis(free_port(), tmp_path / "redis", appendfsync="everysec")
    server.start()
    try:
        _refused_when_strict(tmp_path, server.url, caplog)
    finally:
        server.stop()


def _refused_when_strict(tmp_path: Path, redis_url: str, caplog: pytest.LogCaptureFixture) -> None:

    async def start(strict: bool) -> None:
        settings = Settings(
            data_dir=tmp_path / str(strict),
            embedder="hash",
            injection_embedder="",
            redis_url=redis_url,
            strict_durability=strict,
            decay_interval_s=0,
        )
        svc = build_service(settings)
        try:
            await svc.start()
        finally:
            await svc.close()

    from stores.redis_working import RedisWorkingStore

    async def redis_says() -> str:
        store = RedisWorkingStore(redis_url)
        try:
            return await store.durability()
        finally:
            await store.close()

    problem = asyncio.run(redis_says())
    assert "appendfsync" in problem and "always" in problem
    with pytest.raises(FailedPrecondition, match="appendfsync"):
        asyncio.run(start(True))
    with caplog.at_level(logging.WARNING, logger="memgate.runtime"):
        asyncio.run(start(False))
    assert any("appendfsync" in r.getMessage() for r in caplog.records)
