"""The recall pipeline tells the vector index whether a search is the only recall in flight
(``gateway.core.recall.scan_hint``): only then may a large scan spread over the host's cores."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import stores.faiss_index as fi
from gateway.core.recall import scan_hint
from gateway.core.recall.recall import RecallQuery
from gateway.core.recall.recall_engine import RecallEngine
from gateway.core.usecases.service import MemoryService
from gateway.core.writing.inputs import WriteInput
from gateway.settings import Settings
from gateway.wiring import build_service


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """``scan_hint.alone()`` as each search of the FAISS index saw it."""
    out: list[bool] = []
    search = fi.ShardedFaissIndex._search_sync

    def spy(self: fi.ShardedFaissIndex, *args: Any) -> Any:
        out.append(scan_hint.alone())
        return search(self, *args)

    monkeypatch.setattr(fi.ShardedFaissIndex, "_search_sync", spy)
    return out


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[MemoryService]:
    """An embedded gateway service (recalls answered in-process) holding two turns."""
    svc = build_service(
        Settings(data_dir=tmp_path, embedder="hash", injection_embedder="", recall_processes=0)
    )
    await svc.start()
    try:
        turns = ["Booked a hotel near Kyoto station", "The ferry to Miyajima leaves at nine"]
        await svc.writer.write(
            "master",
            [WriteInput(namespace="user/u", layer="episodic", content=t) for t in turns],
            wait=True,
        )
        yield svc
    finally:
        await svc.close()


async def test_a_lone_recall_is_alone_and_concurrent_ones_are_not(
    service: MemoryService, seen: list[bool]
) -> None:
    seen.clear()
    await service.recaller.recall_as("master", RecallQuery("hotel in Kyoto", ("user/u",)))
    assert seen == [True]
    assert not scan_hint.alone()  # the hint does not outlive the search
    seen.clear()
    await asyncio.gather(
        service.recaller.recall_as("master", RecallQuery("the ferry", ("user/u",))),
        service.recaller.recall_as("master", RecallQuery("a station hotel", ("user/u",))),
    )
    # the first search happens while the other recall is still under way
    assert len(seen) == 2 and seen[0] is False


async def test_an_engine_told_it_is_never_alone_never_spreads(
    service: MemoryService, seen: list[bool]
) -> None:
    # what a recall worker does: it shares the host with the gateway and the other workers
    engine = RecallEngine(
        service.settings.recall(), service.stores, service.embedder, alone=lambda: False
    )
    try:
        seen.clear()
        await engine.answer(RecallQuery("hotel in Kyoto", ("user/u",)))
        assert seen == [False]
    finally:
        engine.close()
