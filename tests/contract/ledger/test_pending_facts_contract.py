"""PendingFactLedger contract: a fact seen in dialogue counts each session once, gathers its
evidence, is marked promoted, and is kept across a restart."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from gateway.core.ports.control_ports import PendingFactLedger
from tests.contract.ledger.opening import Opens, opened


class PendingFactStore(PendingFactLedger, Opens, Protocol):
    """A pending-fact adapter as the suite opens it."""


async def test_pending_fact_counts_distinct_sessions(ledger: PendingFactLedger) -> None:
    first = await ledger.see_fact("p1", "user/a", "likes tea", "Likes tea", "s1", ["e1"], 0.6)
    assert (first.id, first.sessions, first.evidence, first.promoted_to) == (
        "p1",
        ["s1"],
        ["e1"],
        "",
    )
    same = await ledger.see_fact("p9", "user/a", "likes tea", "Likes tea", "s1", ["e1"], 0.5)
    assert same.id == "p1" and same.sessions == ["s1"]  # the same session counts once
    second = await ledger.see_fact("p9", "user/a", "likes tea", "Likes tea", "s2", ["e2"], 0.8)
    assert second.sessions == ["s1", "s2"] and second.evidence == ["e1", "e2"]
    assert second.confidence == 0.8
    await ledger.mark_promoted("p1", "m1")
    got = await ledger.get_pending_fact("p1")
    assert got is not None and got.promoted_to == "m1" and got.sessions == ["s1", "s2"]
    assert await ledger.get_pending_fact("nope") is None


async def test_the_waiting_facts_of_a_namespace_are_listed_oldest_first(
    ledger: PendingFactLedger,
) -> None:
    for pid, key in (("p1", "likes tea"), ("p2", "lives in köln"), ("p3", "has a cat")):
        await ledger.see_fact(pid, "user/list", key, key.capitalize(), "s1", [], 0.5)
        await asyncio.sleep(0.002)  # distinct creation times
    await ledger.see_fact("p4", "user/other", "likes tea", "Likes tea", "s1", [], 0.5)
    await ledger.see_fact("p9", "user/list", "likes tea", "Likes tea", "s2", ["e"], 0.7)
    await ledger.mark_promoted("p2", "m2")
    listed = await ledger.pending_facts("user/list", 10)
    assert [(f.id, f.fact, f.sessions) for f in listed] == [
        ("p1", "Likes tea", ["s1", "s2"]),
        ("p3", "Has a cat", ["s1"]),
    ]
    assert listed[0].evidence == ["e"] and listed[0].confidence == 0.7
    assert [f.id for f in await ledger.pending_facts("user/list", 1)] == ["p1"]
    assert await ledger.pending_facts("user/nobody", 10) == []


async def test_pending_facts_survive_a_restart(
    make_ledger: Callable[[], PendingFactStore],
) -> None:
    async with opened(make_ledger) as ledger:
        await ledger.see_fact("p1", "user/a", "likes tea", "Likes tea", "s1", ["e1"], 0.6)
        await ledger.see_fact("p2", "user/b", "lives", "Lives in Köln", "s1", [], 0.5)
        await ledger.mark_promoted("p2", "m2")
    async with opened(make_ledger) as ledger:
        again = await ledger.see_fact("p9", "user/a", "likes tea", "Likes tea", "s2", ["e2"], 0.4)
        assert (again.id, again.sessions, again.evidence, again.confidence) == (
            "p1",
            ["s1", "s2"],
            ["e1", "e2"],
            0.6,
        )
        promoted = await ledger.get_pending_fact("p2")
        assert promoted is not None
        assert (promoted.fact, promoted.promoted_to) == ("Lives in Köln", "m2")
