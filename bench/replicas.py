"""Throughput of 1, 2 and 3 gateway replicas on one Redis (journal) and one Neo4j, through the
load-balancing client, against one gateway with the local SQLite journal on the same stores.

    python -m bench.replicas --redis-url redis://127.0.0.1:6390/0 \\
        --neo4j-uri bolt://127.0.0.1:7690 --replicas 1,2,3 --seconds 10

For each setup: ``--writers`` threads write (``wait=False``: acknowledged = journaled) unique
memories into their own namespaces while ``--readers`` threads recall from them, for ``--seconds``;
then the time until every acknowledged write is applied. The hash embedder is used so the figures
are the gateway's and the stores', not the embedder's. Loopback only, bounded; the load average is
printed (on a shared host the absolute figures move a lot). Keys live under a fresh prefix,
deleted at the end.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
import uuid
from pathlib import Path

from redis import Redis

from gateway.client import GatewayClient
from tests.e2e.gateways import fleet


def run(n: int, journal: str, args: argparse.Namespace, root: Path) -> dict[str, float]:
    prefix = f"mgbench-{uuid.uuid4().hex[:8]}"
    flags = ["--redis-url", args.redis_url, "--neo4j-uri", args.neo4j_uri, "--journal", journal]
    env = {
        "MEMGATE_REDIS_JOURNAL_PREFIX": prefix,
        "MEMGATE_MAX_INFLIGHT_WRITES_PER_AGENT": "64",
        "MEMGATE_MAX_INFLIGHT_READS_PER_AGENT": "64",
    }
    spaces = [f"user/bench-{uuid.uuid4().hex[:8]}-{w}" for w in range(args.writers)]
    writes = [0] * args.writers
    reads = [0] * args.readers
    errors = [0]
    stop = threading.Event()

    with fleet(root / f"{journal}-{n}", n, flags, env) as gws:
        time.sleep(2.0)  # the journal's partitions spread over the replicas (lease loop)

        def writer(w: int) -> None:
            with GatewayClient(gws.addresses, agent_id="master", timeout=30) as c:
                while not stop.is_set():
                    try:
                        c.write(spaces[w], "semantic", f"{uuid.uuid4().hex} bench note {w}")
                        writes[w] += 1
                    except Exception:  # noqa: BLE001
                        errors[0] += 1

        def reader(i: int) -> None:
            with GatewayClient(gws.addresses, agent_id="master", timeout=30) as c:
                while not stop.is_set():
                    try:
                        c.recall("bench note", [spaces[i % len(spaces)]], top_k=5)
                        reads[i] += 1
                    except Exception:  # noqa: BLE001
                        errors[0] += 1

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(args.writers)]
        threads += [threading.Thread(target=reader, args=(i,)) for i in range(args.readers)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        time.sleep(args.seconds)
        stop.set()
        for t in threads:
            t.join(60)
        load_window = time.monotonic() - t0
        with GatewayClient(gws.addresses[0], agent_id="master", timeout=30) as c:
            deadline = time.monotonic() + 300
            while c.stats().journal_pending and time.monotonic() < deadline:
                time.sleep(0.2)
        applied_in = time.monotonic() - t0
    r = Redis.from_url(args.redis_url)
    keys = list(r.scan_iter(match=f"{prefix}:*", count=1000))
    if keys:
        r.delete(*keys)
    r.close()
    return {
        "writes_per_s": sum(writes) / load_window,
        "applied_per_s": sum(writes) / applied_in,
        "recalls_per_s": sum(reads) / load_window,
        "errors": errors[0],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--redis-url", required=True)
    ap.add_argument("--neo4j-uri", required=True)
    ap.add_argument("--replicas", default="1,2,3")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--readers", type=int, default=8)
    ap.add_argument("--no-baseline", action="store_true", help="skip the SQLite-journal gateway")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()}; cores: {os.cpu_count()}")
    setups = [] if args.no_baseline else [("sqlite", 1)]
    setups += [("redis", int(n)) for n in args.replicas.split(",")]
    with tempfile.TemporaryDirectory(prefix="mgbench-") as tmp:
        for journal, n in setups:
            out = run(n, journal, args, Path(tmp))
            print(
                f"journal={journal:6} replicas={n}: {out['writes_per_s']:7.1f} writes/s acked, "
                f"{out['applied_per_s']:7.1f}/s applied, {out['recalls_per_s']:7.1f} recalls/s, "
                f"{out['errors']} errors; load average {os.getloadavg()[0]:.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
