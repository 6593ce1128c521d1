"""Audit rows and access statistics written off the recall path (``core/recall/audit_log.py``): batched
in the background, flushed on close and before QueryAudit reads, kept when the ledger refuses
them, and a row added while a batch is being written is written after it. The steps are ordered
by events, not by sleeping, so a busy machine cannot reorder them."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime

from gateway.core.model.control import AuditEntry
from gateway.core.recall.audit_log import AccessTouches, AuditLog


class _Ledger:
    def __init__(self) -> None:
        self.batches: list[list[AuditEntry]] = []
        self.writing = asyncio.Event()  # a batch write has started
        self.release = asyncio.Event()  # let a held write finish
        self.release.set()

    async def audit(self, entries: Sequence[AuditEntry]) -> None:
        self.writing.set()
        await self.release.wait()
        self.batches.append(list(entries))


class _FlakyLedger(_Ledger):
    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures
        self.failed = asyncio.Event()

    async def audit(self, entries: Sequence[AuditEntry]) -> None:
        if self.failures:
            self.failures -= 1
            self.failed.set()
            raise OSError("ledger: disk I/O error")
        await super().audit(entries)


def _entry(detail: str) -> AuditEntry:
    return AuditEntry("master", "recall", "user/u", "", detail)


async def _until(check: object, timeout: float = 5.0) -> None:
    async def wait() -> None:
        while not check():  # type: ignore[operator]
            await asyncio.sleep(0.005)

    await asyncio.wait_for(wait(), timeout)


async def test_audit_log_batches_off_the_path_and_flushes_on_close() -> None:
    ledger = _Ledger()
    log = AuditLog(ledger, interval_s=0.05)  # type: ignore[arg-type]
    for i in range(3):
        log.add(_entry(f"q{i}"))
    assert ledger.batches == []  # nothing written on the caller's path
    await _until(lambda: ledger.batches)
    assert [[e.detail for e in b] for b in ledger.batches] == [["q0", "q1", "q2"]]
    assert all(e.at > 0 for e in ledger.batches[0])
    log.add(_entry("last"))
    await log.close()
    assert ledger.batches[-1][0].detail == "last"


async def test_a_flush_returns_once_every_row_queued_before_it_is_written() -> None:
    """QueryAudit flushes before it reads: a row whose batch is being written by the background
    task when the flush comes must be in the ledger when the flush returns."""
    ledger = _Ledger()
    ledger.release.clear()
    log = AuditLog(ledger, interval_s=0.01)  # type: ignore[arg-type]
    log.add(_entry("m1"))
    await asyncio.wait_for(ledger.writing.wait(), 5)  # the background write of m1 is held
    log.add(_entry("m2"))
    flushed = asyncio.create_task(log.flush())
    await asyncio.sleep(0.02)
    assert not flushed.done()  # it waits for the batch under way
    ledger.release.set()
    await asyncio.wait_for(flushed, 5)
    assert [e.detail for b in ledger.batches for e in b] == ["m1", "m2"]
    await log.close()


async def test_audit_rows_the_ledger_refuses_are_kept_and_written_later() -> None:
    ledger = _FlakyLedger(failures=2)
    log = AuditLog(ledger, interval_s=0.02)  # type: ignore[arg-type]
    log.add(_entry("q0"))
    await asyncio.wait_for(ledger.failed.wait(), 5)  # the first write failed
    log.add(_entry("q1"))
    await _until(lambda: ledger.batches)
    assert [e.detail for b in ledger.batches for e in b] == ["q0", "q1"] and log.dropped == 0
    await log.close()


async def test_a_row_added_while_a_batch_is_written_is_written_without_another_recall() -> None:
    ledger = _Ledger()
    ledger.release.clear()
    log = AuditLog(ledger, interval_s=0.01)  # type: ignore[arg-type]
    log.add(_entry("q0"))
    await asyncio.wait_for(ledger.writing.wait(), 5)  # the first batch is being written
    log.add(_entry("q1"))
    ledger.release.set()
    await _until(lambda: len(ledger.batches) == 2)
    assert [[e.detail for e in b] for b in ledger.batches] == [["q0"], ["q1"]]
    await log.close()


async def test_access_touches_added_while_a_batch_is_written_are_written_too() -> None:
    class Records:
        def __init__(self) -> None:
            self.touched: list[list[str]] = []
            self.writing = asyncio.Event()
            self.release = asyncio.Event()

        async def touch(self, ids: list[str], at: object) -> None:
            self.writing.set()
            await self.release.wait()
            self.touched.append(ids)

    records = Records()
    touches = AccessTouches(records)  # type: ignore[arg-type]
    now = datetime.now(UTC)
    touches.add(["m1"], now)
    await asyncio.wait_for(records.writing.wait(), 5)  # the first batch is being written
    touches.add(["m2"], now)
    records.release.set()
    await _until(lambda: len(records.touched) == 2)
    assert records.touched == [["m1"], ["m2"]]
    await touches.close()
