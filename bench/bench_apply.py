"""Apply throughput vs the embedder alone, side by side in one run (issue 9, item 2).

    python -m bench.bench_apply [--backend embedded|real|both] [--writes 512] [--batch 64]
                                [--writers 2] [--rounds 2]

Seeded dialogue turns of 25-50 words (``bench.bench_embedder.make_turns``) are written as
long-term memories (half semantic, half episodic) with ``batch_write(wait=True)`` through the
public client, by ``--writers`` client threads, to a gateway on loopback. A call returns once
its writes are applied (embedded, reconciled, stored, indexed), so writes/s here is the applied
rate. The embedder floor is the gateway's own embedder kind, uncached, embedding the same texts in
chunks of ``apply_batch``: measured right before each gateway run, in the same process.

Real backend: Redis and Neo4j from ``MEMGATE_TEST_REDIS_URL`` / ``MEMGATE_TEST_NEO4J_URI`` (or
the flags); a fresh namespace per run, nothing is wiped. Bounded: a fixed number of writes.
Figures from a shared machine are noisy: compare the ratio, not the absolute rate.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import os
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from bench.bench_embedder import make_turns
from gateway.client import GatewayClient
from gateway.core.usecases.service import MemoryService
from gateway.core.writing.inputs import WriteInput
from gateway.embedding import build_embedder
from gateway.extractors.factory import build_formation
from gateway.rpc.server import serve_in_thread
from gateway.settings import DEFAULT_EMBEDDER, Settings
from gateway.wiring import build_stores
from stores.sqlite_journal import SqliteJournal
from stores.sqlite_ledger import SqliteLedger


def unique_turns(n: int, seed: int = 7) -> list[str]:
    """n distinct dialogue turns (a repeated text would be a cache hit and a dedup merge)."""
    out: list[str] = []
    seen: set[str] = set()
    k = n
    while len(out) < n:
        for t in make_turns(k * 2, seed):
            if t not in seen:
                seen.add(t)
                out.append(t)
        k *= 2
        seed += 1
    return out[:n]


def floor_seconds(emb: Any, texts: list[str], batch: int) -> float:
    """Seconds the embedder alone (no cache) takes for ``texts`` in chunks of the apply batch."""
    start = time.perf_counter()
    for i in range(0, len(texts), batch):
        emb.embed(texts[i : i + batch])
    return time.perf_counter() - start


def gateway_seconds(target: str, ns: str, texts: list[str], batch: int, writers: int) -> float:
    """Seconds to write ``texts`` through the gateway: ``writers`` client threads, each sending
    BatchWrite calls of ``batch`` items with wait=True (so a call returns once applied)."""
    chunks = [texts[i : i + batch] for i in range(0, len(texts), batch)]
    lock = threading.Lock()
    errors: list[BaseException] = []

    def writer() -> None:
        with GatewayClient(target, agent_id="master", timeout=300) as c:
            while True:
                with lock:
                    if not chunks:
                        return
                    chunk = chunks.pop(0)
                items = [
                    dict(
                        namespace=ns,
                        layer="semantic" if j % 2 else "episodic",
                        content=t,
                        session_id="s1",
                    )
                    for j, t in enumerate(chunk)
                ]
                try:
                    c.batch_write(items, wait=True)
                except BaseException as exc:  # noqa: BLE001 - reported below
                    errors.append(exc)
                    return

    threads = [threading.Thread(target=writer) for _ in range(writers)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    if errors:
        raise errors[0]
    return elapsed


def side_by_side(
    settings: Settings, texts: list[str], rounds: int, batch: int, writers: int
) -> tuple[float, float]:
    """(embedder floor /s, applied writes /s): the texts are split into ``rounds`` slices; each
    slice is embedded alone, then written through the gateway, so both see the same load."""
    emb = build_embedder(settings.embedder, cache_size=0, threads=settings.embed_threads)
    emb.embed(texts[:8])  # warm-up
    ns = f"user/apply-{uuid.uuid4().hex[:8]}"
    size = -(-len(texts) // rounds)
    floor_s = gateway_s = 0.0
    with serve_in_thread(settings) as target:
        with GatewayClient(target, agent_id="master", timeout=300) as warm:
            warm.batch_write(
                [
                    dict(namespace=ns + "-warm", layer="semantic", content=f"warm-up {i}")
                    for i in range(8)
                ],
                wait=True,
            )
        for r in range(rounds):
            part = texts[r * size : (r + 1) * size]
            floor_s += floor_seconds(emb, part, settings.apply_batch)
            gateway_s += gateway_seconds(target, ns, part, batch, writers)
    return len(texts) / floor_s, len(texts) / gateway_s


class PhaseTimer:
    """Wall time per store/embedder/journal method, for ``--phases`` (the apply path waits on
    I/O, so a CPU profiler alone does not show where a batch's time goes)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    def add(self, name: str, dt: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + dt
        self.calls[name] = self.calls.get(name, 0) + 1

    def wrap_async(self, obj: object, label: str) -> None:
        for name in dir(obj):
            fn = getattr(obj, name)
            if name.startswith("_") or not inspect.iscoroutinefunction(fn):
                continue

            async def timed(*a: Any, _fn: Any = fn, _n: str = f"{label}.{name}", **kw: Any) -> Any:
                t0 = time.perf_counter()
                try:
                    return await _fn(*a, **kw)
                finally:
                    self.add(_n, time.perf_counter() - t0)

            setattr(obj, name, timed)

    def wrap_embedder(self, emb: Any) -> None:
        inner = emb.embed

        def embed(texts: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return inner(texts)
            finally:
                self.add("embedder.embed", time.perf_counter() - t0)

        emb.embed = embed


async def phases(settings: Settings, texts: list[str], batch: int) -> None:
    """Writes ``texts`` through the core's Writer (wait=True), timing every store call."""
    timer = PhaseTimer()
    embedder = build_embedder(
        settings.embedder, cache_size=settings.embed_cache_size, threads=settings.embed_threads
    )
    timer.wrap_embedder(embedder)
    data = settings.data_dir
    formation = build_formation(settings)
    svc = MemoryService(
        settings=settings,
        stores=build_stores(settings, dim=embedder.dim),
        embedder=embedder,
        journal=SqliteJournal(data / "journal.db"),
        ledger=SqliteLedger(data / "ledger.db"),
        extractor=formation.extractor,
        rules=formation.rules,
        summariser=formation.summariser,
    )
    await svc.start()
    try:
        for store, label in zip(
            svc.stores.all(), ("working", "records", "graph", "index"), strict=True
        ):
            timer.wrap_async(store, label)
        timer.wrap_async(svc.journal, "journal")
        timer.wrap_async(svc.ledger, "ledger")
        ns = f"user/phases-{uuid.uuid4().hex[:8]}"
        start = time.perf_counter()
        for i in range(0, len(texts), batch):
            items = [
                WriteInput(
                    namespace=ns,
                    layer="semantic" if j % 2 else "episodic",
                    content=t,
                    session_id="s1",
                )
                for j, t in enumerate(texts[i : i + batch])
            ]
            await svc.writer.write("master", items, wait=True)
        total = time.perf_counter() - start
    finally:
        await svc.close()
    print(f"{len(texts)} writes in {total:.2f} s ({len(texts) / total:.1f}/s); wall time by call:")
    for name, sec in sorted(timer.seconds.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<28} {sec:7.2f} s {100 * sec / total:5.1f}%  {timer.calls[name]:5d} calls")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("embedded", "real", "both"), default="both")
    ap.add_argument("--writes", type=int, default=512)
    ap.add_argument("--batch", type=int, default=64, help="items per BatchWrite call")
    ap.add_argument("--writers", type=int, default=2, help="client threads")
    ap.add_argument(
        "--rounds", type=int, default=4, help="alternating floor / gateway slices per backend"
    )
    ap.add_argument("--apply-batch", type=int, default=Settings().apply_batch)
    ap.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    ap.add_argument("--embed-threads", type=int, default=0)
    ap.add_argument("--redis-url", default=os.environ.get("MEMGATE_TEST_REDIS_URL", ""))
    ap.add_argument("--neo4j-uri", default=os.environ.get("MEMGATE_TEST_NEO4J_URI", ""))
    ap.add_argument("--phases", action="store_true", help="time each store call in-process instead")
    args = ap.parse_args()

    texts = unique_turns(args.writes)
    backends = ["embedded", "real"] if args.backend == "both" else [args.backend]
    print(
        f"{len(texts)} distinct dialogue turns, BatchWrite of {args.batch} with wait=True from "
        f"{args.writers} client thread(s), apply_batch {args.apply_batch}, embedder "
        f"{args.embedder}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
        flush=True,
    )
    print(f"| {'backend':<11} | {'embedder floor /s':>17} | {'applied /s':>10} | {'ratio':>6} |")
    print("|-------------|-------------------|------------|--------|")
    for backend in backends:
        if backend == "real" and not (args.redis_url and args.neo4j_uri):
            print("| real        | (skipped: set MEMGATE_TEST_REDIS_URL and _NEO4J_URI) |")
            continue
        with tempfile.TemporaryDirectory(prefix="memgate-apply-") as tmp:
            settings = Settings(
                port=0,
                data_dir=Path(tmp),
                embedder=args.embedder,
                embed_threads=args.embed_threads,
                apply_batch=args.apply_batch,
                redis_url=args.redis_url if backend == "real" else "",
                neo4j_uri=args.neo4j_uri if backend == "real" else "",
                recall_cache_ttl_s=0.0,
            )
            if args.phases:
                print(f"{backend}:")
                asyncio.run(phases(settings, texts, args.batch))
                continue
            floor, rate = side_by_side(settings, texts, args.rounds, args.batch, args.writers)
        print(
            f"| {backend:<11} | {floor:>17.1f} | {rate:>10.1f} | {rate / floor:>5.0%} |",
            flush=True,
        )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
