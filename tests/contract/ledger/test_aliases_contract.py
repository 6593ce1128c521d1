"""AliasLedger contract: which memory a write id ended up in, kept across a restart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from gateway.core.ports.control_ports import AliasLedger
from tests.contract.ledger.opening import Opens, opened


class AliasStore(AliasLedger, Opens, Protocol):
    """An alias adapter as the suite opens it."""


async def test_aliases_resolve_merged_writes(ledger: AliasLedger) -> None:
    assert await ledger.resolve("w1") == "w1"
    await ledger.set_aliases([("w1", "m1"), ("w2", "m1")])
    assert (await ledger.resolve("w1"), await ledger.resolve("w2")) == ("m1", "m1")
    many = await ledger.resolve_many(["w1", "w3", "w2", "w1"])
    assert many == {"w1": "m1", "w2": "m1", "w3": "w3"}
    assert await ledger.resolve_many([]) == {}


async def test_aliases_survive_a_restart(make_ledger: Callable[[], AliasStore]) -> None:
    async with opened(make_ledger) as ledger:
        await ledger.set_aliases([("w1", "m1")])
        await ledger.set_aliases([("w1", "m2")])  # the later merge wins
    async with opened(make_ledger) as ledger:
        assert await ledger.resolve_many(["w1", "w2"]) == {"w1": "m2", "w2": "w2"}
