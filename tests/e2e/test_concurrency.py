"""Many agents at once: the same fact from concurrent writers, the same retry twice at once."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

from tests.e2e.conftest import RunningGateway


def test_concurrent_claims_of_one_fact_resolve_by_confidence(gw: RunningGateway, ns: str) -> None:
    confidences = [round(0.3 + 0.03 * i, 2) for i in range(20)]
    random.Random(5).shuffle(confidences)  # arrival order must not matter

    def claim(conf: float) -> str:
        with gw.client() as c:
            return c.write(
                ns,
                "semantic",
                f"The user's home city is City-{int(conf * 100)}",
                metadata={"fact_key": "user.home_city"},
                confidence=conf,
                wait=True,
            )

    with ThreadPoolExecutor(max_workers=8) as pool:
        ids = list(pool.map(claim, confidences))
    with gw.client() as c:
        current = [c.get(i) for i in set(ids)]
        active = [m for m in current if m.status == "active"]
        assert len(active) == 1, "(namespace, fact) must stay unique among active memories"
        best = max(confidences)
        assert active[0].content == f"The user's home city is City-{int(best * 100)}"
        assert active[0].confidence == best
        hits = c.recall("home city", namespaces=[ns], layers=["semantic"])
        assert [h.id for h in hits] == [active[0].id]


def test_the_same_retry_at_once_is_stored_once(gw: RunningGateway, ns: str) -> None:
    def send(_: int) -> str:
        with gw.client() as c:
            return c.write(
                ns, "episodic", "Paid the invoice #88", idempotency_key="pay-88", wait=True
            )

    with ThreadPoolExecutor(max_workers=8) as pool:
        ids = set(pool.map(send, range(16)))
    assert len(ids) == 1
    with gw.client() as c:
        assert [e.id for e in c.timeline(ns)] == list(ids)
