"""Fixtures of the ledger's contract suites, one suite per area port of
``gateway.core.ports.control_ports`` (audit, aliases, proposals, review, erasure, settings,
pending facts, formation turns, tasks), each run over every adapter — the embedded SQLite ledger,
the Redis one on a server and on a Redis Cluster — and over the unit tests' in-memory fake."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from gateway.core.ports.control_ports import Ledger
from stores.sqlite_ledger import SqliteLedger
from tests.contract.ledger.opening import MakeLedger, opened
from tests.fakes.ledger import InMemoryLedger, LedgerRecords
from tests.tags import fresh_tag

#: the adapters that keep their records in a store of their own (a file, a server)
STORED: list[Any] = [
    "sqlite",
    pytest.param("redis", marks=pytest.mark.real),
    pytest.param("redis-cluster", marks=[pytest.mark.real, pytest.mark.slow]),
]


@asynccontextmanager
async def _ledgers(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[MakeLedger]:
    if kind == "memory":  # the unit tests' fake (tests/fakes/ledger.py), held to the same contract
        records = LedgerRecords()
        yield lambda: InMemoryLedger(records)
        return
    if kind == "sqlite":
        yield lambda: SqliteLedger(tmp_path / "l.db")
        return
    from redis.asyncio import Redis

    from stores.redis_ledger import RedisLedger

    if kind == "redis":
        url, cluster = request.getfixturevalue("redis_url"), False
    else:
        url, cluster = f"redis://127.0.0.1:{request.getfixturevalue('cluster')[0]}/0", True
    prefix = f"mgtest-{fresh_tag(10)}"
    yield lambda: RedisLedger(url, prefix=prefix, cluster=cluster)
    if not cluster:  # the cluster is the session's own, stopped after it
        r = Redis.from_url(url)
        keys = [k async for k in r.scan_iter(match=f"{prefix}:*", count=1000)]
        if keys:
            await r.delete(*keys)
        await r.aclose()


@pytest.fixture(params=["memory", *STORED])
async def make_ledger(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MakeLedger]:
    """A factory of ledgers over one store (``opening.MakeLedger``), for every adapter."""
    async with _ledgers(request.param, request, tmp_path) as make:
        yield make


@pytest.fixture(params=STORED)
async def make_stored_ledger(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[MakeLedger]:
    """``make_ledger`` for the adapters with records of their own to upgrade (files, keys)."""
    async with _ledgers(request.param, request, tmp_path) as make:
        yield make


@pytest.fixture
async def ledger(make_ledger: MakeLedger) -> AsyncIterator[Ledger]:
    async with opened(make_ledger) as store:
        yield store
