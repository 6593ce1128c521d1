"""The applier of the working and long-term lanes refuses an entry it has no step for (it is
then marked dead and its writer told), instead of marking it applied with nothing done."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from gateway.core.commands import FormSession, Relate, SummariseOverflow
from gateway.core.control import JournalEntry
from gateway.core.models import NodeKind, NodeRef
from gateway.settings import Settings
from gateway.wiring import build_service


async def test_entries_of_another_lane_are_refused_and_relations_applied(tmp_path: Path) -> None:
    svc = build_service(Settings(data_dir=tmp_path, embedder="hash"))
    await svc.start()
    try:
        apply = svc.lanes.for_kind("memory")._apply
        summary = SummariseOverflow("user/u", "s1", "sum-1", (("t1", "user", "hello"),))
        form = FormSession("user/u", "s1", 3)
        for seq, cmd in enumerate((summary, form), start=1):
            with pytest.raises(ValueError, match="not applied by this lane"):
                await apply([JournalEntry(seq, f"w{seq}", "master", cmd)], None)
        now = datetime.now(UTC)
        event, entity = NodeRef(NodeKind.EVENT, "e1"), NodeRef(NodeKind.ENTITY, "user/u:kyoto")
        await apply([JournalEntry(3, "w3", "master", Relate(event, "MENTIONS", entity, now))], None)
        near = await svc.stores.graph.neighbourhood(event, 1, 10)
        assert [(n.node.id, n.relation) for n in near] == [("user/u:kyoto", "MENTIONS")]
    finally:
        await svc.close()
