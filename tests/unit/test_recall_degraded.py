"""A tripped breaker degrades recall to what the other stores can still answer."""

from __future__ import annotations

import time
from pathlib import Path

from gateway.core.recall.recall import RecallQuery
from gateway.core.writing.inputs import WriteInput
from gateway.settings import Settings
from gateway.wiring import build_service
from stores.breaker import State


def _open(breaker) -> None:  # type: ignore[no-untyped-def]
    breaker.state = State.OPEN
    breaker._opened_at = time.monotonic()
    breaker.last_error = "test: forced open"


async def test_open_graph_breaker_skips_only_the_graph(tmp_path: Path) -> None:
    svc = build_service(
        Settings(data_dir=tmp_path, embedder="hash", injection_embedder="", breaker_cooldown_s=60)
    )
    await svc.start()
    try:
        await svc.writer.write(
            "master",
            [
                WriteInput(
                    namespace="user/u",
                    layer="episodic",
                    content="Booked a hotel near Kyoto station",
                    entities=["kyoto"],
                )
            ],
            wait=True,
        )
        _open(svc.stores.graph.breaker)  # type: ignore[attr-defined]
        r = await svc.recaller.recall_as("master", RecallQuery("hotel in Kyoto", ("user/u",)))
        assert [h.memory.content for h in r.hits] == ["Booked a hotel near Kyoto station"]
        assert r.degraded and r.degraded[0].startswith("graph:")
        _open(svc.stores.records.breaker)  # type: ignore[attr-defined]  # records down: the long-term layers are skipped, no error
        r = await svc.recaller.recall_as("master", RecallQuery("hotel in Kyoto again", ("user/u",)))
        assert r.hits == [] and any("records" in d for d in r.degraded)
    finally:
        await svc.close()


async def test_reads_without_a_degraded_flag_say_unavailable(tmp_path: Path) -> None:
    """MatchSkill and Timeline/Neighbourhood have no degraded flag: with their store down they
    answer UNAVAILABLE (retry later), never a silently partial answer."""
    import pytest

    from gateway.core.model.errors import Unavailable

    svc = build_service(
        Settings(data_dir=tmp_path, embedder="hash", injection_embedder="", breaker_cooldown_s=60)
    )
    await svc.start()
    try:
        _open(svc.stores.records.breaker)  # type: ignore[attr-defined]
        with pytest.raises(Unavailable, match="retry later"):
            await svc.skills.match("master", "book a flight", ["global"], 3)
        _open(svc.stores.graph.breaker)  # type: ignore[attr-defined]
        with pytest.raises(Unavailable, match="retry later"):
            await svc.episodes.timeline("master", "user/u", None, None, 10, [])
        with pytest.raises(Unavailable, match="retry later"):
            await svc.episodes.neighbourhood("master", ("user", "u"), 1, 10)
    finally:
        await svc.close()
