"""``VectorIndex`` on FAISS: exact cosine search, sharded by namespace, persisted crash-safely.

Layout in memory
    ``shards`` shards; a namespace lives in shard ``blake2b(namespace) mod shards``. Inside a shard
    every (namespace, layer) pair has its own ``IndexIDMap(IndexFlatIP(dim))`` (a *partition*), so
    a search scans exactly the partitions of the namespaces (and layers) it asks for: its cost never
    grows with other namespaces' data, and results can never leak across namespaces. Vectors are
    L2-normalised on the way in and a query is used as given, so a unit query scores by cosine
    similarity (a query with more in it, the e5 embedder's language shift, keeps it); flat indexes make the
    search exact. String ids map to per-shard int64 faiss ids (a counter) and back. A partition
    that reaches ``APPROX_MIN`` vectors becomes an inverted file (``IndexIVFFlat``, trained on a
    sample of it, retrained after growing ``APPROX_REGROW`` times) that a search probes in part:
    recall@10 >= 0.99 of exact, p50 at 1M within 2x of a flat 10k (``bench/vector_scale.py``).
    On disk every partition is flat; a large one is trained again when loaded.
    (``IndexIDMap`` rather than ``IndexIDMap2``: nothing here reconstructs vectors by id, and
    IDMap2 rebuilds its reverse hash map on every removal, ~7 ms per delete at 100k vectors.
    Removing from a flat index still compacts it, so a delete or a replace costs O(partition).)

Concurrency
    Writes (upsert, delete, reset, load, flush snapshots) are serialised by one lock; each shard has
    its own lock that writers and searchers take, always in ascending shard order, so a search sees
    a batch either wholly applied or not at all. The CPU work runs inline (it is fast) and moves to
    a worker thread for large batches, and whenever a lock it needs is held by another thread
    (``_busy``), so the event loop does not wait out a flush. File I/O always runs in a worker
    thread.

Layout on disk (``data_dir`` set)
    ``manifest.json``             format version, dim, shard count, per-shard seq/files/digests
    ``shard-XX/index.<seq>.bin``  the shard's partitions as ``faiss.serialize_index`` bytes
    ``shard-XX/ids.<seq>.json``   sidecar: per partition its namespace, layer, byte range and
                                  string ids (in the order of the partition's faiss id map)

    ``flush()`` writes only dirty shards (copied under their locks, serialised outside them), each
    under a new ``seq``: temp file, fsync, ``os.replace``, fsync of the directory; then the
    manifest the same way. The manifest is the
    commit point: until it is replaced the previous files stay untouched (they are deleted only
    afterwards), so a crash at any moment leaves either the old or the new consistent state.
    Digests (blake2b) of every file are checked on ``start()``; a missing, unreadable or
    mismatching manifest or shard leaves the index empty with ``needs_rebuild = True``: the caller
    then refills it from the durable records (``reset()``, ``upsert`` batches from
    ``RecordStore.iter_vectors``, ``flush()``) and sets ``needs_rebuild = False`` itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import faiss
import numpy as np

from gateway.core.model.errors import InvalidArgument
from gateway.core.model.models import Layer, VectorItem
from gateway.core.recall import scan_hint
from stores.codec import dump_json_ascii, parse_json

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
MANIFEST_NAME = "manifest.json"
#: Upserts of at least this many items, and searches over at least this many vectors, run in a
#: worker thread instead of on the event loop.
OFFLOAD_ITEMS = 1024
OFFLOAD_VECTORS = 50_000

#: The only recall in flight (``gateway.core.recall.scan_hint``) scans a partition of at least this
#: many vectors with BLAS (``_gemv_search``) rather than faiss: 0.46 against 0.81 ms at 10k x 384
#: alone, -0.55 to -0.76 ms per recall at 10k. Below it the product is too small to gain from
#: BLAS's threads; beside other recalls the threads wait for busy cores (-15% recalls/s).
GEMV_SCAN_MIN = 4096

#: A partition of at least this many vectors searches approximately: an inverted file
#: (``IndexIVFFlat``, trained on a sample of it) probed in ``_probes`` of its lists; the lists hold
#: the full vectors, so the candidates' scores are exact (the re-rank is the scan itself). Below
#: it a flat scan is exact and fast (10k x 384: ~1.4 ms).
APPROX_MIN = 32_768
#: an approximate partition is trained again once it has grown this many times since training
APPROX_REGROW = 4
#: training sample: at most this many vectors per list (faiss's own default is 256)
APPROX_SAMPLE_PER_LIST = 64

_SHARD_DIR = re.compile(r"^shard-(\d+)$")

#: A shard captured for flushing: serialised partitions, their sidecar entries, next faiss id.
_Snapshot = tuple[list[np.ndarray], list[dict[str, Any]], int]
#: A partition copied for flushing: namespace, layer, vectors, faiss ids, faiss id -> string id.
_Captured = tuple[str, Layer, np.ndarray, np.ndarray, dict[int, str]]


def _digest(data: bytes | memoryview) -> str:
    return hashlib.blake2b(data, digest_size=20).hexdigest()


def _fsync_dir(path: Path) -> None:
    if not hasattr(os, "O_DIRECTORY"):  # pragma: no cover - not POSIX
        return
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_atomic(path: Path, chunks: Iterable[bytes | memoryview | np.ndarray]) -> str:
    """Write ``chunks`` to ``path`` via temp file + fsync + rename; returns the blake2b digest.

    The caller fsyncs the directory (once for several files)."""
    h = hashlib.blake2b(digest_size=20)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=f"-{path.name}")
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                view = memoryview(chunk).cast("B")  # type: ignore[arg-type]
                h.update(view)
                f.write(view)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return h.hexdigest()


def _stored(index: faiss.IndexIDMap) -> np.ndarray:
    """The flat index's vectors, (ntotal, d), as a view of its own storage: valid while the
    caller holds the shard lock (a write may move the storage)."""
    flat = cast(faiss.IndexFlat, faiss.downcast_index(index.index))
    return faiss.rev_swig_ptr(flat.get_xb(), index.ntotal * flat.d).reshape(index.ntotal, flat.d)


def _lists(n: int) -> int:
    """Inverted lists for ``n`` vectors: 2 sqrt(n), between 64 and 2048 (training 4,096 lists
    on 1M vectors took 3 minutes here, 2,048 under one)."""
    return int(min(2048, max(64, 2 * np.sqrt(n))))


def _probes(lists: int) -> int:
    """Lists a search visits: at 1M vectors in 2,048 lists, 64 probes found 0.993 of the exact
    top 10 on mixed dialogue-like MiniLM vectors (0.98 at 32), 1.00 on single-topic ones
    (``bench/vector_scale.py ann``)."""
    return max(32, lists // 32)


def _contents(index: Any) -> tuple[np.ndarray, np.ndarray]:
    """A partition's (vectors, faiss ids) as copies, flat or approximate (caller holds the lock)."""
    if isinstance(index, faiss.IndexIDMap):
        fids = faiss.rev_swig_ptr(index.id_map.data(), index.ntotal)
        return _stored(index).copy(), fids.copy()
    lists, d = index.invlists, index.d
    vecs, ids = [np.empty((0, d), np.float32)], [np.empty(0, np.int64)]
    for li in range(index.nlist):
        size = lists.list_size(li)
        if size:
            ids.append(faiss.rev_swig_ptr(lists.get_ids(li), size).copy())
            raw = faiss.rev_swig_ptr(lists.get_codes(li), size * d * 4)
            vecs.append(raw.view(np.float32).reshape(size, d).copy())
    return np.concatenate(vecs), np.concatenate(ids)


def _approximate(vectors: np.ndarray, fids: np.ndarray, seed: int = 1234) -> Any:
    """An ``IndexIVFFlat`` (inner product) over ``vectors`` with ids ``fids``, trained on a
    sample; removals by id through a hash table (no renumbering)."""
    n, d = vectors.shape
    lists = _lists(n)
    ivf = faiss.IndexIVFFlat(faiss.IndexFlatIP(d), d, lists, faiss.METRIC_INNER_PRODUCT)
    ivf.cp.niter = 10
    ivf.cp.seed = seed
    ivf.cp.max_points_per_centroid = APPROX_SAMPLE_PER_LIST
    ivf.cp.min_points_per_centroid = 5  # a small sample is deliberate (speed)
    take = min(n, lists * APPROX_SAMPLE_PER_LIST)
    sample = (
        vectors[np.random.default_rng(seed).choice(n, take, replace=False)] if take < n else vectors
    )
    ivf.train(np.ascontiguousarray(sample))
    ivf.set_direct_map_type(faiss.DirectMap.Hashtable)  # type: ignore[attr-defined]
    ivf.add_with_ids(vectors, fids)
    ivf.nprobe = _probes(lists)
    return ivf


def _gemv_search(index: faiss.IndexIDMap, query: np.ndarray, k: int) -> tuple[Any, Any]:
    """``index.search`` of one query, as one BLAS matrix-vector product over the flat index's
    own storage (no copy) and a partial sort: the same exact scores, in ~half the time of faiss's
    one-query scan, which runs on one thread (faiss spreads a search over queries, not rows);
    numpy's BLAS spreads the product over rows. Caller holds the shard lock (the storage must not
    move) and ``0 < k < ntotal``. Returns (scores, ids) shaped as faiss's, in no order."""
    n = index.ntotal
    scores = _stored(index) @ query
    top = np.argpartition(scores, n - k)[n - k :]  # unordered: the caller sorts all hits
    ids = faiss.rev_swig_ptr(index.id_map.data(), n)[top]
    return scores[top][None, :], ids[None, :]


class _CorruptState(Exception):
    """The persisted state is missing, inconsistent or of another shape."""


class _Partition:
    """The vectors of one (namespace, layer) inside a shard."""

    __slots__ = ("index", "rev", "trained_at", "changes")

    def __init__(self, index: Any) -> None:
        self.index = index  # IndexIDMap(IndexFlatIP), or IndexIVFFlat once large (``approximate``)
        self.rev: dict[int, str] = {}  # faiss id -> string id
        self.trained_at = 0  # size when it became approximate (0: flat)
        self.changes = 0  # adds and removals so far (a training outside the lock checks it)

    @property
    def flat(self) -> bool:
        return self.trained_at == 0

    def wants_training(self) -> bool:
        n = self.index.ntotal
        if self.flat:
            return n >= APPROX_MIN
        return n >= self.trained_at * APPROX_REGROW

    def approximate(self) -> None:
        """Become (or retrain) an inverted file over the same vectors and ids."""
        vectors, fids = _contents(self.index)
        self.swap(_approximate(vectors, fids), fids, self.changes)

    def swap(self, trained: Any, fids: np.ndarray, seen: int) -> None:
        """Take ``trained`` (built from this partition's ``fids`` when it had seen ``seen``
        changes) as the index, with the changes made since applied to it (caller holds the
        shard lock)."""
        if self.changes != seen:
            now_vectors, now_fids = _contents(self.index)
            gone = np.setdiff1d(fids, now_fids)
            new = ~np.isin(now_fids, fids)
            if gone.size:
                trained.remove_ids(gone)
            if new.any():
                trained.add_with_ids(np.ascontiguousarray(now_vectors[new]), now_fids[new])
        self.index = trained
        self.trained_at = int(trained.ntotal)

    @classmethod
    def empty(cls, dim: int) -> _Partition:
        return cls(faiss.IndexIDMap(faiss.IndexFlatIP(dim)))


class _Shard:
    __slots__ = (
        "lock",
        "parts",
        "where",
        "ns_count",
        "next_fid",
        "total",
        "dirty",
        "searches",
        "entry",
    )

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.parts: dict[str, dict[Layer, _Partition]] = {}
        self.where: dict[str, tuple[str, Layer, int]] = {}  # string id -> (namespace, layer, fid)
        self.ns_count: dict[str, int] = {}
        self.next_fid = 0
        self.total = 0
        self.dirty = True
        self.searches = 0  # shard visits by search(), for stats and tests
        self.entry: dict[str, Any] | None = None  # its manifest entry once persisted

    def clear(self) -> None:
        self.parts.clear()
        self.where.clear()
        self.ns_count.clear()
        self.next_fid = 0
        self.total = 0
        self.dirty = True

    # -- mutations (caller holds self.lock) ---------------------------------------------------

    def remove(self, sids: Iterable[str]) -> None:
        groups: dict[tuple[str, Layer], list[int]] = {}
        for sid in sids:
            ns, layer, fid = self.where.pop(sid)
            groups.setdefault((ns, layer), []).append(fid)
        for (ns, layer), fids in groups.items():
            part = self.parts[ns][layer]
            part.index.remove_ids(np.asarray(fids, dtype=np.int64))  # type: ignore[arg-type]
            part.changes += 1
            for fid in fids:
                del part.rev[fid]
            if part.index.ntotal == 0:
                del self.parts[ns][layer]
                if not self.parts[ns]:
                    del self.parts[ns]
            self.ns_count[ns] -= len(fids)
            if self.ns_count[ns] == 0:
                del self.ns_count[ns]
            self.total -= len(fids)
        if groups:
            self.dirty = True

    def add(self, ns: str, layer: Layer, sids: list[str], vectors: np.ndarray, dim: int) -> None:
        n = len(sids)
        fids = np.arange(self.next_fid, self.next_fid + n, dtype=np.int64)
        self.next_fid += n
        part = self.parts.setdefault(ns, {}).get(layer)
        if part is None:
            part = self.parts[ns][layer] = _Partition.empty(dim)
        part.index.add_with_ids(vectors, fids)
        part.changes += 1
        for sid, fid in zip(sids, fids.tolist(), strict=True):
            part.rev[fid] = sid
            self.where[sid] = (ns, layer, fid)
        self.ns_count[ns] = self.ns_count.get(ns, 0) + n
        self.total += n
        self.dirty = True

    # -- persistence ---------------------------------------------------------------------------

    def capture(self) -> list[_Captured]:
        """Copies of the partitions' vectors, faiss ids and id maps (caller holds self.lock):
        plain memory copies, so a flush holds the lock for a fraction of what serialising takes
        (10k vectors: ~30 ms serialising under the lock before)."""
        out = []
        for ns in sorted(self.parts):
            for layer in sorted(self.parts[ns]):
                part = self.parts[ns][layer]
                vectors, fids = _contents(part.index)
                out.append((ns, layer, vectors, fids, dict(part.rev)))
        return out


def _serialised(
    captured: list[_Captured], dim: int
) -> tuple[list[np.ndarray], list[dict[str, Any]]]:
    """Serialised partitions and their sidecar entries, from ``_Shard.capture`` (no lock: the
    bytes are those of the live partitions, rebuilt from the copies)."""
    blobs: list[np.ndarray] = []
    meta: list[dict[str, Any]] = []
    offset = 0
    for ns, layer, vectors, fids, rev in captured:
        index = _Partition.empty(dim).index
        index.add_with_ids(vectors, fids)  # type: ignore[call-arg]
        blob = faiss.serialize_index(index)
        meta.append(
            {
                "namespace": ns,
                "layer": layer.value,
                "offset": offset,
                "length": int(blob.nbytes),
                "ids": [rev[fid] for fid in fids.tolist()],
            }
        )
        blobs.append(blob)
        offset += int(blob.nbytes)
    return blobs, meta


class ShardedFaissIndex:
    """Exact cosine ``VectorIndex`` over FAISS flat indexes, sharded by namespace."""

    def __init__(
        self, data_dir: Path | None, dim: int = 384, shards: int = 8, threads: int | None = 1
    ) -> None:
        """``threads``: OpenMP threads faiss may use for one call. It is set
        (``omp_set_num_threads``, a per-thread setting) in the thread that runs each search or
        write; ``None`` keeps the process default. One is the right default: a query scans small
        partitions, and on a busy host waking OpenMP workers costs far more than the scan
        (measured 0.3 ms with one thread vs 30 ms with two, 10k x 384, loaded 2-core host)."""
        if dim <= 0 or shards <= 0 or (threads is not None and threads <= 0):
            raise ValueError("dim, shards and threads must be positive")
        self._threads = threads
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self.dim = dim
        self.n_shards = shards
        #: True when the index may lack vectors of the durable records (fresh or memory-only
        #: start, or a persisted state that was missing, corrupt or of another shape). A flush
        #: after the caller's rebuild clears it.
        self._needs_rebuild = True
        self._shards = [_Shard() for _ in range(shards)]
        self._shard_by_id: dict[str, int] = {}
        self._write_lock = threading.Lock()  # order: _flush_lock -> _write_lock -> shard locks
        self._flush_lock = threading.Lock()
        # Highest seq the manifest on disk named per shard, so new files never reuse its names.
        self._seq_floor = [0] * shards
        #: whether ``start`` read the files: an index never started writes nothing, so closing
        #: a gateway that failed to start (its data dir in use by another one) cannot replace
        #: the other gateway's files with an empty index
        self._opened = False

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        if self.data_dir is None:
            self._needs_rebuild = True
            return
        await asyncio.to_thread(self._load)
        self._opened = True

    async def close(self) -> None:
        await self.flush()

    async def durability(self) -> str:
        """The index is derived: files are written atomically and fsynced at each flush, and
        a stale or damaged index is rebuilt from the records at start (``needs_rebuild``)."""
        return ""

    async def ping(self) -> None:
        return None

    def needs_rebuild(self) -> bool:
        return self._needs_rebuild

    def on_demand(self) -> bool:
        return False  # holds every vector it was given

    async def sync(self) -> None:
        """Nothing to catch up with: only this process changes these shards."""

    async def reset(self) -> None:
        """Drop every vector, in memory and on disk (before a rebuild)."""
        await asyncio.to_thread(self._reset_sync)

    # -- the contract --------------------------------------------------------------------------

    def shard_of(self, namespace: str) -> int:
        h = hashlib.blake2b(namespace.encode("utf-8"), digest_size=8).digest()
        return int.from_bytes(h, "big") % self.n_shards

    async def upsert(self, items: Sequence[VectorItem]) -> None:
        if not items:
            return
        if len(items) >= OFFLOAD_ITEMS or self._busy(range(self.n_shards), writes=True):
            grown = await asyncio.to_thread(self._upsert_sync, items)
        else:
            grown = self._upsert_sync(items)
        if grown:  # training takes a second or more: never on the event loop
            await asyncio.to_thread(self._train_sync, grown)

    async def delete(self, ids: Sequence[str], erased: bool = True) -> None:
        if not ids:
            return
        if self._busy(range(self.n_shards), writes=True):
            await asyncio.to_thread(self._delete_sync, ids)
        else:
            self._delete_sync(ids)

    async def search(
        self,
        vector: np.ndarray,
        namespaces: Sequence[str],
        k: int,
        layers: Sequence[Layer] | None = None,
    ) -> list[tuple[str, float]]:
        query = self._query_vector(vector)
        return (await self._search_rows(query, namespaces, k, layers))[0]

    async def search_many(
        self,
        vectors: np.ndarray,
        namespaces: Sequence[str],
        k: int,
        layers: Sequence[Layer] | None = None,
    ) -> list[list[tuple[str, float]]]:
        """One scan per partition for all the rows (faiss searches a matrix of queries)."""
        arr = np.asarray(vectors, dtype=np.float32)
        if arr.ndim != 2:
            raise InvalidArgument("query vectors must be a (n, dim) matrix", field="vector")
        if arr.shape[0] == 0:
            return []
        queries = np.vstack([self._query_vector(row) for row in arr])
        return await self._search_rows(queries, namespaces, k, layers)

    async def _search_rows(
        self,
        queries: np.ndarray,
        namespaces: Sequence[str],
        k: int,
        layers: Sequence[Layer] | None,
    ) -> list[list[tuple[str, float]]]:
        empty: list[list[tuple[str, float]]] = [[] for _ in range(queries.shape[0])]
        if k <= 0 or not namespaces:
            return empty
        wanted = None if layers is None else frozenset(self._layer(x) for x in layers)
        if wanted is not None and not wanted:
            return empty
        groups: dict[int, list[str]] = {}
        for ns in dict.fromkeys(namespaces):  # dedupe, keep order
            groups.setdefault(self.shard_of(ns), []).append(ns)
        population = sum(
            self._shards[s].ns_count.get(ns, 0) for s, nss in groups.items() for ns in nss
        )
        if population * queries.shape[0] >= OFFLOAD_VECTORS or self._busy(groups):
            return await asyncio.to_thread(self._search_sync, queries, groups, k, wanted)
        return self._search_sync(queries, groups, k, wanted)

    def _busy(self, shard_ids: Iterable[int], writes: bool = False) -> bool:
        """Whether a lock a call needs is held now (a flush copying the shards, a large write in
        a worker thread): the call then waits in a worker thread, not on the event loop, which
        would stall every other request (a search during a 100k flush: 330 ms before). A lock
        taken between this check and the call's own acquisition only makes that one call wait
        inline, as every call did before."""
        if writes and self._write_lock.locked():
            return True
        return any(self._shards[s].lock.locked() for s in shard_ids)

    async def flush(self) -> None:
        if self.data_dir is not None and self._opened:
            await asyncio.to_thread(self._flush_sync)

    async def count(self) -> int:
        return sum(s.total for s in self._shards)

    def sizes(self, namespaces: Iterable[str]) -> dict[str, int]:
        """How many vectors each of ``namespaces`` holds (absent: none)."""
        out = {}
        for ns in namespaces:
            n = self._shards[self.shard_of(ns)].ns_count.get(ns, 0)
            if n:
                out[ns] = n
        return out

    def drop_namespaces(self, namespaces: Iterable[str]) -> int:
        """Forget every vector of ``namespaces`` (a cache evicting them); returns how many."""
        with self._write_lock:
            groups: dict[int, list[str]] = {}
            for ns in set(namespaces):
                groups.setdefault(self.shard_of(ns), []).append(ns)
            dropped = 0
            with self._shard_locks(groups):
                for s, nss in groups.items():
                    shard = self._shards[s]
                    for ns in nss:
                        parts = shard.parts.pop(ns, {})
                        for part in parts.values():
                            for sid in part.rev.values():
                                shard.where.pop(sid, None)
                                self._shard_by_id.pop(sid, None)
                        n = shard.ns_count.pop(ns, 0)
                        shard.total -= n
                        dropped += n
                        if parts:
                            shard.dirty = True
            return dropped

    def stats(self) -> dict[str, Any]:
        shards = self._shards
        return {
            "dim": self.dim,
            "shards": self.n_shards,
            "vectors": sum(s.total for s in shards),
            "vectors_per_shard": [s.total for s in shards],
            "namespaces_per_shard": [len(s.ns_count) for s in shards],
            "searches_per_shard": [s.searches for s in shards],
            "dirty_shards": [i for i, s in enumerate(shards) if s.dirty],
            "needs_rebuild": self._needs_rebuild,
        }

    # -- validation ----------------------------------------------------------------------------

    @staticmethod
    def _layer(value: Layer | str) -> Layer:
        try:
            return Layer(value)
        except ValueError:
            raise InvalidArgument(f"unknown layer {value!r}", field="layer") from None

    def _vector(self, value: Any, what: str) -> np.ndarray:
        try:
            arr = np.asarray(value, dtype=np.float32)
        except (TypeError, ValueError):
            raise InvalidArgument(f"{what} is not a numeric vector", field="vector") from None
        if arr.ndim == 2 and arr.shape[0] == 1:
            arr = arr[0]
        if arr.ndim != 1 or arr.shape[0] != self.dim:
            raise InvalidArgument(
                f"{what} has shape {tuple(arr.shape)}, expected ({self.dim},)", field="vector"
            )
        if not np.isfinite(arr).all():
            raise InvalidArgument(f"{what} has NaN or infinite values", field="vector")
        return arr

    def _query_vector(self, vector: np.ndarray) -> np.ndarray:
        """The query as given (not normalised): its length is the embedder's to set, and the
        recall core scores the candidates the search did not bring with the same vector."""
        return np.array(self._vector(vector, "query vector"), dtype=np.float32).reshape(1, self.dim)

    # -- synchronous work ----------------------------------------------------------------------

    @contextlib.contextmanager
    def _shard_locks(self, shard_ids: Iterable[int]) -> Iterator[None]:
        with contextlib.ExitStack() as stack:
            for s in sorted(set(shard_ids)):
                stack.enter_context(self._shards[s].lock)
            yield

    def _prepare(
        self, items: Sequence[VectorItem]
    ) -> tuple[dict[str, tuple[str, Layer, int]], np.ndarray]:
        """Validate a batch; the last item of a repeated id wins. Returns id -> (ns, layer, row)."""
        rows: dict[str, tuple[str, Layer, int]] = {}
        mat = np.empty((len(items), self.dim), dtype=np.float32)
        for i, item in enumerate(items):
            if not isinstance(item.id, str) or not item.id:
                raise InvalidArgument("vector item id must be a non-empty string", field="id")
            if not isinstance(item.namespace, str):
                raise InvalidArgument("vector item namespace must be a string", field="namespace")
            mat[i] = self._vector(item.vector, f"vector of {item.id!r}")
            rows.pop(item.id, None)
            rows[item.id] = (item.namespace, self._layer(item.layer), i)
        faiss.normalize_L2(mat)
        return rows, mat

    def _pin_threads(self) -> None:
        if self._threads is not None:
            faiss.omp_set_num_threads(self._threads)

    def _upsert_sync(self, items: Sequence[VectorItem]) -> list[tuple[int, str, Layer]]:
        """Returns the partitions now large enough to search approximately (``_train_sync``)."""
        rows, mat = self._prepare(items)
        self._pin_threads()
        with self._write_lock:
            removals: dict[int, list[str]] = {}
            for sid in rows:
                old = self._shard_by_id.get(sid)
                if old is not None:
                    removals.setdefault(old, []).append(sid)
            additions: dict[int, dict[tuple[str, Layer], list[str]]] = {}
            for sid, (ns, layer, _) in rows.items():
                additions.setdefault(self.shard_of(ns), {}).setdefault((ns, layer), []).append(sid)
            with self._shard_locks([*removals, *additions]):
                for s, sids in removals.items():
                    self._shards[s].remove(sids)
                for s, groups in additions.items():
                    shard = self._shards[s]
                    for (ns, layer), sids in groups.items():
                        picked = mat[[rows[sid][2] for sid in sids]]
                        shard.add(ns, layer, sids, np.ascontiguousarray(picked), self.dim)
                        for sid in sids:
                            self._shard_by_id[sid] = s
            return [
                (s, ns, layer)
                for s, groups in additions.items()
                for ns, layer in groups
                if self._shards[s].parts[ns][layer].wants_training()
            ]

    def _train_sync(self, grown: list[tuple[int, str, Layer]]) -> None:
        """Make large partitions approximate (``APPROX_MIN``), or retrain them once they grew
        ``APPROX_REGROW`` times. The training (a minute at 1M vectors) runs on a copy, with no
        lock held: searches (exact meanwhile) and writes go on; what changed meanwhile is applied
        to the trained index before it is swapped in."""
        self._pin_threads()
        for s, ns, layer in grown:
            with self._write_lock, self._shard_locks([s]):
                part = self._shards[s].parts.get(ns, {}).get(layer)
                if part is None or not part.wants_training():
                    continue
                vectors, fids = _contents(part.index)
                seen = part.changes
            trained = _approximate(vectors, fids)
            del vectors
            with self._write_lock, self._shard_locks([s]):
                if self._shards[s].parts.get(ns, {}).get(layer) is not part:
                    continue  # dropped or emptied meanwhile
                part.swap(trained, fids, seen)
                log.info(
                    "%s/%s: %d vectors, now searched in %d of %d lists",
                    ns,
                    layer.value,
                    trained.ntotal,
                    trained.nprobe,
                    trained.nlist,
                )

    def _delete_sync(self, ids: Sequence[str]) -> None:
        self._pin_threads()
        with self._write_lock:
            removals: dict[int, list[str]] = {}
            for sid in dict.fromkeys(ids):
                s = self._shard_by_id.pop(sid, None)
                if s is not None:
                    removals.setdefault(s, []).append(sid)
            with self._shard_locks(removals):
                for s, sids in removals.items():
                    self._shards[s].remove(sids)

    def _search_sync(
        self,
        queries: np.ndarray,
        groups: dict[int, list[str]],
        k: int,
        layers: frozenset[Layer] | None,
    ) -> list[list[tuple[str, float]]]:
        """The best ``k`` per query row (``queries`` is (n, dim), normalised)."""
        self._pin_threads()
        # one query of the only recall in flight: BLAS may spread the scan over idle cores
        spread = queries.shape[0] == 1 and scan_hint.alone()
        hits: list[list[tuple[float, str]]] = [[] for _ in range(queries.shape[0])]
        with self._shard_locks(groups):
            for s, nss in groups.items():
                shard = self._shards[s]
                shard.searches += 1
                for ns in nss:
                    for layer, part in shard.parts.get(ns, {}).items():
                        if layers is not None and layer not in layers:
                            continue
                        size = part.index.ntotal
                        kk = min(k, size)
                        if spread and part.flat and size >= GEMV_SCAN_MIN and kk < size:
                            scores, fids = _gemv_search(part.index, queries[0], kk)
                        else:
                            scores, fids = part.index.search(queries, kk)
                        rev = part.rev
                        for row, (srow, frow) in enumerate(
                            zip(scores.tolist(), fids.tolist(), strict=True)
                        ):
                            hits[row].extend(
                                (score, rev[fid])
                                for score, fid in zip(srow, frow, strict=True)
                                if fid >= 0
                            )
        out = []
        for row_hits in hits:
            row_hits.sort(key=lambda h: (-h[0], h[1]))
            out.append([(sid, score) for score, sid in row_hits[:k]])
        return out

    def _clear_memory(self) -> None:
        """Empty every shard (caller holds _write_lock)."""
        with self._shard_locks(range(self.n_shards)):
            for shard in self._shards:
                shard.clear()
                shard.entry = None
            self._shard_by_id.clear()

    def _reset_sync(self) -> None:
        with self._flush_lock, self._write_lock:
            self._clear_memory()
            if self.data_dir is None or not self.data_dir.exists():
                return
            manifest = self.data_dir / MANIFEST_NAME
            if manifest.exists():
                manifest.unlink()
                _fsync_dir(self.data_dir)
            for child in self.data_dir.iterdir():
                if _SHARD_DIR.match(child.name) and child.is_dir():
                    shutil.rmtree(child)
            _fsync_dir(self.data_dir)

    # -- persistence ---------------------------------------------------------------------------

    def _shard_dir(self, s: int) -> Path:
        assert self.data_dir is not None
        return self.data_dir / f"shard-{s:02d}"

    def _flush_sync(self) -> None:
        assert self.data_dir is not None
        with self._flush_lock:
            captured: dict[int, tuple[list[_Captured], int]] = {}
            with self._write_lock, self._shard_locks(range(self.n_shards)):
                for s, shard in enumerate(self._shards):
                    if shard.dirty or shard.entry is None:
                        captured[s] = (shard.capture(), shard.next_fid)
                        shard.dirty = False
            if not captured:
                return
            try:
                snapshots: dict[int, _Snapshot] = {
                    s: (*_serialised(parts, self.dim), next_fid)
                    for s, (parts, next_fid) in captured.items()
                }
                self._commit(snapshots)
            except BaseException:
                for s in snapshots:
                    self._shards[s].dirty = True
                raise

    def _commit(self, snapshots: dict[int, _Snapshot]) -> None:
        assert self.data_dir is not None
        self.data_dir.mkdir(parents=True, exist_ok=True)
        entries = [shard.entry for shard in self._shards]
        for s, (blobs, meta, next_fid) in snapshots.items():
            old = entries[s]
            seq = max(old["seq"] if old else 0, self._seq_floor[s]) + 1
            entries[s] = self._write_shard(s, seq, blobs, meta, next_fid)
        body = {
            "format": FORMAT_VERSION,
            "dim": self.dim,
            "shards": self.n_shards,
            "shard_hash": "blake2b-64 mod shards",
            "shard_entries": entries,
        }
        manifest = {**body, "digest": _digest(dump_json_ascii(body, sort_keys=True).encode())}
        _write_atomic(
            self.data_dir / MANIFEST_NAME, [dump_json_ascii(manifest, sort_keys=True).encode()]
        )
        _fsync_dir(self.data_dir)  # committed
        for s in snapshots:
            self._shards[s].entry = entries[s]
        self._collect_garbage(entries)

    def _write_shard(
        self, s: int, seq: int, blobs: list[np.ndarray], meta: list[dict[str, Any]], next_fid: int
    ) -> dict[str, Any]:
        d = self._shard_dir(s)
        new_dir = not d.exists()
        d.mkdir(exist_ok=True)
        if new_dir:
            _fsync_dir(d.parent)
        index_file = f"index.{seq:08d}.bin"
        ids_file = f"ids.{seq:08d}.json"
        index_digest = _write_atomic(d / index_file, blobs)
        sidecar = {
            "format": FORMAT_VERSION,
            "dim": self.dim,
            "shard": s,
            "seq": seq,
            "next_fid": next_fid,
            "index_file": index_file,
            "index_digest": index_digest,
            "partitions": meta,
        }
        ids_digest = _write_atomic(d / ids_file, [dump_json_ascii(sidecar).encode()])
        _fsync_dir(d)
        return {
            "seq": seq,
            "count": sum(len(p["ids"]) for p in meta),
            "index_file": index_file,
            "index_digest": index_digest,
            "ids_file": ids_file,
            "ids_digest": ids_digest,
        }

    def _collect_garbage(self, entries: list[dict[str, Any] | None]) -> None:
        """Delete files no committed manifest refers to (old seqs, temp files, extra shards)."""
        assert self.data_dir is not None
        for child in self.data_dir.iterdir():
            m = _SHARD_DIR.match(child.name)
            if not m or not child.is_dir():
                continue
            s = int(m.group(1))
            if s >= self.n_shards or child.name != self._shard_dir(s).name:
                shutil.rmtree(child, ignore_errors=True)
                continue
            entry = entries[s]
            keep = {entry["index_file"], entry["ids_file"]} if entry else set()
            for f in child.iterdir():
                if f.name not in keep:
                    with contextlib.suppress(OSError):
                        f.unlink()

    def _load(self) -> None:
        assert self.data_dir is not None
        with self._flush_lock, self._write_lock:
            self._clear_memory()
            try:
                self._load_manifest()
            except _CorruptState as exc:
                fresh = not (self.data_dir / MANIFEST_NAME).exists()
                level = logging.INFO if fresh else logging.WARNING
                log.log(level, "vector index at %s needs a rebuild: %s", self.data_dir, exc)
                self._clear_memory()
                self._needs_rebuild = True
            else:
                self._needs_rebuild = False

    def _load_manifest(self) -> None:
        assert self.data_dir is not None
        path = self.data_dir / MANIFEST_NAME
        try:
            manifest = parse_json(path.read_bytes())
        except FileNotFoundError:
            raise _CorruptState("no manifest (fresh start)") from None
        except (OSError, ValueError) as exc:
            raise _CorruptState(f"unreadable manifest: {exc}") from None
        if not isinstance(manifest, dict):
            raise _CorruptState("manifest is not an object")
        body = {key: value for key, value in manifest.items() if key != "digest"}
        if manifest.get("digest") != _digest(dump_json_ascii(body, sort_keys=True).encode()):
            raise _CorruptState("manifest digest mismatch")
        for key, want in (("format", FORMAT_VERSION), ("dim", self.dim), ("shards", self.n_shards)):
            if manifest.get(key) != want:
                raise _CorruptState(f"manifest {key}={manifest.get(key)!r}, expected {want!r}")
        entries = manifest.get("shard_entries")
        if not isinstance(entries, list) or len(entries) != self.n_shards:
            raise _CorruptState("manifest shard entries do not match the shard count")
        for s, entry in enumerate(entries):
            with contextlib.suppress(Exception):
                self._seq_floor[s] = max(self._seq_floor[s], int(entry["seq"]))
        for s, entry in enumerate(entries):
            try:
                self._load_shard(s, entry)
            except _CorruptState:
                raise
            except Exception as exc:  # any failure to decode is corruption
                raise _CorruptState(f"shard {s}: {type(exc).__name__}: {exc}") from None

    def _load_shard(self, s: int, entry: dict[str, Any] | None) -> None:
        if not entry:
            raise _CorruptState(f"shard {s} missing from manifest")
        d = self._shard_dir(s)
        ids_bytes = (d / entry["ids_file"]).read_bytes()
        if _digest(ids_bytes) != entry["ids_digest"]:
            raise _CorruptState(f"shard {s}: sidecar digest mismatch")
        sidecar = parse_json(ids_bytes)
        blob = np.fromfile(d / entry["index_file"], dtype=np.uint8)
        want = entry["index_digest"]
        if _digest(blob) != want or sidecar["index_digest"] != want:  # type: ignore[arg-type]
            raise _CorruptState(f"shard {s}: index digest mismatch")
        if sidecar["seq"] != entry["seq"] or sidecar["dim"] != self.dim or sidecar["shard"] != s:
            raise _CorruptState(f"shard {s}: sidecar does not match the manifest")
        shard = self._shards[s]
        max_fid = -1
        for p in sidecar["partitions"]:
            ns, layer, ids = p["namespace"], Layer(p["layer"]), p["ids"]
            if self.shard_of(ns) != s or layer in shard.parts.get(ns, {}):
                raise _CorruptState(f"shard {s}: misplaced or repeated partition {ns!r}/{layer}")
            part = self._load_partition(blob[p["offset"] : p["offset"] + p["length"]], ids)
            shard.parts.setdefault(ns, {})[layer] = part
            for fid, sid in part.rev.items():
                if sid in self._shard_by_id:
                    raise _CorruptState(f"id {sid!r} stored twice")
                self._shard_by_id[sid] = s
                shard.where[sid] = (ns, layer, fid)
                max_fid = max(max_fid, fid)
            shard.ns_count[ns] = shard.ns_count.get(ns, 0) + len(ids)
            shard.total += len(ids)
        if entry["count"] != shard.total or sidecar["next_fid"] <= max_fid:
            raise _CorruptState(f"shard {s}: counts do not match the manifest")
        shard.next_fid = sidecar["next_fid"]
        shard.entry = entry
        shard.dirty = False

    def _load_partition(self, blob: np.ndarray, ids: list[str]) -> _Partition:
        index = faiss.deserialize_index(blob)
        if not isinstance(index, faiss.IndexIDMap) or index.d != self.dim:
            raise _CorruptState("a partition has a wrong index type or dim")
        if index.metric_type != faiss.METRIC_INNER_PRODUCT:
            raise _CorruptState("a partition is not an inner-product index")
        fids = faiss.vector_to_array(index.id_map).tolist()
        if not ids or len(fids) != len(ids) or index.ntotal != len(ids):
            raise _CorruptState("a partition's id count does not match its sidecar")
        part = _Partition(index)
        part.rev = dict(zip(fids, ids, strict=True))
        if len(part.rev) != len(ids) or len(set(ids)) != len(ids):
            raise _CorruptState("a partition repeats an id")
        if part.wants_training():  # on disk every partition is flat
            part.approximate()
        return part
