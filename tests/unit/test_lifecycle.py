"""Decay, archive, compaction: what is not used fades out of recall but is never deleted."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gateway.core.model.errors import InvalidArgument, PermissionDenied
from gateway.core.model.models import Layer, Memory, Status, utcnow
from gateway.core.recall.recall import RecallQuery
from gateway.core.usecases.lifecycle import decay_score
from gateway.core.writing.inputs import WriteInput
from gateway.settings import Settings
from gateway.wiring import build_service


def test_decay_score_follows_the_formula() -> None:
    now = datetime(2026, 11, 30, tzinfo=UTC)
    m = Memory(
        id="m",
        namespace="user/u",
        layer=Layer.SEMANTIC,
        content="x",
        importance=0.8,
        created_at=now - timedelta(days=10),
        updated_at=now - timedelta(days=10),
    )
    assert decay_score(m, now) == pytest.approx(0.8 * 0.95**10)
    m.last_accessed_at = now - timedelta(days=1)  # use keeps a memory alive
    assert decay_score(m, now) == pytest.approx(0.8 * 0.95)


async def test_sweep_archives_compacts_and_keeps_everything_readable(tmp_path: Path) -> None:
    svc = build_service(
        Settings(data_dir=tmp_path, embedder="hash", injection_embedder="", decay_interval_s=0)
    )
    await svc.start()
    try:
        ns = "user/u"
        old = [
            WriteInput(
                namespace=ns,
                layer="episodic",
                content=f"asked about train {i} times",
                importance=0.3,
            )
            for i in range(5)
        ]
        keep = WriteInput(namespace=ns, layer="semantic", content="Remember: allergic to nuts")
        skill = WriteInput(
            namespace=ns, layer="procedural", content="export: save as csv", importance=0.3
        )
        out = await svc.writer.write("master", [*old, keep, skill], wait=True)
        ids = [o.id for o in out]
        later = utcnow() + timedelta(days=40)  # 0.3·0.95^40 ≈ 0.039 < 0.05 < 0.9·0.95^40 ≈ 0.116

        dry = await svc.sweeper.sweep([], 0.05, 5, dry_run=True, now=later)
        assert sorted(dry.archived) == sorted(ids[:5]) and dry.summaries == []
        assert (await svc.stores.records.get([ids[0]]))[ids[0]].status is Status.ACTIVE

        report = await svc.sweeper.sweep([], 0.05, 5, now=later)
        assert sorted(report.archived) == sorted(ids[:5]) and len(report.summaries) == 1
        current = await svc.stores.records.get(ids)
        assert all(current[i].status is Status.ARCHIVED for i in ids[:5])
        assert current[ids[5]].status is Status.ACTIVE  # important enough to stay
        assert current[ids[6]].status is Status.ACTIVE  # skills do not decay
        # archived: out of recall, still readable with its history
        r = await svc.recaller.recall_as(
            "master", RecallQuery("train times", (ns,), layers=(Layer.EPISODIC,))
        )
        assert r.hits == []
        assert [v.status for v in await svc.memories.history("master", ids[0])][
            -1
        ] is Status.ARCHIVED
        summary = (await svc.stores.records.get(report.summaries))[report.summaries[0]]
        assert summary.layer is Layer.SEMANTIC and summary.content.startswith(
            "Summary of 5 earlier"
        )
        assert "asked about train 0 times" in summary.content
        # a second sweep finds nothing new to do
        again = await svc.sweeper.sweep([], 0.05, 5, now=later)
        assert again.archived == [] and again.summaries == []
        with pytest.raises(InvalidArgument, match="threshold"):
            await svc.sweeper.sweep([], 0, 5)
        with pytest.raises(PermissionDenied):
            await svc.ops.maintain("sub-1", [], 0.05, 5, False)
    finally:
        await svc.close()
