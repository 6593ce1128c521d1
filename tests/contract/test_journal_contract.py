"""Journal contract (gateway.core.ports.ports.Journal): durable order, idempotency by (agent, key),
all-or-nothing batches, replay state, retention — and the command codec it stores."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import ClassVar

import pytest

from gateway.core.model.commands import CODEC_VERSION, CommandUnreadable, MemoryWrite
from gateway.core.model.control import NewEntry
from gateway.core.model.errors import Conflict, FailedPrecondition
from gateway.core.model.models import Layer
from gateway.core.ports.ports import Journal
from stores.sqlite_journal import SqliteJournal
from tests.tags import fresh_tag

MakeJournal = Callable[[], Journal]


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.real)])
async def make_journal(request, tmp_path) -> AsyncIterator[MakeJournal]:  # type: ignore[no-untyped-def]
    """A factory of journals over one store: a second call is the same journal reopened (a
    restart), or another replica of it (Redis)."""
    if request.param == "sqlite":
        yield lambda: SqliteJournal(tmp_path / "j.db")
        return
    from redis.asyncio import Redis

    from stores.redis_journal import RedisJournal

    url = request.getfixturevalue("redis_url")
    prefix = f"mgtest-{fresh_tag(10)}"
    yield lambda: RedisJournal(url, prefix=prefix, partitions=4)
    r = Redis.from_url(url)
    keys = [k async for k in r.scan_iter(match=f"{prefix}:*", count=1000)]
    if keys:
        await r.delete(*keys)
    await r.aclose()


def _e(wid: str, key: str = "", content: str = "c", agent: str = "a") -> NewEntry:
    return NewEntry(wid, agent, key, MemoryWrite("user/u", Layer.SEMANTIC, content))


async def test_append_pending_applied_and_reopen(make_journal: MakeJournal) -> None:
    j = make_journal()
    await j.start()
    acc = await j.append([_e("w1"), _e("w2")])
    assert [a.write_id for a in acc] == ["w1", "w2"] and acc[0].seq < acc[1].seq
    await j.mark_applied([acc[0].seq])
    await j.close()
    j2 = make_journal()  # a restart sees what is still to apply
    await j2.start()
    assert [e.write_id for e in await j2.pending(10)] == ["w2"]
    assert await j2.counts() == (1, 1)
    assert await j2.state(acc[0].seq) == 1 and await j2.state(acc[1].seq) == 0
    assert await j2.states([acc[1].seq, acc[0].seq, 10_000]) == {
        acc[0].seq: 1,
        acc[1].seq: 0,
        10_000: -1,
    }
    await j2.close()


async def test_pending_after_a_seq_skips_the_batch_in_hand(make_journal: MakeJournal) -> None:
    j = make_journal()
    await j.start()
    acc = await j.append([_e(f"w{i}") for i in range(5)])
    first = await j.pending(2)
    assert [e.write_id for e in first] == ["w0", "w1"]
    nxt = await j.pending(2, after=first[-1].seq)
    assert [e.write_id for e in nxt] == ["w2", "w3"]
    await j.mark_applied([acc[2].seq])
    assert [e.write_id for e in await j.pending(10, after=acc[1].seq)] == ["w3", "w4"]
    await j.close()


async def test_idempotency_key_and_conflict(make_journal: MakeJournal) -> None:
    j = make_journal()
    await j.start()
    first = (await j.append([_e("w1", key="k")]))[0]
    again = (await j.append([_e("w9", key="k")]))[0]
    assert again.duplicate and again.write_id == "w1" and again.seq == first.seq
    other_agent = (await j.append([_e("w2", key="k", agent="b")]))[0]
    assert not other_agent.duplicate
    with pytest.raises(Conflict):
        await j.append([_e("w3", key="k", content="different")])
    assert (await j.counts())[0] == 2
    await j.close()


async def test_a_failing_batch_stores_none_of_its_entries(make_journal: MakeJournal) -> None:
    j = make_journal()
    await j.start()
    await j.append([_e("w1", key="k")])
    with pytest.raises(Conflict):
        await j.append([_e("w2"), _e("w3", key="k", content="other")])
    assert [e.write_id for e in await j.pending(10)] == ["w1"]
    await j.close()


async def test_concurrent_appends_are_grouped_and_all_durable(make_journal: MakeJournal) -> None:
    j = make_journal()
    await j.start()
    results = await asyncio.gather(*(j.append([_e(f"w{i}")]) for i in range(200)))
    seqs = [r[0].seq for r in results]
    assert len(set(seqs)) == 200
    assert len(await j.pending(1000)) == 200
    await j.close()


async def test_one_gateway_per_data_dir(tmp_path) -> None:  # type: ignore[no-untyped-def]
    first = SqliteJournal(tmp_path / "j.db")
    await first.start()
    second = SqliteJournal(tmp_path / "j.db")
    with pytest.raises(FailedPrecondition, match="in use by memgate pid"):
        await second.start()
    await first.close()
    await second.start()  # free again once the first one is closed
    await second.close()


async def test_prune_drops_only_old_applied_entries(make_journal: MakeJournal) -> None:
    j = make_journal()
    await j.start()
    acc = await j.append([_e("w1", key="k1"), _e("w2", key="k2")])
    await j.mark_applied([acc[0].seq])
    assert await j.prune(older_than_s=3600) == 0  # applied just now: kept
    assert await j.prune(older_than_s=-1) == 1  # the applied one goes, the pending one stays
    assert [e.write_id for e in await j.pending(10)] == ["w2"]
    fresh = (await j.append([_e("w9", key="k1")]))[0]  # its key expired with it
    assert not fresh.duplicate
    await j.close()


async def test_typed_commands_round_trip_through_the_journal(make_journal: MakeJournal) -> None:
    from datetime import UTC, datetime

    from gateway.core.model.commands import (
        Archive,
        EraseWorking,
        Forget,
        ForgetNamespace,
        ForgetSubject,
        FormSession,
        Relate,
        SummariseOverflow,
        TurnAppend,
    )
    from gateway.core.model.models import NodeKind, NodeRef, Zone

    at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    sent = [
        MemoryWrite(
            "user/u",
            Layer.EPISODIC,
            "went to Kyoto",
            type="trip",
            importance=0.7,
            event_time=at,
            metadata={"k": "v"},
            evidence=("said so",),
            entities=("kyoto",),
            links=(("CAUSED", "event", "e0"),),
            received_at=at,
        ),
        TurnAppend("user/u", "s1", "hi", role="assistant", zone=Zone.TASK, at=at),
        Forget("m1", "user/u", "asked to"),
        Archive("m2", "user/u", "decayed"),
        Relate(
            NodeRef(NodeKind.EVENT, "e1"), "CAUSED", NodeRef(NodeKind.EVENT, "e2"), at, {"w": "1"}
        ),
        ForgetNamespace("user/u", "closed"),
        ForgetSubject("u", "gdpr"),
        EraseWorking("user/u"),
        EraseWorking("user/u", "s1", ("t1", "t2")),
        FormSession("user/u", "s1", 7, "idle"),
        SummariseOverflow(
            "user/u", "s1", "summary:t1", (("t1", "user", "hi"), ("t2", "assistant", "hello"))
        ),
    ]
    j = make_journal()
    await j.start()
    await j.append([NewEntry(f"w{i}", "a", "", c) for i, c in enumerate(sent)])
    got = [e.command for e in await j.pending(50)]
    # every command decodes to what was sent; within a namespace in journal order (a
    # partitioned journal may interleave namespaces differently)
    assert sorted(got, key=sent.index) == sent
    assert [c for c in got if not isinstance(c, Relate)] == [
        c for c in sent if not isinstance(c, Relate)
    ]
    await j.close()


@pytest.mark.usefixtures("odd_payloads")
async def test_an_unreadable_entry_is_named_and_holds_only_what_follows_it(
    make_journal: MakeJournal,
) -> None:
    """``pending`` hands out the entries before one it cannot read; when that one comes first it
    raises ``CommandUnreadable`` naming its seq, corrupt (never readable) or from a newer
    memgate. Marked dead, a corrupt one lets the queue go on; the journal drops nothing itself."""
    j = make_journal()
    await j.start()
    acc = await j.append([_e("w1"), _e("w2", content="corrupt"), _e("w3", content="newer")])
    assert [e.write_id for e in await j.pending(10)] == ["w1"]
    await j.mark_applied([acc[0].seq])
    with pytest.raises(CommandUnreadable) as err:
        await j.pending(10)
    assert (err.value.seq, err.value.newer) == (acc[1].seq, False)
    await j.mark_dead(acc[1].seq, str(err.value))
    for after in (0, acc[1].seq):
        with pytest.raises(CommandUnreadable) as err:
            await j.pending(10, after=after)
        assert (err.value.seq, err.value.newer) == (acc[2].seq, True)
        assert f"v{CODEC_VERSION + 1}" in err.value.reason
    assert await j.states([acc[1].seq, acc[2].seq]) == {acc[1].seq: 2, acc[2].seq: 0}
    # erasure still finds the newer entry by its namespace, and an unreadable one fails nothing
    bad = await j.append([_e("w4", content="corrupt")])
    assert await j.erase_pending("user/u", [], bad[0].seq + 1) == 1
    assert await j.states([acc[2].seq, bad[0].seq]) == {acc[2].seq: 2, bad[0].seq: 0}
    await j.close()


@dataclass(frozen=True, slots=True)
class _Teleport(MemoryWrite):
    """A command of a kind this version does not know, as a newer memgate would journal it."""

    kind: ClassVar[str] = "teleport"


async def test_an_entry_of_an_unknown_kind_waits_for_a_gateway_that_knows_it(
    make_journal: MakeJournal,
) -> None:
    """A lane asks for its own kinds and passes such an entry by; asked for every kind, the
    journal names it (from a newer memgate) when it is the oldest waiting; it is never dropped."""
    j = make_journal()
    await j.start()
    acc = await j.append(
        [_e("w1"), NewEntry("w2", "a", "", _Teleport("user/u", Layer.SEMANTIC, "x"))]
    )
    acc += await j.append([_e("w3")])
    assert [e.write_id for e in await j.pending(10, kinds=("memory",))] == ["w1", "w3"]
    assert [e.write_id for e in await j.pending(10)] == ["w1"]
    await j.mark_applied([acc[0].seq, acc[2].seq])
    with pytest.raises(CommandUnreadable) as err:
        await j.pending(1)
    assert (err.value.seq, err.value.kind, err.value.newer) == (acc[1].seq, "teleport", True)
    assert await j.states([acc[1].seq]) == {acc[1].seq: 0}
    await j.close()


async def test_an_old_journal_still_replays(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Payloads written before the codec had a version (v0) decode to the same commands."""
    j = SqliteJournal(tmp_path / "j.db")
    await j.start()
    await j.close()
    v0 = {
        "namespace": "user/u", "layer": "semantic", "content": "likes tea", "type": "note",
        "importance": 0.5, "confidence": 1.0, "session_id": "", "task_id": "",
        "event_time": None, "metadata": {}, "evidence": [], "entities": [],
        "quarantined": False, "role": "", "zone": "", "user_id": "u", "links": [],
        "explicit": False,
    }  # fmt: skip
    conn = sqlite3.connect(tmp_path / "j.db")
    conn.execute(
        "INSERT INTO journal(write_id, kind, agent_id, digest, payload, created)"
        " VALUES ('old', 'memory', 'a', 'x', ?, 0)",
        (json.dumps(v0),),
    )
    conn.commit()
    conn.close()
    j = SqliteJournal(tmp_path / "j.db")
    await j.start()
    (entry,) = await j.pending(10)
    assert entry.command == MemoryWrite("user/u", Layer.SEMANTIC, "likes tea", user_id="u")
    await j.close()


async def test_erase_pending_neutralises_earlier_entries_and_leaves_no_copy(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from gateway.core.model.commands import EraseWorking, ForgetNamespace, TurnAppend

    secret = "zebra-secret-7f3a"
    j = SqliteJournal(tmp_path / "j.db")
    await j.start()
    accepted = await j.append(
        [
            NewEntry("t1", "a", "", TurnAppend("user/gone", "s", f"turn {secret}")),
            NewEntry("m1", "a", "", MemoryWrite("user/gone", Layer.SEMANTIC, f"mem {secret}")),
            NewEntry("k1", "a", "", MemoryWrite("user/kept", Layer.SEMANTIC, "kept")),
            NewEntry("w1", "a", "", MemoryWrite("user/x", Layer.SEMANTIC, f"by id {secret}")),
            NewEntry("e1", "a", "", EraseWorking("user/gone")),  # erasures are never dropped
            NewEntry("f1", "a", "", ForgetNamespace("user/gone", "asked")),
            NewEntry("t2", "a", "", TurnAppend("user/gone", "s", "after the erasure")),
            # writes that could not be applied (dead, kept with their error): no copy either
            NewEntry("d1", "a", "", MemoryWrite("user/gone", Layer.SEMANTIC, f"dead {secret}")),
            NewEntry("d2", "a", "", MemoryWrite("user/y", Layer.SEMANTIC, f"dead id {secret}")),
        ]
    )
    for dead in accepted[7:]:
        await j.mark_dead(dead.seq, "could not be applied")
    before = accepted[5].seq
    assert await j.erase_pending("user/gone", ["w1", "e1", "d2"], before) == 3
    assert j.pending_count == 4
    assert [e.write_id for e in await j.pending(10)] == ["k1", "e1", "f1", "t2"]
    assert await j.erase_pending("user/gone", ["w1"], before) == 0  # idempotent
    await j.close()
    for f in tmp_path.iterdir():
        assert secret.encode() not in f.read_bytes(), f.name


# --- the Redis Streams journal across replicas -------------------------------------------------

_REDIS_KW = {"partitions": 4, "lease_ms": 600, "reclaim_idle_ms": 300}


@pytest.fixture
async def redis_prefix(redis_url: str) -> AsyncIterator[str]:
    from redis.asyncio import Redis

    prefix = f"mgtest-{fresh_tag(10)}"
    yield prefix
    r = Redis.from_url(redis_url)
    keys = [k async for k in r.scan_iter(match=f"{prefix}:*", count=1000)]
    if keys:
        await r.delete(*keys)
    await r.aclose()


def _redis_journal(url: str, prefix: str, name: str):  # type: ignore[no-untyped-def]
    from stores.redis_journal import RedisJournal

    return RedisJournal(url, prefix=prefix, consumer=name, **_REDIS_KW)  # type: ignore[arg-type]


async def _drain(j, rounds: int = 1) -> list[str]:  # type: ignore[no-untyped-def]
    got: list[str] = []
    for _ in range(rounds):
        batch = await j.pending(100)
        got += [e.write_id for e in batch]
        await j.mark_applied([e.seq for e in batch])
    return got


@pytest.mark.real
async def test_replicas_share_the_partitions_and_apply_each_write_once(
    redis_url: str, redis_prefix: str
) -> None:
    a = _redis_journal(redis_url, redis_prefix, "a")
    b = _redis_journal(redis_url, redis_prefix, "b")
    await a.start()
    await b.start()
    await asyncio.sleep(0.5)  # a gives back what is over its share once b is a member
    await a._balance()
    await b._balance()
    assert a.owned and b.owned and not (a.owned & b.owned)
    assert a.owned | b.owned == frozenset(range(4))
    written = [
        NewEntry(f"w{i}", "ag", f"k{i}", MemoryWrite(f"user/u{i % 7}", Layer.SEMANTIC, f"c{i}"))
        for i in range(60)
    ]
    acc = await a.append(written[:30]) + await b.append(written[30:])
    applied = await _drain(a) + await _drain(b)
    assert sorted(applied) == sorted(e.write_id for e in written)  # each once, none missing
    assert await a.states([x.seq for x in acc]) == {x.seq: 1 for x in acc}
    assert await a.counts() == (0, 60)
    await a.close()
    await b.close()


@pytest.mark.real
async def test_a_dead_consumers_entries_are_reclaimed_in_order(
    redis_url: str, redis_prefix: str
) -> None:
    a = _redis_journal(redis_url, redis_prefix, "a")
    await a.start()
    assert a.owned == frozenset(range(4))  # alone: every partition
    first = await a.append([_e(f"w{i}") for i in range(5)])  # one namespace: one partition
    taken = await a.pending(3)  # delivered to a, then a "dies" (no ack, no lease renewal)
    assert [e.write_id for e in taken] == ["w0", "w1", "w2"]
    assert a._lease_task is not None
    a._lease_task.cancel()
    b = _redis_journal(redis_url, redis_prefix, "b")
    await b.start()
    deadline = asyncio.get_running_loop().time() + 10
    order: list[str] = []
    while len(order) < 5 and asyncio.get_running_loop().time() < deadline:
        await b._balance()
        order += await _drain(b)
        await asyncio.sleep(0.1)
    assert order == ["w0", "w1", "w2", "w3", "w4"]  # the reclaimed ones first, in order
    assert await b.states([x.seq for x in first]) == {x.seq: 1 for x in first}
    r = b._r
    assert r is not None
    p = first[0].seq % 1024
    assert (await r.xpending(f"{redis_prefix}:{{j{p}}}:s", "apply"))["pending"] == 0
    await b.close()
    await a.close()


@pytest.mark.real
async def test_a_partition_given_back_while_settling_is_settled_again_when_taken_back(
    redis_url: str, redis_prefix: str
) -> None:
    """Replica a settles partition 3 (checks no other consumer holds entries there) while its
    lease loop gives the partition back to b. b reads entries there and dies before applying
    them. When a takes the partition back it must claim b's entries first: a settlement that
    finished after the release must not count (it once let a read past them, and they stayed
    pending for good)."""
    ns = "user/p5"  # journal partition 3 of 4: the first one a gives back
    a = _redis_journal(redis_url, redis_prefix, "a")
    await a.start()
    assert a.owned == frozenset(range(4))
    r = a._r
    assert r is not None
    real_xpending = r.xpending
    in_settlement, given_back = asyncio.Event(), asyncio.Event()

    async def slow_xpending(*args, **kwargs):  # type: ignore[no-untyped-def]
        in_settlement.set()
        await given_back.wait()
        return await real_xpending(*args, **kwargs)

    r.xpending = slow_xpending  # type: ignore[method-assign]
    settling = asyncio.create_task(a._settle_ownership(3))
    await in_settlement.wait()
    b = _redis_journal(redis_url, redis_prefix, "b")
    await b.start()
    await a._balance()  # two members: a keeps two partitions, gives 3 and 2 back
    assert 3 not in a.owned
    given_back.set()
    await settling
    r.xpending = real_xpending  # type: ignore[method-assign]
    assert 3 not in a._settled
    await b._balance()
    assert 3 in b.owned
    writes = [
        NewEntry(f"w{i}", "ag", "", MemoryWrite(ns, Layer.SEMANTIC, f"c{i}")) for i in range(5)
    ]
    await a.append(writes)
    taken = await b.pending(3)  # delivered to b; then b dies (no ack, no lease renewal)
    assert [e.write_id for e in taken] == ["w0", "w1", "w2"]
    assert b._lease_task is not None
    b._lease_task.cancel()
    deadline = asyncio.get_running_loop().time() + 10
    order: list[str] = []
    while len(order) < 5 and asyncio.get_running_loop().time() < deadline:
        await a._balance()  # b's lease and membership expire: a takes 3 back
        order += await _drain(a)
        await asyncio.sleep(0.1)
    assert order == ["w0", "w1", "w2", "w3", "w4"]  # b's entries first, none left behind
    p = partition_of_test(ns)
    assert (await r.xpending(f"{redis_prefix}:{{j{p}}}:s", "apply"))["pending"] == 0
    await a.close()
    await b.close()


def partition_of_test(namespace: str) -> int:
    from stores.redis_journal import partition_of

    return partition_of(namespace, int(_REDIS_KW["partitions"]))


@pytest.mark.real
async def test_entries_another_consumer_read_after_the_owner_settled_are_claimed(
    redis_url: str, redis_prefix: str
) -> None:
    """A replica whose lease ran out before it noticed may still read new entries of the
    partition into its own list after the new holder settled it: the holder claims them once
    idle, at its next lease renewal, instead of leaving them pending for good."""
    ns = "user/p5"
    a = _redis_journal(redis_url, redis_prefix, "a")
    await a.start()
    assert a._lease_task is not None
    a._lease_task.cancel()  # renewals by hand below
    assert await _drain(a) == []  # every partition settled: a reads new entries directly
    await a.append(
        [NewEntry(f"w{i}", "ag", "", MemoryWrite(ns, Layer.SEMANTIC, f"c{i}")) for i in range(3)]
    )
    r = a._r
    assert r is not None
    p = partition_of_test(ns)
    stream = f"{redis_prefix}:{{j{p}}}:s"
    # a late reader takes the new entries into its own list, and never comes back for them
    await r.xreadgroup("apply", "late", {stream: ">"}, count=10)
    assert await _drain(a) == []
    await asyncio.sleep(int(_REDIS_KW["reclaim_idle_ms"]) / 1000 + 0.1)
    await a._balance()
    assert await _drain(a) == ["w0", "w1", "w2"]
    assert (await r.xpending(stream, "apply"))["pending"] == 0
    await a.close()
