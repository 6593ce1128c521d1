"""A replica's vector index kept current across gateway replicas: a ``VectorIndex`` around this
process's FAISS shards that publishes the ids it indexes or drops on a Redis stream of changes,
and follows the other replicas' changes (the vectors travel on the stream: no records read).

Key (the hash tag puts it in one Redis Cluster slot)::

    <prefix>:{changes}:s   stream  op (u|d), origin (replica), i: JSON ids (u: [id, namespace,
                           layer] each), v: their float32 vectors, k: "1" on a delete whose
                           texts stay in the records (a status change; without it, an
                           erasure); ids "<n>-0" without gaps, capped at about MAXLEN entries
    <prefix>:{changes}:n   string  the last n

Read-your-writes across replicas: the applier indexes (and so publishes) a batch before it marks
it applied in the journal, and every ``search``/``search_many``/``sync`` first reads the stream
up to its end. So once a write is acknowledged as applied, a recall on any replica sees it.

A replica always rebuilds its shards from the records at start (``needs_rebuild``); it follows
the stream from the position it had *before* the rebuild, so nothing applied meanwhile is missed.
Upserts of that rebuild are not published (they are no change): publishing starts with the first
``flush`` after a ``reset``. A replica that falls behind the stream's cap (the next change it
needs was trimmed: a gap in the numbering) rebuilds from the records again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import numpy as np
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from gateway.core.apply.index_fill import fill_index
from gateway.core.model.errors import BackendUnavailable
from gateway.core.model.events import EVERY_NAMESPACE
from gateway.core.model.models import Layer, VectorItem
from gateway.core.ports.ports import RecordStore, VectorIndex
from gateway.core.ports.wrapped_index import WrappedIndex
from gateway.core.screening import memo
from stores.codec import dump_json_ascii, parse_json
from stores.redis_client import connect, disconnect

log = logging.getLogger("memgate.redis_changes")

#: the stream keeps about this many changes (batches); a replica that falls further behind
#: rebuilds its shards from the records
MAXLEN = 10_000

# KEYS: stream, counter. ARGV: maxlen, then field/value pairs. Ids are "<n>-0", n = 1, 2, 3, …
# with no gaps, so a follower knows when changes it never read were trimmed.
_PUBLISH = """
local n = redis.call('INCR', KEYS[2])
local args = {'XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], n .. '-0'}
for i = 2, #ARGV do args[#args + 1] = ARGV[i] end
redis.call(unpack(args))
return n
"""
FOLLOW_EVERY_S = 0.5
#: vectors of another size from other replicas are logged at most this often
FOREIGN_WARNING_EVERY_S = 60.0

Listener = Callable[[frozenset[str]], None]


class ReplicatedIndex(WrappedIndex[VectorIndex]):
    """``VectorIndex``: ``inner`` (this replica's shards) plus the shared change stream.
    ``dim``: the embedder's vector size (a rebuild leaves out records of another size)."""

    def __init__(
        self,
        inner: VectorIndex,
        url: str,
        records: RecordStore,
        origin: str,
        dim: int,
        prefix: str = "mg",
        on_change: Listener | None = None,
        cluster: bool = False,
    ) -> None:
        super().__init__(inner)
        self._cluster = cluster
        self._url = url
        self._records = records
        self._dim = dim
        self.origin = origin
        self._key = f"{prefix}:{{changes}}:s"
        self._counter = f"{prefix}:{{changes}}:n"
        self._on_change = on_change
        self._r: Any = None
        self._cursor = "0-0"
        self._live = False  # publishing: off during a rebuild
        self._lock = asyncio.Lock()
        self._follower: asyncio.Task[None] | None = None
        self.followed = 0  # changes of other replicas applied here
        self.rebuilds = 0  # full rebuilds after falling behind the stream's retention
        self.foreign = 0  # other replicas' vectors of another size, left out
        self._next_warning = 0.0

    async def start(self) -> None:
        self._r = connect(self._url, self._cluster, max_connections=16)
        self._publish_script = self._r.register_script(_PUBLISH)
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
            await disconnect(self._r, self._cluster)
            self._r = None

    def needs_rebuild(self) -> bool:
        return True  # other replicas changed the records while this one was away

    async def reset(self) -> None:
        self._live = False
        await self._inner.reset()

    async def flush(self) -> None:
        await self._inner.flush()
        self._live = True

    async def upsert(self, items: Sequence[VectorItem]) -> None:
        await self._inner.upsert(items)
        if self._live and items:
            vectors = np.stack([np.asarray(i.vector, dtype=np.float32) for i in items])
            await self._publish(
                "u", [[i.id, i.namespace, i.layer.value] for i in items], vectors.tobytes()
            )

    async def delete(self, ids: Sequence[str], erased: bool = True) -> None:
        await self._inner.delete(ids, erased)
        if self._live and ids:
            await self._publish("d", list(ids), b"", kept=not erased)

    @contextlib.asynccontextmanager
    async def _searching(self, namespaces: Sequence[str]) -> AsyncIterator[Sequence[str]]:
        await self.sync()  # read-your-writes: every change published before the search
        yield namespaces

    async def sync(self) -> None:
        """Apply every change other replicas published before this call. Concurrent callers
        share one catch-up: each waits only until the stream's end it saw has been applied."""
        if self._r is None:
            return
        async with _mapped():
            last = await self._r.xrevrange(self._key, count=1)
        if not last or _id(last[0][0]) <= _id(self._cursor):
            return
        target = _id(last[0][0])
        async with self._lock:
            while _id(self._cursor) < target:
                async with _mapped():
                    got: Any = await self._r.xread({self._key: self._cursor}, count=1000)
                if not got:
                    return
                entries = got[0][1]
                if _id(entries[0][0])[0] != _id(self._cursor)[0] + 1:
                    await self._rebuild("index changes were trimmed before this replica read them")
                    continue
                try:
                    latest, erased = self._decode(entries)
                except _Unreadable as exc:
                    # retried, it would fail every search here: the records have what it said
                    await self._rebuild(f"could not read index change {exc}")
                    continue
                await self._apply(latest, erased)
                self._cursor = _s(entries[-1][0])

    def _decode(
        self, entries: list[tuple[Any, dict[bytes, bytes]]]
    ) -> tuple[dict[str, VectorItem | None], bool]:
        """Other replicas' changes, in stream order, as id -> its vector (None: deleted): the
        last word on an id wins; and whether any delete was an erasure (one not marked as
        keeping its texts, as older versions publish every delete)."""
        latest: dict[str, VectorItem | None] = {}
        erased = False
        for entry_id, fields in entries:
            try:
                if _s(fields[b"o"]) == self.origin:
                    continue
                listed = parse_json(fields[b"i"])
                if _s(fields[b"op"]) == "d":
                    if not all(isinstance(mid, str) for mid in listed):
                        raise TypeError("ids are strings")
                    latest.update(dict.fromkeys(listed))
                    erased = erased or fields.get(b"k") != b"1"
                    continue
                raw = np.frombuffer(fields[b"v"], dtype=np.float32)
                vectors = raw.reshape(len(listed), -1)
                for (mid, namespace, layer), vector in zip(listed, vectors, strict=True):
                    if not isinstance(mid, str) or not isinstance(namespace, str):
                        raise TypeError("ids and namespaces are strings")
                    latest[mid] = VectorItem(mid, namespace, Layer(layer), vector.copy())
            except (KeyError, TypeError, ValueError) as exc:
                raise _Unreadable(f"{_s(entry_id)} ({type(exc).__name__}: {exc})") from exc
        return latest, erased

    async def _apply(self, latest: dict[str, VectorItem | None], erased: bool) -> None:
        if not latest:
            return
        gone = sorted(mid for mid, item in latest.items() if item is None)
        items = [item for item in latest.values() if item is not None]
        # a replica on another embedder (a rolling change): its vectors are not this index's,
        # and one of them would make the whole batch, and so every search here, fail
        fit = [item for item in items if item.vector.shape == (self._dim,)]
        if len(fit) < len(items):
            self._warn_foreign(len(items) - len(fit))
            items = fit
        if gone:
            await self._inner.delete(gone, erased)
        if erased:
            # another replica erased memories: no text of theirs stays in this process either
            # (memos, the embedder's cache), as on the replica that applied it
            memo.forget()
        if items:
            await self._inner.upsert(items)
        self.followed += len(gone) + len(items)
        if self._on_change:
            namespaces = {i.namespace for i in items}
            if gone:
                found = await self._records.get(gone)
                namespaces |= {m.namespace for m in found.values()}
                if len(found) < len(gone):  # erased outright: their namespaces are gone too
                    namespaces = set(EVERY_NAMESPACE)
            self._on_change(frozenset(namespaces))

    def _warn_foreign(self, n: int) -> None:
        """Logs vectors of another size left out, at most once a minute."""
        self.foreign += n
        now = time.monotonic()
        if now >= self._next_warning:
            self._next_warning = now + FOREIGN_WARNING_EVERY_S
            log.warning(
                "left out %d vectors of another size than %d from other replicas (%d so far): "
                "they run another embedder",
                n,
                self._dim,
                self.foreign,
            )

    async def _publish(
        self, op: str, listed: list[Any], vectors: bytes, kept: bool = False
    ) -> None:
        assert self._r is not None
        args: list[str | bytes | int] = [MAXLEN, "op", op, "o", self.origin]
        args += ["i", dump_json_ascii(listed), "v", vectors]
        if kept:
            args += ["k", "1"]
        async with _mapped():
            await self._publish_script(keys=[self._key, self._counter], args=args)

    async def _rebuild(self, why: str) -> None:
        """Changes this replica had not read were trimmed, or it cannot read one: start over
        from the records."""
        assert self._r is not None
        log.warning("%s: rebuilding this replica's index from the records", why)
        async with _mapped():
            last = await self._r.xrevrange(self._key, count=1)
        cursor = _s(last[0][0]) if last else "0-0"
        await fill_index(self._records, self._inner, self._dim)
        await self._inner.flush()
        self._cursor = cursor
        self.rebuilds += 1
        # the changes it never read may have been erasures: no text of theirs stays here either
        memo.forget()
        if self._on_change:  # vectors of namespaces erased meanwhile went too
            self._on_change(EVERY_NAMESPACE)

    async def _follow(self) -> None:
        while True:
            await asyncio.sleep(FOLLOW_EVERY_S)
            try:
                await self.sync()
            except BackendUnavailable as exc:
                log.warning("following index changes paused: %s", exc.message)
            except Exception:  # noqa: BLE001 - keep following
                log.exception("following index changes failed; retrying")


class _Unreadable(Exception):
    """A change in the stream that does not decode: its id and why."""


def _id(v: Any) -> tuple[int, int]:
    """A stream id as a comparable pair."""
    ms, _, seq = _s(v).partition("-")
    return int(ms), int(seq or 0)


def _s(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


@contextlib.asynccontextmanager
async def _mapped() -> Any:
    try:
        yield
    except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
        raise BackendUnavailable("redis", f"index changes: {exc}") from exc
