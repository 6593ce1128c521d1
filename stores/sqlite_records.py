"""Embedded long-term records: ``RecordStore`` over one SQLite file (WAL, synchronous=FULL).

Schema
------
* ``memory_versions`` — every version ever put, keyed (id, version). Written once
  (``INSERT OR IGNORE``): replaying a put of the same (id, version) changes nothing, even if the
  replayed content differs (the first write of a version wins).
* ``memories`` — the current (highest) version of each id, same columns, indexed for filtered
  queries on (namespace, layer, status, when). A version replaces the current row only when it is
  newer, so out-of-order replays never roll a memory back. ``touch`` updates access statistics
  here only (no version is written; ``history`` shows versions as they were put).
* ``memory_fts`` — the lexical index (``stores.sqlite_fts``): the analysed terms of every
  *active* current memory, scoped by namespace and layer; ``keyword_search`` ranks with FTS5
  ``bm25()``. A database from before FTS (with the old ``memory_terms`` table, or none) gets the
  table built from ``memories`` on start, and the old table dropped.

Times are integer microseconds since the Unix epoch (UTC; exact and sortable) and come back as
timezone-aware UTC datetimes; a naive datetime is taken to be UTC. ``when_at`` is
``event_time`` or else ``created_at`` (``Memory.when``). Embeddings are little-endian float32 bytes.

Erasure (``erase``, ``delete``) removes every version's row and keyword terms in one transaction,
then truncates the WAL; with ``secure_delete`` on, no copy of the content stays in either file.

(namespace, fact_key) is unique among ACTIVE current memories with a non-empty fact_key (a partial
unique index). A put that would break it raises ``Conflict`` and stores nothing: every put is one
transaction. Within a batch, memories that release a fact (not active, or no fact_key) are applied
before those that claim one, so "supersede the old holder + add the new one" works in any order.

One connection, guarded by a lock; every call runs on a worker thread (``asyncio.to_thread``),
except a lean ``get`` (no embeddings) whose every row is in the store's row cache
(``stores/row_cache.py``: the gateway's own store only; writes drop what they change).
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from gateway.core.model.errors import Conflict
from gateway.core.model.models import Layer, Memory, MemoryFilter, Status, VectorItem
from stores import sqlite_fts, text_analysis
from stores.codec import LAYER_OF, STATUS_OF, dump_json, from_micros, load_json, to_micros
from stores.row_cache import RowCache
from stores.sqlite_base import SqliteBacked, SqliteDb, chunks, marks

T = TypeVar("T")

# ---------------------------------------------------------------------------------------- schema

_FIELDS = """
    id               TEXT    NOT NULL,
    version          INTEGER NOT NULL,
    namespace        TEXT    NOT NULL,
    layer            TEXT    NOT NULL,
    content          TEXT    NOT NULL,
    type             TEXT    NOT NULL,
    importance       REAL    NOT NULL,
    confidence       REAL    NOT NULL,
    source_agent     TEXT    NOT NULL,
    source_session   TEXT    NOT NULL,
    task_id          TEXT    NOT NULL,
    created_at       INTEGER NOT NULL,  -- unix microseconds, UTC
    updated_at       INTEGER NOT NULL,
    last_accessed_at INTEGER,
    access_count     INTEGER NOT NULL,
    metadata         TEXT    NOT NULL,  -- JSON object of strings
    evidence         TEXT    NOT NULL,  -- JSON list of strings
    event_time       INTEGER,
    status           TEXT    NOT NULL,
    fact_key         TEXT    NOT NULL,
    entities         TEXT    NOT NULL,  -- JSON list of strings
    embedding        BLOB,              -- little-endian float32
    when_at          INTEGER NOT NULL,  -- event_time, else created_at
    context          TEXT    NOT NULL DEFAULT ''  -- indexed beside content, never returned
"""

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS memory_versions ({_FIELDS}, PRIMARY KEY (id, version));

CREATE TABLE IF NOT EXISTS memories ({_FIELDS}, PRIMARY KEY (id));
CREATE INDEX IF NOT EXISTS memories_filter ON memories (namespace, layer, status, when_at);
CREATE INDEX IF NOT EXISTS memories_recent ON memories (namespace, when_at);
-- one namespace's vectors, in id order (a namespace loaded on demand: stores/vector_cache.py)
CREATE INDEX IF NOT EXISTS memories_vectors ON memories (namespace, status, id);
CREATE INDEX IF NOT EXISTS memories_session ON memories (namespace, source_session, when_at);
CREATE UNIQUE INDEX IF NOT EXISTS memories_fact ON memories (namespace, fact_key)
    WHERE status = 'active' AND fact_key <> '';

PRAGMA user_version = 2;
"""

_COLUMNS = (
    "id, version, namespace, layer, content, type, importance, confidence, source_agent, "
    "source_session, task_id, created_at, updated_at, last_accessed_at, access_count, metadata, "
    "evidence, event_time, status, fact_key, entities, embedding, when_at, context"
)
_N_COLUMNS = len(_COLUMNS.split(","))
_COLUMNS_NO_EMBEDDING = _COLUMNS.replace(" embedding,", " NULL,")
_M_COLUMNS = ", ".join(f"m.{c.strip()}" for c in _COLUMNS.split(","))
_UPDATE_ALL = ", ".join(f"{c.strip()} = excluded.{c.strip()}" for c in _COLUMNS.split(",")[1:])

_UPSERT_CURRENT = (
    f"INSERT INTO memories ({_COLUMNS}) VALUES ({marks(_N_COLUMNS)}) "
    f"ON CONFLICT (id) DO UPDATE SET {_UPDATE_ALL} WHERE excluded.version > memories.version"
)
_INSERT_VERSION = f"INSERT OR IGNORE INTO memory_versions ({_COLUMNS}) VALUES ({marks(_N_COLUMNS)})"
_FACT_INDEX_ERROR = "memories.namespace, memories.fact_key"
_CHUNK_PAIRS = 200  # (namespace, fact_key) pairs per find_facts statement


def _relative(rows: list[tuple[T, float]]) -> list[tuple[T, float]]:
    """FTS5 ``bm25()`` values (negative, best first) as scores relative to the best (0..1)."""
    if not rows:
        return []
    best = -rows[0][1] or 1.0
    return [(item, max(0.0, -s) / best) for item, s in rows]


def _get_rows(conn: sqlite3.Connection, ids: Sequence[str], columns: str) -> dict[str, Memory]:
    out: dict[str, Memory] = {}
    for part in chunks(ids):
        for row in conn.execute(
            f"SELECT {columns} FROM memories WHERE id IN ({marks(len(part))})", part
        ):
            out[row[0]] = _memory_of(row)
    return out


def _migrate(conn: sqlite3.Connection) -> None:
    """Bring a database written by an older version up to date: the ``context`` column, the
    FTS5 table built from ``memories`` when it is missing (the term table it replaces dropped) or
    re-indexed when its layout is older."""
    for table in ("memories", "memory_versions"):
        columns = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if "context" not in columns:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN context TEXT NOT NULL DEFAULT ''")
    conn.execute("DROP TABLE IF EXISTS memory_terms")
    sqlite_fts.migrate(
        conn,
        lambda: (
            (row[0], _memory_of(row[1:]))
            for row in conn.execute(
                f"SELECT rowid, {_COLUMNS} FROM memories WHERE status = 'active'"
            )
        ),
    )


def _row_of(m: Memory) -> tuple[Any, ...]:
    embedding = None
    if m.embedding is not None:
        embedding = np.asarray(m.embedding, dtype="<f4").reshape(-1).tobytes()
    return (
        m.id,
        int(m.version),
        m.namespace,
        Layer(m.layer).value,
        m.content,
        m.type,
        float(m.importance),
        float(m.confidence),
        m.source_agent,
        m.source_session,
        m.task_id,
        to_micros(m.created_at),
        to_micros(m.updated_at),
        None if m.last_accessed_at is None else to_micros(m.last_accessed_at),
        int(m.access_count),
        dump_json({str(k): str(v) for k, v in m.metadata.items()}),
        dump_json([str(e) for e in m.evidence]),
        None if m.event_time is None else to_micros(m.event_time),
        Status(m.status).value,
        m.fact_key,
        dump_json([str(e) for e in m.entities]),
        embedding,
        to_micros(m.when),
        m.context,
    )


_EMBEDDING = _COLUMNS.split(", ").index("embedding")


def _lean(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A ``_row_of`` row as ``_COLUMNS_NO_EMBEDDING`` reads it."""
    return (*row[:_EMBEDDING], None, *row[_EMBEDDING + 1 :])


def _memory_of(row: Sequence[Any]) -> Memory:
    (
        mid, version, namespace, layer, content, type_, importance, confidence, source_agent,
        source_session, task_id, created_at, updated_at, last_accessed_at, access_count, metadata,
        evidence, event_time, status, fact_key, entities, embedding, _when, context,
    ) = row  # fmt: skip
    return Memory(
        id=mid,
        namespace=namespace,
        layer=LAYER_OF[layer],
        content=content,
        type=type_,
        importance=importance,
        confidence=confidence,
        source_agent=source_agent,
        source_session=source_session,
        task_id=task_id,
        created_at=from_micros(created_at),
        updated_at=from_micros(updated_at),
        last_accessed_at=None if last_accessed_at is None else from_micros(last_accessed_at),
        access_count=access_count,
        version=version,
        metadata=load_json(metadata, {}) if metadata != "{}" else {},
        evidence=load_json(evidence, []) if evidence != "[]" else [],
        event_time=None if event_time is None else from_micros(event_time),
        status=STATUS_OF[status],
        fact_key=fact_key,
        entities=load_json(entities, []) if entities != "[]" else [],
        embedding=None if embedding is None else np.frombuffer(embedding, dtype="<f4").copy(),
        context=context,
    )


def _claims_fact(m: Memory) -> bool:
    return Status(m.status) is Status.ACTIVE and bool(m.fact_key)


class SqliteRecordStore(SqliteBacked):
    """``RecordStore`` over an embedded SQLite database at ``path`` (``:memory:`` works too)."""

    def __init__(self, path: Path, common_terms: float = 0.0, row_cache: int = 0) -> None:
        """``common_terms``: a query term in more than this fraction of the searched memories is
        left out of the lexical search (``sqlite_fts.distinctive``); 0 keeps every term.
        ``row_cache``: how many decoded rows ``get(ids, embeddings=False)`` keeps
        (``stores.row_cache``); only for the one writer of the file (0: none)."""
        self._db = SqliteDb(path, _SCHEMA, "record store")
        self._common = common_terms
        self._scope_stats = text_analysis.ScopeStats()
        self._rows = RowCache(row_cache)

    async def start(self) -> None:
        await self._db.start()
        await self._write(_migrate, None)

    async def _write(self, fn: Callable[[sqlite3.Connection], T], ids: Iterable[str] | None) -> T:
        """Every write of this store: on the SQLite thread, the cached rows of ``ids`` (None:
        all) are dropped before the transaction (``stores.row_cache``)."""

        def run(conn: sqlite3.Connection) -> T:
            self._rows.drop(ids)
            return fn(conn)

        try:
            return await self._db.write(run)
        except BaseException:
            # rolled back (or not known to be): what ``fn`` applied to the cache goes too (only
            # filling must keep to the SQLite thread; dropping is safe from any thread)
            self._rows.drop(None)
            raise

    # ------------------------------------------------------------------ writes

    async def put(self, memories: Sequence[Memory]) -> None:
        if not memories:
            return
        # Releases before claims, so a batch that supersedes a fact's holder and adds its
        # successor never trips the unique index half-way. The current row only ever moves to a
        # higher version, so this reordering cannot change which version ends up current.
        ordered = sorted(memories, key=_claims_fact)
        rows = [(_row_of(m), sqlite_fts.document(m)) for m in ordered]

        def run(conn: sqlite3.Connection) -> None:
            current = self._put(conn, rows)
            if self._rows.enabled:  # what a read of these rows would decode, without embeddings
                self._rows.keep({row[0]: _memory_of(_lean(row)) for row in current})

        await self._write(run, [m.id for m in ordered])

    @staticmethod
    def _put(
        conn: sqlite3.Connection, rows: list[tuple[tuple[Any, ...], tuple[str, str] | None]]
    ) -> list[tuple[Any, ...]]:
        """The rows that became current."""
        current = []
        for row, doc in rows:
            if not conn.execute(_INSERT_VERSION, row).rowcount:
                continue  # this (id, version) is stored already: a replay
            try:
                changed = conn.execute(_UPSERT_CURRENT, row).rowcount
            except sqlite3.IntegrityError as exc:
                if _FACT_INDEX_ERROR not in str(exc):
                    raise
                raise Conflict(
                    f"namespace {row[2]!r} already has an active memory for fact {row[19]!r}",
                    field="fact_key",
                ) from exc
            if changed:
                (rowid,) = conn.execute(
                    "SELECT rowid FROM memories WHERE id = ?", (row[0],)
                ).fetchone()
                sqlite_fts.index(conn, rowid, doc)
                current.append(row)
        return current

    async def set_context(self, memories: Sequence[Memory]) -> None:
        rows = [(m.context, m.id, int(m.version), sqlite_fts.document(m)) for m in memories]

        def run(conn: sqlite3.Connection) -> None:
            for context, mid, version, doc in rows:
                row = conn.execute(
                    "UPDATE memories SET context = ? WHERE id = ? AND version = ? RETURNING rowid",
                    (context, mid, version),
                ).fetchone()
                if row is not None:  # still the current version: re-index it
                    sqlite_fts.index(conn, row[0], doc)

        if rows:
            await self._write(run, [m.id for m in memories])

    async def set_embeddings(self, vectors: Sequence[tuple[str, np.ndarray]]) -> None:
        rows = [(np.asarray(v, dtype="<f4").reshape(-1).tobytes(), mid) for mid, v in vectors]

        def run(conn: sqlite3.Connection) -> None:
            for blob, mid in rows:
                hit = conn.execute(
                    "UPDATE memories SET embedding = ? WHERE id = ? RETURNING version",
                    (blob, mid),
                ).fetchone()
                if hit is not None:
                    conn.execute(
                        "UPDATE memory_versions SET embedding = ? WHERE id = ? AND version = ?",
                        (blob, mid, hit[0]),
                    )

        if rows:
            await self._write(run, [mid for mid, _ in vectors])

    async def touch(self, ids: Sequence[str], at: datetime) -> None:
        unique = list(dict.fromkeys(ids))
        if not unique:
            return
        us = to_micros(at)

        def run(conn: sqlite3.Connection) -> None:
            for part in chunks(unique):
                conn.execute(
                    "UPDATE memories SET last_accessed_at = ?, access_count = access_count + 1 "
                    f"WHERE id IN ({marks(len(part))})",
                    (us, *part),
                )
            self._rows.touched(unique, from_micros(us))  # the same change to the cached rows

        await self._write(run, ())

    # ------------------------------------------------------------------ erasure

    async def erase(self, tombstones: Sequence[Memory]) -> None:
        latest: dict[str, Memory] = {t.id: t for t in tombstones}
        if not latest:
            return
        rows = [_row_of(t) for t in latest.values()]

        def run(conn: sqlite3.Connection) -> None:
            self._delete(conn, list(latest))
            conn.executemany(_INSERT_VERSION, rows)
            conn.executemany(_UPSERT_CURRENT, rows)
            sqlite_fts.purge_deleted(conn)

        await self._write(run, list(latest))
        await self._db.checkpoint()

    async def delete(self, ids: Sequence[str]) -> None:
        unique = list(dict.fromkeys(ids))
        if not unique:
            return

        def run(conn: sqlite3.Connection) -> None:
            self._delete(conn, unique)
            sqlite_fts.purge_deleted(conn)

        await self._write(run, unique)
        await self._db.checkpoint()

    @staticmethod
    def _delete(conn: sqlite3.Connection, ids: Sequence[str]) -> None:
        for part in chunks(ids):
            q = marks(len(part))
            # the FTS document first: it is keyed by the current row's rowid
            conn.execute(
                f"DELETE FROM memory_fts WHERE rowid IN (SELECT rowid FROM memories WHERE id IN ({q}))",
                part,
            )
            for table in ("memory_versions", "memories"):
                conn.execute(f"DELETE FROM {table} WHERE id IN ({q})", part)

    async def ids_in(self, namespace: str, limit: int) -> list[str]:
        if limit <= 0:
            return []
        rows = await self._db.read(
            lambda c: c.execute(
                "SELECT id FROM memories WHERE namespace = ? ORDER BY id LIMIT ?",
                (namespace, int(limit)),
            ).fetchall()
        )
        return [r[0] for r in rows]

    # ------------------------------------------------------------------ reads

    async def get(self, ids: Sequence[str], embeddings: bool = True) -> dict[str, Memory]:
        unique = list(dict.fromkeys(ids))
        if not unique:
            return {}
        if embeddings or not self._rows.enabled:
            columns = _COLUMNS if embeddings else _COLUMNS_NO_EMBEDDING
            return await self._db.read(lambda c: _get_rows(c, unique, columns))
        cached = self._rows.lookup(unique)  # every row decoded already: no trip to SQLite
        if cached is not None:
            return cached

        # looked up again on the SQLite thread: a write in between dropped what it changed
        return await self._db.read(lambda c: self._lean_rows(c, unique))

    def _lean_rows(self, conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, Memory]:
        """The current rows of ``ids`` without embeddings: the cached ones copied, the others
        read and cached. On the SQLite thread only (``stores.row_cache``)."""
        if not self._rows.enabled:
            return _get_rows(conn, ids, _COLUMNS_NO_EMBEDDING)
        found, missing = self._rows.split(ids)
        if missing:
            fresh = _get_rows(conn, missing, _COLUMNS_NO_EMBEDDING)
            self._rows.keep(fresh)
            found.update(fresh)
        return found

    async def history(self, memory_id: str) -> list[Memory]:
        def run(conn: sqlite3.Connection) -> list[Memory]:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM memory_versions WHERE id = ? ORDER BY version",
                (memory_id,),
            ).fetchall()
            return [_memory_of(r) for r in rows]

        return await self._db.read(run)

    async def query(self, flt: MemoryFilter) -> list[Memory]:
        """Empty ``namespaces`` matches nothing; empty ``layers``/``types``/``statuses`` match
        any."""
        if not flt.namespaces or flt.limit <= 0:
            return []
        where = [f"namespace IN ({marks(len(flt.namespaces))})"]
        params: list[Any] = list(flt.namespaces)
        for column, values in (
            ("layer", [Layer(v).value for v in flt.layers]),
            ("type", list(flt.types)),
            ("status", [Status(v).value for v in flt.statuses]),
        ):
            if values:
                where.append(f"{column} IN ({marks(len(values))})")
                params.extend(values)
        if flt.start is not None:
            where.append("when_at >= ?")
            params.append(to_micros(flt.start))
        if flt.end is not None:
            where.append("when_at < ?")
            params.append(to_micros(flt.end))
        if flt.session_id:
            where.append("source_session = ?")
            params.append(flt.session_id)
        sql = (
            f"SELECT {_COLUMNS} FROM memories WHERE {' AND '.join(where)} "
            "ORDER BY when_at DESC, id LIMIT ?"
        )
        params.append(int(flt.limit))
        return await self._db.read(lambda c: [_memory_of(r) for r in c.execute(sql, params)])

    async def keyword_search(
        self, namespaces: Sequence[str], layers: Sequence[Layer], text: str, limit: int
    ) -> list[tuple[str, float]]:
        """BM25 (FTS5 ``bm25()``, k1 = 1.2, b = 0.75) of the query's analysed terms
        (``text_analysis.query_terms``) over the analysed content + context; scores divided by the
        best one (so 0..1, the best = 1); ties go to the newer memory. Empty ``layers`` = any."""
        terms = text_analysis.query_terms(text)
        if not terms or not namespaces or limit <= 0:
            return []
        rows = await self._db.read(
            lambda c: sqlite_fts.keyword_rows(
                c, terms, namespaces, layers, limit, "m.id", self._scope_stats, self._common
            )
        )
        return _relative([(row[0], s) for row, s in rows])

    async def keyword_memories(
        self,
        namespaces: Sequence[str],
        layers: Sequence[Layer],
        text: str,
        limit: int,
        load: Sequence[str] = (),
    ) -> tuple[list[tuple[Memory, float]], dict[str, Memory]]:
        """``keyword_search`` with the memories themselves (embeddings included), and the
        current versions of the other ids of ``load`` without embeddings, read in one call."""
        terms = text_analysis.query_terms(text)
        searched = bool(terms and namespaces and limit > 0)
        unique = list(dict.fromkeys(load))

        def run(conn: sqlite3.Connection) -> tuple[list[tuple[Memory, float]], dict[str, Memory]]:
            hits: list[tuple[Memory, float]] = []
            if searched:
                hits = _relative(self._keyword_hits(conn, terms, namespaces, layers, limit))
            found = {m.id for m, _ in hits}
            return hits, self._lean_rows(conn, [i for i in unique if i not in found])

        if not searched and not unique:
            return [], {}
        return await self._db.read(run)

    def _keyword_hits(
        self,
        conn: sqlite3.Connection,
        terms: Sequence[str],
        namespaces: Sequence[str],
        layers: Sequence[Layer],
        limit: int,
    ) -> list[tuple[Memory, float]]:
        """``sqlite_fts.keyword_rows`` as (memory with its embedding, raw ``bm25()``). With the
        row cache, only each hit's id and embedding are read: the rest of a cached row is
        copied, not read and decoded again (~0.6 ms of every recall's 40 hits). On the SQLite
        thread only."""
        args = (terms, namespaces, layers, limit)
        if not self._rows.enabled:
            rows = sqlite_fts.keyword_rows(conn, *args, _M_COLUMNS, self._scope_stats, self._common)
            return [(_memory_of(row), s) for row, s in rows]
        ranked = sqlite_fts.keyword_rows(
            conn, *args, "m.id, m.embedding", self._scope_stats, self._common
        )
        lean = self._lean_rows(conn, [mid for (mid, _), _ in ranked])
        hits = []
        for (mid, blob), s in ranked:
            m = lean[mid]  # current: nothing wrote between the search and this read
            m.embedding = None if blob is None else np.frombuffer(blob, dtype="<f4").copy()
            hits.append((m, s))
        return hits

    async def find_fact(self, namespace: str, fact_key: str) -> Memory | None:
        if not fact_key:
            return None

        def run(conn: sqlite3.Connection) -> Memory | None:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM memories WHERE namespace = ? AND fact_key = ? "
                "AND status = 'active'",
                (namespace, fact_key),
            ).fetchone()
            return None if row is None else _memory_of(row)

        return await self._db.read(run)

    async def find_facts(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], Memory]:
        wanted = list(dict.fromkeys((ns, key) for ns, key in keys if key))
        if not wanted:
            return {}

        def run(conn: sqlite3.Connection) -> dict[tuple[str, str], Memory]:
            out: dict[tuple[str, str], Memory] = {}
            for part in chunks(wanted, _CHUNK_PAIRS):
                clause = " OR ".join(["(namespace = ? AND fact_key = ?)"] * len(part))
                params = [v for pair in part for v in pair]
                for row in conn.execute(
                    f"SELECT {_COLUMNS} FROM memories WHERE status = 'active' AND ({clause})",
                    params,
                ):
                    mem = _memory_of(row)
                    out[(mem.namespace, mem.fact_key)] = mem
            return out

        return await self._db.read(run)

    async def iter_vectors(
        self, batch_size: int = 1000, namespace: str | None = None
    ) -> AsyncIterator[list[VectorItem]]:
        size = max(1, int(batch_size))
        scope, params = ("", ()) if namespace is None else ("namespace = ? AND ", (namespace,))
        sql = (
            "SELECT id, namespace, layer, embedding FROM memories "
            f"WHERE {scope}status = 'active' AND embedding IS NOT NULL AND id > ? "
            "ORDER BY id LIMIT ?"
        )
        after = ""
        while True:
            rows = await self._db.read(
                lambda c, after=after: c.execute(sql, (*params, after, size)).fetchall()  # type: ignore[misc]
            )
            if not rows:
                return
            yield [
                VectorItem(
                    id=mid,
                    namespace=ns,
                    layer=Layer(layer),
                    vector=np.frombuffer(blob, dtype="<f4").copy(),
                )
                for mid, ns, layer, blob in rows
            ]
            if len(rows) < size:
                return
            after = rows[-1][0]

    async def namespaces(self) -> list[str]:
        rows = await self._db.read(
            lambda c: c.execute(
                "SELECT DISTINCT namespace FROM memories WHERE status = 'active' ORDER BY namespace"
            ).fetchall()
        )
        return [r[0] for r in rows]

    async def scan(self, namespace: str, after_id: str, limit: int) -> list[Memory]:
        if limit <= 0:
            return []
        rows = await self._db.read(
            lambda c: c.execute(
                f"SELECT {_COLUMNS} FROM memories WHERE namespace = ? AND id > ? "
                "ORDER BY id LIMIT ?",
                (namespace, after_id, int(limit)),
            ).fetchall()
        )
        return [_memory_of(r) for r in rows]

    async def count(self) -> dict[str, int]:
        rows = await self._db.read(
            lambda c: c.execute(
                "SELECT layer, status, COUNT(*) FROM memories GROUP BY layer, status"
            ).fetchall()
        )
        return {f"{layer}/{status}": n for layer, status, n in rows}
