"""The client over several gateways: calls spread round robin, and when one gateway dies
(kill -9) every call still succeeds on the others (UNAVAILABLE retried on another replica)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from gateway import aio
from gateway.client import GatewayClient
from tests.e2e.gateways import fleet
from tests.tags import fresh_tag

pytestmark = pytest.mark.slow


def _where(addresses: list[str], ids: list[str]) -> list[int]:
    """How many of ``ids`` each gateway holds (embedded gateways share nothing)."""
    counts = []
    for address in addresses:
        with GatewayClient(address, agent_id="master", retries=0) as direct:
            n = 0
            for mid in ids:
                try:
                    direct.get(mid)
                    n += 1
                except Exception:  # noqa: BLE001 - NOT_FOUND: the other gateway has it
                    pass
            counts.append(n)
    return counts


def test_calls_spread_and_survive_a_killed_gateway(tmp_path: Path) -> None:
    ns = f"user/u-{fresh_tag(10)}"
    with fleet(tmp_path, 2, []) as gws:
        with GatewayClient(gws.addresses, agent_id="master", timeout=10) as c:
            ids = [c.write(ns, "semantic", f"fact number {i}", wait=True) for i in range(20)]
            counts = _where(gws.addresses, ids)
            assert sum(counts) == 20 and min(counts) >= 3, counts  # both served writes
            gws.gateways[0].kill()
            after = [c.write(ns, "semantic", f"later fact {i}", wait=True) for i in range(20)]
            assert all(after)  # none failed: each retried on the survivor
            hits = [c.recall(f"later fact {i}", [ns], top_k=3) for i in range(5)]
            assert all(h.hits for h in hits)
        assert _where(gws.addresses[1:], after) == [20]


def test_the_asyncio_client_balances_too(tmp_path: Path) -> None:
    ns = f"user/u-{fresh_tag(10)}"

    async def run(addresses: list[str], kill: object) -> list[str]:
        async with aio.GatewayClient(",".join(addresses), agent_id="master", timeout=10) as c:
            first = [await c.write(ns, "semantic", f"a{i}", wait=True) for i in range(10)]
            kill()  # type: ignore[operator]
            return first + [await c.write(ns, "semantic", f"b{i}", wait=True) for i in range(10)]

    with fleet(tmp_path, 2, []) as gws:
        ids = asyncio.run(run(gws.addresses, gws.gateways[1].kill))
        assert len(ids) == 20 and all(ids)
