"""Applies journaled commands to the stores, in journal order, idempotently by write id: embeds
the batch's texts in one call, reconciles each memory with what is stored (``reconcile``), then
writes records, vectors and graph once per batch. Announces what it touched (``AppliedEvents``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from gateway.core.apply import dialogue
from gateway.core.apply.derive import (
    dialogue_text,
    event_of,
    memory_from_command,
    relation_of,
    vector_item,
)
from gateway.core.apply.embed_ahead import EmbedAhead, Upcoming
from gateway.core.apply.eraser import Eraser
from gateway.core.apply.late_screen import LateScreen
from gateway.core.apply.slot_backfill import SlotBackfill
from gateway.core.apply.statuses import StatusChanges
from gateway.core.model.commands import (
    Archive,
    EraseWorking,
    Forget,
    ForgetNamespace,
    ForgetSubject,
    ImportMemory,
    MemoryWrite,
    Relate,
    Release,
    TurnAppend,
)
from gateway.core.model.control import JournalEntry, ReviewItem
from gateway.core.model.events import AppliedEvents
from gateway.core.model.models import (
    Event,
    Layer,
    Memory,
    NodeKind,
    NodeRef,
    Relation,
    Status,
    Turn,
    VectorItem,
    Zone,
    utcnow,
)
from gateway.core.ports.injection_screen import RULES_ONLY, InjectionScreen
from gateway.core.ports.ports import Embedder, Journal, Ledger, Stores, Summariser
from gateway.core.truth import reconcile
from gateway.core.truth.conflicts import conflict_item
from gateway.core.writing.working import SummariseLater, TurnResults, apply_turns

#: neighbours fetched per new memory when looking for a near twin
DEDUP_K = 3


#: applies a run of journal entries of one kind; returns the namespaces it touched
Handler = Callable[[Sequence[JournalEntry], Upcoming | None], Awaitable[set[str]]]


@dataclass(frozen=True, slots=True)
class ApplySettings:
    dedup_threshold: float
    zone_hard_cap: int
    dialogue_max_turns: int
    summary_token_budget: int = 200
    #: previous turns of the session a dialogue turn is indexed with (0: none, no context)
    context_turns: int = 1
    #: a dialogue turn's context holds the session date / is embedded too (not only indexed
    #: lexically) / holds the turn after it
    context_date: bool = True
    context_dense: bool = False
    context_next: bool = True
    #: semantic facts get a slot (``truth.slots``): updates supersede, twins across languages
    #: merge; off: dedup by similarity only (the benchmark's floor)
    fact_slots: bool = True


@dataclass(slots=True)
class _Batch:
    """Memory versions decided in this batch, visible to later items of the same batch."""

    versions: dict[str, Memory] = field(default_factory=dict)  # latest decided version per id
    puts: list[Memory] = field(default_factory=list)  # every version decided, in order
    vectors: dict[str, VectorItem] = field(default_factory=dict)
    aliases: list[tuple[str, str]] = field(default_factory=list)
    conflicts: list[ReviewItem] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)


@dataclass(slots=True)
class _Found:
    """Stored state a batch is reconciled against, fetched before its first decision."""

    facts: dict[tuple[str, str], Memory] = field(default_factory=dict)
    near: dict[str, list[tuple[str, float]]] = field(default_factory=dict)  # id -> close hits
    records: dict[str, Memory] = field(default_factory=dict)  # the records of those hits


class Applier:
    def __init__(
        self,
        stores: Stores,
        embedder: Embedder,
        ledger: Ledger,
        events: AppliedEvents,
        settings: ApplySettings,
        turn_results: TurnResults,
        summariser: Summariser,
        journal: Journal,
        audit_flush: Callable[[], Awaitable[None]],  # queued audit rows: written before a scrub
        injection_screen: InjectionScreen = RULES_ONLY,
    ) -> None:
        self._late_screen = LateScreen(injection_screen, ledger)
        self._summariser = summariser
        self._eraser = Eraser(stores, journal, ledger, audit_flush)
        self._statuses = StatusChanges(stores, ledger)
        self._stores = stores
        self._embedder = embedder
        self._ledger = ledger
        self._events = events
        self._s = settings
        self._turn_results = turn_results
        self._ahead = EmbedAhead(embedder)
        #: after an overflow's extractive summary, the rolled-off turns go to this hook
        self.later: SummariseLater | None = None
        self._handlers = self._handlers_by_kind()

    async def apply(
        self, entries: Sequence[JournalEntry], upcoming: Upcoming | None = None
    ) -> None:
        """Apply entries in journal order (runs of the same kind together). ``upcoming`` returns
        the entries that follow them: their texts are embedded while this batch is stored."""
        touched: set[str] = set()
        run: list[JournalEntry] = []
        for entry in entries:
            if run and run[-1].kind != entry.kind:
                touched |= await self._apply_run(run, None)
                run = []
            run.append(entry)
        if run:
            touched |= await self._apply_run(run, upcoming)
        self._events.publish(frozenset(touched))

    async def _apply_run(self, run: Sequence[JournalEntry], upcoming: Upcoming | None) -> set[str]:
        handler = self._handlers.get(run[0].kind)
        if handler is None:
            # never marked applied unapplied: the lane takes it for a poison entry (dead, its
            # writer told); formation jobs and overflow summaries belong to the formation lane
            raise ValueError(f"{run[0].kind!r} entries are not applied by this lane")
        return await handler(run, upcoming)

    def _handlers_by_kind(self) -> dict[str, Handler]:
        """What applies a run of each kind (``command_types.LANE_OF``: the working and the
        long-term lane's kinds; a test checks every one has its handler)."""

        async def memories(run: Sequence[JournalEntry], upcoming: Upcoming | None) -> set[str]:
            return await self._apply_memories(run, upcoming)

        async def turns(run: Sequence[JournalEntry], _: Upcoming | None) -> set[str]:
            return await self._apply_turns(run)

        async def forget(run: Sequence[JournalEntry], _: Upcoming | None) -> set[str]:
            return await self._eraser.forget(run)

        async def statuses(run: Sequence[JournalEntry], _: Upcoming | None) -> set[str]:
            return await self._statuses.apply(run)

        async def imports(run: Sequence[JournalEntry], _: Upcoming | None) -> set[str]:
            return await self._apply_imports(run)

        async def erase(run: Sequence[JournalEntry], _: Upcoming | None) -> set[str]:
            touched: set[str] = set()
            for entry in run:
                touched |= await self._eraser.forget_namespace(entry)
            return touched

        async def erase_working(run: Sequence[JournalEntry], _: Upcoming | None) -> set[str]:
            return await self._eraser.erase_working(run)

        async def relate(run: Sequence[JournalEntry], _: Upcoming | None) -> set[str]:
            await self._stores.graph.relate(
                [relation_of(e.command) for e in run if isinstance(e.command, Relate)]
            )
            return set()

        return {
            MemoryWrite.kind: memories,
            TurnAppend.kind: turns,
            Forget.kind: forget,
            Archive.kind: statuses,
            Release.kind: statuses,
            ImportMemory.kind: imports,
            ForgetNamespace.kind: erase,
            ForgetSubject.kind: erase,
            EraseWorking.kind: erase_working,
            Relate.kind: relate,
        }

    async def _apply_turns(self, run: Sequence[JournalEntry]) -> set[str]:
        turns = [(e.write_id, e.command) for e in run if isinstance(e.command, TurnAppend)]
        await self._keep_for_formation(turns)
        return await apply_turns(
            self._stores.working,
            turns,
            self._s.zone_hard_cap,
            self._s.dialogue_max_turns,
            self._turn_results,
            self._summariser,
            self._s.summary_token_budget,
            self.later,
        )

    async def _keep_for_formation(self, turns: Sequence[tuple[str, TurnAppend]]) -> None:
        """Dialogue turns are kept in the ledger until mined for facts (a rolled-off turn is
        summarised out of the window, but still mined)."""
        groups: dict[tuple[str, str], list[Turn]] = {}
        for write_id, c in turns:
            if c.zone is Zone.DIALOGUE and c.role in ("user", "assistant"):
                turn = Turn(write_id, c.role, c.content, c.zone, c.at or utcnow(), dict(c.metadata))
                groups.setdefault((c.namespace, c.session_id), []).append(turn)
        for (ns, session), group in groups.items():
            await self._ledger.record_turns(ns, session, group)

    # ---- long-term memories
    async def _apply_memories(
        self, run: Sequence[JournalEntry], upcoming: Upcoming | None
    ) -> set[str]:
        now = utcnow()
        items = [(e, e.command) for e in run if isinstance(e.command, MemoryWrite)]
        items = await self._late_screen.judge(items)  # acknowledged before the screen judged
        vectors = await self._ahead.vectors([(e.write_id, dialogue.embedded(c)) for e, c in items])
        if upcoming is not None:
            later = await upcoming()
            self._ahead.start(
                [
                    (e.write_id, dialogue.embedded(e.command))
                    for e in later
                    if isinstance(e.command, MemoryWrite)
                ]
            )
        done = await self._stores.records.get([e.write_id for e, _ in items])
        fresh: list[tuple[MemoryWrite, Memory]] = []
        batch = _Batch()
        for (entry, command), vector in zip(items, vectors, strict=True):
            if entry.write_id in done:
                self._resync(done[entry.write_id], batch)  # applied before a crash
                continue
            mem = memory_from_command(
                entry.write_id, entry.agent_id, command, now, self._s.fact_slots
            )
            mem.embedding = np.asarray(vector, dtype=np.float32)
            fresh.append((command, mem))
        await self._add_context([mem for _, mem in fresh])
        if self._s.context_dense:  # the turn is embedded with its context instead
            turns = [mem for _, mem in fresh if mem.context]
            if turns:
                dense = await asyncio.to_thread(
                    self._embedder.embed, [dialogue_text(m) for m in turns]
                )
                for mem, vector in zip(turns, dense, strict=True):
                    mem.embedding = np.asarray(vector, dtype=np.float32)
        found = await self._look_up([mem for _, mem in fresh])
        for command, mem in fresh:
            same = self._same_fact(mem, batch, found) if mem.fact_key else None
            twin = None
            if same is None and reconcile.reconciles(mem):
                twin = self._near_twin(mem, batch, found)
            decision = reconcile.decide(mem, same, twin)
            if decision.merged_into:
                batch.aliases.append((mem.id, decision.merged_into))
            if decision.conflict is not None:
                batch.conflicts.append(conflict_item(mem, decision.conflict))
            if decision.version is not None:
                self._add(decision.version, command, batch)
        await self._persist(batch)
        return {c.namespace for _, c in items}

    async def _look_up(self, mems: Sequence[Memory]) -> _Found:
        """What reconciling ``mems`` needs from the stores, in one call per kind: the holders
        of their facts, their nearest neighbours (one index call per namespace and layer) and
        the records of those neighbours."""
        found = _Found()
        keys = [(m.namespace, m.fact_key) for m in mems if m.fact_key]
        if keys:
            found.facts = await self._stores.records.find_facts(keys)
        groups: dict[tuple[str, Layer], list[Memory]] = {}
        for m in mems:
            if reconcile.reconciles(m):
                groups.setdefault((m.namespace, m.layer), []).append(m)
        for (ns, layer), group in groups.items():
            matrix = np.vstack([m.embedding for m in group if m.embedding is not None])
            rows = await self._stores.index.search_many(matrix, [ns], DEDUP_K, [layer])
            for m, hits in zip(group, rows, strict=True):
                found.near[m.id] = [
                    h for h in hits if h[0] != m.id and h[1] >= self._s.dedup_threshold
                ]
        wanted = {hit_id for hits in found.near.values() for hit_id, _ in hits}
        if wanted:
            found.records = await self._stores.records.get(sorted(wanted))
        return found

    async def _add_context(self, mems: Sequence[Memory]) -> None:
        """Every dialogue turn gets its context; stored turns also the turn after them."""
        s = self._s
        await dialogue.add_context(
            self._stores.records, mems, s.context_turns, s.context_date, s.context_next
        )

    def _resync(self, mem: Memory, batch: _Batch) -> None:
        """Only re-sync the derived stores of a memory whose record is already stored."""
        if mem.status is Status.ACTIVE and mem.embedding is not None:
            batch.vectors[mem.id] = vector_item(mem)
        if mem.layer is Layer.EPISODIC:
            batch.events.append(event_of(mem))

    def _add(self, version: Memory, command: MemoryWrite, batch: _Batch) -> None:
        batch.versions[version.id] = version
        batch.puts.append(version)
        if version.status is not Status.ACTIVE:
            return
        batch.vectors[version.id] = vector_item(version)
        if version.layer is Layer.EPISODIC:
            batch.events.append(event_of(version, command.user_id))
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
        if batch.conflicts:
            await self._ledger.add_review(batch.conflicts)

    @staticmethod
    def _same_fact(mem: Memory, batch: _Batch, found: _Found) -> Memory | None:
        for m in batch.versions.values():
            if (m.namespace, m.fact_key, m.status) == (mem.namespace, mem.fact_key, Status.ACTIVE):
                return m
        stored = found.facts.get((mem.namespace, mem.fact_key))
        if stored is None or stored.id in batch.versions:
            return None  # a version decided in this batch replaced it (and was checked above)
        return stored

    def _near_twin(self, mem: Memory, batch: _Batch, found: _Found) -> Memory | None:
        assert mem.embedding is not None
        for m in batch.versions.values():
            if (
                m.status is Status.ACTIVE
                and (m.namespace, m.layer) == (mem.namespace, mem.layer)
                and m.embedding is not None
                and float(np.dot(m.embedding, mem.embedding)) >= self._s.dedup_threshold
            ):
                return m
        for hit_id, _ in found.near.get(mem.id, ()):
            twin = batch.versions.get(hit_id) or found.records.get(hit_id)
            if twin and twin.status is Status.ACTIVE:
                return twin
        return None

    # ---- imported memories: every version as it was exported
    async def _apply_imports(self, run: Sequence[JournalEntry]) -> set[str]:
        commands = [e.command for e in run if isinstance(e.command, ImportMemory)]
        dim = self._embedder.dim
        # a vector carried from the same model, none for an erased memory's tombstone
        carried = [
            len(c.embedding) == dim or c.versions[-1].status is Status.FORGOTTEN for c in commands
        ]
        texts = [
            dialogue.said(v.layer, v.source_session, v.content, v.metadata)
            for c, ok in zip(commands, carried, strict=True)
            if not ok and (v := c.versions[-1])
        ]
        fresh = iter(await asyncio.to_thread(self._embedder.embed, texts) if texts else [])
        batch = _Batch()
        for c, ok in zip(commands, carried, strict=True):
            vector = np.asarray(c.embedding, dtype=np.float32) if c.embedding else None
            head = c.versions[-1].with_changes(embedding=vector if ok else next(fresh))
            batch.puts.extend([*c.versions[:-1], head])
            if head.status is Status.ACTIVE:
                batch.vectors[head.id] = vector_item(head)
            if head.layer is Layer.EPISODIC and head.status in (Status.ACTIVE, Status.ARCHIVED):
                batch.events.append(event_of(head))
        await self._persist(batch)
        if self._s.fact_slots:  # an export made without slots: its facts get theirs now
            latest = {m.id: m for m in batch.puts}  # each memory's last version: its head
            heads = [m for i, m in latest.items() if i in batch.vectors]
            await SlotBackfill(stores=self._stores, ledger=self._ledger).facts(heads)
        return {c.namespace for c in commands}
