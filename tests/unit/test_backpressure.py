"""Back-pressure: while the stores are behind, new writes get RESOURCE_EXHAUSTED (Overloaded)
with a message that says why; nothing acknowledged is dropped, and writes flow again after."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.core.model.errors import Overloaded
from gateway.core.writing.inputs import WriteInput
from gateway.settings import Settings
from gateway.wiring import build_service


def _w(i: int) -> WriteInput:
    return WriteInput(namespace="user/u", layer="episodic", content=f"event number {i}")


async def test_backlog_limit_rejects_then_recovers(tmp_path: Path) -> None:
    svc = build_service(
        Settings(data_dir=tmp_path, embedder="hash", injection_embedder="", max_pending_writes=3)
    )
    await svc.start()
    lane = svc.lanes.for_kind("memory")
    await lane.close()  # the stores stop keeping up
    try:
        acked = await svc.writer.write("master", [_w(0), _w(1), _w(2)], wait=False)
        assert svc.journal.pending_count == 3
        with pytest.raises(Overloaded, match="3 acknowledged writes are still waiting"):
            await svc.writer.write("master", [_w(3)], wait=False)
        assert svc.journal.pending_count == 3  # the rejected write changed nothing
        lane.start()  # the stores catch up
        await lane.wait_applied([a.journal_seq for a in acked], 10)
        assert svc.journal.pending_count == 0
        await svc.writer.write("master", [_w(3)], wait=True)
    finally:
        await svc.close()
