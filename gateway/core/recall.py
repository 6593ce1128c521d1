"""Recall: route, filter, gather candidates per layer, score, budget (seed 000 §4; 002 §3.2).

Each layer is gathered on its own; a layer whose backend is down is skipped and reported as
degraded, so a dead backend degrades recall but never fails it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from gateway.core import namespaces as nsp
from gateway.core import routing, scoring
from gateway.core.control import AuditEntry
from gateway.core.errors import BackendUnavailable, InvalidArgument
from gateway.core.metrics import Metrics
from gateway.core.models import (
    LONG_TERM_LAYERS,
    Layer,
    Memory,
    MemoryFilter,
    NodeKind,
    NodeRef,
    Status,
    Turn,
    Zone,
    utcnow,
)
from gateway.core.ports import Embedder, Ledger, Stores
from gateway.core.tracing import NULL_TRACER, AttributeValue, Tracer, traced
from gateway.settings import Settings

#: how many candidates each source brings per requested hit
OVERFETCH = 4
#: graph expansion: how many top episodic hits are expanded, and how much a neighbour is worth
EXPAND_TOP = 3
NEIGHBOUR_DISCOUNT = 0.9

log = logging.getLogger("memgate.recall")


@dataclass(frozen=True, slots=True)
class RecallQuery:
    query: str
    namespaces: tuple[str, ...]
    layers: tuple[Layer, ...] = ()
    top_k: int = 10
    token_budget: int = 0
    session_id: str = ""
    start: datetime | None = None
    end: datetime | None = None
    types: tuple[str, ...] = ()


@dataclass(slots=True)
class RecallResult:
    hits: list[scoring.Scored]
    block: str
    block_tokens: int
    routed: tuple[Layer, ...]
    degraded: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Candidates:
    dense: dict[str, float] = field(default_factory=dict)
    keyword: dict[str, float] = field(default_factory=dict)
    memories: dict[str, Memory] = field(default_factory=dict)

    def add_dense(self, pairs: Sequence[tuple[str, float]]) -> None:
        for mid, s in pairs:
            self.dense[mid] = max(s, self.dense.get(mid, -1.0))


class RecallCache:
    """Hot recalls for a short time; dropped when a namespace they read is written."""

    def __init__(self, ttl_s: float, max_entries: int) -> None:
        self._ttl = ttl_s
        self._max = max_entries
        self._items: OrderedDict[tuple[object, ...], tuple[float, RecallResult]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[object, ...]) -> RecallResult | None:
        item = self._items.get(key)
        if item and time.monotonic() - item[0] < self._ttl:
            self._items.move_to_end(key)
            self.hits += 1
            return item[1]
        self.misses += 1
        return None

    def put(self, key: tuple[object, ...], value: RecallResult) -> None:
        if self._ttl <= 0:
            return
        self._items[key] = (time.monotonic(), value)
        self._items.move_to_end(key)
        while len(self._items) > self._max:
            self._items.popitem(last=False)

    def invalidate(self, namespaces: set[str]) -> None:
        for key in [k for k in self._items if namespaces & set(k[1])]:  # type: ignore[call-overload]
            del self._items[key]


class Recaller:
    def __init__(
        self,
        settings: Settings,
        stores: Stores,
        embedder: Embedder,
        ledger: Ledger,
        metrics: Metrics | None = None,
        tracer: Tracer = NULL_TRACER,
    ) -> None:
        self._ledger = ledger
        self._metrics = metrics or Metrics()
        self._tracer = tracer
        self._s = settings
        self._stores = stores
        self._embedder = embedder
        self._weights = scoring.Weights(
            settings.w_similarity,
            settings.w_recency,
            settings.w_importance,
            settings.half_life_days,
        )
        self.cache = RecallCache(settings.recall_cache_ttl_s, settings.recall_cache_entries)
        # Query embeddings get their own small pool: a recall never queues behind the apply
        # lanes' batch embeddings in the loop's default pool.
        self._query_pool = ThreadPoolExecutor(
            settings.query_embed_threads, thread_name_prefix="memgate-query-embed"
        )

    def close(self) -> None:
        self._query_pool.shutdown(wait=False, cancel_futures=True)

    async def _embed(self, texts: list[str]) -> np.ndarray:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._query_pool, self._embedder.embed, texts)

    async def recall_as(self, agent: str, q: RecallQuery) -> RecallResult:
        """A recall by ``agent``: every namespace must be readable by it; audited."""
        nsp.check_agent_id(agent)
        if not q.query.strip():
            raise InvalidArgument("query is empty", field="query")
        if not q.namespaces:
            raise InvalidArgument(
                "namespaces is empty: name the namespaces to search", field="namespaces"
            )
        for ns in q.namespaces:
            nsp.check_read(agent, nsp.parse(ns, "namespaces"), self._s.master_agent)
        limits = self._s.limits
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
        await self._ledger.audit(
            [AuditEntry(agent, "recall", ",".join(q.namespaces), "", q.query[:200])]
        )
        return result

    def on_applied(self, namespaces: frozenset[str]) -> None:
        """Writes to these namespaces were applied: cached recalls over them are stale."""
        if namespaces:
            self.cache.invalidate(set(namespaces))

    async def recall(self, q: RecallQuery) -> RecallResult:
        try:
            await self._stores.index.sync()  # other replicas' writes (and cache invalidations)
        except BackendUnavailable as exc:
            log.debug("recall without the latest changes of other replicas: %s", exc.message)
        key = (
            q.query,
            q.namespaces,
            q.layers,
            q.top_k,
            q.token_budget,
            q.session_id,
            q.start,
            q.end,
            q.types,
        )
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        layers = q.layers or routing.route(q.query)
        if q.session_id and Layer.WORKING not in layers:
            layers = (*layers, Layer.WORKING)
        with self._tracer.span("recall.embed"):
            vector = (await self._embed([q.query]))[0]
        now = utcnow()
        degraded: list[str] = []
        long_term = tuple(layer for layer in layers if layer in LONG_TERM_LAYERS)
        scored: list[scoring.Scored] = []
        if long_term:
            try:
                scored = await self._long_term(q, long_term, vector, now, degraded)
            except BackendUnavailable as exc:
                degraded.append(f"{','.join(x.value for x in long_term)}: {exc.message}")
        if Layer.WORKING in layers and q.session_id:
            try:
                scored += await self._working(q, vector, now)
            except BackendUnavailable as exc:
                degraded.append(f"working: {exc.message}")
        with self._tracer.span("recall.rank", {"memgate.candidates": len(scored)}):
            scored.sort(key=lambda s: s.score, reverse=True)
            hits = scored[: q.top_k]
            budget = q.token_budget or self._s.default_token_budget
            block, tokens, _ = scoring.memory_block(hits, budget)
        result = RecallResult(hits, block, tokens, tuple(layers), degraded)
        self._metrics.observe_recall(
            layers,
            q.namespaces,
            ((h.memory.layer, h.memory.namespace, h.memory.updated_at) for h in hits),
            now,
        )
        if hits:
            self._touch_later(
                [h.memory.id for h in hits if h.memory.layer is not Layer.WORKING], now
            )
        if not degraded:
            self.cache.put(key, result)
        return result

    async def _long_term(
        self,
        q: RecallQuery,
        layers: tuple[Layer, ...],
        vector: np.ndarray,
        now: datetime,
        degraded: list[str],
    ) -> list[scoring.Scored]:
        c = _Candidates()
        k = q.top_k * OVERFETCH
        records = self._stores.records
        tracer = self._tracer
        dense, keyword = await asyncio.gather(
            traced(
                tracer,
                "recall.vector_search",
                self._stores.index.search(vector, q.namespaces, k, layers),
            ),
            traced(
                tracer,
                "recall.keyword_search",
                records.keyword_search(q.namespaces, layers, q.query, k),
            ),
        )
        c.add_dense(dense)
        c.keyword = dict(keyword)
        timed = Layer.EPISODIC in layers and (
            q.start or q.end or Layer.EPISODIC in routing.route(q.query)
        )
        if timed:
            # time words: the recent events of the period are candidates even if worded differently
            flt = MemoryFilter(
                q.namespaces, (Layer.EPISODIC,), q.types, start=q.start, end=q.end, limit=k
            )
            for m in await records.query(flt):
                c.memories[m.id] = m
        missing = [i for i in {*c.dense, *c.keyword} if i not in c.memories]
        c.memories.update(await records.get(missing))
        if Layer.EPISODIC in layers:
            try:
                with tracer.span("recall.graph_expansion"):
                    await self._expand_graph(c, q, vector)
            except BackendUnavailable as exc:
                # the graph's fallback is to skip it: records and vectors still answer
                degraded.append(f"graph: {exc.message}")
        out = []
        with tracer.span("recall.scoring", {"memgate.candidates": len(c.memories)}):
            for mid, mem in c.memories.items():
                if not self._admissible(mem, q, layers):
                    continue
                dense_sim = c.dense.get(mid)
                if dense_sim is None and mem.embedding is not None:
                    dense_sim = float(np.dot(mem.embedding, vector))
                out.append(
                    scoring.score(
                        mem, dense_sim or 0.0, c.keyword.get(mid, 0.0), now, self._weights
                    )
                )
        return out

    async def _expand_graph(self, c: _Candidates, q: RecallQuery, vector: np.ndarray) -> None:
        """Events linked to the best episodic candidates: directly related events, and events
        that mention the same entities. Hubs (the session, the agent, the user) are not
        followed: every event of a user is one hop from the user node."""
        ranked = sorted(
            (m for m in c.memories.values() if m.layer is Layer.EPISODIC),
            key=lambda m: c.dense.get(m.id, 0.0),
            reverse=True,
        )[:EXPAND_TOP]
        graph = self._stores.graph
        found: list[str] = []
        entities: list[NodeRef] = []
        near = await asyncio.gather(
            *(graph.neighbourhood(NodeRef(NodeKind.EVENT, m.id), 1, 20) for m in ranked)
        )
        for n in (n for group in near for n in group):
            if n.node.kind is NodeKind.EVENT:
                found.append(n.node.id)
            elif n.node.kind is NodeKind.ENTITY and n.node not in entities:
                entities.append(n.node)
        mentions = await asyncio.gather(*(graph.neighbourhood(e, 1, 10) for e in entities))
        found += [m.node.id for group in mentions for m in group if m.node.kind is NodeKind.EVENT]
        found = [i for i in dict.fromkeys(found) if i not in c.memories]
        if not found:
            return
        base = max((c.dense.get(r.id, 0.0) for r in ranked), default=0.0)
        for mid, mem in (await self._stores.records.get(found)).items():
            if mem.namespace in q.namespaces:
                c.memories[mid] = mem
                if mid not in c.dense:
                    own = float(np.dot(mem.embedding, vector)) if mem.embedding is not None else 0.0
                    c.dense[mid] = max(own, NEIGHBOUR_DISCOUNT * min(base, 1.0))

    @staticmethod
    def _admissible(mem: Memory, q: RecallQuery, layers: tuple[Layer, ...]) -> bool:
        if mem.status is not Status.ACTIVE or mem.layer not in layers:
            return False
        if mem.namespace not in q.namespaces:
            return False
        if q.types and mem.type not in q.types:
            return False
        if q.start and mem.when < q.start:
            return False
        return not (q.end and mem.when >= q.end)

    async def _working(
        self, q: RecallQuery, vector: np.ndarray, now: datetime
    ) -> list[scoring.Scored]:
        out: list[scoring.Scored] = []
        for ns in q.namespaces:
            window = await self._stores.working.window(ns, q.session_id)
            turns: list[Turn] = [
                t for z in (Zone.INSTRUCTIONS, Zone.TASK, Zone.DIALOGUE) for t in window.get(z, [])
            ]
            if not turns:
                continue
            vectors = await self._embed([t.content for t in turns])
            for turn, tv in zip(turns, vectors, strict=True):
                mem = Memory(
                    id=turn.id,
                    namespace=ns,
                    layer=Layer.WORKING,
                    content=turn.content,
                    type=f"turn:{turn.zone.value}",
                    importance=0.5,
                    source_session=q.session_id,
                    created_at=turn.at,
                    updated_at=turn.at,
                    metadata={"role": turn.role, **turn.metadata},
                )
                out.append(scoring.score(mem, float(np.dot(tv, vector)), 0.0, now, self._weights))
        return out

    def _touch_later(self, ids: list[str], now: datetime) -> None:
        if not ids:
            return

        async def touch() -> None:
            with contextlib.suppress(Exception):  # access stats are best effort
                await self._stores.records.touch(ids, now)

        task = asyncio.get_running_loop().create_task(touch())
        _BACKGROUND.add(task)
        task.add_done_callback(_BACKGROUND.discard)


_BACKGROUND: set[asyncio.Task[None]] = set()
