"""Recall worker processes (``gateway/recall_workers``) answer exactly what the gateway itself
answers, see every write the moment it is applied (and every forget and erasure), never cost a
recall when they die, never outlive the gateway, and refuse anyone but the gateway's own
children on their socket."""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import re
import signal
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from gateway.client import GatewayClient
from gateway.core.recall.recall_cache import RecallQuery, RecallResult
from gateway.recall_workers import frames
from gateway.recall_workers.pool import RecallWorkers
from gateway.rpc.prometheus import GatewayMetrics
from gateway.rpc.server import Gateway, gateway_in_thread
from gateway.settings import Settings, usable_cores
from tests.e2e import gateways
from tests.e2e.conftest import gateway_settings
from tests.tags import fresh_tag


@dataclass
class Running:
    address: str
    gw: Gateway
    loop: asyncio.AbstractEventLoop

    @property
    def pool(self) -> RecallWorkers:
        pool = self.gw.service.recaller.remote
        assert isinstance(pool, RecallWorkers)
        return pool

    def run(self, coro: Any, timeout: float = 60) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def by_worker(self, q: RecallQuery) -> RecallResult:
        result = self.run(self.pool.answer(q))
        assert result is not None, "no worker answered"
        return result

    def by_gateway(self, q: RecallQuery) -> RecallResult:
        return self.run(self.gw.service.recaller.engine.answer(q))

    def wait_ready(self, n: int, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while self.pool.ready < n:
            assert time.monotonic() < deadline, f"{self.pool.ready} of {n} workers ready"
            time.sleep(0.1)

    def client(self, agent_id: str = "master") -> GatewayClient:
        return GatewayClient(self.address, agent_id=agent_id)


@contextmanager
def running(settings: Settings) -> Iterator[Running]:
    with gateway_in_thread(settings) as (gw, loop):
        yield Running(f"127.0.0.1:{gw.port}", gw, loop)


def ids(result: RecallResult) -> list[str]:
    return [h.memory.id for h in result.hits]


def assert_same_ranking(a: RecallResult, b: RecallResult) -> None:
    """Same scores, and the same memory at every place whose score no other hit shares (equal
    scores may come in either order: the worker's index is filled in another order)."""
    scores = [round(h.score, 6) for h in a.hits]
    assert scores == [round(h.score, 6) for h in b.hits]
    for i, score in enumerate(scores):
        if scores.count(score) == 1 and score > scores[-1]:
            assert a.hits[i].memory.id == b.hits[i].memory.id, i


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory, backend: dict[str, str]) -> Iterator[Running]:
    settings = gateway_settings(
        tmp_path_factory.mktemp("rw"), recall_processes=2, recall_workers_start="eager", **backend
    )
    with running(settings) as r:
        r.wait_ready(2)
        yield r


def test_a_worker_answers_what_the_gateway_answers(two: Running) -> None:
    ns = f"user/u{fresh_tag(8)}"
    facts = [
        "Maya prefers oat milk in her coffee",
        "Maya's sister lives in Lisbon and teaches piano",
        "the quarterly report is due on the third Friday of March",
        "Maya adopted a grey cat named Pixel last spring",
        "the team agreed to move the standup to 9:30",
        "Maya is allergic to peanuts",
    ]
    c = two.client()
    c.batch_write([{"namespace": ns, "layer": "semantic", "content": f} for f in facts], wait=True)
    c.write(ns, "episodic", "Maya flew to Lisbon to visit her sister", wait=True)
    for query in ("what does Maya drink", "who lives in Lisbon", "pets", "when is the report due"):
        q = RecallQuery(query, (ns,), top_k=5)
        here, there = two.by_gateway(q), two.by_worker(q)
        assert len(ids(there)) == 5, query
        assert_same_ranking(here, there)
        assert there.routed == here.routed
        assert there.degraded == [] == here.degraded
    q = RecallQuery("which milk does Maya take in her coffee", (ns,), top_k=3)
    here, there = two.by_gateway(q), two.by_worker(q)
    assert ids(here)[0] == ids(there)[0] and there.hits[0].memory.content == facts[0]
    assert there.block == here.block


def test_a_write_is_found_by_a_worker_the_moment_it_is_applied(two: Running) -> None:
    ns = f"user/u{fresh_tag(8)}"
    c = two.client()
    for i in range(12):
        word = f"zebra{fresh_tag(6)}"
        mid = c.write(
            ns, "semantic", f"the password hint mentions {word} and nothing else", wait=True
        )
        # every worker's index holds it already (the lexical side alone would find it anyway);
        # vectors loaded on demand (the default with Neo4j): each holds what it recalled, and
        # reads a namespace it does not hold from the records (tests/contract/test_vector_cache)
        if not two.gw.service.stores.index.on_demand():
            here = two.run(two.gw.service.stores.index.count())
            assert two.run(two.pool.vectors()) == [here, here], f"write {i}"
        found = two.by_worker(RecallQuery(f"which hint mentions {word}", (ns,), top_k=3))
        assert mid in ids(found), f"write {i} not seen by the worker"


def test_forget_and_erasure_reach_the_workers(two: Running) -> None:
    ns = f"user/u{fresh_tag(8)}"
    c = two.client()
    keep = c.write(ns, "semantic", "Omar keeps his bike in the blue garage", wait=True)
    drop = c.write(ns, "semantic", "Omar keeps his spare key under the red flowerpot", wait=True)
    q = RecallQuery("where does Omar keep things", (ns,), top_k=5)
    assert {keep, drop} <= set(ids(two.by_worker(q)))
    c.forget(drop, reason="test")
    deadline = time.monotonic() + 15
    while drop in ids(two.by_worker(q)):
        assert time.monotonic() < deadline, "a forgotten memory is still recalled by a worker"
        time.sleep(0.1)
    assert keep in ids(two.by_worker(q))
    c.forget_namespace(ns, reason="test", wait=True)
    if not two.gw.service.stores.index.on_demand():  # else each holds what it recalled
        here = two.run(two.gw.service.stores.index.count())
        assert two.run(two.pool.vectors()) == [here, here]  # the erased vectors are gone there too
    # and no text: the workers' memos and embedder caches (queries, recalled memories) emptied
    assert two.run(two.pool.held_by_workers()) == [0, 0]
    for _ in range(2):  # both workers (least busy first: each is asked in turn)
        assert ids(two.by_worker(q)) == []


def test_concurrent_recalls_through_grpc_are_spread_over_the_workers(two: Running) -> None:
    ns = f"user/u{fresh_tag(8)}"
    c = two.client()
    mid = c.write(ns, "semantic", "the office wifi password is on the fridge", wait=True)
    before = two.pool.answered
    out: list[list[str]] = []
    start = threading.Barrier(8)

    def agent(n: int) -> None:
        with two.client() as mine:
            start.wait(30)
            for i in range(10):  # distinct queries: the recall cache must not answer them
                hits = mine.recall(f"wifi password, question {n}.{i}", [ns], top_k=3).hits
                out.append([h.id for h in hits])

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(out) == 80 and all(hits and hits[0] == mid for hits in out)
    assert two.pool.answered > before  # under concurrency the workers took some
    text = two.run(GatewayMetrics(two.gw.service).render()).decode()
    assert 'memgate_recall_workers{state="ready"} 2.0' in text
    answered = re.search(r'memgate_recall_worker_recalls_total\{outcome="answered"\} (\S+)', text)
    assert answered and float(answered.group(1)) == two.pool.answered


def test_an_erasure_under_constant_worker_reads_leaves_no_text_in_the_files(
    tmp_path: Path,
) -> None:
    """The workers' SQLite readers never hold up the erasure's WAL truncation (SECURITY.md:
    no page image of erased content stays in a ``-wal`` file)."""
    words = ["amber", "walrus", "pickle", "saffron", "lantern", "meadow", "quartz", "tundra"]
    pick = uuid.uuid4().int
    secret = "-".join(words[(pick >> (3 * i)) % 8] for i in range(6))  # nothing to redact
    data = tmp_path / "data"

    def files_with(needle: str) -> list[str]:
        return sorted(
            p.name for p in data.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()
        )

    with running(gateway_settings(tmp_path, recall_processes=2, recall_workers_start="eager")) as r:
        r.wait_ready(2)
        ns, other = f"user/gone-{fresh_tag(8)}", f"user/kept-{fresh_tag(8)}"
        c = r.client()
        items = [
            {"namespace": ns, "layer": "semantic", "content": f"note {i} near {secret} park"}
            for i in range(20)
        ]
        c.batch_write(items, wait=True)
        c.write(other, "semantic", "the kept namespace remembers the harbour", wait=True)
        assert {"records.db", "records.db-wal"} & set(files_with(secret))
        stop, before = threading.Event(), r.pool.answered
        errors: list[BaseException] = []

        def reader(n: int) -> None:
            with r.client() as mine:
                i = 0
                while not stop.is_set():
                    i += 1
                    try:
                        mine.recall(f"note {n}.{i} near the park", [ns, other], top_k=5)
                    except BaseException as exc:  # noqa: BLE001 - reported below
                        errors.append(exc)
                        return

        threads = [threading.Thread(target=reader, args=(n,)) for n in range(6)]
        for t in threads:
            t.start()
        try:
            deadline = time.monotonic() + 30
            while r.pool.answered < before + 20:  # the workers are reading
                assert time.monotonic() < deadline and not errors, errors
                time.sleep(0.05)
            done = c.forget_namespace(ns, reason="account closed", wait=True)
            assert done.applied
            time.sleep(0.5)  # and go on reading after it
        finally:
            stop.set()
            for t in threads:
                t.join(30)
        assert errors == []
        assert files_with(secret) == []
        here = r.run(r.gw.service.stores.index.count())
        assert r.run(r.pool.vectors()) == [here, here] and here == 1


def test_a_dead_worker_costs_no_recall_and_comes_back(tmp_path: Path) -> None:
    settings = gateway_settings(tmp_path, recall_processes=1, recall_workers_start="eager")
    with running(settings) as r:
        r.wait_ready(1)
        ns = f"user/u{fresh_tag(8)}"
        mid = r.client().write(
            ns, "semantic", "Ines runs the Berlin marathon every year", wait=True
        )
        q = RecallQuery("which marathon does Ines run", (ns,), top_k=3)
        assert ids(r.by_worker(q))[0] == mid
        slot = r.pool._slots[0]
        assert slot.process is not None
        os.kill(slot.process.pid, signal.SIGKILL)
        # answered all the same: by the gateway while the worker is gone
        for _ in range(5):
            assert r.run(r.pool.answer(q)) is None or ids(r.by_worker(q))[0] == mid
            assert r.run(r.gw.service.recaller.recall(q)).hits[0].memory.id == mid
        r.wait_ready(1, timeout=60)
        assert r.pool.spawned == 2
        assert ids(r.by_worker(q))[0] == mid  # the new worker filled its index from the records


def test_a_spawn_that_fails_is_tried_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Starting a worker can fail (no memory to fork, too many processes): the supervisor tries
    again after its back-off instead of ending, and with it every later respawn."""
    real_spawn = RecallWorkers._spawn
    failures = [OSError(11, "Resource temporarily unavailable")]

    def spawn(self: RecallWorkers, number: int) -> Any:
        if failures:
            raise failures.pop()
        return real_spawn(self, number)

    monkeypatch.setattr(RecallWorkers, "_spawn", spawn)
    with running(gateway_settings(tmp_path, recall_processes=1, recall_workers_start="eager")) as r:
        r.wait_ready(1, timeout=60)
        assert not failures and r.pool.spawned == 1
        supervisor = r.pool._supervisor
        assert supervisor is not None and not supervisor.done()


def test_a_hung_worker_is_killed_and_its_recalls_run_in_the_gateway(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gateway.recall_workers.pool as pool_module

    monkeypatch.setattr(pool_module, "HUNG_AFTER_S", 1.0)
    with running(gateway_settings(tmp_path, recall_processes=1, recall_workers_start="eager")) as r:
        r.wait_ready(1)
        slot = r.pool._slots[0]
        assert slot.process is not None
        hung = slot.process.pid
        os.kill(hung, signal.SIGSTOP)  # alive, and silent
        try:
            q = RecallQuery("anything at all", ("user/nobody",), top_k=3)
            started = time.monotonic()
            assert r.run(r.pool.answer(q), timeout=30) is None  # given up on: run here
            assert time.monotonic() - started < 10
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(hung, signal.SIGCONT)
        r.wait_ready(1, timeout=60)
        assert slot.process is not None and slot.process.pid != hung


def test_the_workers_socket_refuses_strangers(tmp_path: Path) -> None:
    settings = gateway_settings(tmp_path, recall_processes=1, recall_workers_start="eager")
    with running(settings) as r:
        r.wait_ready(1)
        address = str(r.pool._address)
        assert (os.stat(os.path.dirname(address)).st_mode & 0o077) == 0  # the owner's alone
        evil = pickle.dumps(("hi", 0))
        for attempt in (
            b"\0" * frames.SECRET_BYTES + frames.encode(("hi", 0)),  # wrong secret
            os.urandom(200),  # noise
            evil,  # a pickle where the secret goes: never unpickled
            b"",  # nothing at all
        ):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(15)
                s.connect(address)
                s.sendall(attempt)
                s.shutdown(socket.SHUT_WR)
                assert s.recv(100) == b""  # closed without a word (no "hello")
        assert r.pool.ready == 1  # the real worker was not displaced
        ns = f"user/u{fresh_tag(8)}"
        mid = r.client().write(ns, "semantic", "the boiler is serviced in October", wait=True)
        assert ids(r.by_worker(RecallQuery("boiler service", (ns,), top_k=2)))[0] == mid


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        out += [int(x) for x in text]
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


@pytest.mark.skipif(usable_cores() < 2, reason="the default starts no worker on one core")
def test_by_default_workers_start_at_the_first_concurrent_recall_and_never_outlive_a_killed_gateway(
    tmp_path: Path,
) -> None:
    gw = gateways.spawn(tmp_path / "data", [], env={"MEMGATE_RECALL_PROCESSES": "-1"})
    try:
        with GatewayClient(gw.address, "master") as c:
            c.write("user/lazy", "semantic", "The user keeps bees", wait=True)
            for _ in range(3):  # one agent, one recall at a time: the gateway alone answers
                assert c.recall("bees", ["user/lazy"])
        time.sleep(2)
        assert _children(gw.proc.pid) == [], "an idle gateway started recall workers"

        def burst() -> None:
            with GatewayClient(gw.address, "master") as c:
                for _ in range(5):
                    assert c.recall(f"bees {uuid.uuid4().hex}", ["user/lazy"])

        deadline = time.monotonic() + 60
        while len(kids := _children(gw.proc.pid)) < 2:
            assert time.monotonic() < deadline, "concurrent recalls did not start two workers"
            threads = [threading.Thread(target=burst) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        gw.kill()  # SIGKILL: no shutdown hook runs
        deadline = time.monotonic() + 20
        while any(_alive(k) for k in kids):
            assert time.monotonic() < deadline, "recall workers outlived their gateway"
            time.sleep(0.1)
    finally:
        gw.stop()


def test_recall_processes_is_bounded_and_auto_fits_the_cores(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import gateway.settings as gs

    for bad in (-2, gs.MAX_RECALL_PROCESSES + 1):
        with pytest.raises(ValueError, match="recall_processes"):
            replace(Settings(), recall_processes=bad).validate()
    for cores, expected in ((1, 0), (2, 2), (3, 3), (64, gs.AUTO_RECALL_PROCESSES)):
        monkeypatch.setattr(gs, "usable_cores", lambda cores=cores: cores)
        assert Settings().recall_workers() == expected
    assert Settings(recall_processes=0).recall_workers() == 0
    assert Settings(recall_processes=3).recall_workers() == 3
