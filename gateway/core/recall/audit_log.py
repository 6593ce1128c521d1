"""Audit rows and access statistics written off the hot path. Audit: ``AuditLog.add`` only queues an entry (stamped now); a
background task writes the queue to the ledger in one batch after ``interval_s``, and ``flush``
(called on close) writes what is left; a batch the ledger refuses is kept for the next try. A
recall (or a ``Get``) therefore never waits for the ledger; ``QueryAudit`` flushes first, so it
shows the reads just made."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import replace
from datetime import UTC, datetime

from gateway.core.model.control import AuditEntry
from gateway.core.ports.control_ports import AuditLedger
from gateway.core.ports.ports import RecordStore

log = logging.getLogger("memgate.audit")


class AuditLog:
    def __init__(
        self, ledger: AuditLedger, interval_s: float = 0.25, max_pending: int = 10_000
    ) -> None:
        self._ledger = ledger
        self._interval = interval_s
        self._max = max_pending
        self._pending: list[AuditEntry] = []
        self._task: asyncio.Task[None] | None = None
        self._failing = False
        self._writing = asyncio.Lock()  # one batch at a time: a flush waits for one under way
        self.dropped = 0

    def add(self, entry: AuditEntry) -> None:
        if len(self._pending) >= self._max:
            self.dropped += 1  # the ledger is far behind: never grow without bound
            return
        self._pending.append(entry if entry.at else replace(entry, at=time.time()))
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._later())

    async def _later(self) -> None:
        # until nothing waits: rows added during a write, or kept after a failed one, too
        while self._pending:
            await asyncio.sleep(self._interval)
            await self.flush()

    async def flush(self) -> None:
        """Write what is queued (after a batch being written, if any: when this returns, every
        row added before it is in the ledger); on failure keep it (up to ``max_pending``) for
        the next try."""
        async with self._writing:
            await self._write()

    async def _write(self) -> None:
        batch, self._pending = self._pending, []
        if not batch:
            return
        try:
            await self._ledger.audit(batch)
        except Exception:  # noqa: BLE001 - an audit failure must not fail or slow recalls
            kept = (batch + self._pending)[: self._max]
            self.dropped += len(batch) + len(self._pending) - len(kept)
            self._pending = kept
            if not self._failing:
                log.exception("could not write %d audit rows; kept, trying again", len(batch))
            self._failing = True
            return
        if self._failing:
            log.info("audit rows written again")
            self._failing = False

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.flush()
        if self._pending:
            log.error("closing: %d audit rows could not be written", len(self._pending))


#: access statistics are written at most this often, for every recall since
TOUCH_EVERY_S = 0.5


class AccessTouches:
    """Access statistics of recalled memories, batched: one ``touch`` per ``TOUCH_EVERY_S`` for
    all recalls (best effort: a lost batch only ages a memory a little sooner)."""

    def __init__(self, records: RecordStore) -> None:
        self._records = records
        self._pending: list[str] = []
        self._at = datetime.now(UTC)
        self._task: asyncio.Task[None] | None = None

    def add(self, ids: list[str], now: datetime) -> None:
        self._pending.extend(ids)
        self._at = now
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self, after_s: float = TOUCH_EVERY_S) -> None:
        # until nothing waits: ids added while a batch was written, too
        while self._pending:
            await asyncio.sleep(after_s)
            pending, self._pending = self._pending, []
            with contextlib.suppress(Exception):  # access stats are best effort
                await self._records.touch(pending, self._at)

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await self._flush(0.0)
