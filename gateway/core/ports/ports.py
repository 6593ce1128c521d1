"""The contracts the domain core owns, as protocols: the four layer stores, the vector index, the
write journal, the control ledger and the embedder. Adapters in ``stores/`` and
``gateway/embedding/`` implement them; ``gateway/wiring.py`` picks them from the settings.

Every store contract is async, knows nothing about any driver, and has ``start()``/``close()``
hooks. Writes are idempotent: replaying the same write (same ids) leaves the store as one write
would. Adapters raise ``BackendUnavailable`` when their server cannot be reached. Methods marked
``@reads`` only read (a circuit breaker times them); ``@unguarded`` ones bypass the breaker.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np

from gateway.core.model.candidates import Candidate, Observation
from gateway.core.model.models import (
    Event,
    Layer,
    Memory,
    MemoryFilter,
    Neighbour,
    NodeRef,
    Relation,
    Turn,
    VectorItem,
    Zone,
)
from gateway.core.model.state_budget import StateShare, StateTotals
from gateway.core.ports.control_ports import Journal, Ledger  # noqa: E402,F401 - re-exported

F = TypeVar("F", bound=Callable[..., Any])
READ_MARK = "__memgate_read__"
UNGUARDED_MARK = "__memgate_unguarded__"


def reads(fn: F) -> F:
    """Marks a contract method that only reads: its latency counts toward a breaker's trips."""
    setattr(fn, READ_MARK, True)
    return fn


def unguarded(fn: F) -> F:
    """Marks a contract method a breaker passes straight through (lifecycle, probes, scans)."""
    setattr(fn, UNGUARDED_MARK, True)
    return fn


@runtime_checkable
class Lifecycle(Protocol):
    @unguarded
    async def start(self) -> None: ...
    @unguarded
    async def close(self) -> None: ...
    @unguarded
    async def ping(self) -> None:
        """Cheap health probe; raises BackendUnavailable when the backend is down."""

    @unguarded
    async def durability(self) -> str:
        """Empty if an acknowledged write here survives an OS crash; else why not (M11)."""


@runtime_checkable
class WorkingStore(Lifecycle, Protocol):
    """Working memory of one (namespace, session): zoned ring buffers plus a state hash.

    Shaped for Redis: a list per zone with a length cap, a hash for state, a TTL on every key
    of the session that is refreshed whenever the session is used.
    """

    async def append(
        self, namespace: str, session_id: str, turns: Sequence[Turn], max_len: int
    ) -> dict[Zone, int]:
        """Append turns (each to its own zone) atomically, trim each zone to its newest ``max_len``.

        Idempotent by ``Turn.id``: a turn id already appended to this session is skipped.
        Returns the length of every zone touched after the append.
        """

    @reads
    async def window(
        self, namespace: str, session_id: str, zones: Sequence[Zone] | None = None
    ) -> dict[Zone, list[Turn]]:
        """The session's turns per zone, oldest first. Missing/expired session -> empty lists."""

    async def take_oldest(self, namespace: str, session_id: str, zone: Zone, n: int) -> list[Turn]:
        """Remove and return the ``n`` oldest turns of a zone (oldest first), atomically."""

    async def clear(self, namespace: str, session_id: str, zone: Zone | None = None) -> None:
        """Drop one zone, or the whole session (all zones and state) when ``zone`` is None."""

    @reads
    async def get_state(self, namespace: str, session_id: str) -> dict[str, str]: ...

    async def set_state(
        self, namespace: str, session_id: str, updates: dict[str, str], remove: Sequence[str] = ()
    ) -> dict[str, str]:
        """Merge ``updates`` into the state hash, delete ``remove`` keys, return the new state."""

    @reads
    async def ttl_seconds(self, namespace: str, session_id: str) -> int:
        """Seconds until the session expires; -2 when it does not exist."""

    async def remove_turns(self, namespace: str, session_id: str, turn_ids: Sequence[str]) -> int:
        """Erasure: remove these turns from every zone (ids stay seen). Returns how many."""

    async def erase_namespace(self, namespace: str) -> int:
        """Erasure: drop every session of ``namespace``, whatever its TTL. Returns how many."""

    async def reserve_state(self, share: StateShare, max_keys: int, max_bytes: int) -> StateTotals:
        """Count ``share`` for its agent (the session stops counting for any other agent) unless
        the agent's total over its live sessions would exceed ``max_keys`` or ``max_bytes``
        while the share grows; check and record are atomic for every process on this store. A
        share counts until this store's session TTL after it was recorded; an empty share is
        dropped."""

    async def release_state(self, agent: str, namespace: str, session_id: str) -> None:
        """Stop counting the session for ``agent`` (its state update failed)."""


@runtime_checkable
class RecordStore(Lifecycle, Protocol):
    """Durable records of long-term memories, with every version kept (a version chain)."""

    async def put(self, memories: Sequence[Memory]) -> None:
        """Store memory versions. Idempotent by (id, version). The highest version of an id is
        its current one; older versions stay readable through ``history``."""

    async def set_context(self, memories: Sequence[Memory]) -> None:
        """Re-index these memories' current versions with their ``Memory.context`` (a dialogue
        turn learns the turn after it); content, version and history stay as they are."""

    async def set_embeddings(self, vectors: Sequence[tuple[str, np.ndarray]]) -> None:
        """Replace the embedding of each (id, vector)'s current version and of that version in
        the history (the same text under another embedder); no new version. Unknown ids are
        skipped."""

    @reads
    async def get(self, ids: Sequence[str], embeddings: bool = True) -> dict[str, Memory]:
        """Current version of each id that exists (any status). Embeddings included unless
        ``embeddings`` is False (then ``Memory.embedding`` is None: nothing is decoded)."""

    @reads
    async def history(self, memory_id: str) -> list[Memory]:
        """All versions of a memory, oldest first. Empty when unknown."""

    @reads
    async def query(self, flt: MemoryFilter) -> list[Memory]:
        """Current versions matching the filter (``session_id``: written in that session), newest
        ``when`` first, at most ``flt.limit``."""

    @reads
    async def keyword_search(
        self, namespaces: Sequence[str], layers: Sequence[Layer], text: str, limit: int
    ) -> list[tuple[str, float]]:
        """Active memories whose content (plus ``Memory.context``) matches words of ``text``,
        ranked by BM25 over the terms of ``stores.text_analysis`` (stemmed English, CJK bigrams),
        best first, as (id, score relative to the best: the best is 1.0, all in 0..1). Adapters
        index the same terms, so they agree on the ranking up to their BM25 details."""

    @reads
    async def keyword_memories(
        self,
        namespaces: Sequence[str],
        layers: Sequence[Layer],
        text: str,
        limit: int,
        load: Sequence[str] = (),
    ) -> tuple[list[tuple[Memory, float]], dict[str, Memory]]:
        """``keyword_search`` with each hit's current version (embedding included) in place of
        its id, plus what ``get(load, embeddings=False)`` returns for the ids of ``load`` that
        are not among the hits, in one round trip: what a recall needs of its lexical and dense
        candidates."""

    @reads
    async def find_fact(self, namespace: str, fact_key: str) -> Memory | None:
        """The active memory holding normalised fact ``fact_key`` in ``namespace``."""

    @reads
    async def find_facts(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], Memory]:
        """``find_fact`` for many (namespace, fact_key) pairs in one call; pairs without an
        active holder are absent."""

    async def touch(self, ids: Sequence[str], at: datetime) -> None:
        """Record an access: last_accessed_at = at, access_count += 1 (no new version)."""

    @unguarded
    def iter_vectors(
        self, batch_size: int = 1000, namespace: str | None = None
    ) -> AsyncIterator[list[VectorItem]]:
        """Every active memory that has an embedding, in batches (to rebuild vector indexes),
        or only those of ``namespace`` (to load one namespace's vectors on demand: served by an
        index on (namespace, status, id), so its cost follows the namespace, not the store).
        An async generator: ``async for batch in store.iter_vectors(): ...``."""

    @reads
    async def count(self) -> dict[str, int]:
        """Counts of current memories keyed ``"<layer>/<status>"``."""

    @reads
    async def namespaces(self) -> list[str]:
        """Every namespace that holds an active memory, sorted."""

    @reads
    async def scan(self, namespace: str, after_id: str, limit: int) -> list[Memory]:
        """Current versions of the namespace's memories (any status) with id > ``after_id``,
        in id order, at most ``limit`` — to page through a namespace (export)."""

    async def erase(self, tombstones: Sequence[Memory]) -> None:
        """Erasure: every version of each id goes; its tombstone becomes the only one."""

    async def delete(self, ids: Sequence[str]) -> None: ...  # erasure, no tombstone left

    @reads
    async def ids_in(self, namespace: str, limit: int) -> list[str]:
        """Ids of at most ``limit`` memories of ``namespace``, any status."""


@runtime_checkable
class EpisodicGraph(Lifecycle, Protocol):
    """Events and their timestamped relations. Shaped for Neo4j: nodes (user, agent, session,
    event, entity, task, step) and relationships that carry ``at``."""

    async def record(self, events: Sequence[Event]) -> None:
        """Upsert events (by id) in one batch and link each to its session, agent, user, task and
        entities (creating those nodes as needed), the links stamped with the event's time."""

    async def relate(self, relations: Sequence[Relation]) -> None:
        """Upsert edges; both ends are created when missing. Idempotent by (src, type, dst)."""

    @reads
    async def timeline(
        self,
        namespace: str,
        start: datetime | None,
        end: datetime | None,
        limit: int,
        types: Sequence[str] = (),
    ) -> list[Event]:
        """A namespace's events with start <= at < end, oldest first, at most ``limit``
        (the newest ones when more match)."""

    @reads
    async def neighbourhood(
        self, node: NodeRef, depth: int, limit: int, visible_to: str | None = None
    ) -> list[Neighbour]:
        """Nodes within ``depth`` (1 or 2) hops of ``node``, nearest first, then newest edge.

        With ``visible_to`` (an agent id), event, entity and session nodes of another agent's
        private namespace (``agent/<x>``, x != visible_to) are neither returned nor walked
        through: what lies behind them is not reached either."""

    async def delete_events(self, ids: Sequence[str]) -> None:
        """Remove events (node, summary, edges) and entity/session nodes left without edges."""

    async def delete_nodes(self, nodes: Sequence[NodeRef]) -> None:
        """Remove nodes of any kind with every edge touching them."""

    async def erase_namespace(self, namespace: str) -> int:
        """Erasure: its events and entity/session nodes (``scoped_id``). Returns #events."""

    @reads
    async def events_about(self, user_id: str, limit: int) -> list[tuple[str, str]]:
        """(id, namespace) of up to ``limit`` events ABOUT ``user_id``, in any namespace."""

    @reads
    async def event_edges(self, event_ids: Sequence[str]) -> list[Relation]:
        """Every edge from or to one of these events (the links ``record`` made and the ones
        ``relate`` made), each once, with its time and properties."""


@runtime_checkable
class VectorIndex(Lifecycle, Protocol):
    """Vectors of long-term memories for similarity search, partitioned by namespace."""

    async def upsert(self, items: Sequence[VectorItem]) -> None:
        """Add or replace vectors by id."""

    async def delete(self, ids: Sequence[str], erased: bool = True) -> None:
        """Drop vectors by id. ``erased=False``: a status change (archived, quarantined,
        revoked) whose text stays in the records, so caches of texts elsewhere (other replicas)
        may keep it; an erasure (the default) makes them let go of every text they hold."""

    @reads
    async def search(
        self,
        vector: np.ndarray,
        namespaces: Sequence[str],
        k: int,
        layers: Sequence[Layer] | None = None,
    ) -> list[tuple[str, float]]:
        """The ``k`` ids of the highest inner product with ``vector`` as given (the stored
        vectors are L2-normalised: the cosine for a unit query) among the given namespaces (and
        layers), best first. Touches only the shards of those namespaces."""

    @reads
    async def search_many(
        self,
        vectors: np.ndarray,
        namespaces: Sequence[str],
        k: int,
        layers: Sequence[Layer] | None = None,
    ) -> list[list[tuple[str, float]]]:
        """``search`` for each row of ``vectors`` (n, dim) in one call: one result list per row,
        each exactly what ``search`` would return for that row."""

    async def flush(self) -> None:
        """Persist what changed since the last flush (crash-safe)."""

    async def reset(self) -> None:
        """Drop every vector (before a rebuild from the records)."""

    @unguarded
    def needs_rebuild(self) -> bool:
        """True when the persisted index was missing, stale or damaged at start."""

    @unguarded
    async def sync(self) -> None:
        """Catch up with changes other processes made (replicas); a no-op for a local index.
        A recall calls it first, so it sees every write acknowledged as applied anywhere."""

    @unguarded
    def on_demand(self) -> bool:
        """True when the index is a cache over the records (``stores/vector_cache.py``): it
        loads a namespace's vectors from the records when a search first needs them, so there is
        nothing to fill at start and ``count`` is what it holds now, not the store's total."""

    @reads
    async def count(self) -> int: ...


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into L2-normalised float32 vectors. One may also have
    ``embed_queries(texts)``: vectors for questions, searched as given (the paired and e5
    embedders weigh or shift a question by its language)."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 ``(len(texts), dim)``, rows L2-normalised, input order kept."""
        ...


@runtime_checkable
class Extractor(Protocol):
    """Finds candidate facts about the user in a session's turns (seed 000 §3.4). Every
    candidate quotes the turns it came from. Raises ``ExtractionFailed`` when it cannot answer
    (the gateway then falls back to the rule extractor)."""

    name: str  # name/version, recorded on every memory it forms

    async def extract(self, turns: Sequence[Turn]) -> list[Candidate]: ...


@runtime_checkable
class Observer(Protocol):
    """Finds observations (issue 27) in a session's turns: what a speaker said about their
    life, in the third person, relative time resolved against each turn's time. A model-backed
    one falls back to the rules itself (an observer never fails a formation job)."""

    name: str

    async def observe(self, turns: Sequence[Turn], namespace: str) -> list[Observation]: ...


@runtime_checkable
class Summariser(Protocol):
    """Summarises rolled-off dialogue into the task zone (seed 004 §3.3): keeps decisions,
    names, numbers, dates and instructions within ``budget_tokens``, ends with the
    auto-generated note. Raises ``ExtractionFailed`` when it cannot answer."""

    name: str

    async def summarise(self, turns: Sequence[Turn], budget_tokens: int) -> str: ...


@dataclass(frozen=True, slots=True)
class BreakerStatus:
    layer: str
    state: str
    trips: int
    last_error: str
    p50_ms: float
    p99_ms: float
    calls: int
    failures: int


@runtime_checkable
class BreakerReport(Protocol):
    """What operators see of one circuit breaker."""

    def status(self) -> BreakerStatus: ...


@dataclass(slots=True)
class Stores:
    working: WorkingStore
    records: RecordStore
    graph: EpisodicGraph
    index: VectorIndex

    def all(self) -> list[Lifecycle]:
        return [self.working, self.records, self.graph, self.index]
