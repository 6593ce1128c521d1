"""ReviewLedger contract: the review queue keeps one entry per memory, resolved once, kept across
a restart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from gateway.core.model.control import ReviewItem
from gateway.core.ports.control_ports import ReviewLedger
from tests.contract.ledger.opening import Opens, opened


class ReviewStore(ReviewLedger, Opens, Protocol):
    """A review-queue adapter as the suite opens it."""


async def test_review_queue_keeps_one_entry_per_memory(ledger: ReviewLedger) -> None:
    await ledger.add_review([ReviewItem("m1", "user/a", "quarantined")])
    await ledger.add_review([ReviewItem("m1", "user/a", "again"), ReviewItem("m2", "global", "x")])
    assert await ledger.list_review(10) == [
        ReviewItem("m1", "user/a", "quarantined"),
        ReviewItem("m2", "global", "x"),
    ]


async def test_resolved_review_items_leave_the_queue_once(ledger: ReviewLedger) -> None:
    await ledger.add_review([ReviewItem("m1", "user/a", "quarantined"), ReviewItem("m2", "g", "x")])
    assert await ledger.resolve_review("m1", "approved", "master", "looks fine")
    assert not await ledger.resolve_review("m1", "rejected", "master", "late")
    assert not await ledger.resolve_review("nope", "approved", "master", "")
    assert [i.memory_id for i in await ledger.list_review(10)] == ["m2"]
    await ledger.add_review([ReviewItem("m1", "user/a", "again")])  # stays resolved
    assert [i.memory_id for i in await ledger.list_review(10)] == ["m2"]


async def test_the_review_queue_survives_a_restart(make_ledger: Callable[[], ReviewStore]) -> None:
    async with opened(make_ledger) as ledger:
        await ledger.add_review([ReviewItem("m1", "user/a", "quarantined")])
        await ledger.add_review([ReviewItem("m2", "global", "conflict")])
        assert await ledger.resolve_review("m1", "released", "master", "fine")
    async with opened(make_ledger) as ledger:
        assert await ledger.list_review(10) == [ReviewItem("m2", "global", "conflict")]
        assert not await ledger.resolve_review("m1", "rejected", "master", "late")
