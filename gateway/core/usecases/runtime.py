"""The gateway's running parts: opens the journal, ledger and stores in order, rebuilds the vector
index from the records unless it was closed cleanly, starts the apply lanes, and keeps the small
background loops (index flush, journal and audit pruning, decay sweep, memory-formation
triggers). Closes them in reverse.

Durability (M11): the lanes mark a journal entry applied (dropping its payload) only after the
stores returned from it, so every store must make a write durable before it returns; at start
each store says whether it does (``durability()``): with ``strict_durability`` a store that does
not stops the start, otherwise it is logged as a warning."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from gateway.core.apply.index_fill import fill_index
from gateway.core.apply.reembed import Reembedder
from gateway.core.apply.slot_backfill import SlotBackfill
from gateway.core.journal.lanes import Lanes
from gateway.core.model.errors import FailedPrecondition
from gateway.core.ports.ports import Embedder, Journal, Ledger, Stores

log = logging.getLogger("memgate.runtime")

#: how long one step of shutting down may take before it is logged and left behind
CLOSE_STEP_S = 20.0


async def bounded(what: str, step: Awaitable[object]) -> None:
    """Await one shutdown step for at most ``CLOSE_STEP_S``; a step that was cancelled counts as
    done; its error is raised."""
    task = asyncio.ensure_future(step)
    done, _ = await asyncio.wait({task}, timeout=CLOSE_STEP_S)
    if not done:
        task.cancel()
        log.error("closing: %s did not finish within %.0f s: left behind", what, CLOSE_STEP_S)
    elif not task.cancelled() and (error := task.exception()) is not None:
        raise error


INDEX_CLEAN_KEY = "index_clean"
PRUNE_EVERY_S = 3600


class Runtime:
    def __init__(
        self,
        *,
        stores: Stores,
        journal: Journal,
        ledger: Ledger,
        embedder: Embedder,
        lanes: Lanes,
        flush_interval_s: float,
        journal_retention_s: float,
        decay_interval_s: float = 0.0,
        sweep: Callable[[], Awaitable[str]] | None = None,
        formation_scan_s: float = 0.0,
        schedule_formation: Callable[[], Awaitable[int]] | None = None,
        strict_durability: bool = False,
        before_close: Callable[[], Awaitable[None]] | None = None,
        audit_retention_s: float = 0.0,
        slot_backfill: SlotBackfill | None = None,
        reembed: Reembedder | None = None,
    ) -> None:
        self._reembed = reembed
        self._slot_backfill = slot_backfill
        self._audit_retention_s = audit_retention_s
        self._formation_scan_s = formation_scan_s
        self._schedule_formation = schedule_formation
        self._strict_durability = strict_durability
        self._before_close = before_close
        self._stores = stores
        self._journal = journal
        self._ledger = ledger
        self._embedder = embedder
        self._lanes = lanes
        self._flush_interval_s = flush_interval_s
        self._retention_s = journal_retention_s
        self._decay_interval_s = decay_interval_s
        self._sweep = sweep
        self._tasks: list[asyncio.Task[None]] = []
        self._index_dirty = False
        self._index_ready = False  # the index mirrors the records: only then may close() mark it

    async def _check_durability(self) -> None:
        problems = [p for p in [await s.durability() for s in self._stores.all()] if p]
        if problems and self._strict_durability:
            raise FailedPrecondition(
                "strict_durability is on and a store could lose acknowledged writes in an OS "
                f"crash: {'; '.join(problems)} (docs/SECURITY.md 'Durability')"
            )
        for problem in problems:
            log.warning("durability: %s (docs/SECURITY.md 'Durability')", problem)

    def on_applied(self, namespaces: frozenset[str]) -> None:
        self._index_dirty = True

    async def start(self) -> None:
        await self._journal.start()  # the data dir's lock: nothing before it writes there
        await self._ledger.start()
        # until a clean close, the index files may lag the records: a start that fails from
        # here on (its close may still write the index) leaves them to be rebuilt
        clean = await self._ledger.get_setting(INDEX_CLEAN_KEY)
        await self._ledger.put_setting(INDEX_CLEAN_KEY, {"clean": False})
        for store in self._stores.all():
            await store.start()
        await self._check_durability()
        clean_index = bool(clean and clean.get("clean"))
        vectors = await self._reembed.check() if self._reembed is not None else "same"
        if vectors == "switched":  # another model's vectors: all computed again, then indexed
            assert self._reembed is not None
            await self._reembed.reembed(await self._reembed.stored_ids())
        misfits = await self._ensure_index(clean_index and vectors == "same")
        if self._reembed is not None:
            if misfits:  # vectors of another size (written before the space was recorded)
                await self._stores.index.upsert(await self._reembed.reembed(misfits))
                await self._stores.index.flush()
            await self._reembed.remember()
        self._index_ready = True
        if self._slot_backfill is not None:  # before the lanes: no write is applied meanwhile
            await self._slot_backfill.run_once()
        self._lanes.start()
        self._tasks.append(asyncio.create_task(self._flush_loop(), name="index-flush"))
        if self._decay_interval_s > 0 and self._sweep is not None:
            self._tasks.append(asyncio.create_task(self._decay_loop(), name="decay-sweep"))
        if self._formation_scan_s > 0 and self._schedule_formation is not None:
            self._tasks.append(asyncio.create_task(self._formation_loop(), name="formation"))

    async def close(self) -> None:
        """Stop the loops, write what is queued, close the stores. Every step is bounded
        (``bounded``): a backend that never answers is logged and left behind, so stopping the
        gateway always ends."""
        for task in self._tasks:
            task.cancel()
            await bounded(task.get_name(), task)
        await bounded("the lanes", self._lanes.close())
        if self._before_close is not None:  # e.g. queued audit rows, before the ledger closes
            await bounded("queued audit rows", self._before_close())
        if self._index_ready:
            try:
                await self._stores.index.flush()
                await self._ledger.put_setting(INDEX_CLEAN_KEY, {"clean": True})
            except Exception:  # noqa: BLE001
                log.exception("could not flush the vector index on close; rebuilt at next start")
        for store in reversed(self._stores.all()):
            try:
                await bounded(type(store).__name__, store.close())
            except Exception:  # noqa: BLE001
                log.exception("closing %s failed", type(store).__name__)
        await bounded("the ledger", self._ledger.close())
        await bounded("the journal", self._journal.close())

    async def _ensure_index(self, clean: bool) -> list[str]:
        """Rebuild the vector index from the durable records unless it was closed cleanly;
        returns the ids whose stored vectors do not fit the embedder (not indexed)."""
        index = self._stores.index
        misfits: list[str] = []
        if index.needs_rebuild() or not clean:
            n, _ = await fill_index(self._stores.records, index, self._embedder.dim, misfits)
            log.info("vector index rebuilt from records: %d vectors", n)
            await index.flush()
        return misfits

    async def _flush_loop(self) -> None:
        loop = asyncio.get_running_loop()
        last_prune = 0.0
        while True:
            await asyncio.sleep(self._flush_interval_s)
            if loop.time() - last_prune > PRUNE_EVERY_S:
                last_prune = loop.time()
                try:
                    await self._journal.prune(self._retention_s)
                    if self._audit_retention_s > 0:
                        await self._ledger.prune_audit(self._audit_retention_s)
                except Exception:  # noqa: BLE001
                    log.exception("journal or audit pruning failed; will retry")
            if self._index_dirty:
                self._index_dirty = False
                try:
                    await self._stores.index.flush()
                except Exception:  # noqa: BLE001
                    log.exception("vector index flush failed; will retry")
                    self._index_dirty = True

    async def _decay_loop(self) -> None:
        assert self._sweep is not None
        while True:
            await asyncio.sleep(self._decay_interval_s)
            try:
                log.info("decay sweep: %s", await self._sweep())
            except Exception:  # noqa: BLE001 - the next sweep tries again
                log.exception("decay sweep failed; will retry at the next interval")

    async def _formation_loop(self) -> None:
        """The idle and every-N triggers of memory formation: journal a job for each due
        session (the formation lane runs them)."""
        assert self._schedule_formation is not None
        while True:
            await asyncio.sleep(self._formation_scan_s)
            try:
                await self._schedule_formation()
            except Exception:  # noqa: BLE001 - the next scan tries again
                log.exception("scheduling memory formation failed; will retry")
