"""End-to-end gateway benchmark over gRPC on loopback.

Measures, with the configured embedder (default: the real all-MiniLM-L6-v2):
  - batch write throughput: acknowledged writes/s and applied (embedded + stored + indexed) writes/s;
  - recall latency p50/p99 (client-side, cache disabled) at the given population, for each shard
    count (the same data, the FAISS index rebuilt from the records at each restart).

    python bench/bench_gateway.py --memories 10000
    python bench/bench_gateway.py --memories 100000 --shards 1,16
    python bench/bench_gateway.py --memories 10000 --redis-url redis://127.0.0.1:6379/0 \
        --neo4j-uri bolt://127.0.0.1:7687

Bounded: traffic goes to 127.0.0.1 only, a fixed number of writes and queries.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.client import GatewayClient  # noqa: E402
from gateway.embedding.factory import EMBEDDER_KINDS  # noqa: E402
from gateway.rpc.server import serve_in_thread  # noqa: E402
from gateway.settings import DEFAULT_EMBEDDER, Settings  # noqa: E402

SUBJECTS = ["the user", "Alice", "the team", "the client", "our manager", "the researcher", "Bob"]
VERBS = [
    "booked",
    "reviewed",
    "cancelled",
    "planned",
    "asked about",
    "finished",
    "discussed",
    "compared",
    "rejected",
    "approved",
    "ordered",
    "wrote",
]
OBJECTS = [
    "a flight to Tokyo",
    "the quarterly report",
    "a vegetarian dinner",
    "the API migration",
    "a hotel near the station",
    "the market study",
    "a birthday gift",
    "the data pipeline",
    "a dentist appointment",
    "the budget sheet",
    "a jazz concert",
    "the onboarding guide",
    "a train to Berlin",
    "the design review",
    "a pizza order",
    "the security audit",
]
DETAILS = [
    "on Monday",
    "for next week",
    "with two colleagues",
    "after lunch",
    "in the evening",
    "before the deadline",
    "for the third time",
    "at the customer's request",
    "remotely",
    "in Chinese",
    "with a discount",
    "as discussed",
]
QUERIES = [
    "what did the user book",
    "report review status",
    "dinner preferences",
    "travel plans to Japan",
    "what happened with the migration",
    "upcoming appointments",
    "who approved the budget",
    "concert tickets",
    "what was cancelled",
    "hotel choices",
]


def sentence(rng: random.Random, i: int) -> str:
    return (
        f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} "
        f"{rng.choice(DETAILS)} (note {i})"
    )


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    k = max(0, min(len(values) - 1, round(p / 100 * (len(values) - 1))))
    return values[k]


def populate(client: GatewayClient, n: int, namespaces: list[str], batch: int) -> dict[str, float]:
    rng = random.Random(7)
    start = time.perf_counter()
    done = 0
    last_report = start
    while done < n:
        items = []
        for i in range(done, min(n, done + batch)):
            layer = "semantic" if i % 5 == 0 else "episodic"
            items.append(
                dict(
                    namespace=namespaces[i % len(namespaces)],
                    layer=layer,
                    content=sentence(rng, i),
                    importance=0.5,
                )
            )
        client.batch_write(items)
        done += len(items)
        if time.perf_counter() - last_report > 5:
            last_report = time.perf_counter()
            print(f"  acknowledged {done}/{n} writes", flush=True)
    acked = time.perf_counter() - start
    while True:
        pending = client.stats().journal_pending
        if pending == 0:
            break
        if time.perf_counter() - last_report > 5:
            last_report = time.perf_counter()
            print(f"  applying: {pending} writes still in the journal", flush=True)
        time.sleep(0.2)
    applied = time.perf_counter() - start
    return {
        "writes": n,
        "ack_per_s": n / acked,
        "applied_per_s": n / applied,
        "ack_s": acked,
        "applied_s": applied,
    }


def recall_latency(client: GatewayClient, namespaces: list[str], queries: int) -> dict[str, float]:
    rng = random.Random(11)
    for _ in range(10):  # warm-up
        client.recall(rng.choice(QUERIES), namespaces=[rng.choice(namespaces)], top_k=10)
    times = []
    for i in range(queries):
        q = f"{rng.choice(QUERIES)} {i}"
        t = time.perf_counter()
        client.recall(q, namespaces=[rng.choice(namespaces)], top_k=10)
        times.append((time.perf_counter() - t) * 1000)
    return {
        "queries": queries,
        "p50_ms": percentile(times, 50),
        "p99_ms": percentile(times, 99),
        "mean_ms": statistics.fmean(times),
    }


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--namespaces", type=int, default=100)
    ap.add_argument("--shards", default="1,16", help="comma-separated shard counts to compare")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--embedder", default=DEFAULT_EMBEDDER, choices=list(EMBEDDER_KINDS))
    ap.add_argument("--redis-url", default="")
    ap.add_argument("--neo4j-uri", default="")
    ap.add_argument("--data-dir", default="", help="default: a temporary directory")
    ap.add_argument("--out", default="", help="write the figures as JSON here")
    args = ap.parse_args()

    shard_counts = [int(s) for s in args.shards.split(",")]
    namespaces = [f"user/bench-{i}" for i in range(args.namespaces)]
    tmp = tempfile.TemporaryDirectory(prefix="memgate-bench-")
    data_dir = Path(args.data_dir or tmp.name)
    base = Settings(
        port=0,
        data_dir=data_dir,
        embedder=args.embedder,
        shards=shard_counts[0],
        redis_url=args.redis_url,
        neo4j_uri=args.neo4j_uri,
        recall_cache_ttl_s=0.0,
        apply_batch=256,
    )
    backend = "redis+neo4j" if args.neo4j_uri else "embedded"
    if args.neo4j_uri:
        # a shared Neo4j may hold earlier runs: fresh namespaces per run
        run = time.strftime("%H%M%S")
        namespaces = [f"user/bench-{run}-{i}" for i in range(args.namespaces)]
    result: dict[str, object] = {
        "backend": backend,
        "embedder": args.embedder,
        "memories": args.memories,
        "namespaces": args.namespaces,
    }
    print(
        f"memgate bench: {args.memories} memories over {args.namespaces} namespaces, "
        f"embedder {args.embedder}, backend {backend}, data in {data_dir}",
        flush=True,
    )
    with (
        serve_in_thread(base) as target,
        GatewayClient(target, agent_id="master", timeout=120) as c,
    ):
        print(f"populating through BatchWrite ({args.batch} per call)…", flush=True)
        result["write"] = populate(c, args.memories, namespaces, args.batch)
        print(f"  {result['write']}", flush=True)
    recalls = {}
    for shards in shard_counts:
        settings = replace(base, shards=shards)
        t = time.perf_counter()
        with serve_in_thread(settings) as target, GatewayClient(target, agent_id="master") as c:
            startup = time.perf_counter() - t
            print(
                f"recall with {shards} shard(s) (start-up incl. index rebuild {startup:.1f}s)…",
                flush=True,
            )
            r = recall_latency(c, namespaces, args.queries)
            r["startup_s"] = startup
            recalls[str(shards)] = r
            print(f"  {r}", flush=True)
    result["recall"] = recalls
    print(json.dumps(result, indent=2))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
