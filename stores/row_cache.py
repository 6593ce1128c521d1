"""Decoded current rows of the embedded record store, kept for the recall path's lean reads.

A recall loads ~40 memories (``RecordStore.get(ids, embeddings=False)``) after its vector search:
a round trip to the SQLite thread and ~40 row decodes, ~1 ms of every recall (``bench.recall_speed``).
The store keeps what it decoded here, and a ``get`` whose every id is here is answered without
leaving the event loop.

Never stale, by construction:

* only the gateway's own ``SqliteRecordStore`` has a cache, and only with the SQLite journal,
  whose lock on the data dir makes this process the one writer of ``records.db``
  (``gateway/wiring.py``); a recall worker's reader store, which sees another process's commits,
  and a replica's (Redis journal: no lock) have none;
* every change happens on the store's one SQLite thread: fills after a read and after a put (the
  rows it made current, decoded from the very values it stored), and each write first drops the
  rows it touches (or everything) before its transaction. A read running before the write can
  only have filled the cache before that drop, so once a write has returned, no row it changed is
  here in its old form; a write that fails empties the cache; access statistics (``touch``) are
  applied to the cached rows instead of dropping the hottest ones every half second;
* lookups (any thread) only read the dict, one ``get`` at a time (atomic under the GIL), and hand
  out copies: a caller that sets a field changes its copy, not the cache.

Bounded: at most ``entries`` rows (~1-2 KB each); when full, the oldest eighth is dropped.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from itertools import islice

from gateway.core.model.models import Memory

# every field, in the order of ``Memory.__init__``'s parameters
_fields = operator.attrgetter(*(f.name for f in dataclasses.fields(Memory) if f.init))


def clone(m: Memory) -> Memory:
    """A shallow copy: 1 us, against 3.7 for a setattr per field and 5 for ``copy.copy`` (a
    recall clones ~40)."""
    return Memory(*_fields(m))


class RowCache:
    """id -> current ``Memory`` without its embedding; ``entries`` 0 turns it off."""

    def __init__(self, entries: int) -> None:
        if entries < 0:
            raise ValueError(f"entries must be >= 0, got {entries}")
        self._max = entries
        self._rows: dict[str, Memory] = {}

    @property
    def enabled(self) -> bool:
        return self._max > 0

    def __len__(self) -> int:
        return len(self._rows)

    # -- reads: any thread ---------------------------------------------------------------------

    def lookup(self, ids: Sequence[str]) -> dict[str, Memory] | None:
        """Copies of the rows of ``ids`` if every one is here, else None."""
        rows = self._rows
        out: dict[str, Memory] = {}
        for i in ids:
            m = rows.get(i)
            if m is None:
                return None
            out[i] = clone(m)
        return out

    def split(self, ids: Sequence[str]) -> tuple[dict[str, Memory], list[str]]:
        """(copies of the rows here, the ids that are not)."""
        found: dict[str, Memory] = {}
        missing: list[str] = []
        for i in ids:
            m = self._rows.get(i)
            if m is None:
                missing.append(i)
            else:
                found[i] = clone(m)
        return found, missing

    # -- changes: the store's SQLite thread only -----------------------------------------------

    def keep(self, rows: Mapping[str, Memory]) -> None:
        """Remember copies of freshly read rows (without their embeddings)."""
        if not self._max or not rows:
            return
        if len(self._rows) + len(rows) > self._max:
            drop = max(len(self._rows) + len(rows) - self._max, self._max // 8)
            for key in list(islice(self._rows, drop)):
                del self._rows[key]
        for i, m in rows.items():
            kept = clone(m)
            kept.embedding = None
            self._rows[i] = kept

    def drop(self, ids: Iterable[str] | None) -> None:
        """Forget ``ids`` (None: everything)."""
        if ids is None:
            self._rows.clear()
            return
        for i in ids:
            self._rows.pop(i, None)

    def touched(self, ids: Iterable[str], at: datetime) -> None:
        """What ``touch`` wrote: accessed at ``at``, once more (a new object: a reader copying
        the old one meanwhile sees it whole)."""
        for i in ids:
            m = self._rows.get(i)
            if m is not None:
                t = clone(m)
                t.last_accessed_at = at
                t.access_count = m.access_count + 1
                self._rows[i] = t
