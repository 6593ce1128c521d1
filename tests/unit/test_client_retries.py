"""Both clients retry UNAVAILABLE — and only that — with the very same request, so a write
retried after a lost answer carries the same idempotency key. The far end is a real gRPC server
(on loopback) whose Write answers UNAVAILABLE a set number of times and records what it got."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest

from gateway import aio
from gateway import client as gc
from memgate.v1 import memgate_pb2 as pb
from memgate.v1 import memgate_pb2_grpc as pb_grpc


class FlakyGateway(pb_grpc.MemoryGatewayServicer):
    def __init__(self) -> None:
        self.failures: list[grpc.StatusCode] = []  # answered in order, then success
        self.retry_after_ms = 150
        self.keys: list[str] = []
        self.agents: list[str] = []

    def Write(self, request: pb.WriteRequest, context: grpc.ServicerContext) -> pb.WriteResponse:  # noqa: N802
        self.keys.append(request.item.idempotency_key)
        self.agents.append(dict(context.invocation_metadata()).get("x-agent-id", ""))
        if self.failures:
            code = self.failures.pop(0)
            if code is grpc.StatusCode.RESOURCE_EXHAUSTED:
                context.set_trailing_metadata((("retry-after-ms", str(self.retry_after_ms)),))
                context.abort(code, "too many calls in flight")
            context.abort(code, "store down")
        return pb.WriteResponse(result=pb.WriteResult(id="m-1", applied=True))


@pytest.fixture
def flaky() -> Iterator[tuple[FlakyGateway, str]]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    servicer = FlakyGateway()
    pb_grpc.add_MemoryGatewayServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield servicer, f"127.0.0.1:{port}"
    server.stop(0)


def _write_with(kind: str, address: str, retries: int, **kw: Any) -> gc.WriteResult:
    """One ``write_result`` through the blocking or the asyncio client."""
    if kind == "sync":
        with gc.GatewayClient(address, agent_id="a1", retries=retries) as c:
            return c.write_result("user/u1", "semantic", "a fact", **kw)

    async def run() -> gc.WriteResult:
        async with aio.GatewayClient(address, agent_id="a1", retries=retries) as c:
            return await c.write_result("user/u1", "semantic", "a fact", **kw)

    return asyncio.run(run())


KINDS = ["sync", "aio"]
Flaky = tuple[FlakyGateway, str]


@pytest.mark.parametrize("kind", KINDS)
def test_unavailable_is_retried_with_the_same_key(flaky: Flaky, kind: str) -> None:
    servicer, address = flaky
    servicer.failures = [grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.UNAVAILABLE]
    result = _write_with(kind, address, retries=3)
    assert result.id == "m-1"
    assert len(servicer.keys) == 3 and len(set(servicer.keys)) == 1 and servicer.keys[0]
    assert servicer.agents == ["a1"] * 3


@pytest.mark.parametrize("kind", KINDS)
def test_a_given_key_is_sent_as_is(flaky: Flaky, kind: str) -> None:
    servicer, address = flaky
    servicer.failures = [grpc.StatusCode.UNAVAILABLE]
    _write_with(kind, address, retries=1, idempotency_key="mine")
    assert servicer.keys == ["mine", "mine"]


@pytest.mark.parametrize("kind", KINDS)
def test_retries_run_out_with_unavailable(flaky: Flaky, kind: str) -> None:
    servicer, address = flaky
    servicer.failures = [grpc.StatusCode.UNAVAILABLE] * 5
    with pytest.raises(gc.Unavailable, match="store down"):
        _write_with(kind, address, retries=2)
    assert len(servicer.keys) == 3


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("code", "error"),
    [
        (grpc.StatusCode.INVALID_ARGUMENT, gc.InvalidArgument),
        (grpc.StatusCode.PERMISSION_DENIED, gc.PermissionDenied),
    ],
)
def test_other_errors_are_not_retried(
    flaky: Flaky, kind: str, code: grpc.StatusCode, error: Callable[..., Exception]
) -> None:
    servicer, address = flaky
    servicer.failures = [code]
    with pytest.raises(error) as err:  # type: ignore[call-overload]
        _write_with(kind, address, retries=3)
    assert err.value.code == code and len(servicer.keys) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_unimplemented_rpc_is_typed(flaky: Flaky, kind: str) -> None:
    """An RPC the far end lacks is ``Unimplemented`` (how a newer client meets an older
    gateway), and is not retried."""
    _, address = flaky
    if kind == "sync":
        with gc.GatewayClient(address, agent_id="a1") as c, pytest.raises(gc.Unimplemented):
            c.stats()
        return

    async def run() -> None:
        async with aio.GatewayClient(address, agent_id="a1") as c:
            with pytest.raises(gc.Unimplemented):
                await c.stats()

    asyncio.run(run())


@pytest.mark.parametrize("kind", KINDS)
def test_overloaded_waits_the_gateways_hint_and_goes_again(flaky: Flaky, kind: str) -> None:
    """RESOURCE_EXHAUSTED means the call was refused before anything was done: it is sent
    again (same key) after the ``retry-after-ms`` the gateway named; retries=0 sends it once."""
    servicer, address = flaky
    servicer.failures = [grpc.StatusCode.RESOURCE_EXHAUSTED]
    with pytest.raises(gc.Overloaded):
        _write_with(kind, address, retries=0)
    servicer.keys.clear()
    servicer.failures = [grpc.StatusCode.RESOURCE_EXHAUSTED] * 2
    start = time.monotonic()
    result = _write_with(kind, address, retries=1)
    took = time.monotonic() - start
    assert result.id == "m-1" and len(servicer.keys) == 3 and len(set(servicer.keys)) == 1
    assert took >= 2 * 0.150  # the hint was waited for, twice


@pytest.mark.parametrize("kind", KINDS)
def test_overload_retries_run_out(flaky: Flaky, kind: str) -> None:
    servicer, address = flaky
    servicer.retry_after_ms = 1
    servicer.failures = [grpc.StatusCode.RESOURCE_EXHAUSTED] * 20
    with pytest.raises(gc.Overloaded) as err:
        _write_with(kind, address, retries=3)
    assert err.value.retry_after_ms == 1 and len(servicer.keys) == 9  # 1 + 8 overload retries


def test_unavailable_back_off_is_jittered_within_its_cap() -> None:
    """Clients cut off together do not come back together: each wait is half to all of the
    capped exponential back-off (docs/CLIENTS.md, the same rule in every client)."""
    import grpc as _grpc

    from gateway.client.api import Call, RetryPolicy

    class _Err(_grpc.RpcError):
        def code(self) -> _grpc.StatusCode:
            return _grpc.StatusCode.UNAVAILABLE

        def details(self) -> str:
            return "down"

        def trailing_metadata(self) -> tuple[()]:
            return ()

    policy = RetryPolicy(retries=5, base_s=0.2, cap_s=2.0)
    call = Call("Recall", None, lambda r: r)
    for attempt, full in [(0, 0.2), (1, 0.4), (3, 1.6), (4, 2.0)]:
        waits = {policy.after_failure(call, _Err(), attempt) for _ in range(50)}
        assert all(full / 2 <= w <= full for w in waits), (attempt, waits)
        assert len(waits) > 1  # not one fixed delay
