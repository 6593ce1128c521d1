"""Journal contract (gateway.core.ports.Journal): durable order, idempotency by (agent, key),
all-or-nothing batches, replay state, retention — and the command codec it stores."""

from __future__ import annotations

import asyncio
import json
import sqlite3

import pytest

from gateway.core.commands import MemoryWrite
from gateway.core.control import NewEntry
from gateway.core.errors import Conflict, FailedPrecondition
from gateway.core.models import Layer
from stores.sqlite_journal import SqliteJournal


def _e(wid: str, key: str = "", content: str = "c", agent: str = "a") -> NewEntry:
    return NewEntry(wid, agent, key, MemoryWrite("user/u", Layer.SEMANTIC, content))


async def test_append_pending_applied_and_reopen(tmp_path) -> None:  # type: ignore[no-untyped-def]
    j = SqliteJournal(tmp_path / "j.db")
    await j.start()
    acc = await j.append([_e("w1"), _e("w2")])
    assert [a.write_id for a in acc] == ["w1", "w2"] and acc[0].seq < acc[1].seq
    await j.mark_applied([acc[0].seq])
    await j.close()
    j2 = SqliteJournal(tmp_path / "j.db")  # a restart sees what is still to apply
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


async def test_pending_after_a_seq_skips_the_batch_in_hand(tmp_path) -> None:  # type: ignore[no-untyped-def]
    j = SqliteJournal(tmp_path / "j.db")
    await j.start()
    acc = await j.append([_e(f"w{i}") for i in range(5)])
    first = await j.pending(2)
    assert [e.write_id for e in first] == ["w0", "w1"]
    nxt = await j.pending(2, after=first[-1].seq)
    assert [e.write_id for e in nxt] == ["w2", "w3"]
    await j.mark_applied([acc[2].seq])
    assert [e.write_id for e in await j.pending(10, after=acc[1].seq)] == ["w3", "w4"]
    await j.close()


async def test_idempotency_key_and_conflict(tmp_path) -> None:  # type: ignore[no-untyped-def]
    j = SqliteJournal(tmp_path / "j.db")
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


async def test_a_failing_batch_stores_none_of_its_entries(tmp_path) -> None:  # type: ignore[no-untyped-def]
    j = SqliteJournal(tmp_path / "j.db")
    await j.start()
    await j.append([_e("w1", key="k")])
    with pytest.raises(Conflict):
        await j.append([_e("w2"), _e("w3", key="k", content="other")])
    assert [e.write_id for e in await j.pending(10)] == ["w1"]
    await j.close()


async def test_concurrent_appends_are_grouped_and_all_durable(tmp_path) -> None:  # type: ignore[no-untyped-def]
    j = SqliteJournal(tmp_path / "j.db")
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


async def test_prune_drops_only_old_applied_entries(tmp_path) -> None:  # type: ignore[no-untyped-def]
    j = SqliteJournal(tmp_path / "j.db")
    await j.start()
    acc = await j.append([_e("w1", key="k1"), _e("w2", key="k2")])
    await j.mark_applied([acc[0].seq])
    assert await j.prune(older_than_s=3600) == 0  # applied just now: kept
    assert await j.prune(older_than_s=-1) == 1  # the applied one goes, the pending one stays
    assert [e.write_id for e in await j.pending(10)] == ["w2"]
    fresh = (await j.append([_e("w9", key="k1")]))[0]  # its key expired with it
    assert not fresh.duplicate
    await j.close()


async def test_typed_commands_round_trip_through_the_journal(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from datetime import UTC, datetime

    from gateway.core.commands import (
        Archive,
        EraseWorking,
        Forget,
        ForgetNamespace,
        ForgetSubject,
        Relate,
        TurnAppend,
    )
    from gateway.core.models import NodeKind, NodeRef, Zone

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
    ]
    j = SqliteJournal(tmp_path / "j.db")
    await j.start()
    await j.append([NewEntry(f"w{i}", "a", "", c) for i, c in enumerate(sent)])
    assert [e.command for e in await j.pending(10)] == sent
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
    from gateway.core.commands import EraseWorking, ForgetNamespace, TurnAppend

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
        ]
    )
    before = accepted[5].seq
    assert await j.erase_pending("user/gone", ["w1", "e1"], before) == 3
    assert j.pending_count == 4
    assert [e.write_id for e in await j.pending(10)] == ["k1", "e1", "f1", "t2"]
    assert await j.erase_pending("user/gone", ["w1"], before) == 0  # idempotent
    await j.close()
    for f in tmp_path.iterdir():
        assert secret.encode() not in f.read_bytes(), f.name
