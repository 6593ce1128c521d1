"""An apply lane outlives a shared journal whose server is down for a while (Redis restart):
it keeps retrying, then applies what was acknowledged."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from gateway.core.commands import MemoryWrite
from gateway.core.control import JournalEntry
from gateway.core.errors import BackendUnavailable
from gateway.core.lanes import Lane
from gateway.core.models import Layer


class FlakyJournal:
    shared = True
    idle_poll_s = 0.01
    pending_count = 1

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.entries = [JournalEntry(1, "w1", "a", MemoryWrite("user/u", Layer.SEMANTIC, "x"))]
        self.applied: list[int] = []

    async def pending(
        self, limit: int, kinds: Sequence[str] = (), after: int = 0
    ) -> list[JournalEntry]:
        if self.failures:
            self.failures -= 1
            raise BackendUnavailable("redis", "journal: connection refused")
        return [e for e in self.entries if e.seq > after and e.seq not in self.applied]

    async def mark_applied(self, seqs: Sequence[int]) -> None:
        self.applied += seqs


async def test_a_lane_survives_an_unreadable_journal() -> None:
    journal = FlakyJournal(failures=3)
    applied: list[str] = []

    async def apply(entries: Sequence[JournalEntry], upcoming: object) -> None:
        applied.extend(e.write_id for e in entries)

    lane = Lane("memories", ("memory",), journal, apply, batch=10)  # type: ignore[arg-type]
    lane.start()
    try:
        for _ in range(200):
            if journal.applied:
                break
            await asyncio.sleep(0.05)
        assert applied == ["w1"] and journal.applied == [1]
        assert lane._task is not None and not lane._task.done()
    finally:
        await lane.close()
