"""Long-term records in Neo4j: ``RecordStore`` with the same semantics as ``SqliteRecordStore``.

Graph model
-----------
* ``(:Memory {id, namespace, layer, status, fact_key, when_at, ...})`` — the current (highest)
  version of a memory, every field of it. While the memory is active it also carries
  ``search_text`` (the ``text_analysis.document_terms`` of its content + context, space
  separated, repeats kept) and ``search_ns``, the two properties of the whitespace-analysed
  fulltext index (Lucene BM25) behind ``keyword_search``. Active memories written before
  ``search_text`` existed, or whose terms another analyzer version made (``search_v``), are
  re-indexed on start.
* ``(:MemoryVersion {id, version, ...})`` — every version ever put, written once (the first write
  of an (id, version) wins, as in SQLite), linked ``(:Memory)-[:HAS_VERSION]->(:MemoryVersion)``
  and chained newest to oldest by ``(:MemoryVersion)-[:SUPERSEDES]->(:MemoryVersion)``.
* ``(:Memory)-[:HOLDS]->(:Fact {namespace, fact_key})`` — the claim of an active memory on its
  fact. ``(namespace, fact_key)`` is unique, so a second active holder cannot be created; a claim
  is released (the node deleted) as soon as its holder stops being active or changes fact.

Times are integer epoch microseconds (exact; timezone-aware UTC on the way out), maps and lists
JSON strings, embeddings little-endian float32 bytes. Every ``put`` is one parameterised statement
in one write transaction: a fact conflict raises ``Conflict`` and stores nothing of the batch.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import Any, TypeVar

import numpy as np

from gateway.core.model.errors import Conflict
from gateway.core.model.models import Layer, Memory, MemoryFilter, Status, VectorItem
from stores import text_analysis
from stores.codec import LAYER_OF, STATUS_OF, dump_json, load_json
from stores.neo4j_schema import (
    MEMORY_TEXT_INDEX,
    RECORD_SCHEMA,
    Neo4jBacked,
    from_micros,
    to_micros,
)

T = TypeVar("T")

_ACTIVE = Status.ACTIVE.value
# Lucene's clause limit is 1024; longer queries are matched on their first terms (and scored on
# all of them).
_MAX_LUCENE_TERMS = 64
_MAX_LUCENE_NAMESPACES = 256

# Phases run in order inside one statement: versions, current nodes, version chains, then fact
# claims - releases strictly before new claims, so "supersede the holder and add its successor"
# works whatever the order of the batch.
#: a current version's context and indexed terms, nothing else (``set_context``)
_SET_CONTEXT = """
UNWIND $rows AS r
MATCH (m:Memory {id: r.id}) WHERE m.version = r.version AND m.search_text IS NOT NULL
SET m.context = r.context, m.search_text = r.search_text, m.search_v = $analyzer
"""

_SET_EMBEDDINGS = """
UNWIND $rows AS r
MATCH (m:Memory {id: r.id}) WHERE m.version IS NOT NULL
SET m.embedding = r.embedding
WITH m, r
MATCH (m)-[:HAS_VERSION]->(v:MemoryVersion {version: m.version})
SET v.embedding = r.embedding
"""

_PUT = """
CALL () {
  UNWIND $versions AS r
  MERGE (m:Memory {id: r.id})
  MERGE (v:MemoryVersion {id: r.id, version: r.version})
    ON CREATE SET v = r
  MERGE (m)-[:HAS_VERSION]->(v)
}
CALL () {
  UNWIND $heads AS h
  MATCH (m:Memory {id: h.id})
  WITH m, h WHERE m.version IS NULL OR h.version > m.version
  SET m = h
}
CALL () {
  UNWIND $ids AS id
  MATCH (:Memory {id: id})-[:HAS_VERSION]->(v:MemoryVersion)
  WITH id, v ORDER BY v.version
  WITH id, collect(v) AS chain
  UNWIND range(1, size(chain) - 1) AS i
  WITH chain[i] AS newer, chain[i - 1] AS older
  OPTIONAL MATCH (newer)-[stale:SUPERSEDES]->(other) WHERE other <> older
  DELETE stale
  MERGE (newer)-[:SUPERSEDES]->(older)
}
CALL () {
  UNWIND $ids AS id
  MATCH (m:Memory {id: id})-[:HOLDS]->(f:Fact)
  WHERE NOT (m.status = $active AND f.namespace = m.namespace AND f.fact_key = m.fact_key)
  DETACH DELETE f
}
CALL () {
  UNWIND $ids AS id
  MATCH (m:Memory {id: id})
  WHERE m.status = $active AND m.fact_key <> ''
    AND NOT EXISTS { (m)-[:HOLDS]->(:Fact {namespace: m.namespace, fact_key: m.fact_key}) }
  CREATE (m)-[:HOLDS]->(:Fact {namespace: m.namespace, fact_key: m.fact_key})
}
"""

# Erasure: every version, the fact claim and the memory node itself, before the tombstone (if
# any) is put by ``_PUT`` in the same transaction.
_ERASE = """
CALL () {
  UNWIND $erase AS id
  MATCH (:Memory {id: id})-[:HAS_VERSION]->(v:MemoryVersion)
  DETACH DELETE v
}
CALL () {
  UNWIND $erase AS id
  MATCH (:Memory {id: id})-[:HOLDS]->(f:Fact)
  DETACH DELETE f
}
CALL () {
  UNWIND $erase AS id
  MATCH (m:Memory {id: id})
  DETACH DELETE m
}
"""

_KEYWORD = f"""
CALL db.index.fulltext.queryNodes('{MEMORY_TEXT_INDEX}', $lucene, $options) YIELD node, score
WHERE node.search_ns IN $namespaces AND node.status = $active {{layers}}
WITH node, score
ORDER BY score DESC, node.when_at DESC, node.id
LIMIT $limit
RETURN {{returned}}, score
"""
#: what ``keyword_search`` returns of a hit
_HIT_ID = "node.id AS id"
_NO_INDEX = "search_text: null, search_ns: null, search_v: null"
#: ``keyword_memories``: the hits with their memories, and the memories of ``$load``, in one
#: statement (one row of two lists)
_KEYWORD_AND_LOAD = f"""
CALL () {{
  UNWIND $probes AS p
  CALL (p) {{
    WITH p WHERE p.count
    CALL db.index.fulltext.queryNodes('{MEMORY_TEXT_INDEX}', p.lucene, {{limit: $most + 1}})
    YIELD score
    RETURN count(score) AS found
  }}
  RETURN collect(CASE WHEN found <= $most THEN p.phrase END) AS kept,
    collect(CASE WHEN p.count THEN [p.term, found] END) AS counted
}}
CALL (kept) {{
  WITH kept WHERE $search AND size(kept) > 0
  CALL db.index.fulltext.queryNodes('{MEMORY_TEXT_INDEX}',
    'search_text:(' + reduce(q = head(kept), x IN tail(kept) | q + ' OR ' + x) + ')' + $scope,
    $options)
  YIELD node, score
  WHERE node.search_ns IN $namespaces AND node.status = $active {{layers}}
  WITH node, score
  ORDER BY score DESC, node.when_at DESC, node.id
  LIMIT $limit
  RETURN collect({{m: node {{.*, {_NO_INDEX}}}, score: score}}) AS hits
}}
CALL (hits) {{
  WITH [h IN hits | h.m.id] AS found
  UNWIND [id IN $load WHERE NOT id IN found] AS id
  MATCH (m:Memory {{id: id}}) WHERE m.version IS NOT NULL
  RETURN collect(m {{.*, embedding: null, {_NO_INDEX}}}) AS loaded
}}
RETURN hits, loaded, counted
"""
#: how many active memories the searched namespaces hold (``text_analysis.most_documents``)
#: the (namespace, layer, status) index answers only with a predicate on each of its properties;
#: without one the planner scanned every :Memory node (121 ms at 60k memories, each recall over
#: namespaces whose size was not remembered)
_BY_SCOPE = "USING INDEX m:Memory(namespace, layer, status)"
_SEARCHED = f"""
MATCH (m:Memory) {_BY_SCOPE}
WHERE m.namespace IN $namespaces AND m.layer IS NOT NULL AND m.status = $active
RETURN count(m) AS searched
"""
#: ``keyword_search``: the probes of ``_KEYWORD_AND_LOAD`` alone
_TERM_COUNTS = _KEYWORD_AND_LOAD.split("CALL (kept)")[0] + "RETURN kept, counted\n"

#: Active memories whose ``search_text`` another analyzer version made (``search_v``; none: 1),
#: or none (written by a version before it), a batch at a time.
_UNINDEXED = """
MATCH (m:Memory)
WHERE m.status = $active AND coalesce(m.search_v, 1) <> $analyzer AND m.content IS NOT NULL
RETURN m.id AS id, m.content AS content, coalesce(m.context, '') AS context LIMIT $size
"""
_SET_TEXT = """
UNWIND $rows AS r MATCH (m:Memory {id: r.id})
SET m.search_text = r.text, m.search_ns = m.namespace, m.search_v = $analyzer
"""

log = logging.getLogger("memgate.records")

_CONFLICT_KEY = re.compile(r"`namespace` = '(?P<ns>.*)', `fact_key` = '(?P<key>.*)'\Z", re.S)


def _version_props(m: Memory) -> dict[str, Any]:
    """Every field of a memory version as Neo4j properties (None values are simply absent)."""
    embedding = None
    if m.embedding is not None:
        embedding = np.asarray(m.embedding, dtype="<f4").reshape(-1).tobytes()
    return {
        "id": m.id,
        "version": int(m.version),
        "namespace": m.namespace,
        "layer": Layer(m.layer).value,
        "content": m.content,
        "type": m.type,
        "importance": float(m.importance),
        "confidence": float(m.confidence),
        "source_agent": m.source_agent,
        "source_session": m.source_session,
        "task_id": m.task_id,
        "created_at": to_micros(m.created_at),
        "updated_at": to_micros(m.updated_at),
        "last_accessed_at": to_micros(m.last_accessed_at),
        "access_count": int(m.access_count),
        "metadata": dump_json({str(k): str(v) for k, v in m.metadata.items()}),
        "evidence": dump_json([str(e) for e in m.evidence]),
        "event_time": to_micros(m.event_time),
        "status": Status(m.status).value,
        "fact_key": m.fact_key,
        "entities": dump_json([str(e) for e in m.entities]),
        "embedding": embedding,
        "when_at": to_micros(m.when),
        "context": m.context,
    }


def _current_props(m: Memory) -> dict[str, Any]:
    props = _version_props(m)
    if props["status"] == _ACTIVE:
        props["search_text"] = _search_text(m.content, m.context)
        props["search_ns"] = m.namespace
        props["search_v"] = text_analysis.ANALYZER_VERSION
    return props


def _search_text(content: str, context: str) -> str:
    """The analysed terms the fulltext index holds (an empty memory still gets a property, so
    the start-up migration does not take it for an old one)."""
    text = text_analysis.index_text(Memory("", "", Layer.SEMANTIC, content, context=context))
    return " ".join(text_analysis.document_terms(text))


def _at(us: int) -> datetime:
    at = from_micros(us)
    assert at is not None
    return at


def _memory_of(p: dict[str, Any]) -> Memory:
    blob = p.get("embedding")
    return Memory(
        id=p["id"],
        namespace=p["namespace"],
        layer=LAYER_OF[p["layer"]],
        content=p["content"],
        type=p["type"],
        importance=float(p["importance"]),
        confidence=float(p["confidence"]),
        source_agent=p["source_agent"],
        source_session=p["source_session"],
        task_id=p["task_id"],
        created_at=_at(p["created_at"]),
        updated_at=_at(p["updated_at"]),
        last_accessed_at=from_micros(p.get("last_accessed_at")),
        access_count=int(p["access_count"]),
        version=int(p["version"]),
        metadata=load_json(p.get("metadata"), {}),
        evidence=load_json(p.get("evidence"), []),
        event_time=from_micros(p.get("event_time")),
        status=STATUS_OF[p["status"]],
        fact_key=p.get("fact_key", ""),
        entities=load_json(p.get("entities"), []),
        embedding=None if blob is None else np.frombuffer(bytes(blob), dtype="<f4").copy(),
        context=p.get("context") or "",
    )


def _lucene_phrase(text: str) -> str:
    """A quoted Lucene phrase: only backslash and quote are special inside quotes."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _lucene_query(terms: Sequence[str], namespaces: Sequence[str]) -> str:
    query = "search_text:(" + " OR ".join(map(_lucene_phrase, terms[:_MAX_LUCENE_TERMS])) + ")"
    return query + _lucene_scope(namespaces)


def _lucene_scope(namespaces: Sequence[str]) -> str:
    """Narrowing by namespace inside Lucene keeps other tenants' matches out of the candidates;
    boosted by 0 it adds nothing to the BM25 score. The Cypher filter on search_ns stays the
    authority (a namespace with spaces is a phrase). Empty when it cannot be said in Lucene."""
    scoped = [ns for ns in namespaces if ns.strip()]
    if len(scoped) == len(namespaces) and 0 < len(scoped) <= _MAX_LUCENE_NAMESPACES:
        return " AND search_ns:(" + " OR ".join(map(_lucene_phrase, scoped)) + ")^0"
    return ""


def _lucene_options(
    namespaces: Sequence[str], layers: Sequence[Layer], limit: int
) -> dict[str, int]:
    """The options of the search's ``queryNodes``: a limit when every Cypher filter after it is
    already said in the Lucene query (the namespaces are, ``_lucene_scope``; only active
    memories are indexed; a layer is not; a namespace is one whitespace token), so Lucene keeps a top-N and skips what cannot reach
    it instead of handing every match to Cypher to sort (BM25's cost grew with the matches:
    a term in 50,000 memories of one namespace). Twice the limit: ties at the cut go to the
    newer memory among those Lucene kept."""
    if layers or not _lucene_scope(namespaces) or any(len(ns.split()) != 1 for ns in namespaces):
        return {}  # a namespace of several words is a phrase: it can match another one
    return {"limit": 2 * max(1, limit) + 16}


def _relative(rows: list[tuple[T, float]]) -> list[tuple[T, float]]:
    """Lucene scores (best first) relative to the best one (0..1)."""
    if not rows:
        return []
    best = rows[0][1] or 1.0
    return [(item, max(0.0, score) / best) for item, score in rows]


def _conflict(exc: Conflict) -> Conflict:
    found = _CONFLICT_KEY.search(exc.message)
    if found is None:
        message = "a memory of the batch claims a fact that another active memory already holds"
    else:
        message = (
            f"namespace {found['ns']!r} already has an active memory for fact {found['key']!r}"
        )
    return Conflict(message, field="fact_key")


class Neo4jRecordStore(Neo4jBacked):
    """``RecordStore`` over a Neo4j 5 database (Community edition is enough)."""

    _schema = RECORD_SCHEMA

    def __init__(
        self,
        uri: str,
        user: str | None = None,
        password: str | None = None,
        database: str = "neo4j",
        common_terms: float = 0.0,
        read_threads: int = 2,
    ) -> None:
        """``common_terms``: a query term in more than this fraction of the searched memories is
        left out of the lexical search (``text_analysis.most_documents``); 0 keeps every term."""
        super().__init__(uri, user, password, database, read_threads)
        self._common = common_terms
        self._scope_stats = text_analysis.ScopeStats()

    async def start(self) -> None:
        await super().start()
        await self._reindex()

    async def _reindex(self) -> None:
        """Active memories indexed by another analyzer version (or by none) get the terms of
        this one, a batch at a time, with progress in the log."""
        version, done, size = text_analysis.ANALYZER_VERSION, 0, 1000
        args = {"active": _ACTIVE, "size": size, "analyzer": version}
        while rows := await self._db.read(_UNINDEXED, args):
            texts = [
                {"id": r["id"], "text": _search_text(r["content"], r["context"])} for r in rows
            ]
            await self._db.write(_SET_TEXT, {"rows": texts, "analyzer": version})
            done += len(rows)
            if done % 10_000 < len(rows) or len(rows) < size:  # every 10k, and the end
                log.info(
                    "re-indexed %d memories for the lexical search (analyzer v%d)", done, version
                )

    # ------------------------------------------------------------------ writes

    async def put(self, memories: Sequence[Memory]) -> None:
        if not memories:
            return
        versions: dict[tuple[str, int], Memory] = {}
        for m in memories:  # the first write of an (id, version) wins, even within a batch
            versions.setdefault((m.id, int(m.version)), m)
        heads: dict[str, Memory] = {}
        for m in versions.values():
            if m.id not in heads or m.version > heads[m.id].version:
                heads[m.id] = m
        params = {
            "versions": [_version_props(m) for m in versions.values()],
            "heads": [_current_props(m) for m in heads.values()],
            "ids": list(heads),
            "active": _ACTIVE,
        }
        try:
            await self._db.write(_PUT, params)
        except Conflict as exc:
            raise _conflict(exc) from exc

    async def set_context(self, memories: Sequence[Memory]) -> None:
        rows = [
            {
                "id": m.id,
                "version": int(m.version),
                "context": m.context,
                "search_text": _search_text(m.content, m.context),
            }
            for m in memories
        ]
        if rows:
            await self._db.write(
                _SET_CONTEXT, {"rows": rows, "analyzer": text_analysis.ANALYZER_VERSION}
            )

    async def set_embeddings(self, vectors: Sequence[tuple[str, np.ndarray]]) -> None:
        rows = [
            {"id": mid, "embedding": np.asarray(v, dtype="<f4").reshape(-1).tobytes()}
            for mid, v in vectors
        ]
        if rows:
            await self._db.write(_SET_EMBEDDINGS, {"rows": rows})

    async def erase(self, tombstones: Sequence[Memory]) -> None:
        latest = {t.id: t for t in tombstones}
        if not latest:
            return
        params = {
            "erase": list(latest),
            "versions": [_version_props(t) for t in latest.values()],
            "heads": [_current_props(t) for t in latest.values()],
            "ids": list(latest),
            "active": _ACTIVE,
        }
        await self._db.write(_ERASE + _PUT, params)

    async def delete(self, ids: Sequence[str]) -> None:
        unique = list(dict.fromkeys(ids))
        if unique:
            await self._db.write(_ERASE, {"erase": unique})

    async def ids_in(self, namespace: str, limit: int) -> list[str]:
        if limit <= 0:
            return []
        rows = await self._db.read(
            "MATCH (m:Memory) WHERE m.namespace = $ns AND m.layer IN $layers "
            "AND m.status IN $statuses RETURN m.id AS id ORDER BY id LIMIT $limit",
            {
                "ns": namespace,
                "layers": [layer.value for layer in Layer],
                "statuses": [status.value for status in Status],
                "limit": int(limit),
            },
        )
        return [row["id"] for row in rows]

    async def touch(self, ids: Sequence[str], at: datetime) -> None:
        unique = list(dict.fromkeys(ids))
        if not unique:
            return
        await self._db.write(
            "UNWIND $ids AS id MATCH (m:Memory {id: id}) "
            "SET m.last_accessed_at = $at, m.access_count = coalesce(m.access_count, 0) + 1",
            {"ids": unique, "at": to_micros(at)},
        )

    # ------------------------------------------------------------------ reads

    async def get(self, ids: Sequence[str], embeddings: bool = True) -> dict[str, Memory]:
        unique = list(dict.fromkeys(ids))
        if not unique:
            return {}
        projection = "properties(m)" if embeddings else "m {.*, embedding: null, search_text: null}"
        rows = await self._db.read(
            "UNWIND $ids AS id MATCH (m:Memory {id: id}) WHERE m.version IS NOT NULL "
            f"RETURN {projection} AS m",
            {"ids": unique},
        )
        return {row["m"]["id"]: _memory_of(row["m"]) for row in rows}

    async def history(self, memory_id: str) -> list[Memory]:
        rows = await self._db.read(
            "MATCH (:Memory {id: $id})-[:HAS_VERSION]->(v:MemoryVersion) "
            "RETURN properties(v) AS v ORDER BY v.version",
            {"id": memory_id},
        )
        return [_memory_of(row["v"]) for row in rows]

    async def query(self, flt: MemoryFilter) -> list[Memory]:
        """Empty ``namespaces`` matches nothing; empty ``layers``/``types``/``statuses`` match
        any."""
        if not flt.namespaces or flt.limit <= 0:
            return []
        where = ["m.namespace IN $namespaces"]
        params: dict[str, Any] = {"namespaces": list(flt.namespaces), "limit": int(flt.limit)}
        for prop, values in (
            ("layer", [Layer(v).value for v in flt.layers]),
            ("type", list(flt.types)),
            ("status", [Status(v).value for v in flt.statuses]),
        ):
            if values:
                where.append(f"m.{prop} IN ${prop}s")
                params[f"{prop}s"] = values
            elif prop != "type":  # any: still a predicate, for the index (``_BY_SCOPE``)
                where.append(f"m.{prop} IS NOT NULL")
        if flt.start is not None:
            where.append("m.when_at >= $start")
            params["start"] = to_micros(flt.start)
        if flt.end is not None:
            where.append("m.when_at < $end")
            params["end"] = to_micros(flt.end)
        if flt.session_id:
            where.append("m.source_session = $session")
            params["session"] = flt.session_id
        rows = await self._db.read(
            f"MATCH (m:Memory) {_BY_SCOPE} WHERE {' AND '.join(where)} "
            "RETURN properties(m) AS m ORDER BY m.when_at DESC, m.id LIMIT $limit",
            params,
        )
        return [_memory_of(row["m"]) for row in rows]

    async def keyword_search(
        self, namespaces: Sequence[str], layers: Sequence[Layer], text: str, limit: int
    ) -> list[tuple[str, float]]:
        """BM25 (Lucene, k1 = 1.2, b = 0.75) of the query's analysed terms
        (``text_analysis.query_terms``) over the analysed content + context; scores divided by the
        best one (so 0..1, the best = 1); ties go to the newer memory. Empty ``layers`` = any."""
        rows = await self._keyword(namespaces, layers, text, limit)
        return _relative([(row["id"], float(row["score"])) for row in rows])

    async def keyword_memories(
        self,
        namespaces: Sequence[str],
        layers: Sequence[Layer],
        text: str,
        limit: int,
        load: Sequence[str] = (),
    ) -> tuple[list[tuple[Memory, float]], dict[str, Memory]]:
        """``keyword_search`` with the memories themselves (embeddings included), and the
        current versions of the other ids of ``load`` without embeddings: one statement, one
        round trip."""
        terms = text_analysis.query_terms(text)
        searched = bool(terms and namespaces and limit > 0)
        unique = list(dict.fromkeys(load))
        if not searched and not unique:
            return [], {}
        params: dict[str, Any] = {
            "search": searched,
            **(await self._probes(terms if searched else [], namespaces)),
            "namespaces": list(namespaces),
            "active": _ACTIVE,
            "limit": max(1, int(limit)),
            "options": _lucene_options(namespaces, layers, limit),
            "load": unique,
        }
        layer_filter = ""
        if layers:
            layer_filter = "AND node.layer IN $layers"
            params["layers"] = [Layer(v).value for v in layers]
        rows = await self._db.read(_KEYWORD_AND_LOAD.replace("{layers}", layer_filter), params)
        if not rows:
            return [], {}
        self._remember_counts(namespaces, params, rows[0]["counted"])
        hits = [(_memory_of(h["m"]), float(h["score"])) for h in rows[0]["hits"]]
        loaded = {m["id"]: _memory_of(m) for m in rows[0]["loaded"]}
        return _relative(hits), loaded

    async def _keyword(
        self,
        namespaces: Sequence[str],
        layers: Sequence[Layer],
        text: str,
        limit: int,
    ) -> list[Any]:
        terms = text_analysis.query_terms(text)
        if not terms or not namespaces or limit <= 0:
            return []
        probes = await self._probes(terms, namespaces)
        if any(p["count"] for p in probes["probes"]):
            rows = await self._db.read(_TERM_COUNTS, probes)
            self._remember_counts(namespaces, probes, rows[0]["counted"])
            kept = set(rows[0]["kept"])
        else:  # every term counted recently (those too common are not probed)
            kept = {p["phrase"] for p in probes["probes"]}
        terms = [t for t in terms if _lucene_phrase(t) in kept]
        if not terms:
            return []
        params: dict[str, Any] = {
            "lucene": _lucene_query(terms, list(namespaces)),
            "namespaces": list(namespaces),
            "active": _ACTIVE,
            "limit": int(limit),
            "options": _lucene_options(namespaces, layers, limit),
        }
        layer_filter = ""
        if layers:
            layer_filter = "AND node.layer IN $layers"
            params["layers"] = [Layer(v).value for v in layers]
        query = _KEYWORD.replace("{layers}", layer_filter).replace("{returned}", _HIT_ID)
        return await self._db.read(query, params)

    async def _probes(self, terms: Sequence[str], namespaces: Sequence[str]) -> dict[str, Any]:
        """The parameters that leave common terms out of a search, inside its statement (the
        rule of ``text_analysis.most_documents``, as ``stores.sqlite_fts.distinctive``):
        ``probes`` (each term's Lucene phrase and, when it must be counted, the Lucene query
        of its matches in ``namespaces``), ``most`` (0: count nothing) and ``scope``. A term
        counted recently (30 s) is not counted again (``ScopeStats.term_count``): left
        out when it was common, searched without a count when it was not.

        Only active memories carry ``search_text``, so a count needs no node: Lucene counts
        the term's matches in the namespaces, up to ``most + 1``."""
        scope = _lucene_scope(namespaces)
        most = None
        if self._common > 0 and terms and scope:
            key = self._scope_stats.key(namespaces, ())
            searched = self._scope_stats.cached(key)
            if searched is None:
                rows = await self._db.read(
                    _SEARCHED, {"namespaces": list(namespaces), "active": _ACTIVE}
                )
                searched = self._scope_stats.remember(key, rows[0]["searched"] if rows else 0)
            most = text_analysis.most_documents(searched, self._common)
        probes = []
        for t in terms[:_MAX_LUCENE_TERMS]:
            found = None if most is None else self._scope_stats.term_count(namespaces, t, most)
            if most is not None and found is not None and found > most:
                continue  # counted recently: common
            probes.append(
                {
                    "term": t,
                    "phrase": _lucene_phrase(t),
                    "count": most is not None and found is None,
                    "lucene": f"search_text:{_lucene_phrase(t)}{scope}",
                }
            )
        return {"probes": probes, "most": most or 0, "scope": scope}

    def _remember_counts(
        self, namespaces: Sequence[str], params: dict[str, Any], counted: list[Any]
    ) -> None:
        """Keep the term counts a statement's probes made (``ScopeStats.term_count``)."""
        for term, found in counted:
            self._scope_stats.remember_term(namespaces, term, params["most"], int(found))

    async def find_fact(self, namespace: str, fact_key: str) -> Memory | None:
        if not fact_key:
            return None
        rows = await self._db.read(
            "MATCH (:Fact {namespace: $ns, fact_key: $key})<-[:HOLDS]-(m:Memory) "
            "WHERE m.status = $active RETURN properties(m) AS m LIMIT 1",
            {"ns": namespace, "key": fact_key, "active": _ACTIVE},
        )
        return _memory_of(rows[0]["m"]) if rows else None

    async def find_facts(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], Memory]:
        wanted = list(dict.fromkeys((ns, key) for ns, key in keys if key))
        if not wanted:
            return {}
        rows = await self._db.read(
            "UNWIND $keys AS k "
            "MATCH (:Fact {namespace: k[0], fact_key: k[1]})<-[:HOLDS]-(m:Memory) "
            "WHERE m.status = $active RETURN properties(m) AS m",
            {"keys": [list(pair) for pair in wanted], "active": _ACTIVE},
        )
        out: dict[tuple[str, str], Memory] = {}
        for row in rows:
            mem = _memory_of(row["m"])
            out[(mem.namespace, mem.fact_key)] = mem
        return out

    async def iter_vectors(
        self, batch_size: int = 1000, namespace: str | None = None
    ) -> AsyncIterator[list[VectorItem]]:
        size = max(1, int(batch_size))
        # one namespace: a seek on memgate_memory_vectors (namespace, status, id), in id order
        scope = "" if namespace is None else "m.namespace = $ns AND "
        query = (
            f"MATCH (m:Memory) WHERE {scope}m.status = $active AND m.id > $after "
            "AND m.embedding IS NOT NULL "
            "RETURN m.id AS id, m.namespace AS ns, m.layer AS layer, m.embedding AS vec "
            "ORDER BY m.id LIMIT $size"
        )
        after = ""
        while True:
            rows = await self._db.read(
                query, {"after": after, "size": size, "active": _ACTIVE, "ns": namespace}
            )
            if not rows:
                return
            yield [
                VectorItem(
                    id=row["id"],
                    namespace=row["ns"],
                    layer=Layer(row["layer"]),
                    vector=np.frombuffer(bytes(row["vec"]), dtype="<f4").copy(),
                )
                for row in rows
            ]
            if len(rows) < size:
                return
            after = rows[-1]["id"]

    async def namespaces(self) -> list[str]:
        rows = await self._db.read(
            "MATCH (m:Memory) WHERE m.status = $active "
            "RETURN DISTINCT m.namespace AS ns ORDER BY ns",
            {"active": _ACTIVE},
        )
        return [row["ns"] for row in rows]

    async def scan(self, namespace: str, after_id: str, limit: int) -> list[Memory]:
        if limit <= 0:
            return []
        rows = await self._db.read(
            "MATCH (m:Memory) WHERE m.namespace = $ns AND m.id > $after AND m.version IS NOT NULL "
            "RETURN properties(m) AS m ORDER BY m.id LIMIT $limit",
            {"ns": namespace, "after": after_id, "limit": int(limit)},
        )
        return [_memory_of(row["m"]) for row in rows]

    async def count(self) -> dict[str, int]:
        rows = await self._db.read(
            "MATCH (m:Memory) WHERE m.version IS NOT NULL "
            "RETURN m.layer AS layer, m.status AS status, count(*) AS n",
            {},
        )
        return {f"{row['layer']}/{row['status']}": int(row["n"]) for row in rows}
