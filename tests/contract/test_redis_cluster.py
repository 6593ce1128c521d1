"""Cluster safety of the Redis keys (docs/SCALING.md): against a 3-master Redis Cluster started
here from redis-server on 127.0.0.1, the journal (cluster client) appends, applies, reclaims and
keeps idempotency across partitions on different masters; every working-memory script touches
the keys of one session's slot only."""

from __future__ import annotations

import asyncio

import pytest

from gateway.core.model.commands import MemoryWrite
from gateway.core.model.control import NewEntry
from gateway.core.model.errors import Conflict
from gateway.core.model.models import Layer, Turn, Zone
from stores.redis_journal import RedisJournal
from stores.redis_working import RedisWorkingStore, session_keys
from tests.contract.local_cluster import node_of
from tests.tags import fresh_tag

pytestmark = pytest.mark.slow


def _w(i: int, key: str = "", content: str = "") -> NewEntry:
    return NewEntry(
        f"w{i}", "ag", key, MemoryWrite(f"user/u{i}", Layer.SEMANTIC, content or f"c{i}")
    )


async def test_the_journal_on_a_cluster(cluster: list[int]) -> None:
    url = f"redis://127.0.0.1:{cluster[0]}/0"
    prefix = f"mgtest-{fresh_tag(8)}"
    kw = {"prefix": prefix, "partitions": 8, "cluster": True, "lease_ms": 600}
    a = RedisJournal(url, consumer="a", reclaim_idle_ms=300, **kw)  # type: ignore[arg-type]
    await a.start()
    # the partitions' keys spread over the masters (each partition's keys in one slot)
    homes = {node_of(cluster, f"{prefix}:{{j{p}}}:s") for p in range(8)}
    assert len(homes) >= 2
    for p in range(8):
        names = ("s", "n", "i", "st", "ik", "done", "err", "lease")
        assert len({node_of(cluster, f"{prefix}:{{j{p}}}:{n}") for n in names}) == 1
    acc = await a.append([_w(i, key=f"k{i}") for i in range(16)])  # one batch, 8 partitions
    assert len({x.seq % 1024 for x in acc}) > 1
    again = await a.append([_w(i, key=f"k{i}") for i in range(16)])
    assert all(x.duplicate for x in again) and [x.seq for x in again] == [x.seq for x in acc]
    with pytest.raises(Conflict):  # checked before any partition is written
        await a.append([_w(100, key="new"), _w(3, key="k3", content="other")])
    assert (await a.counts())[0] == 16
    taken = await a.pending(100)
    assert sorted(e.write_id for e in taken) == sorted(f"w{i}" for i in range(16))
    await a.mark_applied([e.seq for e in taken[:10]])
    assert a._lease_task is not None
    a._lease_task.cancel()  # a dies holding 6 delivered entries
    b = RedisJournal(url, consumer="b", reclaim_idle_ms=300, **kw)  # type: ignore[arg-type]
    await b.start()
    got: list[str] = []
    deadline = asyncio.get_running_loop().time() + 15
    while len(got) < 6 and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.2)
        await b._balance()
        batch = await b.pending(100)
        got += [e.write_id for e in batch]
        await b.mark_applied([e.seq for e in batch])
    assert sorted(got) == sorted(e.write_id for e in taken[10:])
    assert await b.counts() == (0, 16)
    await b.close()
    await a.close()


async def test_working_memory_scripts_stay_in_one_slot(cluster: list[int]) -> None:
    ns, session = f"user/{fresh_tag(8)}", "s|{tricky}"
    keys = session_keys(ns, session)
    homes = {node_of(cluster, k) for k in keys}
    assert len(homes) == 1
    (port,) = homes
    # a node refuses a script whose keys it does not all serve: the session's master runs them all
    store = RedisWorkingStore(f"redis://127.0.0.1:{port}/0", ttl_seconds=3600)
    await store.start()
    turns = [Turn(id=f"t{i}", zone=Zone.DIALOGUE, role="user", content=f"hi {i}") for i in range(5)]
    await store.append(ns, session, turns, max_len=3)
    window = await store.window(ns, session)
    assert [t.id for t in window[Zone.DIALOGUE]] == ["t2", "t3", "t4"]
    assert [t.id for t in await store.take_oldest(ns, session, Zone.DIALOGUE, 2)] == ["t2", "t3"]
    await store.set_state(ns, session, {"k": "v"})
    await store.clear(ns, session)
    assert await store.ttl_seconds(ns, session) == -2
    await store.close()
