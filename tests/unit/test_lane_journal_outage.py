"""An apply lane outlives a journal whose server is down for a while (a Redis restart, played
by the embedded journal failing its calls): it keeps retrying, then applies what was
acknowledged."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path

from gateway.core.journal.lanes import Lane
from gateway.core.model.commands import MemoryWrite
from gateway.core.model.control import EntryState, JournalEntry, NewEntry
from gateway.core.model.errors import BackendUnavailable
from gateway.core.model.models import Layer
from stores.sqlite_journal import SqliteJournal


class FlakyJournal(SqliteJournal):
    """The embedded journal, whose reads fail ``failures`` times with ``error`` and whose marking
    an entry dead fails ``dead_failures`` times (its store down meanwhile)."""

    def __init__(
        self,
        path: Path,
        failures: int,
        error: Exception | None = None,
        dead_failures: int = 0,
    ) -> None:
        super().__init__(path)
        self.failures = failures
        self.error = error or BackendUnavailable("redis", "journal: connection refused")
        self.dead_failures = dead_failures

    async def pending(
        self, limit: int, kinds: Sequence[str] = (), after: int = 0
    ) -> list[JournalEntry]:
        if self.failures:
            self.failures -= 1
            raise self.error
        return await super().pending(limit, kinds, after)

    async def mark_dead(self, seq: int, error: str) -> None:
        if self.dead_failures:
            self.dead_failures -= 1
            raise BackendUnavailable("sqlite", "journal: disk I/O error")
        await super().mark_dead(seq, error)


@contextlib.asynccontextmanager
async def _journal(journal: FlakyJournal, *contents: str) -> AsyncIterator[list[int]]:
    """``journal`` started, holding a memory write of each of ``contents``; yields their seqs."""
    await journal.start()
    try:
        accepted = await journal.append(
            [
                NewEntry(f"w{i}", "a", "", MemoryWrite("user/u", Layer.SEMANTIC, content))
                for i, content in enumerate(contents, 1)
            ]
        )
        yield [a.seq for a in accepted]
    finally:
        await journal.close()


async def _states(journal: FlakyJournal, seqs: list[int]) -> list[int]:
    got = await journal.states(seqs)
    return [got[seq] for seq in seqs]


async def _applied(journal: FlakyJournal, seqs: list[int]) -> bool:
    return all(state == EntryState.APPLIED for state in await _states(journal, seqs))


async def _settled(journal: FlakyJournal, seqs: list[int]) -> bool:
    return EntryState.PENDING not in await _states(journal, seqs)


async def _until(check: Callable[[], Awaitable[bool]]) -> None:
    for _ in range(200):
        if await check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("timed out")


async def test_a_lane_survives_an_unreadable_journal(tmp_path: Path) -> None:
    journal = FlakyJournal(tmp_path / "j.db", failures=3)
    applied: list[str] = []

    async def apply(entries: Sequence[JournalEntry], upcoming: object) -> None:
        applied.extend(e.write_id for e in entries)

    async with _journal(journal, "x") as seqs:
        lane = Lane("memories", ("memory",), journal, apply, batch=10)
        lane.start()
        try:
            await _until(lambda: _applied(journal, seqs))
            assert applied == ["w1"] and journal.failures == 0
            assert lane._task is not None and not lane._task.done()
        finally:
            await lane.close()


async def test_a_lane_outlives_any_error_reading_the_journal_and_says_why(tmp_path: Path) -> None:
    journal = FlakyJournal(tmp_path / "j.db", 3, ValueError("journal entry 1: payload is not JSON"))
    applied: list[str] = []
    errors: list[str] = []

    async def apply(entries: Sequence[JournalEntry], upcoming: object) -> None:
        errors.append(lane.last_error)
        applied.extend(e.write_id for e in entries)

    async with _journal(journal, "x") as seqs:
        lane = Lane("memories", ("memory",), journal, apply, batch=10)
        lane.start()
        try:
            await _until(lambda: _applied(journal, seqs))
            assert applied == ["w1"]
            assert errors == ["ValueError: journal entry 1: payload is not JSON"]  # while retrying
            assert lane.last_error == "" and lane._task is not None and not lane._task.done()
        finally:
            await lane.close()


async def test_a_poison_entry_is_marked_dead_once_its_journal_is_back(tmp_path: Path) -> None:
    journal = FlakyJournal(tmp_path / "j.db", 0, dead_failures=2)

    async def apply(entries: Sequence[JournalEntry], upcoming: object) -> None:
        if any(e.write_id == "w1" for e in entries):
            raise RuntimeError("cannot be applied")

    async with _journal(journal, "poison", "fine") as seqs:
        lane = Lane("memories", ("memory",), journal, apply, batch=10)
        lane.start()
        try:
            await _until(lambda: _settled(journal, seqs))
            assert await _states(journal, seqs) == [EntryState.DEAD, EntryState.APPLIED]
            assert journal.dead_failures == 0
            assert lane._task is not None and not lane._task.done()
        finally:
            await lane.close()
