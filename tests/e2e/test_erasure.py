"""Erasure (M10, issue 8.6) on both backends, checked by reading the stores themselves afterwards:
the SQLite files (and their WAL), the FAISS shard files, Neo4j (a query over every node kind that
can hold text) and Redis (the working-memory keys; with the replicas' configuration, journal and
ledger on Redis, every key under the deployment's prefix). Before the erasure the same probes find
the content, so a probe that cannot see anything fails the test instead of passing it."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway import client as gc
from gateway.core.screening import memo
from tests.e2e.conftest import RunningGateway, gateway_settings, running_gateway
from tests.tags import fresh_tag


def _marker() -> str:
    # plain words (no digits or long tokens): screening must not redact it before it is stored
    words = ["amber", "walrus", "pickle", "saffron", "lantern", "meadow", "quartz", "tundra"]
    pick = uuid.uuid4().int
    return "-".join(words[(pick >> (3 * i)) % 8] for i in range(6))


@pytest.fixture(
    params=[
        "embedded",
        pytest.param("real", marks=pytest.mark.real),
        pytest.param("replicas", marks=pytest.mark.real),
    ]
)
def erase_backend(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Embedded; Redis + Neo4j; and as a replica runs: journal and ledger on Redis too."""
    if request.param == "embedded":
        return {}
    real = {
        "redis_url": request.getfixturevalue("redis_url"),
        "neo4j_uri": request.getfixturevalue("neo4j_uri"),
    }
    if request.param == "replicas":
        real |= {"journal_backend": "redis", "redis_journal_prefix": f"mgt-{fresh_tag(10)}"}
    return real


@pytest.fixture
def erase_gw(tmp_path: Path, erase_backend: dict[str, Any]) -> Iterator[RunningGateway]:
    with running_gateway(gateway_settings(tmp_path, **erase_backend)) as running:
        yield running
    if "redis_journal_prefix" in erase_backend:  # this test's journal and ledger keys
        import redis

        client = redis.Redis.from_url(erase_backend["redis_url"])
        for key in client.scan_iter(match=f"{erase_backend['redis_journal_prefix']}:*", count=500):
            client.delete(key)
        client.close()


def _files_with(root: Path, needle: str) -> list[str]:
    data = needle.encode()
    return sorted(
        str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and data in p.read_bytes()
    )


def _neo4j_with(gw: RunningGateway, needle: str) -> list[str]:
    if not gw.settings.neo4j_uri:
        return []
    import neo4j

    with neo4j.GraphDatabase.driver(gw.settings.neo4j_uri) as driver:
        records, _, _ = driver.execute_query(
            "MATCH (n) WHERE (n:Memory OR n:MemoryVersion OR n:Event OR n:Entity OR n:Session "
            "OR n:Fact) AND any(k IN keys(n) WHERE k <> 'embedding' AND toStringOrNull(n[k]) CONTAINS $needle) "
            "RETURN labels(n)[0] + ':' + n.id AS node",
            needle=needle,
        )
    return sorted(r["node"] for r in records)


def _redis_keys(gw: RunningGateway, namespace: str) -> list[bytes]:
    if not gw.settings.redis_url:
        return []
    import redis

    from stores.redis_working import namespace_pattern

    client = redis.Redis.from_url(gw.settings.redis_url)
    try:
        return list(client.scan_iter(match=namespace_pattern(namespace), count=500))
    finally:
        client.close()


def _redis_ledger_with(gw: RunningGateway, needle: str) -> list[str]:
    """Keys under the deployment's prefix (journal, ledger, change stream) holding ``needle``
    in any value, hash field, set or sorted-set member, or stream entry."""
    if gw.settings.ledger() != "redis":
        return []
    import redis

    data = needle.encode()
    found = []
    client = redis.Redis.from_url(gw.settings.redis_url)
    try:
        for key in client.scan_iter(match=f"{gw.settings.redis_journal_prefix}:*", count=500):
            kind = client.type(key).decode()
            if kind == "string":
                blobs = [client.get(key) or b""]
            elif kind == "hash":
                blobs = [b for kv in client.hgetall(key).items() for b in kv]
            elif kind == "set":
                blobs = list(client.smembers(key))
            elif kind == "zset":
                blobs = list(client.zrange(key, 0, -1))
            elif kind == "stream":
                blobs = [b for _, f in client.xrange(key) for kv in f.items() for b in kv]
            else:
                blobs = [str(client.dump(key)).encode()]
            if any(data in b for b in blobs) or data in key:
                found.append(key.decode())
    finally:
        client.close()
    return sorted(found)


def _everywhere(gw: RunningGateway, needle: str) -> list[str]:
    return (
        _files_with(gw.settings.data_dir, needle)
        + _neo4j_with(gw, needle)
        + _redis_ledger_with(gw, needle)
    )


def _assert_stored(gw: RunningGateway, needle: str) -> None:
    """The probes see the content before the erasure (in the record store's own files or
    nodes, not only in the journal)."""
    if gw.settings.neo4j_uri:
        assert _neo4j_with(gw, needle)
    else:
        assert {"records.db", "records.db-wal"} & set(_files_with(gw.settings.data_dir, needle))


def test_forget_erases_content_everywhere_and_keeps_a_tombstone(erase_gw: RunningGateway) -> None:
    ns = f"user/u-{fresh_tag(10)}"
    secret, place = _marker(), _marker()
    with erase_gw.client() as master, erase_gw.client(f"reader-{fresh_tag(6)}") as sub:
        fact = master.write(ns, "semantic", f"The user's locker code word is {secret}", wait=True)
        event = master.record_event(
            ns, f"Met at {secret} cafe", entities=[place], session_id="s1", wait=True
        )
        keep = master.write(ns, "semantic", "The user prefers green tea", wait=True)
        assert secret in sub.get(fact).content  # a shared namespace: the sub-agent reads it
        _assert_stored(erase_gw, secret)
        _assert_stored(erase_gw, place)
        faiss = erase_gw.settings.data_dir / (
            "faiss-neo4j" if erase_gw.settings.neo4j_uri else "faiss"
        )
        # the full-copy index writes vectors to files (flushed every flush_interval_s); the
        # on-demand one (the default with Neo4j) holds them in memory only
        on_disk = erase_gw.settings.vector_mode() == "full"
        deadline = time.monotonic() + 10
        while on_disk and not _files_with(faiss, fact) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert bool(_files_with(faiss, fact)) == on_disk

        # a recall runs the per-text memos over the secret (time cues, token estimates)
        assert fact in {h.id for h in master.recall("locker code word", namespaces=[ns]).hits}
        grave = master.forget(fact, reason="the user asked")
        master.forget(event, reason="the user asked")
        assert memo.held() == 0  # the in-process gateway's memos let go of every text
        assert (grave.content, grave.status) == ("", "forgotten")
        assert grave.metadata["forgotten_by"] == "master"
        assert grave.metadata["forgotten_reason"] == "the user asked"
        assert len(grave.metadata["content_sha256"]) == 64
        for reader in (master, sub):  # the tombstone only, for everyone
            got = reader.get(fact)
            assert got.content == "" and got.status == "forgotten" and got.evidence == []
            assert [(v.content, v.status) for v in reader.history(fact)] == [("", "forgotten")]
        assert master.forget(fact).version == grave.version  # again: the same tombstone
        assert master.timeline(ns) == []
        assert master.neighbourhood("entity", f"{ns}/{place}") == []
        hits = master.recall("locker code word cafe", namespaces=[ns]).hits
        assert fact not in {h.id for h in hits} and event not in {h.id for h in hits}
        assert master.get(keep).content == "The user prefers green tea"
    assert _files_with(faiss, fact) == []
    assert _everywhere(erase_gw, secret) == []
    assert _everywhere(erase_gw, place) == []


def test_forget_namespace_erases_every_layer(erase_gw: RunningGateway) -> None:
    tag = fresh_tag(8)
    ns, other = f"user/gone-{tag}", f"user/kept-{tag}"
    secret = _marker()
    sub_id = f"coder-{tag}"
    with erase_gw.client() as master, erase_gw.client(sub_id) as sub:
        mid = master.write(ns, "semantic", f"Lives near {secret} park", wait=True)
        master.record_event(ns, f"Walked to {secret} park", entities=[secret], wait=True)
        master.append_turn(ns, "chat", role="user", content=f"I love {secret}")
        master.update_session_state(ns, "chat", {"topic": secret})
        sub.write(ns, "semantic", f"Proposal about {secret}")  # a proposal waiting for the master
        kept = master.write(other, "semantic", f"Unrelated {tag}", wait=True)
        assert master.window(ns, "chat")  # applied
        _assert_stored(erase_gw, secret)
        if erase_gw.settings.ledger() == "redis":  # the proposal, the turn kept for formation
            held = _redis_ledger_with(erase_gw, secret)
            assert any(":{lp}:" in k for k in held) and any(":{lx}:" in k for k in held), held
        if erase_gw.settings.redis_url:
            assert _redis_keys(erase_gw, ns)

        with pytest.raises(gc.PermissionDenied):
            sub.forget_namespace(ns)
        with pytest.raises(gc.InvalidArgument, match="global"):
            master.forget_namespace("global")
        with pytest.raises(gc.InvalidArgument, match="reason"):
            master.forget_namespace(ns, reason="x" * 501)
        with pytest.raises(gc.InvalidArgument, match="namespace"):
            master.forget_namespace("user/bad\n")
        assert master.get(mid).content  # the refused calls changed nothing
        # a recall over it and another namespace (one audit row naming both, the query its
        # text), still queued when the erasure comes
        assert master.recall(f"Where is {secret} park?", namespaces=[ns, other]).hits

        done = master.forget_namespace(ns, reason="account closed")
        assert done.applied and done.erase_id
        with pytest.raises(gc.NotFound):
            master.get(mid)
        assert master.timeline(ns) == []
        assert list(master.window(ns, "chat")) == []
        assert master.session_state(ns, "chat") == {}
        assert not [p for p in master.proposals("") if secret in p.item.content]
        assert master.get(kept).content == f"Unrelated {tag}"
        erased = [a for a in master.audit(namespace=ns) if a.action == "erased"]
        assert erased and "account closed" in erased[0].detail and erased[0].agent_id == "master"
        assert _redis_keys(erase_gw, ns) == []
    assert _everywhere(erase_gw, secret) == []


def test_forget_subject_erases_the_user_and_events_about_them(erase_gw: RunningGateway) -> None:
    tag = fresh_tag(8)
    user, researcher = f"bob-{tag}", f"researcher-{tag}"
    secret, other_secret = _marker(), _marker()
    with erase_gw.client() as master, erase_gw.client(researcher) as r:
        master.write(f"user/{user}", "semantic", f"Bob's sister is called {secret}", wait=True)
        about = r.record_event(
            f"agent/{researcher}", f"Interviewed bob about {secret}", user_id=user, wait=True
        )
        unrelated = r.record_event(f"agent/{researcher}", f"Read about {other_secret}", wait=True)
        master.relate(("user", user), "KNOWS", ("agent", researcher))
        assert about in {n.node.id for n in master.neighbourhood("user", user)}
        _assert_stored(erase_gw, secret)

        with pytest.raises(gc.PermissionDenied):
            r.forget_subject(user)
        with pytest.raises(gc.InvalidArgument, match="user_id"):
            master.forget_subject("bob/../alice")
        assert master.forget_subject(user, reason="right to erasure").applied

        assert master.neighbourhood("user", user) == []
        assert r.get(about).content == ""  # its tombstone, in the researcher's namespace
        assert r.get(about).metadata["forgotten_by"] == "master"
        assert [e.id for e in r.timeline(f"agent/{researcher}")] == [unrelated]
        assert r.get(unrelated).content == f"Read about {other_secret}"
    assert _everywhere(erase_gw, secret) == []
    assert _everywhere(erase_gw, other_secret)  # not about the user: kept
