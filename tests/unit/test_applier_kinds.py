"""The applier of the working and long-term lanes refuses an entry it has no step for (it is
then marked dead and its writer told), instead of marking it applied with nothing done."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gateway.core.model.commands import (
    Archive,
    Forget,
    FormSession,
    MemoryWrite,
    Relate,
    SummariseOverflow,
)
from gateway.core.model.control import JournalEntry
from gateway.core.model.models import Layer, NodeKind, NodeRef
from gateway.settings import Settings
from gateway.wiring import build_service


async def test_entries_of_another_lane_are_refused_and_relations_applied(tmp_path: Path) -> None:
    svc = build_service(Settings(data_dir=tmp_path, embedder="hash", injection_embedder=""))
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


async def test_an_archive_drops_a_vector_keeping_its_text_and_a_forget_erases(
    tmp_path: Path,
) -> None:
    """The index hears which deletes are erasures: other replicas let go of the texts they hold
    only for those (``VectorIndex.delete(erased=...)``, ``stores/redis_changes.py``)."""
    svc = build_service(Settings(data_dir=tmp_path, embedder="hash", injection_embedder=""))
    await svc.start()
    try:
        deletes: list[tuple[list[str], bool]] = []
        real = svc.stores.index.delete

        async def spy(ids: Sequence[str], erased: bool = True) -> None:
            deletes.append((list(ids), erased))
            await real(ids, erased)

        svc.stores.index.delete = spy  # type: ignore[method-assign]
        apply = svc.lanes.for_kind("memory")._apply
        writes = [
            MemoryWrite("user/u", Layer.SEMANTIC, f"the {w} fact") for w in ("first", "second")
        ]
        await apply([JournalEntry(i, f"m{i}", "master", c) for i, c in enumerate(writes, 1)], None)
        await apply([JournalEntry(3, "w3", "master", Archive("m1", "user/u", "decayed"))], None)
        await apply([JournalEntry(4, "w4", "master", Forget("m2", "user/u", "asked"))], None)
        assert deletes == [(["m1"], False), (["m2"], True)]
    finally:
        await svc.close()


async def test_every_kind_has_its_lane_and_every_applier_kind_its_handler(tmp_path: Path) -> None:
    """One registry: each command kind names its lane (``command_types.LANE_OF``), the lanes are
    made from it, and the applier has a handler for every kind of the two lanes it serves."""
    from gateway.core.model.command_types import KINDS, LANE_OF, LONG_TERM, WORKING

    assert set(LANE_OF) == set(KINDS)
    svc = build_service(Settings(data_dir=tmp_path, embedder="hash", injection_embedder=""))
    for kind, lane in LANE_OF.items():
        assert svc.lanes.for_kind(kind).name.endswith(lane), (kind, lane)
    applier = svc.lanes.for_kind("memory")._apply.__self__  # type: ignore[attr-defined]
    served = {k for k, lane in LANE_OF.items() if lane in (WORKING, LONG_TERM)}
    assert set(applier._handlers) == served
