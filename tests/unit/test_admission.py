"""Admission control over a real gRPC server: beyond the bound of reads (or writes) in flight,
server-wide or per agent, a call gets RESOURCE_EXHAUSTED at once with retry-after-ms, and the
calls already admitted are not disturbed. The servicer's Recall/Write are held open on an event,
so "in flight" is deterministic."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import grpc
import pytest

from gateway.client import GatewayClient
from gateway.client.errors import Overloaded
from gateway.core.model import errors
from gateway.rpc.admission import READS, WRITES, Admission, Bounds, InFlight
from gateway.rpc.interceptors import ErrorMapping
from gateway.rpc.servicer import GatewayServicer
from gateway.settings import UNBOUNDED_CALLS_ROOM, Settings
from memgate.v1 import memgate_pb2 as pb
from memgate.v1 import memgate_pb2_grpc as pb_grpc


class Held(GatewayServicer):
    """Recall and BatchWrite wait until released; nothing else is served."""

    def __init__(self) -> None:
        self.release: asyncio.Event | None = None
        self.recalls = 0

    async def Recall(self, req: pb.RecallRequest, ctx: Any) -> pb.RecallResponse:
        assert self.release is not None
        self.recalls += 1
        await self.release.wait()
        return pb.RecallResponse()

    async def BatchWrite(self, req: pb.BatchWriteRequest, ctx: Any) -> pb.BatchWriteResponse:
        assert self.release is not None
        await self.release.wait()
        return pb.BatchWriteResponse()


@contextmanager
def held_server(
    reads: Bounds, writes: Bounds, max_rpcs: int | None = None
) -> Iterator[tuple[str, Admission, Any]]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    servicer = Held()
    admission = Admission(reads, writes, retry_after_ms=250)

    async def boot() -> tuple[grpc.aio.Server, int]:
        servicer.release = asyncio.Event()
        server = grpc.aio.server(
            interceptors=[ErrorMapping({}), admission], maximum_concurrent_rpcs=max_rpcs
        )
        pb_grpc.add_MemoryGatewayServicer_to_server(servicer, server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        return server, port

    server, port = asyncio.run_coroutine_threadsafe(boot(), loop).result(10)

    def release() -> None:
        assert servicer.release is not None
        loop.call_soon_threadsafe(servicer.release.set)

    try:
        yield f"127.0.0.1:{port}", admission, (release, servicer)
    finally:
        release()
        asyncio.run_coroutine_threadsafe(server.stop(0), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def wait_for(cond: Any, timeout: float = 10.0) -> None:
    deadline = threading.Event()
    for _ in range(int(timeout / 0.01)):
        if cond():
            return
        deadline.wait(0.01)
    raise AssertionError("condition not reached")


def recall(address: str, agent: str) -> Any:
    with GatewayClient(address, agent_id=agent, timeout=20, retries=0) as c:
        return c.recall("what did I say", ["user/u"])


def test_reads_beyond_the_server_bound_get_resource_exhausted_at_once() -> None:
    with (
        held_server(Bounds(2, 0), Bounds(0, 0)) as (address, admission, (release, _)),
        ThreadPoolExecutor(4) as pool,
    ):
        admitted: list[Future[Any]] = [pool.submit(recall, address, f"agent-{i}") for i in (1, 2)]
        wait_for(lambda: admission.reads.total == 2)
        with pytest.raises(Overloaded) as err:
            recall(address, "agent-3")
        assert err.value.retry_after_ms == 250
        assert "retry after 250 ms" in err.value.message and "limit 2" in err.value.message
        assert not any(f.done() for f in admitted)  # the rejection did not wait for them
        # a write is another class: not bounded by the reads in flight
        write = pool.submit(
            lambda: GatewayClient(address, agent_id="agent-3", retries=0).batch_write(
                [dict(namespace="user/u", layer="semantic", content="x")]
            )
        )
        wait_for(lambda: admission.writes.total == 1)
        release()
        for f in [*admitted, write]:
            f.result(10)
        assert admission.reads.total == 0 and admission.reads.rejected == 1
        recall(address, "agent-3")  # room again


def test_one_agent_cannot_take_every_slot() -> None:
    with (
        held_server(Bounds(10, 1), Bounds(0, 0)) as (address, admission, (release, _)),
        ThreadPoolExecutor(2) as pool,
    ):
        first = pool.submit(recall, address, "greedy")
        wait_for(lambda: admission.reads.by_agent.get("greedy") == 1)
        with pytest.raises(Overloaded) as err:
            recall(address, "greedy")
        assert "agent 'greedy'" in err.value.message and err.value.retry_after_ms == 250
        other = pool.submit(recall, address, "polite")
        wait_for(lambda: admission.reads.by_agent.get("polite") == 1)
        release()
        first.result(10)
        other.result(10)
        assert admission.reads.by_agent == {}


def test_retry_hint_grows_with_the_agents_waiting_per_admission() -> None:
    now = [0.0]
    gate = InFlight("reads", Bounds(2, 0), 100, 2000, clock=lambda: now[0])

    def refused(agent: str) -> int:
        with pytest.raises(errors.Overloaded) as err:
            gate.enter(agent)
        assert f"retry after {err.value.retry_after_ms} ms" in err.value.message
        return err.value.retry_after_ms

    assert refused_after_fill(gate, refused) == 500  # so far 1 agent waiting per 2 admissions
    for i in range(20):  # a busy second: 2 slots, 20 more calls admitted, 40 agents turned away
        gate.leave("a")
        gate.enter("a")
        refused(f"agent-{i}")
        refused(f"agent-{i + 100}")
    now[0] = 1.0
    assert refused("late") == round(1000 * 41 / 22)  # 41 agents waited per 22 admissions
    for i in range(200):
        refused(f"crowd-{i}")
    assert refused("last") == 2000  # capped
    now[0] = 5.0  # after a quiet spell the history is forgotten
    gate.leave("a")
    for _ in range(20):
        gate.enter("b")
        gate.leave("b")
    gate.enter("b")
    assert refused("c") == 100  # 1 waiting per 21 admissions: never below the configured hint


def refused_after_fill(gate: InFlight, refused: Any) -> int:
    gate.enter("a")
    gate.enter("a")
    return int(refused("first"))


def test_grpc_cap_refuses_before_any_python_work_and_the_client_sees_overloaded() -> None:
    """Past ``maximum_concurrent_rpcs`` gRPC itself answers RESOURCE_EXHAUSTED (no retry-after
    trailer): the client still raises ``Overloaded``, and the servicer never saw the call."""
    with (
        held_server(Bounds(0, 0), Bounds(0, 0), max_rpcs=2) as (address, admission, held),
        ThreadPoolExecutor(2) as pool,
    ):
        release, servicer = held
        admitted = [pool.submit(recall, address, f"agent-{i}") for i in (1, 2)]
        wait_for(lambda: admission.reads.total == 2)
        with pytest.raises(Overloaded) as err:
            recall(address, "agent-3")
        assert err.value.retry_after_ms == 0  # gRPC's own answer carries no hint
        assert servicer.recalls == 2 and admission.reads.rejected == 0
        release()
        for f in admitted:
            f.result(10)
        recall(address, "agent-3")  # room again


def test_derived_grpc_cap_sits_above_the_admission_bounds() -> None:
    s = Settings(max_inflight_reads=8, max_inflight_writes=16)
    assert s.concurrent_rpc_cap() == (
        8 + 16 + s.admission_queue_reads + s.admission_queue_writes + UNBOUNDED_CALLS_ROOM
    )
    assert Settings(max_inflight_reads=0).concurrent_rpc_cap() is None  # unbounded reads
    assert Settings(grpc_max_concurrent_rpcs=50).concurrent_rpc_cap() == 50
    assert Settings(grpc_max_concurrent_rpcs=-1).validate().concurrent_rpc_cap() is None
    with pytest.raises(ValueError, match="grpc_max_concurrent_rpcs"):
        Settings(grpc_max_concurrent_rpcs=-2).validate()


def test_every_gateway_method_is_classified() -> None:
    methods = set(pb.DESCRIPTOR.services_by_name["MemoryGateway"].methods_by_name)
    unbounded = methods - READS - WRITES
    # operator calls stay reachable under overload
    assert unbounded <= {
        "Stats",
        "BreakerStates",
        "ListProposals",
        "ApproveProposal",
        "RejectProposal",
        "SetSharedWritePolicy",
        "StartTask",
        "UpdateStep",
        "GetTask",
        "Maintain",
        "ListReview",
        "ResolveReview",
        "Export",  # a long stream: it would hold a read slot for its whole length
        "Import",
        "ListPendingFacts",
    }, unbounded
    assert not READS & WRITES and methods >= (READS | WRITES)


def test_a_call_beyond_the_bound_waits_in_the_queue_and_gets_the_freed_slot() -> None:
    """Queue of 1: the third recall waits (no RESOURCE_EXHAUSTED) and is served once a slot is
    freed; a fourth, with the queue full, is refused at once; nothing is left counted."""
    with (
        held_server(Bounds(2, 0, queue=1, queue_timeout_s=20), Bounds(0, 0)) as (
            address,
            admission,
            (release, servicer),
        ),
        ThreadPoolExecutor(4) as pool,
    ):
        calls = [pool.submit(recall, address, f"agent-{i}") for i in (1, 2)]
        wait_for(lambda: admission.reads.total == 2)
        calls.append(pool.submit(recall, address, "agent-3"))
        wait_for(lambda: admission.reads.waiting == 1)
        with pytest.raises(Overloaded) as err:
            recall(address, "agent-4")
        assert "1 waiting (limit 1)" in err.value.message
        assert servicer.recalls == 2 and not calls[2].done()
        release()
        for f in calls:
            f.result(10)
        assert servicer.recalls == 3  # the waiter was served, not refused
        r = admission.reads
        assert (r.total, r.waiting, r.by_agent, r.rejected) == (0, 0, {}, 1)


def test_a_waiter_that_times_out_is_refused_and_leaves_nothing_behind() -> None:
    async def run() -> None:
        gate = InFlight("reads", Bounds(1, 0, queue=2, queue_timeout_s=0.05), 100)
        await gate.admit("a")
        with pytest.raises(errors.Overloaded) as err:
            await gate.admit("b")
        assert "none finished within 50 ms" in err.value.message
        assert (gate.total, gate.waiting, gate.by_agent) == (1, 0, {"a": 1})
        # a waiter whose caller goes away is removed too, and the slot still passes on
        waiter = asyncio.ensure_future(gate.admit("c"))
        queued = asyncio.ensure_future(gate.admit("d"))
        await asyncio.sleep(0)
        assert gate.waiting == 2
        waiter.cancel()
        await asyncio.sleep(0)
        gate.leave("a")
        await queued  # "d" got the slot "a" left, past the cancelled "c"
        assert (gate.total, gate.waiting, gate.by_agent) == (1, 0, {"d": 1})
        gate.leave("d")
        assert (gate.total, gate.by_agent) == (0, {})

    asyncio.run(run())


def test_an_agent_at_its_own_bound_is_refused_even_with_room_in_the_queue() -> None:
    async def run() -> None:
        gate = InFlight("reads", Bounds(1, 2, queue=5, queue_timeout_s=5), 100)
        await gate.admit("a")
        second = asyncio.ensure_future(gate.admit("a"))  # waits: counts as one of a's two
        await asyncio.sleep(0)
        with pytest.raises(errors.Overloaded) as err:
            await gate.admit("a")
        assert "already has 2 reads in flight (limit 2)" in err.value.message
        gate.leave("a")
        await second
        gate.leave("a")
        assert (gate.total, gate.waiting, gate.by_agent) == (0, 0, {})

    asyncio.run(run())
