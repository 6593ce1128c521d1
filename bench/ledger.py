"""Latency of the control ledger's operations: the embedded SQLite file against the Redis ledger
replicas share (one server, or a Redis Cluster with ``--cluster``).

    python -m bench.ledger --redis-url redis://127.0.0.1:6390/0 --ops 300

Each operation runs ``--ops`` times, one at a time (the latency one request adds), in a fresh
SQLite file and under a fresh Redis prefix (deleted at the end). Loopback only, bounded; the load
average is printed (on a shared host the absolute figures move a lot).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

from gateway.core.model.commands import MemoryWrite
from gateway.core.model.control import AuditEntry, Proposal, ReviewItem
from gateway.core.model.models import Layer, Turn
from gateway.core.ports.ports import Ledger
from stores.redis_ledger import RedisLedger
from stores.sqlite_ledger import SqliteLedger


def _ops(ledger: Ledger) -> dict[str, Callable[[int], Awaitable[object]]]:
    item = MemoryWrite("user/bench", Layer.SEMANTIC, "the user likes tea")
    return {
        "audit (1 row)": lambda i: ledger.audit([AuditEntry("a", "write", "user/bench", f"w{i}", "x")]),
        "query_audit (ns, 20)": lambda i: ledger.query_audit("", "user/bench", 0.0, 20),
        "add_proposal": lambda i: ledger.add_proposal(Proposal(f"p{i}", "coder", item)),
        "list_proposals (20)": lambda i: ledger.list_proposals("pending", 20),
        "decide_proposal": lambda i: ledger.decide_proposal(f"p{i}", "approved", "master", "", f"m{i}"),
        "add_review": lambda i: ledger.add_review([ReviewItem(f"m{i}", "user/bench", "check")]),
        "see_fact": lambda i: ledger.see_fact(f"f{i}", "user/bench", f"k{i % 50}", "f", f"s{i}", ["e"], 0.6),
        "record_turns (1)": lambda i: ledger.record_turns("user/bench", f"s{i % 20}", [Turn(f"t{i}", "user", "hello there")]),
        "unformed_turns": lambda i: ledger.unformed_turns("user/bench", f"s{i % 20}"),
        "resolve_many (10)": lambda i: ledger.resolve_many([f"w{j}" for j in range(10)]),
        "update_step": lambda i: ledger.update_step("t", i % 10, "running", "", ""),
    }  # fmt: skip


async def measure(ledger: Ledger, ops: int) -> dict[str, tuple[float, float]]:
    await ledger.start()
    await ledger.start_task("t", [f"s{i}" for i in range(10)])
    out = {}
    try:
        for name, op in _ops(ledger).items():
            took = []
            for i in range(ops):
                started = time.perf_counter()
                await op(i)
                took.append((time.perf_counter() - started) * 1000)
            took.sort()
            out[name] = (statistics.median(took), took[int(len(took) * 0.99) - 1])
    finally:
        await ledger.close()
    return out


async def main(args: argparse.Namespace) -> None:
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {args.ops} ops each")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        results["sqlite"] = await measure(SqliteLedger(Path(tmp) / "ledger.db"), args.ops)
    prefix = f"mgbench-{uuid.uuid4().hex[:8]}"
    redis = RedisLedger(args.redis_url, prefix=prefix, cluster=args.cluster)
    try:
        results["redis"] = await measure(redis, args.ops)
    finally:
        await _drop(args.redis_url, prefix, args.cluster)
    print(f"{'operation':24} {'sqlite p50/p99 ms':>18} {'redis p50/p99 ms':>18}")
    for name in results["sqlite"]:
        a, b = results["sqlite"][name], results["redis"][name]
        print(f"{name:24} {a[0]:8.2f} /{a[1]:7.2f} {b[0]:8.2f} /{b[1]:7.2f}")


async def _drop(url: str, prefix: str, cluster: bool) -> None:
    from stores.redis_client import connect, disconnect

    r = connect(url, cluster)
    keys = [k async for k in r.scan_iter(match=f"{prefix}:*", count=1000)]
    for k in keys:
        await r.delete(k)
    await disconnect(r, cluster)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    p.add_argument("--cluster", action="store_true")
    p.add_argument("--ops", type=int, default=300)
    asyncio.run(main(p.parse_args()))
