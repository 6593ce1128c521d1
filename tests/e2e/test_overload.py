"""An overloaded gateway (the real service, embedded stores) answers RESOURCE_EXHAUSTED with
retry-after-ms, and the rejected call changes nothing: the same write retried later (same
idempotency key) is stored once. Slots are taken through the admission counters themselves, so
"overloaded" is deterministic, not a race against the machine's speed."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from gateway.client import GatewayClient
from gateway.client.errors import Overloaded
from gateway.rpc.server import Gateway, gateway_in_thread
from tests.e2e.conftest import gateway_settings
from tests.tags import fresh_tag


@contextmanager
def gateway(tmp_path: Path) -> Iterator[tuple[str, Gateway, asyncio.AbstractEventLoop]]:
    settings = gateway_settings(
        tmp_path,
        max_inflight_reads=2,
        max_inflight_reads_per_agent=0,
        max_inflight_writes=2,
        max_inflight_writes_per_agent=0,
        overload_retry_after_ms=300,
    )
    with gateway_in_thread(settings) as (gw, loop):
        yield f"127.0.0.1:{gw.port}", gw, loop


def on_loop(loop: asyncio.AbstractEventLoop, fn: object, *args: object) -> None:
    """Run ``fn(*args)`` on the gateway's loop (the admission counters live there)."""

    async def call() -> None:
        fn(*args)  # type: ignore[operator]

    asyncio.run_coroutine_threadsafe(call(), loop).result(10)


def test_overload_is_rejected_with_retry_info_and_changes_nothing(tmp_path: Path) -> None:
    ns = f"user/u-{fresh_tag(8)}"
    key = uuid.uuid4().hex
    with gateway(tmp_path) as (address, gw, loop):
        assert gw.admission is not None
        with GatewayClient(address, agent_id="master", retries=0) as c:
            before = c.stats()
            # two writes and two reads "in flight" elsewhere: the gateway is full
            for _ in range(2):
                on_loop(loop, gw.admission.writes.enter, "someone")
                on_loop(loop, gw.admission.reads.enter, "someone")
            t0 = time.perf_counter()
            with pytest.raises(Overloaded) as err:
                c.write(ns, "semantic", "the user is allergic to peanuts", idempotency_key=key)
            # at least the configured hint; more as agents wait per admission (1 per 2 here)
            assert err.value.retry_after_ms == 500
            assert "retry after 500 ms" in err.value.message
            with pytest.raises(Overloaded) as err:
                c.recall("allergies", [ns])
            assert err.value.retry_after_ms == 500
            assert time.perf_counter() - t0 < 10  # answered, not queued until the slots free
            # nothing was journaled or stored
            after = c.stats()
            assert after.journal_applied == before.journal_applied
            assert after.journal_pending == 0 and after.vectors == before.vectors
            # the slots free up: the same write (same key) goes through, once
            for _ in range(2):
                on_loop(loop, gw.admission.writes.leave, "someone")
                on_loop(loop, gw.admission.reads.leave, "someone")
            first = c.write(
                ns, "semantic", "the user is allergic to peanuts", idempotency_key=key, wait=True
            )
            again = c.write(
                ns, "semantic", "the user is allergic to peanuts", idempotency_key=key, wait=True
            )
            assert first == again
            hits = c.recall("allergic to peanuts", [ns]).hits
            assert [h.id for h in hits] == [first]
            assert gw.admission.writes.rejected == 1 and gw.admission.reads.rejected == 1


def test_a_burst_of_recalls_from_one_agent_waits_its_turn(tmp_path: Path) -> None:
    """``asyncio.gather`` of 20 recalls from one agent against a per-agent limit of 4 reads in
    flight: the asyncio client waits the gateway's retry-after-ms and every recall answers."""
    from gateway import aio

    settings = gateway_settings(
        tmp_path,
        max_inflight_reads_per_agent=4,
        admission_queue_reads=0,
        overload_retry_after_ms=50,
    )
    ns = f"user/u-{fresh_tag(8)}"
    with gateway_in_thread(settings) as (gw, _loop):
        address = f"127.0.0.1:{gw.port}"
        with GatewayClient(address, agent_id="master") as c:
            c.write(ns, "semantic", "The user is allergic to peanuts", wait=True)

        async def burst() -> list[int]:
            async with aio.GatewayClient(address, agent_id="master") as a:
                answers = await asyncio.gather(
                    *(a.recall(f"allergies {n}", [ns]) for n in range(20))
                )
            return [len(r.hits) for r in answers]

        assert asyncio.run(burst()) == [1] * 20
