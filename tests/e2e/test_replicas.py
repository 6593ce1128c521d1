"""Gateway replicas on one Redis (journal, ledger, working memory, index changes) and one Neo4j,
each with its own data dir (FAISS shards): a write acknowledged with ``wait=True`` by one replica
is seen by a recall on every other (read-your-writes across replicas), a retry on another replica
stores nothing twice, and a forget anywhere hides the memory everywhere. The ledger is shared: a
proposal made through one replica is decided through another, a session whose turns came through
several replicas (and outlived the replica that applied them) is mined as one, and every
replica's audit shows the others' entries."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from redis import Redis

from gateway import client as gc
from gateway.client import GatewayClient
from stores.redis_journal import partition_of
from tests.e2e.gateways import Fleet, fleet, spawn
from tests.tags import fresh_tag

T = TypeVar("T")

# the first test pays for starting the module's fleet (each replica rebuilds its index from Neo4j)
pytestmark = [pytest.mark.real, pytest.mark.slow, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def prefix() -> str:
    return f"mgtest-{fresh_tag(10)}"


@pytest.fixture(scope="module")
def flags(redis_url: str, neo4j_uri: str) -> list[str]:
    return ["--journal", "redis", "--redis-url", redis_url, "--neo4j-uri", neo4j_uri]


@pytest.fixture(scope="module")
def env(prefix: str) -> dict[str, str]:
    return {"MEMGATE_REDIS_JOURNAL_PREFIX": prefix, "MEMGATE_REDIS_JOURNAL_LEASE_MS": "1500"}


@pytest.fixture(scope="module")
def fleet_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("replicas")


@pytest.fixture(scope="module")
def replicas(
    fleet_dir: Path, redis_url: str, prefix: str, flags: list[str], env: dict[str, str]
) -> Iterator[Fleet]:
    """Three replicas shared by this module's tests (each works in fresh namespaces)."""
    with fleet(fleet_dir, 3, flags, env) as gws:
        yield gws
    r = Redis.from_url(redis_url)
    keys = list(r.scan_iter(match=f"{prefix}:*", count=1000))
    if keys:
        r.delete(*keys)
    r.close()


def test_a_write_acknowledged_by_one_replica_is_recalled_by_the_others(replicas: Fleet) -> None:
    ns = f"user/u-{fresh_tag(10)}"
    clients = [GatewayClient(a, agent_id="master", timeout=20) for a in replicas.addresses]
    try:
        before = [c.stats().vectors for c in clients]
        for i in range(6):  # each replica writes; every other one must see it at once
            writer = clients[i % 3]
            text = f"the {i}th replica fact is about {fresh_tag(8)} lighthouses"
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


def test_a_namespace_erased_on_one_replica_is_not_recalled_from_anothers_cache(
    replicas: Fleet,
) -> None:
    """Each replica answered (and cached) a recall; the namespace is erased through one of them:
    no replica answers the same recall from its cache afterwards (its records are gone, so a
    replica following the erasure's deletes cannot name their namespace)."""
    ns = f"user/u-{fresh_tag(10)}"
    clients = [GatewayClient(a, agent_id="master", timeout=20) for a in replicas.addresses]
    try:
        clients[0].write(ns, "semantic", "The spare key is under the blue flowerpot", wait=True)
        question = "where is the spare key"
        for reader in clients:
            assert reader.recall(question, [ns], top_k=3).hits
        clients[1].forget_namespace(ns, reason="test", wait=True)
        for i, reader in enumerate(clients):
            assert reader.recall(question, [ns], top_k=3).hits == [], i
    finally:
        for c in clients:
            c.close()


def _eventually(probe: Callable[[], T], ok: Callable[[T], bool], seconds: float = 15) -> T:
    deadline = time.monotonic() + seconds
    while True:
        got = probe()
        if ok(got) or time.monotonic() > deadline:
            return got
        time.sleep(0.1)


def test_a_proposal_made_on_one_replica_is_decided_on_another(replicas: Fleet) -> None:
    ns, sub = f"user/u-{fresh_tag(10)}", f"coder-{fresh_tag(6)}"
    a, b, c = replicas.addresses
    with (
        GatewayClient(a, agent_id=sub, timeout=20) as proposer,
        GatewayClient(b, agent_id="master", timeout=20) as master_b,
        GatewayClient(c, agent_id="master", timeout=20) as master_c,
    ):
        made = proposer.write_result(ns, "semantic", "The user prefers window seats", wait=True)
        assert made.id == "" and made.proposal_id
        listed = [p for p in master_b.proposals("pending") if p.item.namespace == ns]
        assert [(p.id, p.proposer) for p in listed] == [(made.proposal_id, sub)]
        approved = master_b.approve(made.proposal_id, reason="confirmed")
        assert approved.state == "approved" and approved.memory_id
        assert master_c.get(approved.memory_id).content == "The user prefers window seats"
        decided = [p for p in master_c.proposals("approved") if p.id == made.proposal_id]
        assert [(p.decided_by, p.memory_id) for p in decided] == [("master", approved.memory_id)]
        assert made.proposal_id not in {p.id for p in master_c.proposals("pending")}
        with pytest.raises(gc.FailedPrecondition, match="already"):
            master_c.reject(made.proposal_id)  # decided once, whichever replica is asked


def test_a_session_spread_over_replicas_is_mined_as_one(
    replicas: Fleet,
    fleet_dir: Path,
    redis_url: str,
    prefix: str,
    flags: list[str],
    env: dict[str, str],
) -> None:
    """Turns come through two replicas; then the replica applying the namespace's partition is
    replaced by a new process with an empty data dir; EndSession on a third mines every turn, and
    a fact said in two sessions is promoted (pending facts are shared too)."""
    ns = f"user/u-{fresh_tag(10)}"
    clients = [GatewayClient(x, agent_id="master", timeout=30) for x in replicas.addresses]
    try:
        clients[0].append_turn(ns, "s1", role="user", content="By the way, I'm vegetarian.")
        clients[0].append_turn(ns, "s1", role="assistant", content="Noted.")
        clients[1].append_turn(ns, "s1", role="user", content="How was your weekend?")
        window = _eventually(lambda: clients[2].window(ns, "s1"), lambda w: len(w) == 3)
        assert len(window) == 3
        # the replica applying this namespace's writes goes away, with its data dir
        lease = Redis.from_url(redis_url).get(f"{prefix}:{{j{partition_of(ns, 8)}}}:lease")
        owner = int(lease.decode().rsplit("-gw", 1)[1]) if lease else 0
        replicas.gateways[owner].stop()
        replicas.gateways[owner] = spawn(
            fleet_dir / f"gw{owner}-{fresh_tag(6)}",
            flags,
            {**env, "MEMGATE_REPLICA_ID": f"{fleet_dir.name}-new{fresh_tag(4)}-gw{owner}"},
        )
        clients[owner].close()
        clients[owner] = GatewayClient(replicas.gateways[owner].address, agent_id="master")
        clients[1].append_turn(ns, "s1", role="assistant", content="(answer)")
        ended = clients[2].end_session(ns, "s1", wait=True)
        # every turn, though none came through this replica and their applier is gone (what
        # the job formed is only reported when the RPC's replica ran it: see the audit below)
        assert ended.applied and ended.turns == 4, ended
        assert clients[2].end_session(ns, "s1").job_id == ""  # mined once, nothing new
        clients[0].append_turn(ns, "s2", role="user", content="I'm vegetarian, remember.")
        clients[1].append_turn(ns, "s2", role="assistant", content="(answer)")
        _eventually(lambda: clients[0].window(ns, "s2"), lambda w: len(w) == 2)
        again = clients[(owner + 1) % 3].end_session(ns, "s2", wait=True)
        assert again.applied and again.turns == 2, again
        # said in two sessions: the pending fact of s1 (shared) is promoted by s2's job
        formed = _eventually(
            lambda: {
                e.target
                for e in clients[owner].audit(agent_id="memgate.formation", namespace=ns)
                if e.action == "form"
            },
            bool,
        )
        assert [clients[1].get(m).content for m in formed] == ["The user's diet: vegetarian"]
        [mem] = [clients[1].get(m) for m in formed]
        assert mem.metadata["memgate.formed.sessions"] == "s1,s2"
    finally:
        for client in clients:
            client.close()


def test_every_replica_audit_shows_the_others_entries(replicas: Fleet) -> None:
    ns = f"user/u-{fresh_tag(10)}"
    clients = [GatewayClient(a, agent_id="master", timeout=20) for a in replicas.addresses]
    try:
        written = [
            c.write(ns, "semantic", f"audited fact {i} {fresh_tag(6)}", wait=True)
            for i, c in enumerate(clients)
        ]
        for c in clients:
            rows = _eventually(
                lambda c=c: c.audit(namespace=ns),  # type: ignore[misc]
                lambda rows: set(written) <= {r.target for r in rows},
            )
            assert set(written) <= {r.target for r in rows if r.action == "write"}
    finally:
        for c in clients:
            c.close()
