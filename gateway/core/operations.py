"""What operators ask of a running gateway: stats, breaker states, health, the review queue,
the audit log, and the decay sweep on demand."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gateway.core.control import AuditEntry
from gateway.core.lanes import Lanes
from gateway.core.lifecycle import DecaySweeper, SweepReport
from gateway.core.metrics import Metrics
from gateway.core.models import Layer, Memory
from gateway.core.ports import BreakerReport, BreakerStatus, Embedder, Journal, Ledger, Stores
from gateway.core.proposals import require_master
from gateway.core.recall_cache import RecallCache

MAX_REVIEW = 500
MAX_AUDIT = 1000


@dataclass(frozen=True, slots=True)
class SweepDefaults:
    threshold: float
    compact_min: int


class Operations:
    def __init__(
        self,
        stores: Stores,
        journal: Journal,
        ledger: Ledger,
        lanes: Lanes,
        embedder: Embedder,
        metrics: Metrics,
        cache: RecallCache[Any],
        sweeper: DecaySweeper,
        sweep_defaults: SweepDefaults,
        shards: int,
        master: str,
    ) -> None:
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

    async def stats(self) -> dict[str, Any]:
        pending, applied = await self._journal.counts()
        return {
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

    async def query_audit(
        self, agent: str, filter_agent: str, namespace: str, since: float, limit: int
    ) -> list[AuditEntry]:
        require_master(agent, self._master, "read the audit log")
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
