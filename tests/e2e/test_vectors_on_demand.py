"""Vectors loaded on demand with a budget so small that namespaces are evicted and loaded again
between recalls (``stores/vector_cache.py``): a write acknowledged with ``wait=True`` is recalled
at once on every replica, whether the replica holds its namespace or not; a forget and an erasure
reach every cached copy; results equal those of a full copy. Embedded (one gateway) and Redis +
Neo4j (two replicas)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.client import GatewayClient
from tests.e2e.conftest import gateway_settings, running_gateway
from tests.e2e.gateways import fleet
from tests.tags import fresh_tag

pytestmark = pytest.mark.timeout(300)

#: 1 MB holds ~470 384-d vectors (2.2 KB each): three namespaces of 250 cannot stay together
PER_NAMESPACE = 250
WORDS = [
    "harbour",
    "lantern",
    "violin",
    "orchard",
    "glacier",
    "tram",
    "bakery",
    "comet",
    "falcon",
    "meadow",
]


@pytest.fixture(scope="module", params=["embedded", pytest.param("real", marks=pytest.mark.real)])
def gateways(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[str]]:
    root = tmp_path_factory.mktemp("ondemand")
    if request.param == "embedded":
        settings = gateway_settings(root, vectors="on_demand", vector_cache_mb=1, vector_pinned="")
        with running_gateway(settings) as gw:
            yield [gw.address]
        return
    redis_url, neo4j_uri = (
        request.getfixturevalue("redis_url"),
        request.getfixturevalue("neo4j_uri"),
    )
    flags = ["--journal", "redis", "--redis-url", redis_url, "--neo4j-uri", neo4j_uri]
    env = {
        "MEMGATE_REDIS_JOURNAL_PREFIX": f"mgtest-{fresh_tag(10)}",
        "MEMGATE_VECTORS": "on_demand",
        "MEMGATE_VECTOR_CACHE_MB": "1",
        "MEMGATE_VECTOR_PINNED": "",
        "MEMGATE_RECALL_CACHE_TTL_S": "0",
    }
    with fleet(root, 2, flags, env) as gws:
        yield gws.addresses


def fill(c: GatewayClient, ns: str) -> None:
    items = [
        {"namespace": ns, "layer": "semantic",
         "content": f"note {i} of {ns}: {WORDS[i % 10]} {WORDS[(i * 7) % 10]} {fresh_tag(6)}"}
        for i in range(PER_NAMESPACE)
    ]  # fmt: skip
    for start in range(0, len(items), 125):
        c.batch_write(items[start : start + 125], wait=True)


def test_evicted_namespaces_keep_read_your_write_and_erasure(gateways: list[str]) -> None:
    clients = [GatewayClient(a, agent_id="master", timeout=30) for a in gateways]
    try:
        first, last = clients[0], clients[-1]
        spaces = [f"user/od-{fresh_tag(8)}-{i}" for i in range(3)]
        for ns in spaces:
            fill(first, ns)
        for c in clients:  # every replica loads all three in turn: the budget cannot hold them
            for ns in spaces:
                assert len(c.recall("lantern violin", [ns], top_k=5).hits) == 5
            assert c.stats().vectors < 3 * PER_NAMESPACE  # some were evicted

        # read-your-write into an evicted namespace, acknowledged by one replica, on every one
        for i, writer in enumerate(clients * 2):
            text = f"the spare key number {i} hangs behind the {fresh_tag(8)} mirror"
            mid = writer.write(spaces[0], "semantic", text, wait=True)
            for reader in clients:
                for ns in spaces[1:]:  # push the first namespace out again
                    reader.recall("glacier comet", [ns], top_k=3)
                hits = reader.recall(text, [spaces[0]], top_k=3).hits
                assert hits and hits[0].id == mid, (i, reader)

        # a forget on one replica, held or not by the others: gone from every recall
        victim = last.recall("glacier comet", [spaces[1]], top_k=1).hits[0]
        for c in clients:
            c.recall("orchard", [spaces[1]], top_k=3)  # held everywhere now
        first.forget(victim.id, reason="test")
        for c in clients:
            assert victim.id not in {
                h.id for h in c.recall(victim.content, [spaces[1]], top_k=10).hits
            }
            c.recall("falcon", [spaces[2]], top_k=3)
            c.recall("falcon", [spaces[0]], top_k=3)  # spaces[1] evicted, then read again
            assert victim.id not in {
                h.id for h in c.recall(victim.content, [spaces[1]], top_k=10).hits
            }

        # an erased namespace: nothing from any replica, held or evicted
        last.forget_namespace(spaces[2], reason="test", wait=True)
        for c in clients:
            assert c.recall("lantern violin falcon", [spaces[2]], top_k=5).hits == []
            c.recall("meadow", [spaces[0]], top_k=3)
            c.recall("meadow", [spaces[1]], top_k=3)
            assert c.recall("lantern violin falcon", [spaces[2]], top_k=5).hits == []
    finally:
        for c in clients:
            c.close()


def test_results_equal_a_full_copy(tmp_path: Path) -> None:
    """The same records recalled by a gateway holding every vector and by one loading them on
    demand under a budget that evicts: the same hits in the same order."""
    settings = gateway_settings(tmp_path, vectors="full")
    spaces = [f"user/eq-{i}" for i in range(3)]
    questions = ["lantern violin", "glacier tram", "falcon meadow", "bakery comet orchard"]
    with running_gateway(settings) as gw, gw.client() as c:
        for ns in spaces:
            fill(c, ns)
        want = [
            [h.id for h in c.recall(q, [ns], top_k=10).hits] for q in questions for ns in spaces
        ]
    lazy = gateway_settings(tmp_path, vectors="on_demand", vector_cache_mb=1, vector_pinned="")
    with running_gateway(lazy) as gw, gw.client() as c:
        got = [[h.id for h in c.recall(q, [ns], top_k=10).hits] for q in questions for ns in spaces]
        assert c.stats().vectors < 3 * PER_NAMESPACE
    assert got == want
