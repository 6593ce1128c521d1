"""What the domain core needs from the outside, as protocols: the four layer stores, the write
journal, the control ledger and the embedder. Adapters live in ``stores/`` and
``gateway/embedding/``; ``gateway/wiring.py`` picks them from the settings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from gateway.embedding import Embedder
from stores.contracts import EpisodicGraph, RecordStore, VectorIndex, WorkingStore
from stores.sqlite_journal import Accepted, JournalEntry, NewEntry
from stores.sqlite_ledger import SqliteLedger

__all__ = [
    "Accepted",
    "Embedder",
    "Journal",
    "JournalEntry",
    "Ledger",
    "NewEntry",
    "Stores",
]

#: The ledger has one implementation (local SQLite beside the journal); the core uses it as is.
Ledger = SqliteLedger


class Journal(Protocol):
    pending_count: int

    async def start(self) -> None: ...
    async def close(self) -> None: ...
    async def append(self, entries: Sequence[NewEntry]) -> list[Accepted]: ...
    async def pending(self, limit: int, kinds: Sequence[str] = ()) -> list[JournalEntry]: ...
    async def mark_applied(self, seqs: Sequence[int]) -> None: ...
    async def mark_dead(self, seq: int, error: str) -> None: ...
    async def state(self, seq: int) -> int: ...
    async def counts(self) -> tuple[int, int]: ...
    async def prune(self, older_than_s: float) -> int: ...
    async def oldest_pending_age(self) -> float: ...


@dataclass(slots=True)
class Stores:
    working: WorkingStore
    records: RecordStore
    graph: EpisodicGraph
    index: VectorIndex

    def all(self) -> list[Any]:
        return [self.working, self.records, self.graph, self.index]
