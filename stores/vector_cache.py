"""``VectorIndex`` as a cache over the durable records: a namespace's vectors are loaded from the
record store when a search first needs them, kept in FAISS shards in memory, and evicted least
recently used when they pass a memory budget. Start-up loads only the pinned namespaces, so a
replica's start-up time and idle memory do not grow with the corpus.

What it holds
    ``ShardedFaissIndex`` (memory only) holds the loaded namespaces; ``_loaded`` orders them by
    last use with their vector counts. A search loads the namespaces it asks for that are not held
    (concurrent searches share one load per namespace), marks them in use while it runs (they are
    not evicted under it), then evicts the least recently used unpinned namespaces not in use
    until the held vectors fit ``budget_mb`` (384-d: ~2.2 KB per vector with its id).

Staying true to the records (read-your-write, erasure)
    The applier writes the records before it indexes, so a namespace read after a write holds it.
    Changes to a namespace held here are applied to it; changes to one not held are dropped (the
    records have them; a later load reads them fresh); changes arriving while the namespace is
    being loaded are queued and applied after the load. A deleted id is barred for ``BAR_S``
    seconds: an erasure drops vectors before it deletes the records, and a load reading the records
    in between must not bring the vector back. ``reset`` empties everything (a generation count
    makes loads that were in flight drop what they read) and reloads the pinned namespaces.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator, Sequence
from typing import Any

from gateway.core.model.models import VectorItem
from gateway.core.ports.ports import RecordStore
from gateway.core.ports.wrapped_index import WrappedIndex
from stores.faiss_index import ShardedFaissIndex

log = logging.getLogger("memgate.vector_cache")

#: how long a deleted id stays barred from coming back through a load that read it before its
#: record was deleted (an erasure deletes vectors, then records, within one applier step)
BAR_S = 300.0
#: rows per read of one namespace's vectors
LOAD_BATCH = 2000
#: per vector beyond its floats: its id string in three maps, the faiss id, dict entries and
#: tuples (measured: 200k 384-d vectors took 2.2 KB each of resident memory, 1.5 KB of floats)
OVERHEAD_BYTES = 700


class OnDemandVectorIndex(WrappedIndex[ShardedFaissIndex]):
    """``VectorIndex`` over ``records``: namespaces loaded on first use, evicted LRU past
    ``budget_mb``; ``pinned`` namespaces are loaded at start and never evicted."""

    def __init__(
        self,
        *,
        records: RecordStore,
        dim: int = 384,
        shards: int = 8,
        budget_mb: int = 2048,
        pinned: Sequence[str] = (),
        threads: int | None = 1,
    ) -> None:
        if budget_mb <= 0:
            raise ValueError("budget_mb must be positive")
        super().__init__(ShardedFaissIndex(None, dim=dim, shards=shards, threads=threads))
        self._records = records
        self.dim = dim
        self._budget = budget_mb * 1024 * 1024
        self._per_vector = dim * 4 + OVERHEAD_BYTES
        self._pinned = frozenset(pinned)
        self._loaded: OrderedDict[str, int] = OrderedDict()  # namespace -> vectors, LRU first
        self._loading: dict[str, asyncio.Task[None]] = {}
        self._queued: dict[str, list[tuple[str, Any]]] = {}  # changes during a load
        self._held: Counter[str] = Counter()  # namespaces a search is using now
        self._gone: dict[str, float] = {}  # id -> barred until (monotonic)
        self._generation = 0
        self.loads = 0
        self.evictions = 0
        self.hits = 0
        self.misses = 0
        self.load_seconds = 0.0
        self.misfits = 0  # stored vectors of another size, left out

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        await self._inner.start()
        await self._load_pinned()

    async def close(self) -> None:
        for task in list(self._loading.values()):
            task.cancel()
        await self._inner.close()

    async def ping(self) -> None:
        return None

    async def durability(self) -> str:
        """Nothing of its own to lose: every vector is read from the records."""
        return ""

    def needs_rebuild(self) -> bool:
        return False  # nothing persisted that could be stale

    def on_demand(self) -> bool:
        return True

    async def sync(self) -> None:
        """Nothing to catch up with here (a replica's stream is followed around it)."""

    async def flush(self) -> None:
        """Nothing to persist: the records are the durable copy."""

    async def reset(self) -> None:
        self._generation += 1
        for task in list(self._loading.values()):
            task.cancel()
        self._loading.clear()
        self._queued.clear()
        self._loaded.clear()
        await self._inner.reset()
        await self._load_pinned()

    # -- changes -------------------------------------------------------------------------------

    async def upsert(self, items: Sequence[VectorItem]) -> None:
        if not items:
            return
        held: list[VectorItem] = []
        for item in items:
            self._gone.pop(item.id, None)  # written again (a restore, a re-embed)
            ns = item.namespace
            if ns in self._loading:
                self._queued.setdefault(ns, []).append(("u", item))
            elif ns in self._loaded:
                held.append(item)
        if held:
            await self._inner.upsert(held)
            self._recount({i.namespace for i in held})
            self._evict()

    async def delete(self, ids: Sequence[str], erased: bool = True) -> None:
        if not ids:
            return
        until = time.monotonic() + BAR_S
        self._prune_bars()
        for mid in ids:
            self._gone[mid] = until
        for queue in self._queued.values():
            queue.append(("d", list(ids)))
        await self._inner.delete(ids, erased)
        self._recount(set(self._loaded))

    # -- searches ------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _searching(self, namespaces: Sequence[str]) -> AsyncIterator[Sequence[str]]:
        """The namespaces held (those not held yet loaded first) while a search runs."""
        nss = list(dict.fromkeys(namespaces))
        await self._acquire(nss)
        try:
            yield nss
        finally:
            self._release(nss)

    async def _acquire(self, namespaces: list[str]) -> None:
        """Hold ``namespaces`` (no eviction under a search) and load those not held yet."""
        self._held.update(namespaces)
        try:
            first = True
            while True:
                waits = []
                for ns in namespaces:
                    if ns in self._loaded:
                        self._loaded.move_to_end(ns)
                        self.hits += first
                        continue
                    self.misses += first
                    task = self._loading.get(ns)
                    if task is None:
                        task = self._loading[ns] = asyncio.create_task(
                            self._load(ns, self._generation), name=f"load-vectors:{ns}"
                        )
                    waits.append(task)
                first = False
                if not waits:
                    return
                # a reset while waiting cancels the loads: go round and load afresh
                await asyncio.gather(*(asyncio.shield(t) for t in waits), return_exceptions=True)
                for task in waits:
                    if task.done() and not task.cancelled() and task.exception() is not None:
                        raise task.exception()  # type: ignore[misc]
        except BaseException:
            self._release(namespaces)
            raise

    def _release(self, namespaces: list[str]) -> None:
        self._held.subtract(namespaces)
        self._held = +self._held  # drop zeros
        self._evict()

    # -- loading and evicting ------------------------------------------------------------------

    async def _load(self, ns: str, generation: int) -> None:
        started = time.perf_counter()
        self._queued.setdefault(ns, [])
        try:
            items: list[VectorItem] = []
            async for batch in self._records.iter_vectors(LOAD_BATCH, namespace=ns):
                if generation != self._generation:
                    return
                fit = [i for i in batch if i.vector.shape == (self.dim,)]
                self.misfits += len(batch) - len(fit)
                items.extend(fit)
            if generation != self._generation:
                return
            now = time.monotonic()
            await self._inner.upsert([i for i in items if self._gone.get(i.id, 0.0) < now])
            # changes made while it was read, in order (a later one wins); none can slip in
            # between the last empty queue seen and the namespace counting as loaded
            while queue := self._queued.get(ns):
                self._queued[ns] = []
                for op, arg in queue:
                    if op == "u":
                        await self._inner.upsert([arg])
                    else:
                        await self._inner.delete(arg)
            if generation != self._generation:
                return
            self._loaded[ns] = 0
            self._recount({ns})
            self.loads += 1
            self.load_seconds += time.perf_counter() - started
        finally:
            if self._loading.get(ns) is asyncio.current_task():
                del self._loading[ns]
                self._queued.pop(ns, None)

    async def _load_pinned(self) -> None:
        if self._pinned:
            pinned, misses = sorted(self._pinned), self.misses
            await self._acquire(pinned)
            self._release(pinned)
            self.misses = misses  # not a recall's miss

    def _recount(self, namespaces: set[str]) -> None:
        sizes = self._inner.sizes(namespaces)
        for ns in namespaces:
            if ns in self._loaded:
                self._loaded[ns] = sizes.get(ns, 0)

    def held_bytes(self) -> int:
        return sum(self._loaded.values()) * self._per_vector

    def _evict(self) -> None:
        """Drop least recently used namespaces (not pinned, not in use) past the budget."""
        over = self.held_bytes() - self._budget
        if over <= 0:
            return
        victims = []
        for ns, n in self._loaded.items():
            if over <= 0:
                break
            if ns in self._pinned or self._held.get(ns):
                continue
            victims.append(ns)
            over -= n * self._per_vector
        for ns in victims:
            del self._loaded[ns]
        if victims:
            self._inner.drop_namespaces(victims)
            self.evictions += len(victims)

    def _prune_bars(self) -> None:
        now = time.monotonic()
        if len(self._gone) > 10_000:
            self._gone = {mid: t for mid, t in self._gone.items() if t > now}

    def stats(self) -> dict[str, Any]:
        return {
            "mode": "on_demand",
            "namespaces_held": len(self._loaded),
            "vectors_held": sum(self._loaded.values()),
            "held_mb": round(self.held_bytes() / 2**20, 1),
            "budget_mb": self._budget // 2**20,
            "pinned": sorted(self._pinned),
            "loads": self.loads,
            "evictions": self.evictions,
            "hits": self.hits,
            "misses": self.misses,
            "load_seconds": round(self.load_seconds, 3),
        }
