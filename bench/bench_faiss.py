"""Throughput and latency of ShardedFaissIndex (not a test).

    python bench/bench_faiss.py                   # 10k and 100k vectors, dim 384
    python bench/bench_faiss.py --sizes 10000 --queries 100

For every size, layout (all vectors in one namespace, or spread over 100) and shard count it
reports: bulk upsert throughput (batches of --batch), single-query k=10 search latency p50/p99
(over one namespace, and over all 100 namespaces for the spread layout), the latency of
single-item writes (insert a new id, replace an existing one, delete one), flush/start times, and
the event loop's longest stall (ms) while a flush runs beside a search and an upsert.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.core.model.models import Layer, VectorItem  # noqa: E402
from stores.faiss_index import ShardedFaissIndex  # noqa: E402


def unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def pct(samples: list[float], p: float) -> float:
    return float(np.percentile(samples, p)) * 1000  # ms


async def timed(coros) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for make in coros:
        t = time.perf_counter()
        await make()
        out.append(time.perf_counter() - t)
    return out


async def flush_stall(index: ShardedFaissIndex, ns: str, fresh: np.ndarray) -> float:
    """The event loop's longest stall (ms) while a flush of a dirtied shard runs beside one
    search and one upsert (3 rounds): what every other request of the gateway waits."""
    loop = asyncio.get_running_loop()
    worst = 0.0
    for i, vector in enumerate(fresh):
        await index.upsert([VectorItem(f"stall-{i}", ns, Layer.SEMANTIC, vector)])  # dirty
        done = asyncio.Event()

        async def beat(done: asyncio.Event = done) -> float:
            lag = 0.0
            while not done.is_set():
                t = loop.time()
                await asyncio.sleep(0.001)
                lag = max(lag, loop.time() - t - 0.001)
            return lag

        heartbeat = asyncio.ensure_future(beat())
        flush = asyncio.ensure_future(index.flush())
        await asyncio.sleep(0.002)
        await asyncio.gather(
            flush,
            index.search(vector, [ns], 10),
            index.upsert([VectorItem(f"stall-x{i}", ns, Layer.SEMANTIC, vector)]),
        )
        done.set()
        worst = max(worst, await heartbeat)
    await index.flush()  # what the rounds wrote after their flush started
    return worst * 1000


async def run_case(
    n: int,
    n_ns: int,
    shards: int,
    dim: int,
    batch: int,
    queries: int,
    persist: bool,
    threads: int | None,
) -> dict[str, float]:
    rng = np.random.default_rng(7)
    vectors = unit(rng, n, dim)
    namespaces = [f"ns-{i:03d}" for i in range(n_ns)]
    items = [
        VectorItem(f"m-{i}", namespaces[i % n_ns], Layer.SEMANTIC, vectors[i]) for i in range(n)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        index = ShardedFaissIndex(
            Path(tmp) if persist else None, dim=dim, shards=shards, threads=threads
        )
        await index.start()
        t = time.perf_counter()
        for i in range(0, n, batch):
            await index.upsert(items[i : i + batch])
        upsert_s = time.perf_counter() - t

        qs = unit(rng, queries, dim)
        for q in qs[:5]:  # warm up
            await index.search(q, namespaces[:1], 10)
        one = await timed(lambda q=q: index.search(q, namespaces[:1], 10) for q in qs)
        res = {
            "upsert_per_s": n / upsert_s,
            "one_p50": pct(one, 50),
            "one_p99": pct(one, 99),
        }
        if n_ns > 1:
            every = await timed(lambda q=q: index.search(q, namespaces, 10) for q in qs)
            res |= {"all_p50": pct(every, 50), "all_p99": pct(every, 99)}

        fresh = unit(rng, 50, dim)
        ins = await timed(
            lambda i=i: index.upsert(
                [VectorItem(f"new-{i}", namespaces[0], Layer.SEMANTIC, fresh[i])]
            )
            for i in range(50)
        )
        rep = await timed(
            lambda i=i: index.upsert(
                [VectorItem(f"m-{i * n_ns}", namespaces[0], Layer.SEMANTIC, fresh[i])]
            )
            for i in range(50)
        )
        dele = await timed(lambda i=i: index.delete([f"new-{i}"]) for i in range(50))
        res |= {
            "insert1_p50": pct(ins, 50),
            "replace1_p50": pct(rep, 50),
            "delete1_p50": pct(dele, 50),
        }

        if persist:
            t = time.perf_counter()
            await index.flush()
            res["flush_s"] = time.perf_counter() - t
            res["stall_ms"] = await flush_stall(index, namespaces[0], unit(rng, 3, dim))
            again = ShardedFaissIndex(Path(tmp), dim=dim, shards=shards)
            t = time.perf_counter()
            await again.start()
            res["start_s"] = time.perf_counter() - t
            assert not again.needs_rebuild() and await again.count() == await index.count()
    return res


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--namespaces", type=int, nargs="+", default=[1, 100])
    ap.add_argument("--shards", type=int, nargs="+", default=[1, 16])
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--threads", type=int, default=1, help="faiss OpenMP threads, 0 = default")
    ap.add_argument("--no-persist", action="store_true", help="skip flush/start timing")
    args = ap.parse_args()

    cols = [
        ("upsert_per_s", "upsert/s", "{:>9.0f}"),
        ("one_p50", "1ns p50", "{:>8.3f}"),
        ("one_p99", "1ns p99", "{:>8.3f}"),
        ("all_p50", "100ns p50", "{:>9.3f}"),
        ("all_p99", "100ns p99", "{:>9.3f}"),
        ("insert1_p50", "ins1 p50", "{:>8.3f}"),
        ("replace1_p50", "repl1 p50", "{:>9.3f}"),
        ("delete1_p50", "del1 p50", "{:>8.3f}"),
        ("flush_s", "flush s", "{:>7.2f}"),
        ("stall_ms", "loop stall", "{:>10.1f}"),
        ("start_s", "start s", "{:>7.2f}"),
    ]
    threads = args.threads or None
    print(
        f"dim={args.dim} batch={args.batch} queries={args.queries} threads={threads}"
        " (latencies in ms)"
    )
    print(f"{'vectors':>8} {'ns':>4} {'shards':>6} " + " ".join(h for _, h, _ in cols))
    for n in args.sizes:
        for n_ns in args.namespaces:
            for shards in args.shards:
                r = await run_case(
                    n,
                    n_ns,
                    shards,
                    args.dim,
                    args.batch,
                    args.queries,
                    not args.no_persist,
                    threads,
                )
                cells = [
                    fmt.format(r[key]) if key in r else " " * len(head) for key, head, fmt in cols
                ]
                print(f"{n:>8} {n_ns:>4} {shards:>6} " + " ".join(cells), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
