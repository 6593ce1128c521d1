"""ShardedFaissIndex: exact search, isolation, sharding, persistence and concurrency."""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import stores.faiss_index as fi
from gateway.core.model.errors import InvalidArgument
from gateway.core.model.models import Layer, VectorItem
from gateway.core.ports.ports import VectorIndex
from stores.faiss_index import ShardedFaissIndex

DIM = 32
LAYERS = (Layer.EPISODIC, Layer.SEMANTIC, Layer.PROCEDURAL)


def unit(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def items_for(
    ns: str, layer: Layer, vectors: np.ndarray, prefix: str | None = None
) -> list[VectorItem]:
    prefix = prefix or f"{ns}-{layer}"
    return [VectorItem(f"{prefix}-{i}", ns, layer, v) for i, v in enumerate(vectors)]


def same_shard_namespaces(index: ShardedFaissIndex, n: int = 2) -> list[str]:
    by_shard: dict[int, list[str]] = {}
    for i in range(1000):
        name = f"tenant-{i}"
        group = by_shard.setdefault(index.shard_of(name), [])
        group.append(name)
        if len(group) == n:
            return group
    raise AssertionError("no namespaces share a shard")


def check_consistent(index: ShardedFaissIndex) -> None:
    """Every internal map agrees with the faiss indexes."""
    seen: set[str] = set()
    for s, shard in enumerate(index._shards):
        total = 0
        for ns, parts in shard.parts.items():
            assert index.shard_of(ns) == s
            for layer, part in parts.items():
                assert part.index.ntotal == len(part.rev) > 0
                for fid, sid in part.rev.items():
                    assert shard.where[sid] == (ns, layer, fid)
                    assert index._shard_by_id[sid] == s
                    assert sid not in seen
                    seen.add(sid)
                total += part.index.ntotal
        assert total == shard.total == len(shard.where) == sum(shard.ns_count.values())
    assert seen == set(index._shard_by_id)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


async def test_implements_the_contract() -> None:
    index = ShardedFaissIndex(None, dim=DIM, shards=2)
    assert isinstance(index, VectorIndex)
    await index.start()
    await index.ping()
    assert index.needs_rebuild()  # memory only: always starts empty
    await index.flush()  # no-op without a data dir
    await index.close()


def test_shard_of_is_a_stable_blake2b_hash() -> None:
    index = ShardedFaissIndex(None, dim=DIM, shards=8)
    for ns in ("alpha", "beta", "用户-42", ""):
        digest = hashlib.blake2b(ns.encode(), digest_size=8).digest()
        assert index.shard_of(ns) == int.from_bytes(digest, "big") % 8
    assert len({index.shard_of(f"ns-{i}") for i in range(200)}) == 8


async def test_search_matches_brute_force(rng: np.random.Generator) -> None:
    index = ShardedFaissIndex(None, dim=DIM, shards=4)
    namespaces = ["ns-a", "ns-b", "ns-c", "ns-d"]
    ids, nss, lys, vecs = [], [], [], []
    for ns in namespaces:
        for layer in LAYERS:
            v = unit(rng, 150)
            batch = items_for(ns, layer, v)
            await index.upsert(batch)
            ids += [it.id for it in batch]
            nss += [ns] * len(batch)
            lys += [layer] * len(batch)
            vecs.append(v)
    ids_a, nss_a, lys_a = np.array(ids), np.array(nss), np.array(lys)
    all_vecs = np.concatenate(vecs).astype(np.float64)
    cases = [
        (["ns-a"], None, 10),
        (["ns-b", "ns-c"], None, 25),
        (namespaces, [Layer.SEMANTIC], 7),
        (["ns-a", "ns-d"], [Layer.EPISODIC, Layer.PROCEDURAL], 40),
        (["ns-c", "missing"], None, 1),
    ]
    for want_ns, want_layers, k in cases:
        for q in unit(rng, 5):
            got = await index.search(q, want_ns, k, want_layers)
            mask = np.isin(nss_a, want_ns)
            if want_layers is not None:
                mask &= np.isin(lys_a, [str(x) for x in want_layers])
            scores = all_vecs[mask] @ q.astype(np.float64)
            order = np.argsort(-scores, kind="stable")[:k]
            assert [sid for sid, _ in got] == ids_a[mask][order].tolist()
            np.testing.assert_allclose([s for _, s in got], scores[order], rtol=0, atol=1e-5)


async def test_a_large_partition_scanned_by_blas_matches_faiss_and_brute_force(
    rng: np.random.Generator,
) -> None:
    # one query over a partition of GEMV_SCAN_MIN vectors or more takes the BLAS path; after
    # removals and replacements its positions and faiss ids no longer coincide
    index = ShardedFaissIndex(None, dim=DIM, shards=2)
    n = fi.GEMV_SCAN_MIN + 1000
    first, second = unit(rng, n), unit(rng, 300)
    await index.upsert(items_for("big", Layer.EPISODIC, first, prefix="m"))
    await index.delete([f"m-{i}" for i in range(0, n, 7)])
    await index.upsert(items_for("big", Layer.EPISODIC, second, prefix="m"))  # replaces 0..299
    vectors = {f"m-{i}": first[i] for i in range(n) if i % 7}
    vectors.update({f"m-{i}": second[i] for i in range(300)})
    part = index._shards[index.shard_of("big")].parts["big"][Layer.EPISODIC]
    assert part.index.ntotal == len(vectors) >= fi.GEMV_SCAN_MIN
    ids = np.array(sorted(vectors))
    mat = np.stack([vectors[i] for i in ids]).astype(np.float64)
    for k in (1, 10, 40):
        for q in unit(rng, 5):
            got = await index.search(q, ["big"], k)
            scores = mat @ q.astype(np.float64)
            order = np.argsort(-scores, kind="stable")[:k]
            assert [sid for sid, _ in got] == ids[order].tolist()
            np.testing.assert_allclose([s for _, s in got], scores[order], rtol=0, atol=1e-5)
            faiss_scores, faiss_fids = part.index.search(q[None, :], k)
            assert [part.rev[f] for f in faiss_fids[0].tolist()] == ids[order].tolist()
    # all of the partition: faiss's own scan (nothing to leave out)
    assert {sid for sid, _ in await index.search(unit(rng, 1)[0], ["big"], n)} == set(vectors)


async def test_stored_vectors_are_normalised_and_a_query_is_used_as_given(
    rng: np.random.Generator,
) -> None:
    index = ShardedFaissIndex(None, dim=DIM, shards=2)
    v = unit(rng, 2)
    await index.upsert(
        [
            VectorItem("far", "ns", Layer.SEMANTIC, v[1] * 100),
            VectorItem("near", "ns", Layer.SEMANTIC, v[0] * 0.01),
        ]
    )
    got = await index.search(v[0] * 3, ["ns"], 2)
    assert got[0][0] == "near"  # by cosine: the stored lengths do not count
    # the query's length scales every score (the e5 embedder's language shift rides on it)
    assert got[0][1] == pytest.approx(3.0, abs=1e-4)
    assert got[1][1] == pytest.approx(3.0 * float(v[0] @ v[1]), abs=1e-4)


async def test_namespace_isolation(rng: np.random.Generator) -> None:
    index = ShardedFaissIndex(None, dim=DIM, shards=4)
    mine, other = same_shard_namespaces(index)  # same shard: isolation is not just sharding
    q = unit(rng, 1)[0]
    await index.upsert(items_for(mine, Layer.SEMANTIC, unit(rng, 20)))
    await index.upsert([VectorItem("intruder", other, Layer.SEMANTIC, q)])
    await index.upsert([VectorItem("intruder-2", "elsewhere", Layer.SEMANTIC, q)])
    got = await index.search(q, [mine], 100)
    assert len(got) == 20
    assert all(sid.startswith(mine) for sid, _ in got)
    assert (await index.search(q, [other], 100)) == [("intruder", pytest.approx(1.0, abs=1e-5))]
    both = await index.search(q, [mine, other], 3)
    assert both[0][0] == "intruder"


async def test_layers_filter(rng: np.random.Generator) -> None:
    index = ShardedFaissIndex(None, dim=DIM, shards=2)
    for layer in LAYERS:
        await index.upsert(items_for("ns", layer, unit(rng, 5)))
    q = unit(rng, 1)[0]
    sem = await index.search(q, ["ns"], 100, [Layer.SEMANTIC])
    assert len(sem) == 5 and all(sid.startswith("ns-semantic") for sid, _ in sem)
    two = await index.search(q, ["ns"], 100, ["episodic", Layer.PROCEDURAL])
    assert {sid.split("-")[1] for sid, _ in two} == {"episodic", "procedural"}
    assert len(await index.search(q, ["ns"], 100)) == 15
    assert await index.search(q, ["ns"], 100, []) == []
    with pytest.raises(InvalidArgument):
        await index.search(q, ["ns"], 5, ["nonsense"])


async def test_upsert_replaces_and_moves(rng: np.random.Generator) -> None:
    index = ShardedFaissIndex(None, dim=DIM, shards=8)
    v = unit(rng, 3)
    await index.upsert([VectorItem("x", "ns-a", Layer.SEMANTIC, v[0])])
    await index.upsert([VectorItem("x", "ns-a", Layer.SEMANTIC, v[1])])  # same partition
    assert await index.count() == 1
    assert (await index.search(v[1], ["ns-a"], 5)) == [("x", pytest.approx(1.0, abs=1e-5))]
    assert index.shard_of("ns-a") != index.shard_of("ns-z")
    await index.upsert([VectorItem("x", "ns-z", Layer.EPISODIC, v[2])])  # other shard and layer
    assert await index.count() == 1
    assert await index.search(v[2], ["ns-a"], 5) == []
    assert await index.search(v[2], ["ns-z"], 5, [Layer.SEMANTIC]) == []
    assert (await index.search(v[2], ["ns-z"], 5)) == [("x", pytest.approx(1.0, abs=1e-5))]
    # a repeated id inside one batch: the last one wins
    await index.upsert(
        [
            VectorItem("y", "ns-a", Layer.SEMANTIC, v[0]),
            VectorItem("y", "ns-b", Layer.SEMANTIC, v[1]),
        ]
    )
    assert await index.count() == 2
    assert await index.search(v[0], ["ns-a"], 5) == []
    assert [sid for sid, _ in await index.search(v[1], ["ns-b"], 5)] == ["y"]
    check_consistent(index)


async def test_delete(rng: np.random.Generator) -> None:
    index = ShardedFaissIndex(None, dim=DIM, shards=4)
    await index.upsert(items_for("ns", Layer.SEMANTIC, unit(rng, 10), prefix="m"))
    await index.delete(["m-0", "m-5", "unknown", "m-5"])
    assert await index.count() == 8
    got = {sid for sid, _ in await index.search(unit(rng, 1)[0], ["ns"], 100)}
    assert got == {f"m-{i}" for i in range(10)} - {"m-0", "m-5"}
    await index.delete([f"m-{i}" for i in range(10)])
    await index.delete([])
    assert await index.count() == 0
    assert index.stats()["vectors_per_shard"] == [0, 0, 0, 0]
    assert index._shards[index.shard_of("ns")].parts == {}  # empty partitions are dropped
    check_consistent(index)


async def test_edge_cases(rng: np.random.Generator) -> None:
    index = ShardedFaissIndex(None, dim=DIM, shards=2)
    await index.upsert(items_for("ns", Layer.SEMANTIC, unit(rng, 5)))
    q = unit(rng, 1)[0]
    assert len(await index.search(q, ["ns"], 50)) == 5  # k > population
    assert await index.search(q, [], 10) == []
    assert await index.search(q, ["ns"], 0) == []
    assert await index.search(q, ["nobody"], 10) == []
    assert len(await index.search(q.reshape(1, DIM), ["ns", "ns"], 50)) == 5  # no duplicates
    await index.upsert([])


async def test_wrong_dim_and_bad_values(rng: np.random.Generator) -> None:
    index = ShardedFaissIndex(None, dim=DIM, shards=2)
    good = VectorItem("good", "ns", Layer.SEMANTIC, unit(rng, 1)[0])
    bad = VectorItem("bad", "ns", Layer.SEMANTIC, unit(rng, 1, DIM + 1)[0])
    with pytest.raises(InvalidArgument) as err:
        await index.upsert([good, bad])
    assert err.value.field == "vector"
    assert await index.count() == 0  # the batch is validated before anything is written
    nan = np.full(DIM, np.nan, dtype=np.float32)
    with pytest.raises(InvalidArgument):
        await index.upsert([VectorItem("nan", "ns", Layer.SEMANTIC, nan)])
    with pytest.raises(InvalidArgument):
        await index.upsert([VectorItem("", "ns", Layer.SEMANTIC, good.vector)])
    with pytest.raises(InvalidArgument):
        await index.search(np.zeros(DIM - 1, dtype=np.float32), ["ns"], 3)
    with pytest.raises(InvalidArgument):
        await index.search(np.zeros((2, DIM), dtype=np.float32), ["ns"], 3)


async def test_a_query_touches_only_its_namespaces_shards(rng: np.random.Generator) -> None:
    index = ShardedFaissIndex(None, dim=DIM, shards=8)
    for i in range(40):
        await index.upsert(items_for(f"ns-{i}", Layer.SEMANTIC, unit(rng, 3)))
    q = unit(rng, 1)[0]

    def searches() -> np.ndarray:
        return np.array(index.stats()["searches_per_shard"])

    before = searches()
    await index.search(q, ["ns-7"], 5)
    touched = np.flatnonzero(searches() - before)
    assert touched.tolist() == [index.shard_of("ns-7")]

    a, b = (
        "ns-1",
        next(f"ns-{i}" for i in range(40) if index.shard_of(f"ns-{i}") != index.shard_of("ns-1")),
    )
    before = searches()
    await index.search(q, [a, b], 5)
    assert sorted(np.flatnonzero(searches() - before).tolist()) == sorted(
        [index.shard_of(a), index.shard_of(b)]
    )


async def test_persistence_round_trip(tmp_path: Path, rng: np.random.Generator) -> None:
    index = ShardedFaissIndex(tmp_path, dim=DIM, shards=4)
    await index.start()
    assert index.needs_rebuild()  # nothing on disk yet
    for i in range(6):
        for layer in (Layer.SEMANTIC, Layer.EPISODIC):
            await index.upsert(items_for(f"ns-{i}", layer, unit(rng, 20)))
    await index.delete(["ns-0-semantic-3"])
    await index.close()

    queries = unit(rng, 5)
    namespaces = [f"ns-{i}" for i in range(6)]
    expected = [await index.search(q, namespaces, 15) for q in queries]

    again = ShardedFaissIndex(tmp_path, dim=DIM, shards=4)
    await again.start()
    assert not again.needs_rebuild()
    assert await again.count() == await index.count() == 239
    assert again.stats()["vectors_per_shard"] == index.stats()["vectors_per_shard"]
    assert again.stats()["dirty_shards"] == []
    for q, want in zip(queries, expected, strict=True):
        assert await again.search(q, namespaces, 15) == want
    check_consistent(again)

    # loaded indexes keep working: replace a loaded id, add new ones, no id clash
    v = unit(rng, 2)
    await again.upsert([VectorItem("ns-1-semantic-0", "ns-1", Layer.SEMANTIC, v[0])])
    await again.upsert([VectorItem("fresh", "ns-1", Layer.SEMANTIC, v[1])])
    assert await again.count() == 240
    assert (await again.search(v[0], ["ns-1"], 1))[0][0] == "ns-1-semantic-0"
    assert (await again.search(v[1], ["ns-1"], 1))[0][0] == "fresh"
    check_consistent(again)


async def test_flush_writes_only_dirty_shards(tmp_path: Path, rng: np.random.Generator) -> None:
    index = ShardedFaissIndex(tmp_path, dim=DIM, shards=4)
    await index.start()
    await index.upsert(items_for("ns-a", Layer.SEMANTIC, unit(rng, 5)))
    await index.flush()

    def seqs() -> list[int]:
        manifest = json.loads((tmp_path / "manifest.json").read_text())
        return [e["seq"] for e in manifest["shard_entries"]]

    first = seqs()
    assert first == [1, 1, 1, 1]
    await index.flush()
    assert seqs() == first  # nothing changed, nothing written
    await index.upsert(items_for("ns-a", Layer.EPISODIC, unit(rng, 2)))
    await index.flush()
    s = index.shard_of("ns-a")
    assert seqs() == [2 if i == s else 1 for i in range(4)]
    shard_dir = tmp_path / f"shard-{s:02d}"
    assert sorted(p.name for p in shard_dir.iterdir()) == [
        "ids.00000002.json",
        "index.00000002.bin",
    ]  # the superseded seq is collected


async def test_crash_before_manifest_commit_keeps_old_state(
    tmp_path: Path, rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = ShardedFaissIndex(tmp_path, dim=DIM, shards=2)
    await index.start()
    v = unit(rng, 10)
    await index.upsert(items_for("ns", Layer.SEMANTIC, v[:5], prefix="old"))
    await index.flush()
    await index.upsert(items_for("ns", Layer.SEMANTIC, v[5:], prefix="new"))

    real = fi._write_atomic

    def crash_on_manifest(path: Path, chunks):  # type: ignore[no-untyped-def]
        if path.name == fi.MANIFEST_NAME:
            raise OSError("power cut")
        return real(path, chunks)

    monkeypatch.setattr(fi, "_write_atomic", crash_on_manifest)
    with pytest.raises(OSError):
        await index.flush()
    (tmp_path / f"shard-{index.shard_of('ns'):02d}" / ".tmp-junk").write_bytes(b"half")

    reloaded = ShardedFaissIndex(tmp_path, dim=DIM, shards=2)
    await reloaded.start()
    assert not reloaded.needs_rebuild()
    assert await reloaded.count() == 5  # the last committed state, not a mix

    monkeypatch.setattr(fi, "_write_atomic", real)
    await index.flush()  # the failed shards stayed dirty
    reloaded = ShardedFaissIndex(tmp_path, dim=DIM, shards=2)
    await reloaded.start()
    assert not reloaded.needs_rebuild()
    assert await reloaded.count() == 10
    assert not (tmp_path / f"shard-{index.shard_of('ns'):02d}" / ".tmp-junk").exists()


def _corrupt_manifest_json(d: Path) -> None:
    (d / "manifest.json").write_text("{not json")


def _truncate_manifest(d: Path) -> None:
    data = (d / "manifest.json").read_bytes()
    (d / "manifest.json").write_bytes(data[: len(data) // 2])


def _drop_manifest(d: Path) -> None:
    (d / "manifest.json").unlink()


def _tamper_manifest(d: Path) -> None:
    manifest = json.loads((d / "manifest.json").read_text())
    manifest["shard_entries"][0]["count"] += 1  # without fixing the digest
    (d / "manifest.json").write_text(json.dumps(manifest))


def _biggest_index_file(d: Path) -> Path:
    return max(d.glob("shard-*/index.*.bin"), key=lambda p: p.stat().st_size)


def _truncate_index(d: Path) -> None:
    f = _biggest_index_file(d)
    f.write_bytes(f.read_bytes()[:-100])


def _flip_index_byte(d: Path) -> None:
    f = _biggest_index_file(d)
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0xFF
    f.write_bytes(bytes(data))


def _delete_sidecar(d: Path) -> None:
    next(d.glob("shard-*/ids.*.json")).unlink()


def _edit_sidecar(d: Path) -> None:
    f = next(d.glob("shard-*/ids.*.json"))
    f.write_text(f.read_text().replace('"next_fid"', '"next_fid" ', 1))


@pytest.mark.parametrize(
    "damage",
    [
        _corrupt_manifest_json,
        _truncate_manifest,
        _drop_manifest,
        _tamper_manifest,
        _truncate_index,
        _flip_index_byte,
        _delete_sidecar,
        _edit_sidecar,
    ],
)
async def test_damaged_state_needs_rebuild(
    tmp_path: Path, rng: np.random.Generator, damage
) -> None:  # type: ignore[no-untyped-def]
    index = ShardedFaissIndex(tmp_path, dim=DIM, shards=3)
    await index.start()
    for i in range(6):
        await index.upsert(items_for(f"ns-{i}", Layer.SEMANTIC, unit(rng, 10)))
    await index.close()
    damage(tmp_path)

    broken = ShardedFaissIndex(tmp_path, dim=DIM, shards=3)
    await broken.start()
    assert broken.needs_rebuild()
    assert await broken.count() == 0
    assert await broken.search(unit(rng, 1)[0], ["ns-0"], 5) == []

    # the caller's rebuild: reset, refill, flush -> a clean state again
    await broken.reset()
    assert not (tmp_path / "manifest.json").exists()
    assert list(tmp_path.glob("shard-*")) == []
    await broken.upsert(items_for("ns-0", Layer.SEMANTIC, unit(rng, 4)))
    await broken.flush()
    broken._needs_rebuild = False
    healed = ShardedFaissIndex(tmp_path, dim=DIM, shards=3)
    await healed.start()
    assert not healed.needs_rebuild()
    assert await healed.count() == 4


@pytest.mark.parametrize(("dim", "shards"), [(DIM * 2, 3), (DIM, 4)])
async def test_shape_mismatch_needs_rebuild(
    tmp_path: Path, rng: np.random.Generator, dim: int, shards: int
) -> None:
    index = ShardedFaissIndex(tmp_path, dim=DIM, shards=3)
    await index.upsert(items_for("ns", Layer.SEMANTIC, unit(rng, 10)))
    await index.close()

    other = ShardedFaissIndex(tmp_path, dim=dim, shards=shards)
    await other.start()
    assert other.needs_rebuild()
    assert await other.count() == 0
    # flushing the new shape replaces the old one completely
    await other.upsert(items_for("ns", Layer.SEMANTIC, unit(rng, 2, dim)))
    await other.flush()
    assert sorted(p.name for p in tmp_path.glob("shard-*")) == [
        f"shard-{i:02d}" for i in range(shards)
    ]
    again = ShardedFaissIndex(tmp_path, dim=dim, shards=shards)
    await again.start()
    assert not again.needs_rebuild()
    assert await again.count() == 2


async def test_reset_drops_memory_and_files(tmp_path: Path, rng: np.random.Generator) -> None:
    index = ShardedFaissIndex(tmp_path, dim=DIM, shards=2)
    await index.start()
    await index.upsert(items_for("ns", Layer.SEMANTIC, unit(rng, 10)))
    await index.flush()
    await index.reset()
    assert await index.count() == 0
    assert await index.search(unit(rng, 1)[0], ["ns"], 5) == []
    assert list(tmp_path.iterdir()) == []
    await index.reset()  # idempotent
    fresh = ShardedFaissIndex(tmp_path, dim=DIM, shards=2)
    await fresh.start()
    assert fresh.needs_rebuild()


async def test_concurrent_writes_searches_and_flushes(
    tmp_path: Path, rng: np.random.Generator
) -> None:
    index = ShardedFaissIndex(tmp_path, dim=DIM, shards=4)
    await index.start()
    namespaces = [f"ns-{i}" for i in range(8)]
    vectors = unit(rng, 4000)
    big = [  # large enough to be applied in a worker thread
        VectorItem(f"big-{i}", namespaces[i % 8], LAYERS[i % 3], vectors[i])
        for i in range(fi.OFFLOAD_ITEMS + 10)
    ]
    errors: list[BaseException] = []

    async def writer(w: int) -> None:
        for j in range(30):
            batch = [
                # ids shared by writers, so the same id keeps moving between namespaces
                VectorItem(
                    f"w-{(w * 7 + j + t) % 50}",
                    namespaces[(w + j + t) % 8],
                    LAYERS[t % 3],
                    vectors[2000 + w * 100 + j + t],
                )
                for t in range(5)
            ]
            await index.upsert(batch)
            if j % 10 == 9:
                await index.delete([f"w-{(w + j) % 50}"])
            await asyncio.sleep(0)

    async def searcher(s: int) -> None:
        for j in range(40):
            got = await index.search(vectors[3000 + s * 40 + j], namespaces[: 1 + j % 8], 10)
            assert len({sid for sid, _ in got}) == len(got)  # never the same id twice
            await asyncio.sleep(0)

    def thread_worker(t: int) -> None:
        try:
            asyncio.run(writer(10 + t))
            asyncio.run(searcher(10 + t))
            asyncio.run(index.flush())
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = [pool.submit(thread_worker, t) for t in range(3)]
        await asyncio.gather(
            index.upsert(big),
            *(writer(w) for w in range(4)),
            *(searcher(s) for s in range(4)),
            index.flush(),
        )
        for f in futures:
            f.result()
    assert errors == []
    check_consistent(index)
    total = await index.count()
    assert total == len(index._shard_by_id) == sum(index.stats()["vectors_per_shard"])
    assert {sid for sid in index._shard_by_id if sid.startswith("big-")} == {it.id for it in big}

    await index.flush()
    reloaded = ShardedFaissIndex(tmp_path, dim=DIM, shards=4)
    await reloaded.start()
    assert not reloaded.needs_rebuild()
    assert await reloaded.count() == total
    check_consistent(reloaded)
    q = vectors[0]
    assert await reloaded.search(q, namespaces, 20) == await index.search(q, namespaces, 20)


async def test_search_and_upsert_from_plain_threads(rng: np.random.Generator) -> None:
    index = ShardedFaissIndex(None, dim=DIM, shards=2)
    vectors = unit(rng, 600)
    stop = threading.Event()

    def search_loop() -> int:
        n = 0
        while not stop.is_set():
            asyncio.run(index.search(vectors[n % 600], ["a", "b"], 5))
            n += 1
        return n

    with ThreadPoolExecutor(max_workers=2) as pool:
        searches = [pool.submit(search_loop) for _ in range(2)]
        for i in range(0, 600, 20):
            ns = "a" if i % 40 else "b"
            await asyncio.to_thread(
                asyncio.run,
                index.upsert(items_for(ns, Layer.SEMANTIC, vectors[i : i + 20], prefix=f"t{i}")),
            )
        stop.set()
        assert all(f.result() > 0 for f in searches)
    assert await index.count() == 600
    check_consistent(index)


async def test_calls_that_meet_a_held_lock_wait_off_the_event_loop(
    rng: np.random.Generator,
) -> None:
    # a flush copies the shards under their locks (a 100k-vector flush held them ~170 ms): a
    # search, an upsert or a delete that meets a held lock must not block the event loop,
    # which serves every other request
    index = ShardedFaissIndex(None, dim=DIM, shards=2)
    vectors = unit(rng, 50)
    await index.upsert(items_for("ns", Layer.SEMANTIC, vectors, prefix="m"))
    shard = index._shards[index.shard_of("ns")]
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with index._write_lock, shard.lock:
            held.set()
            release.wait(5)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(5)
    loop = asyncio.get_running_loop()
    lags: list[float] = []

    async def heartbeat() -> None:
        for _ in range(20):
            t = loop.time()
            await asyncio.sleep(0.01)
            lags.append(loop.time() - t - 0.01)

    calls = asyncio.gather(
        index.search(vectors[3], ["ns"], 1),
        index.upsert(items_for("ns", Layer.SEMANTIC, unit(rng, 1), prefix="new")),
        index.delete(["m-7"]),
    )
    await heartbeat()  # 200 ms while the calls wait for the lock
    assert not calls.done()
    release.set()
    found, _, _ = await calls
    holder.join()
    assert max(lags) < 0.1
    assert found[0][0] == "m-3"
    assert await index.count() == 50  # one added, one deleted
    check_consistent(index)


def clustered(rng: np.random.Generator, n: int, centres: int = 40) -> np.ndarray:
    """Vectors around topics, as embedded dialogue is (uniform noise has no neighbours)."""
    c = unit(rng, centres)
    x = c[rng.integers(0, centres, n)] + 0.35 * unit(rng, n)
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


async def test_a_large_partition_searches_approximately_and_stays_correct(
    rng: np.random.Generator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fi, "APPROX_MIN", 1500)
    vectors = clustered(rng, 4000)
    index = ShardedFaissIndex(tmp_path, dim=DIM, shards=2)
    await index.start()
    items = items_for("big", Layer.SEMANTIC, vectors)
    await index.upsert(items[:1000])
    (part,) = index._shards[index.shard_of("big")].parts["big"].values()
    assert part.flat  # below the threshold: exact
    await index.upsert(items[1000:])
    (part,) = index._shards[index.shard_of("big")].parts["big"].values()
    assert not part.flat and part.index.nprobe < part.index.nlist
    check_consistent(index)

    queries = clustered(rng, 200)
    found = 0
    for q in queries:
        exact = np.argsort(-(vectors @ q), kind="stable")[:10]
        got = await index.search(q, ["big"], 10)
        assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
        assert all(abs(s - float(vectors[int(m.rsplit("-", 1)[1])] @ q)) < 1e-5 for m, s in got)
        found += len({f"big-semantic-{i}" for i in exact} & {m for m, _ in got})
    assert found / (10 * len(queries)) >= 0.95  # recall@10 against exact

    # deletes and replaces reach the inverted lists
    gone = [f"big-semantic-{i}" for i in range(0, 4000, 7)]
    await index.delete(gone)
    moved = VectorItem("big-semantic-1", "big", Layer.SEMANTIC, -vectors[1])
    await index.upsert([moved])
    check_consistent(index)
    assert await index.count() == 4000 - len(gone)
    hits = await index.search(-vectors[1], ["big"], 5)
    assert hits[0][0] == "big-semantic-1" and hits[0][1] == pytest.approx(1.0, abs=1e-5)
    assert not {m for m, _ in await index.search(vectors[0], ["big"], 50)} & set(gone)

    # on disk it is flat; loaded again, it is approximate with the same contents
    await index.close()
    again = ShardedFaissIndex(tmp_path, dim=DIM, shards=2)
    await again.start()
    assert not again.needs_rebuild()
    (loaded,) = again._shards[again.shard_of("big")].parts["big"].values()
    assert not loaded.flat
    check_consistent(again)
    assert await again.count() == await index.count()
    assert (await again.search(-vectors[1], ["big"], 1))[0][0] == "big-semantic-1"


async def test_changes_made_while_a_partition_trains_are_kept(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The training runs outside the locks: what was written and deleted meanwhile reaches the
    trained index before it replaces the flat one."""
    monkeypatch.setattr(fi, "APPROX_MIN", 1 << 40)  # stays flat while it is filled
    vectors = clustered(rng, 3000)
    index = ShardedFaissIndex(None, dim=DIM, shards=2)
    items = items_for("big", Layer.SEMANTIC, vectors)
    await index.upsert(items[:2500])
    shard = index._shards[index.shard_of("big")]
    (part,) = shard.parts["big"].values()
    copied, fids = fi._contents(part.index)
    seen = part.changes
    trained = fi._approximate(copied, fids)
    await index.upsert(items[2500:])  # meanwhile: 500 more, 100 gone, one moved
    await index.delete([f"big-semantic-{i}" for i in range(100)])
    await index.upsert([VectorItem("big-semantic-200", "big", Layer.SEMANTIC, -vectors[200])])
    with shard.lock:
        part.swap(trained, fids, seen)
    assert not part.flat
    check_consistent(index)
    assert part.index.ntotal == 2900
    got, _ = fi._contents(part.index)
    assert got.shape == (2900, DIM)
    hits = await index.search(-vectors[200], ["big"], 1)
    assert hits[0][0] == "big-semantic-200"
    assert not {m for m, _ in await index.search(vectors[5], ["big"], 50)} & {
        f"big-semantic-{i}" for i in range(100)
    }
    assert "big-semantic-2999" in {m for m, _ in await index.search(vectors[2999], ["big"], 3)}
