"""Failover (loopback, bounded): 3 gateway replicas on one Redis and one Neo4j, 8 writers and
8 readers through the load-balancing client; one replica is killed with SIGKILL mid-load. Every
acknowledged write is present exactly once, reads go on on the survivors, and the dead
replica's unacknowledged journal entries are reclaimed and applied. Then the same with the
Redis server (a private one, AOF with fsync always) restarted mid-load.

Reduced size by default; the full size: ``MEMGATE_FAILOVER_WRITES=500 python -m pytest
tests/e2e/test_failover.py`` (writes per writer)."""

from __future__ import annotations

import os
import shutil
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis

from gateway.client import GatewayClient
from tests.e2e.gateways import Fleet, PrivateRedis, fleet, free_port
from tests.tags import fresh_tag

pytestmark = [pytest.mark.real, pytest.mark.slow]

WRITERS = READERS = 8
WRITES = int(os.environ.get("MEMGATE_FAILOVER_WRITES", "30"))  # per writer
#: how long the threads wait for each other at the half-way mark: half the writes of every writer
#: must be done by then, so it grows with their number (a busy machine takes ~0.5 s a write)
HALF_WAY_S = 60 + WRITES * 1.0
PARTITIONS = 8


@pytest.fixture
def prefix() -> str:
    return f"mgtest-{fresh_tag(10)}"


@pytest.fixture
def replicas(tmp_path: Path, redis_url: str, neo4j_uri: str, prefix: str) -> Iterator[Fleet]:
    flags = ["--journal", "redis", "--redis-url", redis_url, "--neo4j-uri", neo4j_uri]
    env = {
        "MEMGATE_REDIS_JOURNAL_PREFIX": prefix,
        "MEMGATE_REDIS_JOURNAL_PARTITIONS": str(PARTITIONS),
        "MEMGATE_REDIS_JOURNAL_LEASE_MS": "1500",
        "MEMGATE_MAX_INFLIGHT_WRITES_PER_AGENT": "64",
        "MEMGATE_MAX_INFLIGHT_READS_PER_AGENT": "64",
    }
    with fleet(tmp_path, 3, flags, env) as gws:
        yield gws
    r = Redis.from_url(redis_url)
    keys = list(r.scan_iter(match=f"{prefix}:*", count=1000))
    if keys:
        r.delete(*keys)
    r.close()


def _unacked(r: Redis, prefix: str) -> dict[str, int]:
    """Journal entries delivered to a replica but not applied yet, per replica."""
    out: dict[str, int] = {}
    for p in range(PARTITIONS):
        for c in r.xinfo_consumers(f"{prefix}:{{j{p}}}:s", "apply"):
            name = c["name"].decode() if isinstance(c["name"], bytes) else c["name"]
            out[name] = out.get(name, 0) + int(c["pending"])
    return out


def _stored(c: GatewayClient, namespaces: list[str]) -> tuple[list[str], dict[str, int]]:
    """The ids stored in the namespaces, and how often each "writer w note i" mark occurs."""
    ids: list[str] = []
    marks: dict[str, int] = {}  # one per write, whatever redaction did to the rest
    for m in c.export(namespaces):
        ids.append(m.versions[-1].id)
        mark = m.versions[-1].content.split(" ", 1)[1]
        marks[mark] = marks.get(mark, 0) + 1
    return ids, marks


@pytest.mark.timeout(max(300, WRITES * 3))  # the fleet's start included
def test_kill_one_replica_mid_load(replicas: Fleet, redis_url: str, prefix: str) -> None:
    namespaces = [f"user/f-{fresh_tag(8)}-{w}" for w in range(WRITERS)]
    acked: dict[str, tuple[str, str]] = {}  # id -> (namespace, content)
    errors: list[str] = []
    reads = [0]
    lock = threading.Lock()
    stop_reading = threading.Event()
    half = threading.Barrier(WRITERS + 1)

    def writer(w: int) -> None:
        ns = namespaces[w]
        with GatewayClient(replicas.addresses, agent_id="master", timeout=20, retries=6) as c:
            for i in range(WRITES):
                if i == WRITES // 2:
                    half.wait(
                        HALF_WAY_S
                    )  # the kill happens here, with writes in flight on every side
                content = f"{uuid.uuid4().hex} writer {w} note {i}"
                try:
                    mid = c.write(ns, "semantic", content, wait=(i % 4 == 0),
                                  idempotency_key=f"{w}-{i}")  # fmt: skip
                except Exception as exc:  # noqa: BLE001 - counted: must stay zero
                    with lock:
                        errors.append(f"write {w}-{i}: {exc}")
                    continue
                with lock:
                    acked[mid] = (ns, content)

    def reader(n: int) -> None:
        with GatewayClient(replicas.addresses, agent_id="master", timeout=20, retries=6) as c:
            while not stop_reading.is_set():
                try:
                    c.recall("writer note", [namespaces[n % WRITERS]], top_k=5)
                    with lock:
                        reads[0] += 1
                except Exception as exc:  # noqa: BLE001 - counted: must stay zero
                    with lock:
                        errors.append(f"read {n}: {exc}")

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
    threads += [threading.Thread(target=reader, args=(n,)) for n in range(READERS)]
    start = time.monotonic()
    for t in threads:
        t.start()
    half.wait(HALF_WAY_S + 60)
    r = Redis.from_url(redis_url)
    victim = replicas.gateways[1]
    victim.kill()  # mid-load: it may hold journal entries it had not applied yet
    victim_name = f"{victim.log.parent.name}-gw1"
    held_at_kill = _unacked(r, prefix).get(victim_name, 0)
    reads_at_kill = reads[0]
    for t in threads[:WRITERS]:
        t.join(300)
    time.sleep(1.0)
    stop_reading.set()
    for t in threads[WRITERS:]:
        t.join(60)
    elapsed = time.monotonic() - start
    assert not errors, errors[:5]
    assert len(acked) == WRITERS * WRITES  # every write acknowledged, each with its own id
    assert reads[0] > reads_at_kill  # reads went on after the kill

    survivor = GatewayClient(replicas.gateways[0].address, agent_id="master", timeout=30)
    deadline = time.monotonic() + 60
    while survivor.stats().journal_pending and time.monotonic() < deadline:
        time.sleep(0.5)  # the dead replica's leases expire; its entries are reclaimed
    assert survivor.stats().journal_pending == 0
    assert _unacked(r, prefix).get(victim_name, 0) == 0
    ids, marks = _stored(survivor, namespaces)
    survivor.close()
    r.close()
    assert sorted(ids) == sorted(acked)  # every acknowledged write is there, nothing else ...
    assert len(marks) == WRITERS * WRITES and set(marks.values()) == {1}  # ... exactly once
    print(
        f"failover: {len(acked)} writes, {reads[0]} reads in {elapsed:.1f}s; "
        f"{held_at_kill} entries held by the killed replica, reclaimed"
    )


@pytest.mark.timeout(300)
def test_redis_restart_mid_load(tmp_path: Path, neo4j_uri: str) -> None:
    """Redis (AOF, appendfsync always) restarted under load: writes ride it out on retries,
    and every acknowledged one is stored exactly once."""
    if not shutil.which("redis-server"):
        pytest.skip("redis-server not installed (Debian: apt-get install redis-server)")
    redis = PrivateRedis(free_port(), tmp_path / "redis")
    redis.start()
    flags = ["--journal", "redis", "--redis-url", redis.url, "--neo4j-uri", neo4j_uri]
    env = {"MEMGATE_REDIS_JOURNAL_LEASE_MS": "1500"}
    writers, writes = 4, 20
    namespaces = [f"user/r-{fresh_tag(8)}-{w}" for w in range(writers)]
    acked: list[str] = []
    errors: list[str] = []
    half = threading.Barrier(writers + 1)

    def writer(w: int, addresses: list[str]) -> None:
        with GatewayClient(addresses, agent_id="master", timeout=20, retries=8) as c:
            for i in range(writes):
                if i == writes // 2:
                    half.wait(120)
                try:
                    acked.append(
                        c.write(
                            namespaces[w],
                            "semantic",
                            f"{uuid.uuid4().hex} writer {w} note {i}",
                            wait=(i % 4 == 0),
                            idempotency_key=f"{w}-{i}",
                        )  # fmt: skip
                    )
                except Exception as exc:  # noqa: BLE001 - counted: must stay zero
                    errors.append(f"write {w}-{i}: {exc}")

    try:
        with fleet(tmp_path / "gws", 3, flags, env) as gws:
            threads = [
                threading.Thread(target=writer, args=(w, gws.addresses)) for w in range(writers)
            ]
            for t in threads:
                t.start()
            half.wait(120)
            redis.stop()  # writes in flight now fail over to retries
            time.sleep(1.0)
            redis.start()  # the AOF brings back every acknowledged entry
            for t in threads:
                t.join(240)
            assert not errors, errors[:5]
            assert len(acked) == writers * writes
            with GatewayClient(gws.addresses[0], agent_id="master", timeout=30) as c:
                deadline = time.monotonic() + 60
                while c.stats().journal_pending and time.monotonic() < deadline:
                    time.sleep(0.5)
                assert c.stats().journal_pending == 0
                ids, marks = _stored(c, namespaces)
            assert sorted(ids) == sorted(acked)
            assert len(marks) == writers * writes and set(marks.values()) == {1}
    finally:
        redis.stop()
