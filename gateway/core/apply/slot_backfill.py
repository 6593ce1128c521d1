"""Slotting the facts that have no slot (``truth/backfill.py`` decides, this stores): once at
start-up for facts stored before slots existed (again whenever the rules' vocabulary version
changes; settings.slot_backfill), and for the facts of every import. Runs where no write is applied concurrently: before
the lanes start, or inside the lane that applies the import."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from gateway.core.apply.derive import vector_item
from gateway.core.model.models import Layer, Memory, utcnow
from gateway.core.ports.control_ports import AliasLedger, ReviewLedger, SettingsLedger
from gateway.core.ports.ports import Stores
from gateway.core.truth import backfill

log = logging.getLogger("memgate.slots")


class BackfillLedger(ReviewLedger, SettingsLedger, AliasLedger, Protocol):
    """The ledger areas this module uses."""


#: the ledger setting that records which vocabulary version slotted the stored facts
SETTING_KEY = "truth.slot_backfill"
PAGE = 500
#: a long backfill says how far it got every this many namespaces
PROGRESS_EVERY = 100


class SlotBackfill:
    def __init__(self, *, stores: Stores, ledger: BackfillLedger) -> None:
        self._stores = stores
        self._ledger = ledger

    async def run_once(self) -> int:
        """Slot every stored fact without a slot, unless this vocabulary version already did;
        returns how many facts got a slot. One pass over the stored vectors finds them (only
        semantic ones are read), then each namespace with some is slotted."""
        done = await self._ledger.get_setting(SETTING_KEY)
        if done and done.get("vocabulary") == backfill.VOCABULARY_VERSION:
            return 0
        waiting: dict[str, list[str]] = {}
        tried = slotted = 0
        async for batch in self._stores.records.iter_vectors(PAGE):
            ids = [item.id for item in batch if item.layer is Layer.SEMANTIC]
            mems = await self._stores.records.get(ids, embeddings=False) if ids else {}
            for mem in mems.values():
                if backfill.unslotted(mem):
                    tried += 1
                    if backfill.slotted(mem, utcnow()) is not None:  # read again in full
                        waiting.setdefault(mem.namespace, []).append(mem.id)
        for i, ids in enumerate(waiting.values(), 1):
            slotted += await self.facts_of(ids)  # a namespace at once: its facts meet in order
            if i % PROGRESS_EVERY == 0:
                log.info("slotting stored facts: %d of %d namespaces", i, len(waiting))
        await self._ledger.put_setting(
            SETTING_KEY,
            {"vocabulary": backfill.VOCABULARY_VERSION, "tried": tried, "slotted": slotted},
        )
        if tried:
            log.info(
                "facts stored without a slot: %d of %d got one (%d namespaces)",
                slotted,
                tried,
                len(waiting),
            )
        return slotted

    async def facts_of(self, ids: Sequence[str]) -> int:
        """``facts`` for the memories ``ids`` (read with their embeddings)."""
        mems = await self._stores.records.get(ids)
        return await self.facts(list(mems.values()))

    async def facts(self, candidates: Sequence[Memory], now: datetime | None = None) -> int:
        """Slot ``candidates`` (facts of any namespaces) against the facts holding their slots."""
        by_ns: dict[str, list[Memory]] = {}
        for mem in candidates:
            if backfill.unslotted(mem):
                by_ns.setdefault(mem.namespace, []).append(mem)
        n = 0
        for ns, group in by_ns.items():
            n += await self._slot(ns, group, now or utcnow())
        return n

    async def _slot(self, namespace: str, group: list[Memory], now: datetime) -> int:
        keys = {s.fact_key for m in group if (s := backfill.slotted(m, now)) is not None}
        if not keys:
            return 0
        found = await self._stores.records.find_facts([(namespace, k) for k in sorted(keys)])
        holders = {key: mem for (_, key), mem in found.items()}
        plan = backfill.plan(group, holders, now)
        if plan.puts:
            await self._stores.records.put(plan.puts)
        if plan.dropped:
            await self._stores.index.delete(plan.dropped, erased=False)
        vectors = [vector_item(m) for m in plan.indexed.values() if m.embedding is not None]
        if vectors:
            await self._stores.index.upsert(vectors)
        if plan.aliases:
            await self._ledger.set_aliases(plan.aliases)
        if plan.conflicts:
            await self._ledger.add_review(plan.conflicts)
        return plan.slotted
