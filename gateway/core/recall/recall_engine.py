"""The recall pipeline: route, gather ranked candidates per source, fuse, score, budget (seed 000
§4). ``core/recall/recall.py`` wraps it with checks, the cache, audit and access statistics; a recall
worker process (``gateway/recall_workers``) runs it alone.

Sources: lexical (``RecordStore.keyword_memories``, BM25; it runs while the query is embedded) and
dense (``VectorIndex.search``) over the long-term layers, the events of a period the query names,
events sharing an entity with the top hits, the session's working window. ``fusion`` weighs
cosine and relative BM25 into one relevance. A layer whose backend is down is skipped and reported
as degraded: a dead backend degrades recall, never fails it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from datetime import datetime

import numpy as np

from gateway.core.apply import dialogue
from gateway.core.model.errors import BackendUnavailable
from gateway.core.model.models import (
    LONG_TERM_LAYERS,
    Layer,
    Memory,
    MemoryFilter,
    NodeKind,
    NodeRef,
    Status,
    normalise_name,
    scoped_id,
    utcnow,
)
from gateway.core.ports.ports import Embedder, Stores
from gateway.core.ports.tracing import NULL_TRACER, Tracer
from gateway.core.recall import fusion, query_reading, scan_hint, scoring, timecues
from gateway.core.recall.fusion import Candidates
from gateway.core.recall.newer_first import newer_first
from gateway.core.recall.query_batch import QueryBatcher
from gateway.core.recall.recall_cache import RecallQuery, RecallResult
from gateway.core.recall.recall_settings import RecallSettings
from gateway.core.recall.recall_window import window_memories
from gateway.core.recall.said_once import said_once
from gateway.core.recall.whose import others_below

#: how many candidates each source brings per requested hit
OVERFETCH = 4
#: entity expansion: how many top hits are expanded through the entities they mention
EXPAND_TOP = 3

log = logging.getLogger("memgate.recall")

#: the lexical hits (memory, relative BM25) and the other memories that call loaded
LexicalTask = asyncio.Future[tuple[list[tuple[Memory, float]], dict[str, Memory]]]


def _found(lexical: LexicalTask) -> set[str]:
    """The ids a finished lexical search loaded already (not to be loaded twice)."""
    ok = lexical.done() and not lexical.cancelled() and lexical.exception() is None
    return {m.id for m, _ in lexical.result()[0]} if ok else set()


class RecallEngine:
    """The pipeline of one recall, from the query to the ranked hits and their memory block.
    No cache, audit row, access statistics or metrics: ``Recaller`` keeps those, so a recall
    worker process (``gateway/recall_workers``) runs this alone on its own stores."""

    def __init__(
        self,
        settings: RecallSettings,
        stores: Stores,
        embedder: Embedder,
        tracer: Tracer = NULL_TRACER,
        alone: Callable[[], bool] | None = None,
    ) -> None:
        """``alone``: whether a recall searching now is the host's only one (``scan_hint``);
        by default, whether it is this engine's only answer under way."""
        self._tracer = tracer
        self._s = settings
        self._stores = stores
        self._weights = scoring.Weights(settings.half_life_days, settings.rank_nudge)
        self._fusion = fusion.FusionWeights(
            dense=settings.w_dense,
            lexical=settings.w_lexical,
            nudge=settings.rank_nudge,
            speaker_boost=settings.speaker_boost,
            multilingual=settings.multilingual,
            fact_dense=settings.w_fact_dense,
            fact_lexical=settings.w_fact_lexical,
            multilingual_cjk_lexical=settings.w_cjk_lexical,
        )
        # Query embeddings get their own worker threads (a recall never queues behind the apply
        # lanes' batch embeddings), and concurrent queries share one embedder run.
        self.queries = QueryBatcher(
            embedder, settings.query_embed_threads, settings.query_embed_batch
        )
        self._after_dense = settings.lexical_after_dense
        self._in_flight = 0  # answers under way
        self._alone = alone or (lambda: self._in_flight == 1)

    async def _embed(self, texts: list[str]) -> np.ndarray:
        return await self.queries.embed(texts)

    async def answer(self, q: RecallQuery) -> RecallResult:
        """Route, gather, fuse, rank and budget ``q`` (already checked)."""
        self._in_flight += 1
        try:
            return await self._answer(q)
        finally:
            self._in_flight -= 1

    async def _answer(self, q: RecallQuery) -> RecallResult:
        now = utcnow()
        reading = query_reading.read(q, now, self._fusion, self._s.dense_mask_names)
        layers, cues = reading.layers, reading.cues
        long_term = tuple(layer for layer in layers if layer in LONG_TERM_LAYERS)
        # the lexical search needs no vector: it runs while the query is embedded, or after the
        # vector search in one round trip with the dense hits' memories (``lexical_schedule``)
        lexical = None
        if long_term and not self._after_dense:
            lexical = self._start_lexical(q, long_term)
        vector = await self._query_vector(reading.dense, lexical)
        degraded: list[str] = []
        c = Candidates()
        if long_term:
            try:
                await self._long_term(c, q, long_term, vector, cues, lexical)
            except BackendUnavailable as exc:
                degraded.append(f"{','.join(x.value for x in long_term)}: {exc.message}")
        if Layer.WORKING in layers and q.session_id:
            try:
                await self._working(c, q, vector)
            except BackendUnavailable as exc:
                degraded.append(f"working: {exc.message}")
        hits: list[scoring.Scored] = []
        try:
            hits = await self._hits(c, q, reading, vector, now, degraded)
        except BackendUnavailable as exc:
            degraded.append(f"records: {exc.message}")
        with self._tracer.span("recall.rank", {"memgate.hits": len(hits)}):
            budget = q.token_budget or self._s.default_token_budget
            block, tokens, _ = scoring.memory_block(hits, budget)
        return RecallResult(hits, block, tokens, tuple(layers), degraded)

    async def _query_vector(self, dense: str, lexical: LexicalTask | None) -> np.ndarray:
        try:
            with self._tracer.span("recall.embed"):
                return (await self._embed([dense]))[0]
        except BaseException:
            if lexical is not None:
                lexical.cancel()
            raise

    def _start_lexical(self, q: RecallQuery, layers: tuple[Layer, ...]) -> LexicalTask:
        """The lexical hits with their memories, as a task started now (beside the embedding)."""

        async def search() -> tuple[list[tuple[Memory, float]], dict[str, Memory]]:
            with self._tracer.span("recall.keyword_search"):
                return await self._stores.records.keyword_memories(
                    q.namespaces, layers, q.query, q.top_k * OVERFETCH
                )

        task = asyncio.ensure_future(search())
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
        return task

    async def _long_term(
        self,
        c: Candidates,
        q: RecallQuery,
        layers: tuple[Layer, ...],
        vector: np.ndarray,
        cues: timecues.Cues,
        lexical_task: LexicalTask | None,
    ) -> None:
        k = q.top_k * OVERFETCH
        records = self._stores.records
        try:
            with (
                self._tracer.span("recall.vector_search"),
                scan_hint.searching(self._alone()),
            ):
                dense = await self._stores.index.search(vector, q.namespaces, k, layers)
        except BaseException:
            if lexical_task is not None:
                lexical_task.cancel()
            raise
        # one load of the dense hits' memories (ranking reads ~35 deep for top_k 10; a round trip
        # costs 2-5 ms on Neo4j): with the lexical search, or beside / after its task
        ids = [i for i, _ in dense]
        if lexical_task is None:
            with self._tracer.span("recall.keyword_search"):
                lexical, loaded = await records.keyword_memories(
                    q.namespaces, layers, q.query, k, load=ids
                )
        else:
            lexical, loaded = await self._beside(lexical_task, ids)
        c.dense.update(dense)
        c.memories.update(loaded)
        c.keyword.update((m.id, score) for m, score in lexical)
        # lexical hits the dense search did not bring: their cosine from their embeddings
        c.add_similar([m for m, _ in lexical], vector)
        start, end = q.start or cues.start, q.end or cues.end
        if Layer.EPISODIC in layers and (start or end):
            # a named period: its events are candidates even if worded differently
            flt = MemoryFilter(
                q.namespaces, (Layer.EPISODIC,), q.types, start=start, end=end, limit=k
            )
            c.add_similar(await records.query(flt), vector)

    async def _beside(
        self, lexical_task: LexicalTask, ids: list[str]
    ) -> tuple[list[tuple[Memory, float]], dict[str, Memory]]:
        """The lexical task's hits, and its loads with the dense hits' other memories, loaded
        beside the task while it still runs."""
        found = _found(lexical_task)
        rest = [i for i in ids if i not in found]
        preload = asyncio.ensure_future(self._stores.records.get(rest, embeddings=False))
        preload.add_done_callback(lambda t: t.cancelled() or t.exception())
        try:
            lexical, loaded = await lexical_task
        except BaseException:
            preload.cancel()
            raise
        return lexical, {**await preload, **loaded}

    async def _vectors(self, ids: list[str]) -> dict[str, np.ndarray]:
        got = await self._stores.records.get(ids)
        return {i: m.embedding for i, m in got.items() if m.embedding is not None}

    async def _hits(
        self,
        c: Candidates,
        q: RecallQuery,
        reading: query_reading.QueryReading,
        vector: np.ndarray,
        now: datetime,
        degraded: list[str],
    ) -> list[scoring.Scored]:
        with self._tracer.span("recall.scoring"):
            hits = await self._rank(c, q, reading, now)
        top = [h.memory for h in hits[:EXPAND_TOP]]
        if Layer.EPISODIC in reading.layers and any(m.entities for m in top):
            try:
                with self._tracer.span("recall.graph_expansion"):
                    expanded = await self._expand_entities(c, q, vector, top)
                if expanded:
                    hits = await self._rank(c, q, reading, now)
            except BackendUnavailable as exc:
                # the graph's fallback is to skip it: records and vectors still answer
                degraded.append(f"graph: {exc.message}")
        hits = others_below(hits, q.query)
        if self._s.compete_cosine > 0 and len(hits) > 1:
            hits = await newer_first(
                hits, q.namespaces, self._vectors, self._s.compete_cosine, q.query,
                self._s.judge, vector,
            )  # fmt: skip
        return hits

    async def _expand_entities(
        self, c: Candidates, q: RecallQuery, vector: np.ndarray, top: Sequence[Memory]
    ) -> bool:
        """Events that mention the same entities as the best candidates (multi-hop through the
        graph); a plain turn has no edge worth following (its session is a hub)."""
        # entity nodes are per namespace (``scoped_id``): the same name in another namespace is
        # another node
        names = {(m.namespace, normalise_name(e)) for m in top for e in m.entities}
        if not any(n for _, n in names):
            return False
        graph = self._stores.graph
        entities = [NodeRef(NodeKind.ENTITY, scoped_id(ns, n)) for ns, n in sorted(names) if n]
        near = await asyncio.gather(*(graph.neighbourhood(e, 1, 10) for e in entities))
        found = [n.node.id for g in near for n in g if n.node.kind is NodeKind.EVENT]
        found = [i for i in dict.fromkeys(found) if i not in c.dense and i not in c.keyword]
        if not found:
            return False
        mems = [
            m
            for m in (await self._stores.records.get(found)).values()
            if m.namespace in q.namespaces
        ]
        c.add_similar(mems, vector)
        c.discount.update((m.id, self._fusion.entity_discount) for m in mems)
        return bool(mems)

    async def _rank(
        self,
        c: Candidates,
        q: RecallQuery,
        reading: query_reading.QueryReading,
        now: datetime,
    ) -> list[scoring.Scored]:
        """Fuse, then load and score only the candidates that can still reach the top k: a
        candidate's final score is at most its fused relevance x ``ceiling``."""
        layers, cues = reading.layers, reading.cues
        fused = c.relevance(reading.weights)
        order = sorted(fused, key=fused.__getitem__, reverse=True)
        f = self._fusion
        boost = 1 + (f.period_boost if cues.period else 0) + (f.when_boost if cues.asks_when else 0)
        ceiling = boost * (1 + f.speaker_boost) * (1 + f.nudge)
        start, end = q.start or cues.start, q.end or cues.end
        asks_of_someone = reading.dense != reading.text  # a name was masked in its vector
        scored: list[scoring.Scored] = []
        pos, width = 0, 2 * q.top_k  # each load is a round trip: steps double
        while pos < len(order):
            if len(scored) >= q.top_k:
                kth = sorted((s.score for s in scored), reverse=True)[q.top_k - 1]
                if fused[order[pos]] * ceiling <= kth:
                    break
            step = order[pos : pos + width]
            pos, width = pos + len(step), 2 * width
            missing = [i for i in step if i not in c.memories]
            if missing:
                c.memories.update(await self._stores.records.get(missing, embeddings=False))
            for mid in step:
                mem = c.memories.get(mid)
                if mem is None or not self._admissible(mem, q, layers):
                    continue
                relevance = fused[mid]
                if (
                    cues.period
                    and (start is None or mem.when >= start)
                    and (end is None or mem.when < end)
                ):
                    relevance *= 1 + f.period_boost
                if cues.asks_when and timecues.dated(mem.content):
                    relevance *= 1 + f.when_boost
                speaker = dialogue.speaker_of(mem)
                if reading.names(speaker) if speaker else asks_of_someone:
                    # a turn said by whom the query names; what no one said (a fact, an
                    # observation) as much: the boost orders speakers, never a turn over a fact
                    relevance *= 1 + f.speaker_boost
                if speaker and mem.content.rstrip().endswith(("?", "？")):
                    relevance *= f.question_turn
                scored.append(
                    scoring.score(
                        mem,
                        relevance,
                        c.dense.get(mid, 0.0),
                        c.keyword.get(mid, 0.0),
                        now,
                        self._weights,
                    )
                )
        scored.sort(key=lambda s: s.score, reverse=True)
        return said_once(scored)[: q.top_k]

    @staticmethod
    def _admissible(mem: Memory, q: RecallQuery, layers: tuple[Layer, ...]) -> bool:
        if mem.layer is Layer.WORKING:
            return True
        if mem.status is not Status.ACTIVE or mem.layer not in layers:
            return False
        if mem.namespace not in q.namespaces or (q.types and mem.type not in q.types):
            return False
        return not ((q.start and mem.when < q.start) or (q.end and mem.when >= q.end))

    async def _working(self, c: Candidates, q: RecallQuery, vector: np.ndarray) -> None:
        mems = await window_memories(self._stores.working, self._embed, q.namespaces, q.session_id)
        c.add_similar(mems, vector)  # the session's window, by cosine to the query

    def close(self) -> None:
        self.queries.close()
