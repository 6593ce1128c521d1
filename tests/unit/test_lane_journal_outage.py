"""An apply lane outlives a shared journal whose server is down for a while (Redis restart):
it keeps retrying, then applies what was acknowledged."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from gateway.core.journal.lanes import Lane
from gateway.core.model.commands import MemoryWrite
from gateway.core.model.control import JournalEntry
from gateway.core.model.errors import BackendUnavailable
from gateway.core.model.models import Layer


class FlakyJournal:
    """Reads fail ``failures`` times with ``error``; marking an entry dead fails
    ``dead_failures`` times (its store down meanwhile)."""

    shared = True
    idle_poll_s = 0.01
    pending_count = 1

    def __init__(
        self,
        failures: int,
        error: Exception | None = None,
        dead_failures: int = 0,
    ) -> None:
        self.failures = failures
        self.error = error or BackendUnavailable("redis", "journal: connection refused")
        self.dead_failures = dead_failures
        self.entries = [JournalEntry(1, "w1", "a", MemoryWrite("user/u", Layer.SEMANTIC, "x"))]
        self.applied: list[int] = []
        self.dead: list[int] = []

    async def pending(
        self, limit: int, kinds: Sequence[str] = (), after: int = 0
    ) -> list[JournalEntry]:
        if self.failures:
            self.failures -= 1
            raise self.error
        done = set(self.applied) | set(self.dead)
        return [e for e in self.entries if e.seq > after and e.seq not in done]

    async def mark_applied(self, seqs: Sequence[int]) -> None:
        self.applied += seqs

    async def mark_dead(self, seq: int, error: str) -> None:
        if self.dead_failures:
            self.dead_failures -= 1
            raise BackendUnavailable("sqlite", "journal: disk I/O error")
        self.dead.append(seq)


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


async def _until(check: object, lane: Lane) -> None:
    for _ in range(200):
        if check():  # type: ignore[operator]
            return
        await asyncio.sleep(0.05)


async def test_a_lane_outlives_any_error_reading_the_journal_and_says_why() -> None:
    journal = FlakyJournal(3, ValueError("journal entry 1: payload is not JSON"))
    applied: list[str] = []
    errors: list[str] = []

    async def apply(entries: Sequence[JournalEntry], upcoming: object) -> None:
        errors.append(lane.last_error)
        applied.extend(e.write_id for e in entries)

    lane = Lane("memories", ("memory",), journal, apply, batch=10)  # type: ignore[arg-type]
    lane.start()
    try:
        await _until(lambda: journal.applied, lane)
        assert applied == ["w1"] and journal.applied == [1]
        assert errors == ["ValueError: journal entry 1: payload is not JSON"]  # while retrying
        assert lane.last_error == "" and lane._task is not None and not lane._task.done()
    finally:
        await lane.close()


async def test_a_poison_entry_is_marked_dead_once_its_journal_is_back() -> None:
    journal = FlakyJournal(0, dead_failures=2)
    journal.entries.append(
        JournalEntry(2, "w2", "a", MemoryWrite("user/u", Layer.SEMANTIC, "fine"))
    )

    async def apply(entries: Sequence[JournalEntry], upcoming: object) -> None:
        if any(e.seq == 1 for e in entries):
            raise RuntimeError("cannot be applied")

    lane = Lane("memories", ("memory",), journal, apply, batch=10)  # type: ignore[arg-type]
    lane.start()
    try:
        await _until(lambda: journal.applied, lane)
        assert journal.dead == [1] and journal.applied == [2]
        assert lane._task is not None and not lane._task.done()
    finally:
        await lane.close()
