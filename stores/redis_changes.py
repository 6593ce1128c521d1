"""A replica's vector index kept current across gateway replicas: a ``VectorIndex`` around this
process's FAISS shards that publishes the ids it indexes or drops on a Redis stream of changes,
and follows the other replicas' changes (vectors re-read from the shared records store).

Key (the hash tag puts it in one Redis Cluster slot)::

    <prefix>:{changes}:s   stream  op (u|d), origin (replica), ids (JSON list); capped at MAXLEN

Read-your-writes across replicas: the applier indexes (and so publishes) a batch before it marks
it applied in the journal, and every ``search``/``search_many``/``sync`` first reads the stream
up to its end. So once a write is acknowledged as applied, a recall on any replica sees it.

A replica always rebuilds its shards from the records at start (``needs_rebuild``); it follows
the stream from the position it had *before* the rebuild, so nothing applied meanwhile is missed.
Upserts of that rebuild are not published (they are no change): publishing starts with the first
``flush`` after a ``reset``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from gateway.core.errors import BackendUnavailable
from gateway.core.models import Layer, Status, VectorItem
from gateway.core.ports import RecordStore, VectorIndex

log = logging.getLogger("memgate.redis_changes")

#: the stream keeps about this many changes (a replica that falls further behind rebuilds)
MAXLEN = 1_000_000
FOLLOW_EVERY_S = 0.5

Listener = Callable[[frozenset[str]], None]


class ReplicatedIndex:
    """``VectorIndex``: ``inner`` (this replica's shards) plus the shared change stream."""

    def __init__(
        self,
        inner: VectorIndex,
        url: str,
        records: RecordStore,
        origin: str,
        prefix: str = "mg",
        on_change: Listener | None = None,
    ) -> None:
        self._inner = inner
        self._url = url
        self._records = records
        self.origin = origin
        self._key = f"{prefix}:{{changes}}:s"
        self._on_change = on_change
        self._r: aioredis.Redis | None = None
        self._cursor = "0-0"
        self._live = False  # publishing: off during a rebuild
        self._lock = asyncio.Lock()
        self._follower: asyncio.Task[None] | None = None
        self.followed = 0  # changes of other replicas applied here

    async def start(self) -> None:
        self._r = aioredis.Redis.from_url(self._url, socket_timeout=10, socket_connect_timeout=5)
        async with _mapped():
            last = await self._r.xrevrange(self._key, count=1)
        self._cursor = _s(last[0][0]) if last else "0-0"  # before the rebuild from the records
        await self._inner.start()
        self._follower = asyncio.create_task(self._follow(), name="index-follower")

    async def close(self) -> None:
        if self._follower:
            self._follower.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._follower
        await self._inner.close()
        if self._r is not None:
            await self._r.aclose()
            self._r = None

    async def ping(self) -> None:
        await self._inner.ping()

    def needs_rebuild(self) -> bool:
        return True  # other replicas changed the records while this one was away

    async def reset(self) -> None:
        self._live = False
        await self._inner.reset()

    async def flush(self) -> None:
        await self._inner.flush()
        self._live = True

    async def count(self) -> int:
        return await self._inner.count()

    async def upsert(self, items: Sequence[VectorItem]) -> None:
        await self._inner.upsert(items)
        if self._live and items:
            await self._publish("u", [i.id for i in items])

    async def delete(self, ids: Sequence[str]) -> None:
        await self._inner.delete(ids)
        if self._live and ids:
            await self._publish("d", list(ids))

    async def search(
        self,
        vector: np.ndarray,
        namespaces: Sequence[str],
        k: int,
        layers: Sequence[Layer] | None = None,
    ) -> list[tuple[str, float]]:
        await self.sync()
        return await self._inner.search(vector, namespaces, k, layers)

    async def search_many(
        self,
        vectors: np.ndarray,
        namespaces: Sequence[str],
        k: int,
        layers: Sequence[Layer] | None = None,
    ) -> list[list[tuple[str, float]]]:
        await self.sync()
        return await self._inner.search_many(vectors, namespaces, k, layers)

    async def sync(self) -> None:
        """Apply every change other replicas published so far (one round trip when none)."""
        if self._r is None:
            return
        async with self._lock:
            while True:
                async with _mapped():
                    got: Any = await self._r.xread({self._key: self._cursor}, count=1000)
                if not got:
                    return
                entries = got[0][1]
                await self._apply(entries)
                self._cursor = _s(entries[-1][0])

    async def _apply(self, entries: list[tuple[Any, dict[bytes, bytes]]]) -> None:
        upserts: set[str] = set()
        deletes: set[str] = set()
        for _, fields in entries:
            if _s(fields[b"o"]) == self.origin:
                continue
            ids = json.loads(fields[b"i"])
            (upserts if _s(fields[b"op"]) == "u" else deletes).update(ids)
            (deletes if _s(fields[b"op"]) == "u" else upserts).difference_update(ids)
        if not upserts and not deletes:
            return
        found = await self._records.get(sorted(upserts)) if upserts else {}
        items = [
            VectorItem(m.id, m.namespace, m.layer, m.embedding)
            for m in found.values()
            if m.status is Status.ACTIVE and m.embedding is not None
        ]
        gone = deletes | (upserts - {i.id for i in items})
        if gone:
            await self._inner.delete(sorted(gone))
        if items:
            await self._inner.upsert(items)
        self.followed += len(items) + len(gone)
        if self._on_change:
            self._on_change(frozenset(m.namespace for m in found.values()))

    async def _publish(self, op: str, ids: list[str]) -> None:
        assert self._r is not None
        async with _mapped():
            await self._r.xadd(
                self._key,
                {"op": op, "o": self.origin, "i": json.dumps(ids)},
                maxlen=MAXLEN,
                approximate=True,
            )

    async def _follow(self) -> None:
        while True:
            await asyncio.sleep(FOLLOW_EVERY_S)
            try:
                await self.sync()
            except BackendUnavailable as exc:
                log.warning("following index changes paused: %s", exc.message)
            except Exception:  # noqa: BLE001 - keep following
                log.exception("following index changes failed; retrying")


def _s(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


@contextlib.asynccontextmanager
async def _mapped() -> Any:
    try:
        yield
    except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
        raise BackendUnavailable("redis", f"index changes: {exc}") from exc
