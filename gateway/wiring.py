"""The composition root: turns Settings into a MemoryService with the adapters they name.

Embedded default (no Redis, no Neo4j configured): SQLite files under the data dir. With
``redis_url`` working memory moves to Redis; with ``neo4j_uri`` the episodic graph and the
durable records behind the vectors move to Neo4j; with ``journal_backend = "redis"`` the journal
and (unless ``ledger_backend`` says otherwise) the ledger move to Redis, shared by replicas.
FAISS shards always live under the data dir.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from pathlib import Path

from gateway.core.model.events import AppliedEvents
from gateway.core.ports.injection_screen import RULES_ONLY, InjectionScreen
from gateway.core.ports.metrics import Metrics
from gateway.core.ports.ports import (
    Embedder,
    EpisodicGraph,
    Journal,
    Ledger,
    RecordStore,
    Stores,
    VectorIndex,
    WorkingStore,
)
from gateway.core.ports.tracing import NULL_TRACER, Tracer
from gateway.core.screening import memo
from gateway.core.usecases.runtime import INDEX_CLEAN_KEY
from gateway.core.usecases.service import MemoryService
from gateway.embedding import CachedEmbedder, build_embedder
from gateway.embedding.prototype_screen import PrototypeScreen, load_prototypes
from gateway.extractors.factory import build_formation
from gateway.recall_workers.broadcast import BroadcastIndex, IndexListener
from gateway.recall_workers.pool import RecallWorkers
from gateway.settings import Settings
from stores.breaker import Breaker, BreakerPolicy, guard
from stores.faiss_index import ShardedFaissIndex
from stores.sqlite_journal import SqliteJournal
from stores.sqlite_ledger import SqliteLedger
from stores.vector_cache import OnDemandVectorIndex

log = logging.getLogger(__name__)


def replica_id(settings: Settings) -> str:
    """This gateway's name among replicas (journal consumer, change-stream origin)."""
    global _REPLICA_ID
    if settings.replica_id:
        return settings.replica_id
    if not _REPLICA_ID:
        _REPLICA_ID = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    return _REPLICA_ID


_REPLICA_ID = ""


def _backends(
    settings: Settings, reader: bool = False
) -> tuple[WorkingStore, RecordStore, EpisodicGraph]:
    """The working store, the records and the episodic graph ``settings`` name (unguarded).
    ``reader``: a recall worker's, which sees another process's writes (no row cache). The
    embedded records cache rows only where this process is their one writer: a reader never, a
    replica (``journal_backend`` redis, whose data dir no journal lock guards) neither."""
    data = settings.data_dir
    working: WorkingStore
    records: RecordStore
    graph: EpisodicGraph
    if settings.redis_url:
        from stores.redis_working import RedisWorkingStore

        working = RedisWorkingStore(
            settings.redis_url, ttl_seconds=settings.session_ttl_s, cluster=settings.redis_cluster
        )
    else:
        from stores.sqlite_working import SqliteWorkingStore

        working = SqliteWorkingStore(data / "working.db", ttl_seconds=settings.session_ttl_s)
    if settings.neo4j_uri:
        from stores.neo4j_graph import Neo4jEpisodicGraph
        from stores.neo4j_records import Neo4jRecordStore

        auth = (settings.neo4j_user or None, settings.neo4j_password or None)
        records = Neo4jRecordStore(
            settings.neo4j_uri,
            *auth,
            database=settings.neo4j_database,
            common_terms=settings.lexical_common_terms,
            read_threads=settings.neo4j_read_threads,
        )
        graph = Neo4jEpisodicGraph(
            settings.neo4j_uri,
            *auth,
            database=settings.neo4j_database,
            read_threads=settings.neo4j_read_threads,
        )
    else:
        from stores.sqlite_graph import SqliteEpisodicGraph
        from stores.sqlite_records import SqliteRecordStore

        records = SqliteRecordStore(
            data / "records.db",
            common_terms=settings.lexical_common_terms,
            row_cache=settings.record_cache_entries
            if not reader and settings.journal_backend == "sqlite"
            else 0,
        )
        graph = SqliteEpisodicGraph(data / "graph.db")
    return working, records, graph


def _vector_index(
    settings: Settings, records: RecordStore, dim: int, index_dir: Path
) -> VectorIndex:
    """The FAISS shards: every vector, persisted under ``index_dir`` ("full"), or a cache of the
    namespaces recalls use, read from the records ("on_demand": ``stores/vector_cache.py``)."""
    if settings.vector_mode() == "on_demand":
        return OnDemandVectorIndex(
            records=records,
            dim=dim,
            shards=settings.shards,
            budget_mb=settings.vector_cache_mb,
            pinned=settings.pinned_namespaces(),
        )
    return ShardedFaissIndex(index_dir, dim=dim, shards=settings.shards)


def build_stores(
    settings: Settings,
    dim: int = 384,
    metrics: Metrics | None = None,
    tracer: Tracer = NULL_TRACER,
    events: AppliedEvents | None = None,
    index_changes: IndexListener | None = None,
) -> Stores:
    """``index_changes`` hears every change of this process's FAISS shards (recall workers
    follow them)."""
    working, records, graph = _backends(settings)
    # index files are tied to the record store they mirror
    index_dir = settings.data_dir / ("faiss-neo4j" if settings.neo4j_uri else "faiss")
    index = _vector_index(settings, records, dim, index_dir)
    if index_changes is not None:
        index = BroadcastIndex(index, index_changes)
    if settings.journal_backend == "redis":  # replicas: follow each other's index changes
        from stores.redis_changes import ReplicatedIndex

        index = ReplicatedIndex(
            index,
            settings.redis_url,
            records,
            origin=replica_id(settings),
            dim=dim,
            prefix=settings.redis_journal_prefix,
            on_change=events.publish if events else None,
            cluster=settings.redis_cluster,
        )
    return guarded(
        Stores(working=working, records=records, graph=graph, index=index),
        settings,
        metrics,
        tracer,
    )


def build_reader_stores(settings: Settings, dim: int, index_dir: Path) -> Stores:
    """A recall worker's stores: its own connections to the same working store, records and
    graph, and its own FAISS shards under ``index_dir`` (filled from the records, then kept
    current by the gateway)."""
    working, records, graph = _backends(settings, reader=True)
    index = _vector_index(settings, records, dim, index_dir)
    return guarded(Stores(working=working, records=records, graph=graph, index=index), settings)


def guarded(
    stores: Stores, s: Settings, metrics: Metrics | None = None, tracer: Tracer = NULL_TRACER
) -> Stores:
    """Each store behind its own circuit breaker, with the thresholds of seed 003 §4.2; every
    call timed into ``metrics`` and traced."""
    observer = metrics.observe_store if metrics else None

    def breaker(name: str, inner: object, p: BreakerPolicy) -> Breaker:
        return Breaker(name, inner, p, observer=observer, tracer=tracer)  # type: ignore[arg-type]

    def policy(slow: float, recover: int = 1, recover_ms: float = 0.0) -> BreakerPolicy:
        return BreakerPolicy(
            slow_ms=slow or None,
            slow_after=s.breaker_slow_after,
            recover_after=recover,
            recover_ms=recover_ms or None,
            cooldown_s=s.breaker_cooldown_s,
        )

    return Stores(
        working=guard(
            WorkingStore,
            stores.working,
            breaker(
                "working",
                stores.working,
                policy(s.working_slow_ms, s.working_recover, s.working_recover_ms),
            ),
        ),
        records=guard(
            RecordStore,
            stores.records,
            breaker("records", stores.records, policy(s.records_slow_ms)),
        ),
        graph=guard(
            EpisodicGraph,
            stores.graph,
            breaker(
                "graph", stores.graph, policy(s.graph_slow_ms, s.graph_recover, s.graph_recover_ms)
            ),
        ),
        index=guard(
            VectorIndex, stores.index, breaker("vectors", stores.index, policy(s.records_slow_ms))
        ),
    )


def build_journal(settings: Settings) -> Journal:
    """The SQLite file under the data dir (embedded default), or Redis Streams shared by
    replicas when ``journal_backend = "redis"``."""
    if settings.journal_backend == "redis":
        from stores.redis_journal import RedisJournal

        return RedisJournal(
            settings.redis_url,
            prefix=settings.redis_journal_prefix,
            partitions=settings.redis_journal_partitions,
            durability=settings.redis_journal_durability,
            wait_replicas=settings.redis_journal_wait_replicas,
            wait_timeout_ms=settings.redis_journal_wait_timeout_ms,
            lease_ms=settings.redis_journal_lease_ms,
            reclaim_idle_ms=settings.redis_journal_lease_ms,
            consumer=replica_id(settings),
            cluster=settings.redis_cluster,
        )
    return SqliteJournal(settings.data_dir / "journal.db")


def build_ledger(settings: Settings) -> Ledger:
    """The SQLite file under the data dir, or Redis shared by replicas (``settings.ledger()``:
    ``ledger_backend``, else the journal's backend). Whether this process's own index files were
    closed cleanly stays in a file under its data dir either way."""
    if settings.ledger() == "redis":
        from stores.redis_ledger import RedisLedger
        from stores.redis_ledger_base import LocalSettings

        return RedisLedger(
            settings.redis_url,
            prefix=settings.redis_journal_prefix,
            cluster=settings.redis_cluster,
            local=LocalSettings(
                settings.data_dir / "ledger-local.json", frozenset({INDEX_CLEAN_KEY})
            ),
        )
    return SqliteLedger(settings.data_dir / "ledger.db")


def build_injection_screen(settings: Settings, embedder: Embedder) -> InjectionScreen:
    """The second injection screen (``injection_embedder``): the multilingual embedder's
    similarity to known attacks (the gateway's own embedder when it is the same kind). When it
    cannot be built (the package or its weights missing), a warning and the rules alone."""
    kind = settings.injection_embedder
    if not kind:
        return RULES_ONLY
    try:
        inner = embedder if settings.embedder == kind else build_embedder(kind, cache_size=0)
        return PrototypeScreen(embedder=inner, prototypes=load_prototypes(kind))
    except (RuntimeError, OSError, ValueError) as exc:
        log.warning(
            "injection screening by the rules alone: the %r embedder screen is off (%s)", kind, exc
        )
        return RULES_ONLY


def build_service(settings: Settings, tracer: Tracer = NULL_TRACER) -> MemoryService:
    embedder = build_embedder(
        settings.embedder,
        cache_size=settings.embed_cache_size,
        threads=settings.embed_threads,
        onnx_cache_dir=settings.onnx_cache(),
        spinning=settings.embed_spinning,
    )
    formation = build_formation(settings)
    metrics = Metrics()
    events = AppliedEvents()
    workers = RecallWorkers(settings, build_reader_stores) if settings.recall_processes else None
    # every erasure empties the caches of texts too (``memo.forget``), here and in the workers
    for holder in (embedder, workers):
        if isinstance(holder, CachedEmbedder | RecallWorkers):
            memo.also(holder)
    service = MemoryService(
        settings=settings,
        stores=build_stores(
            settings,
            dim=embedder.dim,
            metrics=metrics,
            tracer=tracer,
            events=events,
            index_changes=workers.on_index_change if workers else None,
        ),
        embedder=embedder,
        journal=build_journal(settings),
        ledger=build_ledger(settings),
        extractor=formation.extractor,
        rules=formation.rules,
        observer=formation.observer,
        summariser=formation.summariser,
        overflow_summariser=formation.overflow,
        later_summariser=formation.later,
        metrics=metrics,
        tracer=tracer,
        events=events,
        injection_screen=build_injection_screen(settings, embedder),
    )
    if workers is not None:
        service.recaller.remote = workers
        service.helpers.append(workers)
    return service
