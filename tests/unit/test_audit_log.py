"""Audit rows and access statistics written off the recall path (``core/recall/audit_log.py``): batched
in the background, flushed on close and before QueryAudit reads, kept when the ledger refuses
them, and a row added while a batch is being written is written after it. The steps are ordered
by events, not by sleeping, so a busy machine cannot reorder them. The ledger is the shared
in-memory fake (``tests/fakes/ledger.py``), the records the embedded store, each held by a
subclass."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from gateway.core.model.control import AuditEntry
from gateway.core.model.models import Layer, Memory
from gateway.core.recall.audit_log import AccessTouches, AuditLog
from stores.sqlite_records import SqliteRecordStore
from tests.fakes.ledger import InMemoryLedger


class _HeldLedger(InMemoryLedger):
    """The shared in-memory ledger, whose audit writes can be held until ``release`` is set and
    refused ``failures`` times; ``batches``: the writes it took, as they came."""

    def __init__(self, failures: int = 0) -> None:
        super().__init__()
        self.batches: list[list[AuditEntry]] = []
        self.writing = asyncio.Event()  # a batch write has started
        self.release = asyncio.Event()  # let a held write finish
        self.release.set()
        self.failures = failures
        self.failed = asyncio.Event()

    async def audit(self, entries: Sequence[AuditEntry]) -> None:
        if self.failures:
            self.failures -= 1
            self.failed.set()
            raise OSError("ledger: disk I/O error")
        self.writing.set()
        await self.release.wait()
        await super().audit(entries)
        self.batches.append(list(entries))

    async def details(self) -> list[str]:
        """The rows' texts in the ledger, oldest first."""
        return [e.detail for e in reversed(await self.query_audit("", "", 0.0, 100))]


def _entry(detail: str) -> AuditEntry:
    return AuditEntry("master", "recall", "user/u", "", detail)


async def _until(check: Callable[[], object], timeout: float = 5.0) -> None:
    async def wait() -> None:
        while not check():
            await asyncio.sleep(0.005)

    await asyncio.wait_for(wait(), timeout)


async def test_audit_log_batches_off_the_path_and_flushes_on_close() -> None:
    ledger = _HeldLedger()
    log = AuditLog(ledger, interval_s=0.05)
    for i in range(3):
        log.add(_entry(f"q{i}"))
    assert ledger.batches == []  # nothing written on the caller's path
    await _until(lambda: ledger.batches)
    assert [[e.detail for e in b] for b in ledger.batches] == [["q0", "q1", "q2"]]
    assert all(e.at > 0 for e in ledger.batches[0])
    log.add(_entry("last"))
    await log.close()
    assert await ledger.details() == ["q0", "q1", "q2", "last"]


async def test_a_flush_returns_once_every_row_queued_before_it_is_written() -> None:
    """QueryAudit flushes before it reads: a row whose batch is being written by the background
    task when the flush comes must be in the ledger when the flush returns."""
    ledger = _HeldLedger()
    ledger.release.clear()
    log = AuditLog(ledger, interval_s=0.01)
    log.add(_entry("m1"))
    await asyncio.wait_for(ledger.writing.wait(), 5)  # the background write of m1 is held
    log.add(_entry("m2"))
    flushed = asyncio.create_task(log.flush())
    await asyncio.sleep(0.02)
    assert not flushed.done()  # it waits for the batch under way
    ledger.release.set()
    await asyncio.wait_for(flushed, 5)
    assert await ledger.details() == ["m1", "m2"]
    await log.close()


async def test_audit_rows_the_ledger_refuses_are_kept_and_written_later() -> None:
    ledger = _HeldLedger(failures=2)
    log = AuditLog(ledger, interval_s=0.02)
    log.add(_entry("q0"))
    await asyncio.wait_for(ledger.failed.wait(), 5)  # the first write failed
    log.add(_entry("q1"))
    await _until(lambda: ledger.batches)
    assert await ledger.details() == ["q0", "q1"] and log.dropped == 0
    await log.close()


async def test_a_row_added_while_a_batch_is_written_is_written_without_another_recall() -> None:
    ledger = _HeldLedger()
    ledger.release.clear()
    log = AuditLog(ledger, interval_s=0.01)
    log.add(_entry("q0"))
    await asyncio.wait_for(ledger.writing.wait(), 5)  # the first batch is being written
    log.add(_entry("q1"))
    ledger.release.set()
    await _until(lambda: len(ledger.batches) == 2)
    assert [[e.detail for e in b] for b in ledger.batches] == [["q0"], ["q1"]]
    await log.close()


class _HeldRecords(SqliteRecordStore):
    """The embedded record store, whose ``touch`` writes are held until ``release`` is set;
    ``touched``: the batches written."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.touched: list[list[str]] = []
        self.writing = asyncio.Event()
        self.release = asyncio.Event()

    async def touch(self, ids: Sequence[str], at: datetime) -> None:
        self.writing.set()
        await self.release.wait()
        await super().touch(ids, at)
        self.touched.append(list(ids))


async def test_access_touches_added_while_a_batch_is_written_are_written_too(
    tmp_path: Path,
) -> None:
    records = _HeldRecords(tmp_path / "r.db")
    await records.start()
    await records.put(
        [Memory("m1", "user/u", Layer.SEMANTIC, "a"), Memory("m2", "user/u", Layer.SEMANTIC, "b")]
    )
    touches = AccessTouches(records)
    now = datetime.now(UTC)
    touches.add(["m1"], now)
    await asyncio.wait_for(records.writing.wait(), 5)  # the first batch is being written
    touches.add(["m2"], now)
    records.release.set()
    await _until(lambda: len(records.touched) == 2)
    assert records.touched == [["m1"], ["m2"]]
    await touches.close()
    got = await records.get(["m1", "m2"])
    assert {mid: m.access_count for mid, m in got.items()} == {"m1": 1, "m2": 1}
    await records.close()
