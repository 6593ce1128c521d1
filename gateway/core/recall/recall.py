"""Recall as an agent asks it: checked, cached, answered by the pipeline (``core/recall/recall_engine.py``,
here or in a recall worker process), audited (the row is queued, ``AuditLog``), the hits' access
statistics and metrics recorded.
"""

from __future__ import annotations

import logging
from typing import Protocol

from gateway.core.access import namespaces as nsp
from gateway.core.model.control import AuditEntry
from gateway.core.model.errors import BackendUnavailable, InvalidArgument
from gateway.core.model.models import Layer, utcnow
from gateway.core.ports.metrics import Metrics
from gateway.core.ports.ports import Embedder, Stores
from gateway.core.ports.tracing import NULL_TRACER, AttributeValue, Tracer
from gateway.core.recall import scoring
from gateway.core.recall.as_of import hits_as_of
from gateway.core.recall.audit_log import AccessTouches, AuditLog
from gateway.core.recall.recall_cache import RecallCache, RecallQuery, RecallResult
from gateway.core.recall.recall_engine import RecallEngine
from gateway.core.recall.recall_settings import RecallSettings

__all__ = ["Recaller", "RecallEngine", "RemoteAnswers"]

log = logging.getLogger("memgate.recall")


class RemoteAnswers(Protocol):
    """Recall pipelines run elsewhere (recall worker processes): ``None`` when none can take
    ``q`` now (not started, busy, or gone), and the recall runs here."""

    async def answer(self, q: RecallQuery) -> RecallResult | None: ...

    def in_flight(self) -> int:
        """Recalls handed over and not answered yet."""
        ...


class Recaller:
    """A recall as an agent asks it: checked, cached, answered (here, or by ``remote``),
    audited, its hits' access statistics and metrics recorded."""

    def __init__(
        self,
        settings: RecallSettings,
        stores: Stores,
        embedder: Embedder,
        audit: AuditLog,
        metrics: Metrics | None = None,
        tracer: Tracer = NULL_TRACER,
    ) -> None:
        self._metrics = metrics or Metrics()
        self._tracer = tracer
        self._s = settings
        self._stores = stores
        self.engine = RecallEngine(settings, stores, embedder, tracer, self._alone)
        self.remote: RemoteAnswers | None = None
        # A recall runs here when no other is running anywhere (a lone agent: no hop, and the
        # embedder's every thread); under concurrency the workers take them (docs/SCALING.md).
        self._running = 0
        self.cache = RecallCache(settings.cache_ttl_s, settings.cache_entries)
        self.audit = audit  # the gateway's queue of audit rows (shared with Get and erasure)
        self.touches = AccessTouches(stores.records)

    async def recall_as(self, agent: str, q: RecallQuery, action: str = "recall") -> RecallResult:
        """A recall by ``agent``: every namespace must be readable by it; audited as ``action``
        ("console_recall" when the master's review console asked)."""
        nsp.check_agent_id(agent)
        limits = self._s.limits
        if len(q.query) > limits.max_query_chars:
            raise InvalidArgument(
                f"query is {len(q.query)} chars, the limit is {limits.max_query_chars}: "
                "send the question, not the document",
                field="query",
            )
        if not q.query.strip():
            raise InvalidArgument("query is empty", field="query")
        if not q.namespaces:
            raise InvalidArgument(
                "namespaces is empty: name the namespaces to search", field="namespaces"
            )
        if len(q.namespaces) > limits.max_recall_namespaces:
            raise InvalidArgument(
                f"namespaces has {len(q.namespaces)} entries, the limit is "
                f"{limits.max_recall_namespaces}",
                field="namespaces",
            )
        if len(q.types) > limits.max_recall_types or any(len(t) > 64 for t in q.types):
            raise InvalidArgument(
                f"types: at most {limits.max_recall_types} types of at most 64 chars",
                field="types",
            )
        nsp.check_id(q.session_id, "session_id")
        for ns in q.namespaces:
            nsp.check_read(agent, nsp.parse(ns, "namespaces"), self._s.master_agent)
        if not 1 <= q.top_k <= limits.max_top_k:
            raise InvalidArgument(f"top_k must be 1..{limits.max_top_k}", field="top_k")
        if not 0 <= q.token_budget <= limits.max_token_budget:
            raise InvalidArgument(
                f"token_budget must be 0..{limits.max_token_budget}", field="token_budget"
            )
        attrs: dict[str, AttributeValue] = {
            "memgate.namespaces": ",".join(q.namespaces),
            "memgate.top_k": q.top_k,
        }
        with self._tracer.span("recall", attrs) as span:
            result = await self.recall(q)
            span.set_attribute("memgate.hits", len(result.hits))
            span.set_attribute("memgate.layers", ",".join(x.value for x in result.routed))
        found = tuple(dict.fromkeys(h.memory.id for h in result.hits))
        self.audit.add(
            AuditEntry(agent, action, ",".join(q.namespaces), "", q.query[:200], hits=found)
        )
        return result

    def _alone(self) -> bool:
        """The recall answered here is the only one under way, here or in a worker."""
        return self._running == 1 and (self.remote is None or not self.remote.in_flight())

    def on_applied(self, namespaces: frozenset[str]) -> None:
        """Writes to these namespaces were applied: cached recalls over them are stale."""
        if namespaces:
            self.cache.invalidate(set(namespaces))

    async def recall(self, q: RecallQuery) -> RecallResult:
        try:
            await self._stores.index.sync()  # other replicas' writes (and cache invalidations)
        except BackendUnavailable as exc:
            log.debug("recall without the latest changes of other replicas: %s", exc.message)
        cached = self.cache.get(q)  # the query itself is the key (frozen, hashable)
        if cached is not None:
            return cached
        result = None
        if self.remote is not None and (self._running or self.remote.in_flight()):
            result = await self.remote.answer(q)
        if result is None:
            self._running += 1
            try:
                result = await self.engine.answer(q)
            finally:
                self._running -= 1
        if q.as_of is not None:
            result = await self._as_of(result, q)
        hits, now = result.hits, utcnow()
        self._metrics.observe_recall(
            result.routed,
            q.namespaces,
            ((h.memory.layer, h.memory.namespace, h.memory.updated_at) for h in hits),
            now,
        )
        if hits:
            self.touches.add(
                [h.memory.id for h in hits if h.memory.layer is not Layer.WORKING], now
            )
        if not result.degraded:
            self.cache.put(q, result)
        return result

    async def _as_of(self, result: RecallResult, q: RecallQuery) -> RecallResult:
        """``result`` as the memory stood at ``q.as_of``: each hit the version true then."""
        assert q.as_of is not None
        hits = await hits_as_of(result.hits, q.as_of, self._stores.records.history)
        budget = q.token_budget or self._s.default_token_budget
        block, tokens, _ = scoring.memory_block(hits, budget)
        return RecallResult(hits, block, tokens, result.routed, result.degraded)

    async def close(self) -> None:
        """Write what is queued: access statistics, then audit rows."""
        await self.touches.close()
        await self.audit.close()
        self.engine.close()
