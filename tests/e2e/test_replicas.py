"""Gateway replicas on one Redis (journal, working memory, index changes) and one Neo4j, each
with its own data dir (FAISS shards): a write acknowledged with ``wait=True`` by one replica is
seen by a recall on every other (read-your-writes across replicas), a retry on another replica
stores nothing twice, and a forget anywhere hides the memory everywhere."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis

from gateway.client import GatewayClient
from tests.e2e.gateways import Fleet, fleet

pytestmark = [pytest.mark.real, pytest.mark.slow]


@pytest.fixture
def replicas(tmp_path: Path, redis_url: str, neo4j_uri: str) -> Iterator[Fleet]:
    prefix = f"mgtest-{uuid.uuid4().hex[:10]}"
    flags = ["--journal", "redis", "--redis-url", redis_url, "--neo4j-uri", neo4j_uri]
    env = {"MEMGATE_REDIS_JOURNAL_PREFIX": prefix, "MEMGATE_REDIS_JOURNAL_LEASE_MS": "1500"}
    with fleet(tmp_path, 3, flags, env) as gws:
        yield gws
    r = Redis.from_url(redis_url)
    keys = list(r.scan_iter(match=f"{prefix}:*", count=1000))
    if keys:
        r.delete(*keys)
    r.close()


def test_a_write_acknowledged_by_one_replica_is_recalled_by_the_others(replicas: Fleet) -> None:
    ns = f"user/u-{uuid.uuid4().hex[:10]}"
    clients = [GatewayClient(a, agent_id="master", timeout=20) for a in replicas.addresses]
    try:
        before = [c.stats().vectors for c in clients]
        for i in range(6):  # each replica writes; every other one must see it at once
            writer = clients[i % 3]
            text = f"the {i}th replica fact is about {uuid.uuid4().hex[:8]} lighthouses"
            mid = writer.write(ns, "semantic", text, wait=True, idempotency_key=f"k{i}")
            for reader in clients:
                hits = reader.recall(text, [ns], top_k=3).hits
                assert hits and hits[0].id == mid, (i, replicas.addresses)
            # the same write retried on another replica: the same id, stored once
            again = clients[(i + 1) % 3].write_result(
                ns, "semantic", text, wait=True, idempotency_key=f"k{i}"
            )
            assert again.duplicate and again.id == mid
        listed = clients[2].recall("replica fact lighthouses", [ns], top_k=20).hits
        assert len({h.id for h in listed}) == 6
        # every replica's own vector index holds all six (not just the ones it applied)
        assert [c.stats().vectors - b for c, b in zip(clients, before, strict=True)] == [6] * 3
        # forgotten on one replica: gone from every replica's recall
        gone = listed[0]
        clients[0].forget(gone.id, reason="test")
        for reader in clients:
            ids = {h.id for h in reader.recall(gone.content, [ns], top_k=10).hits}
            assert gone.id not in ids
        assert [c.stats().vectors - b for c, b in zip(clients, before, strict=True)] == [5] * 3
    finally:
        for c in clients:
            c.close()
