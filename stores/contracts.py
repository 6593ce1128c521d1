"""One small contract per storage layer. Adapters implement them; configuration picks the adapter.

Every contract is async, knows nothing about any driver, and has ``start()``/``close()`` hooks.
Writes are idempotent: replaying the same write (same ids) leaves the store as one write would.
Adapters raise ``gateway.core.errors.BackendUnavailable`` when their server cannot be reached.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

import numpy as np

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


@runtime_checkable
class Lifecycle(Protocol):
    async def start(self) -> None: ...
    async def close(self) -> None: ...
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

    async def window(
        self, namespace: str, session_id: str, zones: Sequence[Zone] | None = None
    ) -> dict[Zone, list[Turn]]:
        """The session's turns per zone, oldest first. Missing/expired session -> empty lists."""

    async def take_oldest(self, namespace: str, session_id: str, zone: Zone, n: int) -> list[Turn]:
        """Remove and return the ``n`` oldest turns of a zone (oldest first), atomically."""

    async def clear(self, namespace: str, session_id: str, zone: Zone | None = None) -> None:
        """Drop one zone, or the whole session (all zones and state) when ``zone`` is None."""

    async def get_state(self, namespace: str, session_id: str) -> dict[str, str]: ...

    async def set_state(
        self, namespace: str, session_id: str, updates: dict[str, str], remove: Sequence[str] = ()
    ) -> dict[str, str]:
        """Merge ``updates`` into the state hash, delete ``remove`` keys, return the new state."""

    async def ttl_seconds(self, namespace: str, session_id: str) -> int:
        """Seconds until the session expires; -2 when it does not exist."""


@runtime_checkable
class RecordStore(Lifecycle, Protocol):
    """Durable records of long-term memories, with every version kept (a version chain)."""

    async def put(self, memories: Sequence[Memory]) -> None:
        """Store memory versions. Idempotent by (id, version). The highest version of an id is
        its current one; older versions stay readable through ``history``."""

    async def get(self, ids: Sequence[str]) -> dict[str, Memory]:
        """Current version of each id that exists (any status). Embeddings included."""

    async def history(self, memory_id: str) -> list[Memory]:
        """All versions of a memory, oldest first. Empty when unknown."""

    async def query(self, flt: MemoryFilter) -> list[Memory]:
        """Current versions matching the filter, newest ``when`` first, at most ``flt.limit``."""

    async def keyword_search(
        self, namespaces: Sequence[str], layers: Sequence[Layer], text: str, limit: int
    ) -> list[tuple[str, float]]:
        """Active memories whose content matches words of ``text`` (Chinese too), best first,
        as (id, score in 0..1)."""

    async def find_fact(self, namespace: str, fact_key: str) -> Memory | None:
        """The active memory holding normalised fact ``fact_key`` in ``namespace``."""

    async def touch(self, ids: Sequence[str], at: datetime) -> None:
        """Record an access: last_accessed_at = at, access_count += 1 (no new version)."""

    def iter_vectors(self, batch_size: int = 1000) -> AsyncIterator[list[VectorItem]]:
        """Every active memory that has an embedding, in batches (to rebuild vector indexes).
        An async generator: ``async for batch in store.iter_vectors(): ...``."""

    async def count(self) -> dict[str, int]:
        """Counts of current memories keyed ``"<layer>/<status>"``."""

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

    async def neighbourhood(self, node: NodeRef, depth: int, limit: int) -> list[Neighbour]:
        """Nodes within ``depth`` (1 or 2) hops of ``node``, nearest first, then newest edge."""

    async def delete_events(self, ids: Sequence[str]) -> None: ...


@runtime_checkable
class VectorIndex(Lifecycle, Protocol):
    """Vectors of long-term memories for similarity search, partitioned by namespace."""

    async def upsert(self, items: Sequence[VectorItem]) -> None:
        """Add or replace vectors by id."""

    async def delete(self, ids: Sequence[str]) -> None: ...

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

    async def count(self) -> int: ...
