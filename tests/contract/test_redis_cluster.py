"""Cluster safety of the Redis keys (docs/SCALING.md): against a 3-master Redis Cluster started
here from redis-server on 127.0.0.1, the journal (cluster client) appends, applies, reclaims and
keeps idempotency across partitions on different masters; every working-memory script touches
the keys of one session's slot only."""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator

import pytest
from redis import Redis

from gateway.core.commands import MemoryWrite
from gateway.core.control import NewEntry
from gateway.core.errors import Conflict
from gateway.core.models import Layer, Turn, Zone
from stores.redis_journal import RedisJournal
from stores.redis_working import RedisWorkingStore, session_keys

pytestmark = pytest.mark.slow


def _free_port() -> int:
    """A port free for the server and for its cluster bus (port + 10000)."""
    for _ in range(100):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port + 10000 > 65535:
            continue
        with socket.socket() as bus:
            try:
                bus.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port pair for a cluster node")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[int]]:
    if not shutil.which("redis-server") or not shutil.which("redis-cli"):
        pytest.skip("redis-server/redis-cli not installed (Debian: apt-get install redis-server)")
    root = tmp_path_factory.mktemp("cluster")
    ports = [_free_port() for _ in range(3)]
    procs = []
    for port in ports:
        d = root / str(port)
        d.mkdir()
        procs.append(
            subprocess.Popen(
                [
                    "redis-server",
                    "--port",
                    str(port),
                    "--bind",
                    "127.0.0.1",
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    str(d / "nodes.conf"),
                    "--dir",
                    str(d),
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )  # fmt: skip
        )
    try:
        _wait(lambda: all(_pong(p) for p in ports), 20)
        subprocess.run(
            ["redis-cli", "--cluster", "create", *(f"127.0.0.1:{p}" for p in ports),
             "--cluster-replicas", "0", "--cluster-yes"],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        _wait(lambda: all(_cluster_ok(p) for p in ports), 30)
        yield ports
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(10)


def _pong(port: int) -> bool:
    try:
        return bool(Redis(port=port, socket_timeout=1).ping())
    except Exception:  # noqa: BLE001
        return False


def _cluster_ok(port: int) -> bool:
    return Redis(port=port).cluster("INFO").get("cluster_state") == "ok"


def _wait(ok, seconds: float) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not ok():
        if time.monotonic() > deadline:
            raise AssertionError("the local Redis Cluster did not come up")
        time.sleep(0.2)


def _node_of(ports: list[int], key: str) -> int:
    slot = int(Redis(port=ports[0]).execute_command("CLUSTER KEYSLOT", key))
    for start, end, (_host, port, *_) in Redis(port=ports[0]).execute_command("CLUSTER SLOTS"):
        if start <= slot <= end:
            return int(port)
    raise AssertionError(f"no node serves slot {slot}")


def _w(i: int, key: str = "", content: str = "") -> NewEntry:
    return NewEntry(
        f"w{i}", "ag", key, MemoryWrite(f"user/u{i}", Layer.SEMANTIC, content or f"c{i}")
    )


async def test_the_journal_on_a_cluster(cluster: list[int]) -> None:
    url = f"redis://127.0.0.1:{cluster[0]}/0"
    prefix = f"mgtest-{uuid.uuid4().hex[:8]}"
    kw = {"prefix": prefix, "partitions": 8, "cluster": True, "lease_ms": 600}
    a = RedisJournal(url, consumer="a", reclaim_idle_ms=300, **kw)  # type: ignore[arg-type]
    await a.start()
    # the partitions' keys spread over the masters (each partition's keys in one slot)
    homes = {_node_of(cluster, f"{prefix}:{{j{p}}}:s") for p in range(8)}
    assert len(homes) >= 2
    for p in range(8):
        names = ("s", "n", "i", "st", "ik", "done", "err", "lease")
        assert len({_node_of(cluster, f"{prefix}:{{j{p}}}:{n}") for n in names}) == 1
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
    ns, session = f"user/{uuid.uuid4().hex[:8]}", "s|{tricky}"
    keys = session_keys(ns, session)
    homes = {_node_of(cluster, k) for k in keys}
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
