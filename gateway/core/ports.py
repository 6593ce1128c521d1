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

from gateway.core.control import (
    Accepted,
    AuditEntry,
    JournalEntry,
    NewEntry,
    PendingFact,
    Proposal,
    ReviewItem,
    TaskStep,
)
from gateway.core.models import (
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


@runtime_checkable
class RecordStore(Lifecycle, Protocol):
    """Durable records of long-term memories, with every version kept (a version chain)."""

    async def put(self, memories: Sequence[Memory]) -> None:
        """Store memory versions. Idempotent by (id, version). The highest version of an id is
        its current one; older versions stay readable through ``history``."""

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
    async def find_fact(self, namespace: str, fact_key: str) -> Memory | None:
        """The active memory holding normalised fact ``fact_key`` in ``namespace``."""

    async def touch(self, ids: Sequence[str], at: datetime) -> None:
        """Record an access: last_accessed_at = at, access_count += 1 (no new version)."""

    @unguarded
    def iter_vectors(self, batch_size: int = 1000) -> AsyncIterator[list[VectorItem]]:
        """Every active memory that has an embedding, in batches (to rebuild vector indexes).
        An async generator: ``async for batch in store.iter_vectors(): ...``."""

    @reads
    async def count(self) -> dict[str, int]:
        """Counts of current memories keyed ``"<layer>/<status>"``."""

    @reads
    async def namespaces(self) -> list[str]:
        """Every namespace that holds an active memory, sorted."""


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
    async def neighbourhood(self, node: NodeRef, depth: int, limit: int) -> list[Neighbour]:
        """Nodes within ``depth`` (1 or 2) hops of ``node``, nearest first, then newest edge."""

    async def delete_events(self, ids: Sequence[str]) -> None: ...


@runtime_checkable
class VectorIndex(Lifecycle, Protocol):
    """Vectors of long-term memories for similarity search, partitioned by namespace."""

    async def upsert(self, items: Sequence[VectorItem]) -> None:
        """Add or replace vectors by id."""

    async def delete(self, ids: Sequence[str]) -> None: ...

    @reads
    async def search(
        self,
        vector: np.ndarray,
        namespaces: Sequence[str],
        k: int,
        layers: Sequence[Layer] | None = None,
    ) -> list[tuple[str, float]]:
        """The ``k`` nearest ids by cosine similarity among the given namespaces (and layers),
        best first. Touches only the shards of those namespaces."""

    async def flush(self) -> None:
        """Persist what changed since the last flush (crash-safe)."""

    async def reset(self) -> None:
        """Drop every vector (before a rebuild from the records)."""

    @unguarded
    def needs_rebuild(self) -> bool:
        """True when the persisted index was missing, stale or damaged at start."""

    @reads
    async def count(self) -> int: ...


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into L2-normalised float32 vectors."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 ``(len(texts), dim)``, rows L2-normalised, input order kept."""
        ...


class Journal(Protocol):
    """Durable, ordered, idempotent log of acknowledged writes (the source of truth until they
    are applied). ``append`` returns once the entries are on disk."""

    pending_count: int

    async def start(self) -> None: ...
    async def close(self) -> None: ...
    async def append(self, entries: Sequence[NewEntry]) -> list[Accepted]:
        """All or none. A reused (agent, idempotency key) with the same command returns the first
        write's id (duplicate=True); with another command it raises ``Conflict``."""

    async def pending(self, limit: int, kinds: Sequence[str] = ()) -> list[JournalEntry]:
        """The oldest entries not applied yet (of the given kinds), in journal order."""

    async def mark_applied(self, seqs: Sequence[int]) -> None: ...
    async def mark_dead(self, seq: int, error: str) -> None:
        """Takes an entry that can never apply out of the queue (kept, with the error)."""

    async def state(self, seq: int) -> int:
        """An ``EntryState`` value."""

    async def counts(self) -> tuple[int, int]:
        """(pending, applied or dead)."""

    async def prune(self, older_than_s: float) -> int:
        """Drop applied entries older than the retention (their idempotency keys expire)."""

    async def oldest_pending_age(self) -> float:
        """Seconds since the oldest entry still waiting was acknowledged (0: none)."""


class Ledger(Protocol):
    """The gateway's control records: audit log, write-id aliases, proposals, review queue,
    small settings, pending facts and batch-task steps."""

    async def start(self) -> None: ...
    async def close(self) -> None: ...
    async def audit(self, entries: Sequence[AuditEntry]) -> None: ...
    async def query_audit(
        self, agent_id: str, namespace: str, since: float, limit: int
    ) -> list[AuditEntry]:
        """Newest first; empty filters match everything."""

    async def set_aliases(self, pairs: Sequence[tuple[str, str]]) -> None:
        """(write id, memory id): a write merged into an existing memory."""

    async def resolve(self, write_id: str) -> str:
        """The memory a write id ended up in (itself when not merged)."""

    async def add_proposal(self, proposal: Proposal) -> Proposal:
        """Stores a new proposal; an existing id returns the stored one unchanged."""

    async def get_proposal(self, pid: str) -> Proposal | None: ...
    async def list_proposals(self, state: str, limit: int) -> list[Proposal]: ...
    async def decide_proposal(
        self, pid: str, state: str, decided_by: str, reason: str, memory_id: str = ""
    ) -> bool:
        """Moves a pending proposal to ``state``; False when it was not pending."""

    async def add_review(self, items: Sequence[ReviewItem]) -> None: ...
    async def list_review(self, limit: int) -> list[ReviewItem]: ...
    async def put_setting(self, key: str, value: dict[str, Any]) -> None: ...
    async def get_setting(self, key: str) -> dict[str, Any] | None: ...
    async def see_fact(
        self,
        pid: str,
        namespace: str,
        fact_key: str,
        fact: str,
        session_id: str,
        evidence: Sequence[str],
        confidence: float,
    ) -> PendingFact:
        """Record one sighting of a fact (``pid`` names a new row); returns the pending row."""

    async def get_pending_fact(self, pid: str) -> PendingFact | None: ...
    async def mark_promoted(self, pid: str, memory_id: str) -> None: ...
    async def start_task(self, task_id: str, steps: Sequence[str]) -> None: ...
    async def task_steps(self, task_id: str) -> list[TaskStep]: ...
    async def update_step(
        self, task_id: str, index: int, state: str, output: str, error: str
    ) -> bool:
        """Sets a step's state; a done step never changes again. False when it is missing."""


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
