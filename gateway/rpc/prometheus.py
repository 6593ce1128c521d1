"""The gateway's Prometheus metrics, through ``prometheus_client``, in a registry of its own.

Live: the core's ``Metrics`` hands every RPC, store call and recall to ``PrometheusSink``
(counters and histograms). At scrape time: ``refresh()`` reads the gauges that are state rather
than events (journal backlog, apply lag, breakers, memories, proposal queue) from the service.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from gateway.core.usecases.service import MemoryService
from gateway.recall_workers.pool import RecallWorkers

# ``*_created`` series double every counter for no dashboard's benefit
disable_created_metrics()

#: RPC latency: 0.5 ms .. 10 s
RPC_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
#: one store call: 0.1 ms .. 2.5 s
STORE_BUCKETS = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
)  # fmt: skip
#: age of a recalled memory: 1 min .. 1 year
AGE_BUCKETS = (60, 600, 3600, 6 * 3600, 86_400, 3 * 86_400, 7 * 86_400, 30 * 86_400,
               90 * 86_400, 365 * 86_400)  # fmt: skip
BREAKER_STATES = ("closed", "open", "half_open")
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class PrometheusSink:
    """Counters and histograms fed as things happen (a ``MetricsSink``)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.rpc_calls = Counter(
            "memgate_rpc_calls",
            "gRPC calls by method and status code.",
            ["method", "code"],
            registry=registry,
        )
        self.rpc_latency = Histogram(
            "memgate_rpc_latency_seconds",
            "gRPC call latency by method.",
            ["method"],
            buckets=RPC_BUCKETS,
            registry=registry,
        )
        self.store_latency = Histogram(
            "memgate_store_latency_seconds",
            "Latency of one store call through its circuit breaker, by store and operation.",
            ["store", "op"],
            buckets=STORE_BUCKETS,
            registry=registry,
        )
        self.store_errors = Counter(
            "memgate_store_errors",
            "Store calls that raised, by store and operation.",
            ["store", "op"],
            registry=registry,
        )
        self.recalls = Counter(
            "memgate_recalls",
            "Recalls that asked a layer, by layer and namespace class (agent/user/task/global).",
            ["layer", "namespace_class"],
            registry=registry,
        )
        self.recall_hits = Counter(
            "memgate_recall_hits",
            "Recalls in which a layer returned a hit, by layer and namespace class.",
            ["layer", "namespace_class"],
            registry=registry,
        )
        self.memory_age = Histogram(
            "memgate_recall_memory_age_seconds",
            "Freshness: seconds since a recalled memory was last written, by layer.",
            ["layer"],
            buckets=AGE_BUCKETS,
            registry=registry,
        )

    def rpc(self, method: str, seconds: float, code: str) -> None:
        self.rpc_calls.labels(method, code).inc()
        self.rpc_latency.labels(method).observe(seconds)

    def store_call(self, store: str, op: str, seconds: float, ok: bool) -> None:
        self.store_latency.labels(store, op).observe(seconds)
        if not ok:
            self.store_errors.labels(store, op).inc()

    def recall(
        self,
        asked: Sequence[tuple[str, str]],
        hits: Sequence[tuple[str, str]],
        ages: Sequence[tuple[str, float]],
    ) -> None:
        for layer, cls in asked:
            self.recalls.labels(layer, cls).inc()
        for layer, cls in hits:
            self.recall_hits.labels(layer, cls).inc()
        for layer, age in ages:
            self.memory_age.labels(layer).observe(age)


@dataclass
class _Snapshot:
    stats: dict[str, Any] = field(default_factory=dict)
    breakers: list[Any] = field(default_factory=list)
    proposals: tuple[int, float] = (0, 0.0)
    taken_at: float = 0.0
    #: recall workers: configured, ready, recalls they answered, recalls lost to a dead worker
    workers: tuple[int, int, int, int] = (0, 0, 0, 0)


class _StateCollector(Collector):
    """Families read from the last snapshot of the service's state."""

    def __init__(self) -> None:
        self.snapshot = _Snapshot()

    def collect(self) -> Iterator[Metric]:
        snap = self.snapshot
        if not snap.stats:
            return
        s = snap.stats
        state = GaugeMetricFamily(
            "memgate_breaker_state", "1 for the current circuit-breaker state of a store.",
            labels=["store", "state"],
        )  # fmt: skip
        trips = CounterMetricFamily(
            "memgate_breaker_trips", "Times a store's breaker opened.", labels=["store"]
        )
        failures = CounterMetricFamily(
            "memgate_store_failures", "Store calls that found the backend down.", labels=["store"]
        )
        for b in snap.breakers:
            for name in BREAKER_STATES:
                state.add_metric([b.layer, name], float(b.state == name))
            trips.add_metric([b.layer], b.trips)
            failures.add_metric([b.layer], b.failures)
        yield from (state, trips, failures)
        yield _gauge(
            "memgate_journal_pending",
            "Acknowledged writes not applied yet (queue depth).",
            s["journal_pending"],
        )
        yield _gauge(
            "memgate_apply_lag_seconds",
            "Age of the oldest acknowledged write not applied.",
            s["apply_lag_seconds"],
        )
        yield _gauge("memgate_vectors", "Vectors in the FAISS index.", s["vectors"])
        memories = GaugeMetricFamily(
            "memgate_memories", "Current memories by layer and status.", labels=["layer", "status"]
        )
        for key, value in sorted(s["memories"].items()):
            layer, _, status = key.partition("/")
            memories.add_metric([layer, status], value)
        yield memories
        languages = GaugeMetricFamily(
            "memgate_stored_language_share",
            "Share of the stored texts per language (zh: mostly CJK; other), from a sample.",
            labels=["language"],
        )
        for language, share in sorted(s["languages"].items()):
            languages.add_metric([language], share)
        yield languages
        yield _gauge(
            "memgate_embedder_advice",
            "1 when the embedder does not suit the stored texts (memgate status says why).",
            float(bool(s["embedder_advice"])),
        )
        cache = CounterMetricFamily(
            "memgate_recall_cache", "Recall cache lookups by result.", labels=["result"]
        )
        cache.add_metric(["hit"], s["recall_cache_hits"])
        cache.add_metric(["miss"], s["recall_cache_misses"])
        yield cache
        configured, ready, answered, lost = snap.workers
        workers = GaugeMetricFamily(
            "memgate_recall_workers", "Recall worker processes.", labels=["state"]
        )
        workers.add_metric(["configured"], configured)
        workers.add_metric(["ready"], ready)
        yield workers
        handed = CounterMetricFamily(
            "memgate_recall_worker_recalls",
            "Recalls handed to recall workers, by outcome (lost: run in the gateway instead).",
            labels=["outcome"],
        )
        handed.add_metric(["answered"], answered)
        handed.add_metric(["lost"], lost)
        yield handed
        pending, oldest = snap.proposals
        yield _gauge(
            "memgate_proposals_pending",
            "Proposals to shared namespaces waiting for the master.",
            pending,
        )
        yield _gauge(
            "memgate_proposal_oldest_age_seconds",
            "Age of the oldest pending proposal (0 when none).",
            max(0.0, snap.taken_at - oldest) if pending else 0.0,
        )


def _workers(service: MemoryService) -> tuple[int, int, int, int]:
    pool = service.recaller.remote
    if not isinstance(pool, RecallWorkers):
        return (0, 0, 0, 0)
    return (pool.configured, pool.ready, pool.answered, pool.lost)


def _gauge(name: str, help_: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, help_, value=value)


class _BuildInfo(Collector):
    """``memgate_build_info{version,commit,embedder} 1``."""

    def __init__(self, embedder: str) -> None:
        from gateway.build_info import commit, package_version

        self._labels = {"version": package_version(), "commit": commit(), "embedder": embedder}

    def collect(self) -> Iterator[Metric]:
        info = GaugeMetricFamily(
            "memgate_build_info",
            "The running build: package version, source commit, embedder.",
            labels=list(self._labels),
        )
        info.add_metric(list(self._labels.values()), 1)
        yield info


class GatewayMetrics:
    """One gateway's registry: the live sink plus the state read at each scrape."""

    def __init__(self, service: MemoryService) -> None:
        self._service = service
        self.registry = CollectorRegistry(auto_describe=False)
        self.sink = PrometheusSink(self.registry)
        self._state = _StateCollector()
        self.registry.register(self._state)
        # the process (process_*: CPU, resident memory, open files, start time) and the
        # interpreter (python_info, python_gc_*): prometheus_client's standard collectors
        for standard in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
            self.registry.register(standard)
        self.registry.register(_BuildInfo(service.embedder.name))
        service.metrics.add_sink(self.sink)

    async def refresh(self) -> None:
        ops = self._service.ops
        self._state.snapshot = _Snapshot(
            stats=await ops.stats(),
            breakers=ops.breakers(),
            proposals=await self._service.ledger.proposal_backlog(),
            taken_at=time.time(),
            workers=_workers(self._service),
        )

    async def render(self) -> bytes:
        """The exposition text of every metric, after reading the current state."""
        await self.refresh()
        return generate_latest(self.registry)
