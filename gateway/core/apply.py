"""Applies journaled commands to the stores, in journal order, idempotently by write id: embeds
the batch's texts in one call, reconciles each memory with what is stored (``reconcile``), then
writes records, vectors and graph once per batch. Announces what it touched (``AppliedEvents``)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from gateway.core import dialogue, reconcile
from gateway.core.commands import Archive, Forget, MemoryWrite, Relate, TurnAppend
from gateway.core.control import JournalEntry
from gateway.core.events import AppliedEvents
from gateway.core.models import (
    Event,
    Layer,
    Memory,
    MemoryFilter,
    NodeKind,
    NodeRef,
    Relation,
    Status,
    VectorItem,
    utcnow,
)
from gateway.core.ports import Embedder, Ledger, Stores
from gateway.core.working import TurnResults, apply_turns


@dataclass(frozen=True, slots=True)
class ApplySettings:
    dedup_threshold: float
    zone_hard_cap: int
    dialogue_max_turns: int
    #: previous turns of the session a dialogue turn is indexed with (0: none, no context)
    context_turns: int = 1
    #: the session date is part of a dialogue turn's context
    context_date: bool = True
    #: the context is embedded too (not only indexed lexically)
    context_dense: bool = False


def memory_from_command(write_id: str, agent_id: str, c: MemoryWrite, now: datetime) -> Memory:
    fact = c.metadata.get("fact_key", "")
    return Memory(
        id=write_id,
        namespace=c.namespace,
        layer=c.layer,
        content=c.content,
        type=c.type or "note",
        importance=c.importance,
        confidence=c.confidence,
        source_agent=agent_id,
        source_session=c.session_id,
        task_id=c.task_id,
        created_at=now,
        updated_at=now,
        metadata={**c.metadata, reconcile.WRITE_ID_KEY: write_id},
        evidence=list(c.evidence),
        event_time=c.event_time
        or (c.received_at if c.layer is Layer.EPISODIC and c.received_at else None),
        status=Status.QUARANTINED if c.quarantined else Status.ACTIVE,
        fact_key=reconcile.normalise_fact(fact) if fact else "",
        entities=list(c.entities),
    )


@dataclass(slots=True)
class _Batch:
    """Memory versions decided in this batch, visible to later items of the same batch."""

    versions: dict[str, Memory] = field(default_factory=dict)  # latest decided version per id
    puts: list[Memory] = field(default_factory=list)  # every version decided, in order
    vectors: dict[str, VectorItem] = field(default_factory=dict)
    aliases: list[tuple[str, str]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)


class Applier:
    def __init__(
        self,
        stores: Stores,
        embedder: Embedder,
        ledger: Ledger,
        events: AppliedEvents,
        settings: ApplySettings,
        turn_results: TurnResults,
    ) -> None:
        self._stores = stores
        self._embedder = embedder
        self._ledger = ledger
        self._events = events
        self._s = settings
        self._turn_results = turn_results

    async def apply(self, entries: Sequence[JournalEntry]) -> None:
        """Apply entries in journal order (runs of the same kind together)."""
        touched: set[str] = set()
        run: list[JournalEntry] = []
        for entry in entries:
            if run and run[-1].kind != entry.kind:
                touched |= await self._apply_run(run)
                run = []
            run.append(entry)
        if run:
            touched |= await self._apply_run(run)
        self._events.publish(frozenset(touched))

    async def _apply_run(self, run: Sequence[JournalEntry]) -> set[str]:
        first = run[0].command
        if isinstance(first, MemoryWrite):
            return await self._apply_memories(run)
        if isinstance(first, TurnAppend):
            return await apply_turns(
                self._stores.working,
                [(e.write_id, e.command) for e in run if isinstance(e.command, TurnAppend)],
                self._s.zone_hard_cap,
                self._s.dialogue_max_turns,
                self._turn_results,
            )
        if isinstance(first, Forget | Archive):
            return await self._apply_status(run)
        await self._stores.graph.relate(
            [_relation(e.command) for e in run if isinstance(e.command, Relate)]
        )
        return set()

    # ---- long-term memories
    async def _apply_memories(self, run: Sequence[JournalEntry]) -> set[str]:
        now = utcnow()
        items = [(e, e.command) for e in run if isinstance(e.command, MemoryWrite)]
        done = await self._stores.records.get([e.write_id for e, _ in items])
        batch = _Batch()
        fresh = []
        for entry, command in items:
            if entry.write_id in done:
                self._resync(done[entry.write_id], batch)  # applied before a crash
            else:
                fresh.append(
                    (memory_from_command(entry.write_id, entry.agent_id, command, now), command)
                )
        await self._add_context([m for m, _ in fresh])
        vectors = await asyncio.to_thread(
            self._embedder.embed,
            [dialogue_text(m) if self._s.context_dense else m.content for m, _ in fresh],
        )
        for (mem, command), vector in zip(fresh, vectors, strict=True):
            mem.embedding = np.asarray(vector, dtype=np.float32)
            same = await self._same_fact(mem, batch) if mem.fact_key else None
            twin = None
            if same is None and reconcile.reconciles(mem):
                twin = await self._near_twin(mem, batch)
            decision = reconcile.decide(mem, same, twin)
            if decision.merged_into:
                batch.aliases.append((mem.id, decision.merged_into))
            if decision.version is not None:
                self._add(decision.version, command, batch)
        await self._persist(batch)
        return {c.namespace for _, c in items}

    async def _add_context(self, mems: Sequence[Memory]) -> None:
        """Give every dialogue turn its context (``dialogue.context``): the previous turns come
        from this batch (journal order) or else from the records of the session."""
        n = self._s.context_turns
        if n <= 0:
            return
        recent: dict[tuple[str, str], list[Memory]] = {}
        for mem in mems:
            if not dialogue.is_turn(mem):
                continue
            key = (mem.namespace, mem.source_session)
            if key not in recent:
                flt = MemoryFilter(
                    (mem.namespace,), (Layer.EPISODIC,), end=mem.when, limit=n,
                    session_id=mem.source_session,
                )  # fmt: skip
                recent[key] = list(reversed(await self._stores.records.query(flt)))
            mem.context = dialogue.context(mem, recent[key][-n:], self._s.context_date)
            recent[key] = [*recent[key][-(n - 1) :], mem] if n > 1 else [mem]

    def _resync(self, mem: Memory, batch: _Batch) -> None:
        """Only re-sync the derived stores of a memory whose record is already stored."""
        if mem.status is Status.ACTIVE and mem.embedding is not None:
            batch.vectors[mem.id] = _vector_item(mem)
        if mem.layer is Layer.EPISODIC:
            batch.events.append(_event(mem))

    def _add(self, version: Memory, command: MemoryWrite, batch: _Batch) -> None:
        batch.versions[version.id] = version
        batch.puts.append(version)
        if version.status is not Status.ACTIVE:
            return
        batch.vectors[version.id] = _vector_item(version)
        if version.layer is Layer.EPISODIC:
            batch.events.append(_event(version, command.user_id))
            for rel_type, kind, target in command.links:
                batch.relations.append(
                    Relation(
                        NodeRef(NodeKind.EVENT, version.id),
                        rel_type,
                        NodeRef(NodeKind(kind), target),
                        version.when,
                    )
                )

    async def _persist(self, batch: _Batch) -> None:
        if batch.puts:
            await self._stores.records.put(batch.puts)
        if batch.vectors:
            await self._stores.index.upsert(list(batch.vectors.values()))
        if batch.events:
            await self._stores.graph.record(batch.events)
        if batch.relations:
            await self._stores.graph.relate(batch.relations)
        if batch.aliases:
            await self._ledger.set_aliases(batch.aliases)

    async def _same_fact(self, mem: Memory, batch: _Batch) -> Memory | None:
        for m in batch.versions.values():
            if (m.namespace, m.fact_key, m.status) == (mem.namespace, mem.fact_key, Status.ACTIVE):
                return m
        return await self._stores.records.find_fact(mem.namespace, mem.fact_key)

    async def _near_twin(self, mem: Memory, batch: _Batch) -> Memory | None:
        assert mem.embedding is not None
        for m in batch.versions.values():
            if (
                m.status is Status.ACTIVE
                and (m.namespace, m.layer) == (mem.namespace, mem.layer)
                and m.embedding is not None
                and float(np.dot(m.embedding, mem.embedding)) >= self._s.dedup_threshold
            ):
                return m
        hits = await self._stores.index.search(mem.embedding, [mem.namespace], 3, [mem.layer])
        for hit_id, similarity in hits:
            if hit_id == mem.id or similarity < self._s.dedup_threshold:
                continue
            found = batch.versions.get(hit_id) or (await self._stores.records.get([hit_id])).get(
                hit_id
            )
            if found and found.status is Status.ACTIVE:
                return found
        return None

    # ---- forget (revocation) and archive (decay): a new version with the new status
    async def _apply_status(self, run: Sequence[JournalEntry]) -> set[str]:
        commands = [e.command for e in run if isinstance(e.command, Forget | Archive)]
        current = await self._stores.records.get([c.id for c in commands])
        versions: dict[str, Memory] = {}
        revoked_events = []
        for c in commands:
            status = Status.FORGOTTEN if isinstance(c, Forget) else Status.ARCHIVED
            mem = versions.get(c.id) or current.get(c.id)
            if mem is None or mem.status is status:
                continue
            if status is Status.ARCHIVED and mem.status is not Status.ACTIVE:
                continue  # only active memories decay; forgotten ones stay forgotten
            versions[c.id] = mem.with_changes(
                status=status,
                version=mem.version + 1,
                updated_at=utcnow(),
                metadata={**mem.metadata, f"memgate.{status.value}_reason": c.reason},
            )
            if mem.layer is Layer.EPISODIC and status is Status.FORGOTTEN:
                revoked_events.append(mem.id)  # an archived event stays on the timeline
        if versions:
            await self._stores.records.put(list(versions.values()))
            await self._stores.index.delete(list(versions))
        if revoked_events:
            await self._stores.graph.delete_events(revoked_events)
        return {m.namespace for m in versions.values()}


def dialogue_text(mem: Memory) -> str:
    """What is embedded for a memory: its context (if any) and its content."""
    return f"{mem.context}\n{mem.content}" if mem.context else mem.content


def _relation(c: Relate) -> Relation:
    return Relation(c.src, c.type, c.dst, c.at, tuple(sorted(c.properties.items())))


def _vector_item(mem: Memory) -> VectorItem:
    assert mem.embedding is not None
    return VectorItem(mem.id, mem.namespace, mem.layer, mem.embedding)


def _event(mem: Memory, user_id: str = "") -> Event:
    if not user_id and mem.namespace.startswith("user/"):
        user_id = mem.namespace.split("/", 1)[1]
    return Event(
        id=mem.id,
        namespace=mem.namespace,
        type=mem.type,
        summary=mem.content,
        at=mem.when,
        importance=mem.importance,
        agent_id=mem.source_agent,
        user_id=user_id,
        session_id=mem.source_session,
        task_id=mem.task_id,
        entities=list(mem.entities),
    )
