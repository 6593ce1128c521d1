"""Store-level benchmarks against the real servers (loopback only, bounded counts).

- Neo4j: events/s recording N events in UNWIND batches of B versus one write per event;
- Redis: working-memory appends/s through RedisWorkingStore, 1 and 16 concurrent writers.

  deploy/services.sh up
  python bench/bench_backends.py --neo4j-uri bolt://127.0.0.1:7687 --redis-url redis://127.0.0.1:6379/0
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.core.model.models import Event, Turn  # noqa: E402
from stores.neo4j_graph import Neo4jEpisodicGraph  # noqa: E402
from stores.redis_working import RedisWorkingStore  # noqa: E402

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def events(n: int) -> list[Event]:
    ns = f"user/bench-{uuid.uuid4().hex[:8]}"
    sessions = [uuid.uuid4().hex for _ in range(50)]
    return [
        Event(
            id=uuid.uuid4().hex,
            namespace=ns,
            type="message",
            summary=f"event {i} about things",
            at=T0 + timedelta(seconds=i),
            agent_id=f"agent-{i % 5}",
            user_id=f"user-{i % 20}",
            session_id=sessions[i % 50],
            task_id=f"task-{i % 100}",
            entities=[f"Topic {i % 37}", f"Thing {i % 101}"],
        )
        for i in range(n)
    ]


async def bench_neo4j(uri: str, n: int, batch: int) -> dict[str, float]:
    graph = Neo4jEpisodicGraph(uri)
    await graph.start()
    try:
        await graph.record(events(500))  # warm the JVM and the query plans
        evs = events(n)
        t = time.perf_counter()
        for i in range(0, n, batch):
            await graph.record(evs[i : i + batch])
        batched = n / (time.perf_counter() - t)
        evs = events(n)
        t = time.perf_counter()
        for e in evs:
            await graph.record([e])
        single = n / (time.perf_counter() - t)
    finally:
        await graph.close()
    return {
        "events": n,
        "batch": batch,
        "unwind_events_per_s": batched,
        "single_events_per_s": single,
        "ratio": batched / single,
    }


async def bench_redis(url: str, n: int) -> dict[str, float]:
    store = RedisWorkingStore(url, ttl_seconds=1800)
    await store.start()
    out: dict[str, float] = {"appends": n}
    try:
        for writers in (1, 16):
            ns = f"user/bench-{uuid.uuid4().hex[:8]}"

            async def writer(w: int, count: int, ns: str = ns) -> None:
                for i in range(count):
                    turn = Turn(id=f"{w}-{i}", role="user", content=f"turn {i} of writer {w}")
                    await store.append(ns, f"s{w}", [turn], 200)

            t = time.perf_counter()
            await asyncio.gather(*(writer(w, n // writers) for w in range(writers)))
            out[f"appends_per_s_{writers}_writers"] = n / (time.perf_counter() - t)
            for w in range(writers):
                await store.clear(ns, f"s{w}")
    finally:
        await store.close()
    return out


async def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--neo4j-uri", default="")
    ap.add_argument("--redis-url", default="")
    ap.add_argument("--events", type=int, default=5000)
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument("--appends", type=int, default=5000)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    result: dict[str, object] = {}
    if args.neo4j_uri:
        print(
            f"neo4j: recording {args.events} events, UNWIND batches of {args.batch} vs one by one…",
            flush=True,
        )
        result["neo4j"] = await bench_neo4j(args.neo4j_uri, args.events, args.batch)
        print(f"  {result['neo4j']}", flush=True)
    if args.redis_url:
        print(f"redis: {args.appends} appends through RedisWorkingStore…", flush=True)
        result["redis"] = await bench_redis(args.redis_url, args.appends)
        print(f"  {result['redis']}", flush=True)
    if not result:
        ap.error("give --neo4j-uri and/or --redis-url")
    print(json.dumps(result, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
