"""What operators ask of a running gateway: stats, breaker states, health, the review queue,
the audit log, and the decay sweep on demand."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gateway.core.journal.lanes import Lanes
from gateway.core.journal.write_path import WritePath
from gateway.core.model.commands import Forget, Release
from gateway.core.model.control import AuditEntry, NewEntry
from gateway.core.model.errors import FailedPrecondition, NotFound
from gateway.core.model.models import Layer, Memory, Status
from gateway.core.ports.metrics import Metrics
from gateway.core.ports.ports import BreakerReport, BreakerStatus, Embedder, Journal, Ledger, Stores
from gateway.core.recall.audit_log import AuditLog
from gateway.core.recall.recall_cache import RecallCache
from gateway.core.screening.screening import clean
from gateway.core.usecases.language_share import LanguageSampler
from gateway.core.usecases.lifecycle import DecaySweeper, SweepReport
from gateway.core.writing.proposals import require_master

MAX_REVIEW = 500
MAX_AUDIT = 1000


@dataclass(frozen=True, slots=True)
class SweepDefaults:
    threshold: float
    compact_min: int


class Operations:
    def __init__(
        self,
        *,
        stores: Stores,
        journal: Journal,
        ledger: Ledger,
        lanes: Lanes,
        embedder: Embedder,
        metrics: Metrics,
        cache: RecallCache,
        sweeper: DecaySweeper,
        sweep_defaults: SweepDefaults,
        shards: int,
        master: str,
        write_path: WritePath,
        audit: AuditLog,
        languages: LanguageSampler,
    ) -> None:
        self._languages = languages
        self._write_path = write_path
        self._audit = audit
        self._stores = stores
        self._journal = journal
        self._ledger = ledger
        self._lanes = lanes
        self._embedder = embedder
        self._metrics = metrics
        self._cache = cache
        self._sweeper = sweeper
        self._defaults = sweep_defaults
        self._shards = shards
        self._master = master

    async def stats_as(self, agent: str) -> dict[str, Any]:
        """Stats for the Stats RPC: master only (they reveal counts across every namespace)."""
        require_master(agent, self._master, "read the gateway's stats")
        return await self.stats()

    def breakers_as(self, agent: str) -> list[BreakerStatus]:
        require_master(agent, self._master, "read the breaker states")
        return self.breakers()

    async def stats(self) -> dict[str, Any]:
        pending, applied = await self._journal.counts()
        languages = await self._languages.read()
        return {
            "languages": languages.shares,
            "languages_sampled": languages.sampled,
            "embedder_advice": languages.advice,
            "journal_pending": pending,
            "journal_applied": applied,
            "vectors": await self._stores.index.count(),
            "memories": await self._stores.records.count(),
            "embedder": self._embedder.name,
            "shards": self._shards,
            "recall_cache_hits": self._cache.hits,
            "recall_cache_misses": self._cache.misses,
            "apply_lag_seconds": await self._journal.oldest_pending_age(),
            "recall": [
                {
                    "layer": layer,
                    "recalls": self._metrics.recalls[layer],
                    "hits": self._metrics.recall_hits[layer],
                    "hit_rate": self._metrics.hit_rate(layer),
                }
                for layer in Layer
            ],
            "last_apply_error": "; ".join(f"{n}: {e}" for n, e in self._lanes.errors()),
        }

    def breakers(self) -> list[BreakerStatus]:
        """State and latency of each store's circuit breaker (stores without one are skipped)."""
        return [store.status() for store in self._stores.all() if isinstance(store, BreakerReport)]

    async def health(self) -> dict[str, str]:
        out = {}
        for name, store in zip(
            ("working", "records", "graph", "index"), self._stores.all(), strict=True
        ):
            try:
                await store.ping()
                out[name] = "ok"
            except Exception as exc:  # noqa: BLE001
                out[name] = f"down: {exc}"
        return out

    async def review_queue(self, agent: str, limit: int) -> list[tuple[Memory, str]]:
        require_master(agent, self._master, "read the review queue")
        items = await self._ledger.list_review(min(max(limit, 1), MAX_REVIEW))
        mems = await self._stores.records.get([i.memory_id for i in items])
        return [(mems[i.memory_id], i.reason) for i in items if i.memory_id in mems]

    async def resolve_review(
        self, agent: str, memory_id: str, approve: bool, reason: str
    ) -> Memory:
        """Approve (a quarantined memory is released) or reject (it is forgotten) a memory of the
        review queue, which it then leaves; audited with the reason."""
        require_master(agent, self._master, "resolve the review queue")
        queued = {i.memory_id for i in await self._ledger.list_review(MAX_REVIEW)}
        if memory_id not in queued:
            raise NotFound(
                f"memory {memory_id!r} is not in the review queue (see ListReview)", field="id"
            )
        mem = (await self._stores.records.get([memory_id])).get(memory_id)
        if mem is None:
            raise NotFound(f"memory {memory_id!r} does not exist", field="id")
        reason = clean(reason[:500])  # stored with the memory and in the ledger: screened
        command: Forget | Release | None = None
        if not approve and mem.status is not Status.FORGOTTEN:
            command = Forget(mem.id, mem.namespace, reason)
        elif approve and mem.status is Status.QUARANTINED:
            command = Release(mem.id, mem.namespace, reason)
        if command is not None:
            entry = NewEntry(uuid.uuid4().hex, agent, "", command)
            await self._write_path.commit([entry], wait=True, action=command.kind, details=[reason])
        state = "approved" if approve else "rejected"
        resolved = await self._ledger.resolve_review(memory_id, state, agent, reason)
        # a rejection erases the memory, and erasure already took it out of the queue
        if not resolved and not isinstance(command, Forget):
            raise FailedPrecondition(f"memory {memory_id} was resolved concurrently")
        action = f"review_{state}"
        await self._ledger.audit([AuditEntry(agent, action, mem.namespace, mem.id, reason)])
        return (await self._stores.records.get([memory_id]))[memory_id]

    async def query_audit(
        self, agent: str, filter_agent: str, namespace: str, since: float, limit: int
    ) -> list[AuditEntry]:
        require_master(agent, self._master, "read the audit log")
        await self._audit.flush()  # the rows still queued (recalls and reads just made) too
        return await self._ledger.query_audit(
            filter_agent, namespace, since, min(max(limit, 1), MAX_AUDIT)
        )

    async def maintain(
        self,
        agent: str,
        namespaces: Sequence[str],
        threshold: float,
        compact_min: int,
        dry_run: bool,
    ) -> SweepReport:
        require_master(agent, self._master, "run the decay sweep")
        report = await self._sweeper.sweep(
            namespaces,
            threshold or self._defaults.threshold,
            compact_min or self._defaults.compact_min,
            dry_run,
        )
        await self._ledger.audit(
            [
                AuditEntry(
                    agent,
                    "maintain",
                    ",".join(namespaces)[:200],
                    "",
                    f"archived {len(report.archived)}, dry_run={dry_run}",
                )
            ]
        )
        return report

    async def scheduled_sweep(self) -> str:
        report = await self.maintain(self._master, [], 0.0, 0, False)
        return (
            f"{report.examined} examined, {len(report.archived)} archived, "
            f"{len(report.summaries)} summaries"
        )
