"""SettingsLedger contract: small settings the gateway keeps for itself, replaced whole, kept
across a restart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from gateway.core.ports.control_ports import SettingsLedger
from tests.contract.ledger.opening import Opens, opened


class SettingsStore(SettingsLedger, Opens, Protocol):
    """A settings adapter as the suite opens it."""


async def test_settings_round_trip(ledger: SettingsLedger) -> None:
    assert await ledger.get_setting("policy") is None
    await ledger.put_setting("policy", {"auto_approve": ["user/*"], "min_confidence": 0.5})
    await ledger.put_setting("policy", {"auto_approve": [], "min_confidence": 0.9})
    assert await ledger.get_setting("policy") == {"auto_approve": [], "min_confidence": 0.9}


async def test_settings_survive_a_restart(make_ledger: Callable[[], SettingsStore]) -> None:
    value = {"space": "onnx-e5", "dim": 384, "names": ["é", "用户"], "nested": {"on": True}}
    async with opened(make_ledger) as ledger:
        await ledger.put_setting("vector_space", value)
    async with opened(make_ledger) as ledger:
        assert await ledger.get_setting("vector_space") == value
        assert await ledger.get_setting("other") is None
