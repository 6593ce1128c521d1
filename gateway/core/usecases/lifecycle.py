"""Forgetting on purpose (seed 002 §3.3; 004 §6.1).

score = importance × 0.95^days_since_last_access. A long-term memory whose score falls below the
threshold is archived — not deleted: Get and History still read it, everyday recall no longer
sees it. When enough low-value episodes of a namespace go at once, they are compacted into one
semantic memory that keeps their gist (and cites them as evidence). Skills (procedural) do not
decay. Archiving goes through the journal like any write, so it is durable and idempotent.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from gateway.core.access.namespaces import parse
from gateway.core.journal.write_path import WritePath
from gateway.core.model.commands import Archive
from gateway.core.model.control import NewEntry
from gateway.core.model.errors import InvalidArgument
from gateway.core.model.limits import Limits
from gateway.core.model.models import Layer, Memory, MemoryFilter, Status, utcnow
from gateway.core.ports.ports import RecordStore
from gateway.core.writing.inputs import WriteInput
from gateway.core.writing.writes import Writer

DECAY_BASE = 0.95
DECAYING_LAYERS = (Layer.EPISODIC, Layer.SEMANTIC)
SWEEP_LIMIT = 100_000  # memories examined per namespace and sweep


def decay_score(m: Memory, now: datetime) -> float:
    last = m.last_accessed_at or m.updated_at or m.created_at
    days = max(0.0, (now - last).total_seconds() / 86_400)
    return m.importance * DECAY_BASE**days


@dataclass(slots=True)
class SweepReport:
    namespaces: int = 0
    examined: int = 0
    archived: list[str] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)


class DecaySweeper:
    """Archives what decayed below the threshold; compacts a namespace's low-value episodes."""

    def __init__(
        self,
        records: RecordStore,
        writer: Writer,
        write_path: WritePath,
        limits: Limits,
        master: str,
    ) -> None:
        self._records = records
        self._writer = writer
        self._write_path = write_path
        self._limits = limits
        self._master = master

    async def sweep(
        self,
        namespaces: Sequence[str],
        threshold: float,
        compact_min: int,
        dry_run: bool = False,
        now: datetime | None = None,
    ) -> SweepReport:
        """Archive what decayed below ``threshold``; compact ``compact_min``+ such episodes of a
        namespace into one semantic summary. ``namespaces`` empty: every namespace."""
        if not 0 < threshold <= 1:
            raise InvalidArgument("threshold must be in (0, 1]", field="threshold")
        if compact_min < 0:
            raise InvalidArgument(
                "compact_min must be >= 0 (0: never compact)", field="compact_min"
            )
        for ns in namespaces:
            parse(ns, "namespaces")
        now = now or utcnow()
        report = SweepReport()
        for ns in list(namespaces) or await self._records.namespaces():
            report.namespaces += 1
            flt = MemoryFilter((ns,), DECAYING_LAYERS, statuses=(Status.ACTIVE,), limit=SWEEP_LIMIT)
            memories = await self._records.query(flt)
            report.examined += len(memories)
            low = [m for m in memories if decay_score(m, now) < threshold]
            if not low:
                continue
            report.archived += [m.id for m in low]
            episodes = [m for m in low if m.layer is Layer.EPISODIC]
            if dry_run:
                continue
            if compact_min and len(episodes) >= compact_min:
                report.summaries.append(await self._compact(ns, episodes))
            await self._archive(low)
        return report

    async def _archive(self, memories: Sequence[Memory]) -> None:
        entries = [
            NewEntry(uuid.uuid4().hex, self._master, "", Archive(m.id, m.namespace, "decayed"))
            for m in memories
        ]
        await self._write_path.commit(entries, wait=True, action="archive")

    async def _compact(self, namespace: str, episodes: Sequence[Memory]) -> str:
        ordered = sorted(episodes, key=lambda m: m.when)
        start, end = ordered[0].when.date(), ordered[-1].when.date()
        limit = self._limits.max_content_chars
        gist = "; ".join(" ".join(m.content.split())[:160] for m in ordered)
        content = f"Summary of {len(ordered)} earlier events ({start} to {end}): {gist}"
        if len(content) > limit:
            content = content[: limit - 1] + "…"
        item = WriteInput(
            namespace=namespace,
            layer=Layer.SEMANTIC.value,
            content=content,
            type="episode_summary",
            importance=max(0.5, max(m.importance for m in ordered)),  # the gist outlives its parts
            evidence=[m.content[:500] for m in ordered[-16:]],
            metadata={"compacted_from": ",".join(m.id for m in ordered)[:1000]},
            idempotency_key=f"compact:{ordered[0].id}:{ordered[-1].id}:{len(ordered)}",
        )
        return (await self._writer.write(self._master, [item], wait=True))[0].id
