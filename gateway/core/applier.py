"""Applies journaled writes to the stores, in order, in batches, idempotently by write id.

The journal is the source of truth for acknowledged writes; this loop drains it. A backend that
is down leaves the entries pending (retried with backoff) — nothing acknowledged is dropped.
Re-applying an entry after a crash is harmless: every step is keyed by the write id.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from gateway.core.errors import BackendUnavailable, MemgateError, Unavailable
from gateway.core.models import (
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
from gateway.core.ports import Embedder, Journal, JournalEntry, Ledger, Stores
from gateway.settings import Settings

log = logging.getLogger("memgate.applier")

WRITE_ID_KEY = "memgate.write_id"
#: a waiting caller hears UNAVAILABLE this long after its lane's backend was found down
OUTAGE_GRACE_S = 0.5
TURN_RESULTS_KEPT = 4096
SUPERSEDED_BY_KEY = "memgate.superseded_by"


def normalise_fact(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower())


def memory_from_payload(write_id: str, agent_id: str, p: dict[str, Any], now: datetime) -> Memory:
    event_time = datetime.fromisoformat(p["event_time"]) if p.get("event_time") else None
    metadata = dict(p.get("metadata") or {})
    fact_key = normalise_fact(metadata.get("fact_key", "")) if metadata.get("fact_key") else ""
    return Memory(
        id=write_id,
        namespace=p["namespace"],
        layer=Layer(p["layer"]),
        content=p["content"],
        type=p.get("type") or "note",
        importance=float(p.get("importance", 0.5)),
        confidence=float(p.get("confidence", 1.0)),
        source_agent=p.get("source_agent") or agent_id,
        source_session=p.get("session_id", ""),
        task_id=p.get("task_id", ""),
        created_at=now,
        updated_at=now,
        metadata={**metadata, WRITE_ID_KEY: write_id},
        evidence=list(p.get("evidence") or []),
        event_time=event_time,
        status=Status.QUARANTINED if p.get("quarantined") else Status.ACTIVE,
        fact_key=fact_key,
        entities=list(p.get("entities") or []),
    )


def summarise(turns: Sequence[Turn], max_chars: int = 600) -> str:
    """Extractive summary of rolled-off dialogue: who said what, first words of each turn."""
    parts = []
    for t in turns:
        text = " ".join(t.content.split())
        parts.append(f"{t.role}: {text[:120]}{'…' if len(text) > 120 else ''}")
    summary = " | ".join(parts)
    return summary if len(summary) <= max_chars else summary[: max_chars - 1] + "…"


@dataclass(slots=True)
class _Batch:
    """Memory versions decided in this batch, visible to later items of the same batch."""

    versions: dict[str, Memory]  # latest decided version per memory id
    puts: list[Memory]  # every version decided, in order
    aliases: list[tuple[str, str]]
    events: list[Event]
    relations: list[Relation]


class Applier:
    def __init__(
        self,
        settings: Settings,
        stores: Stores,
        embedder: Embedder,
        journal: Journal,
        ledger: Ledger,
        on_applied: Callable[[set[str]], None],
        kinds: tuple[str, ...] = ("memory", "turn", "forget", "relate"),
        name: str = "applier",
    ) -> None:
        self.kinds = kinds
        self.name = name
        self._s = settings
        self._stores = stores
        self._embedder = embedder
        self._journal = journal
        self._ledger = ledger
        self._on_applied = on_applied
        self._wake = asyncio.Event()
        self._waiters: dict[int, list[asyncio.Future[None]]] = {}
        self._task: asyncio.Task[None] | None = None
        self.last_error = ""
        self.applied_total = 0
        #: write id -> (dialogue length after it, whether its append rolled the dialogue)
        self.turn_results: OrderedDict[str, tuple[int, bool]] = OrderedDict()

    # ---- lifecycle
    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=self.name)

    async def close(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def kick(self) -> None:
        self._wake.set()

    def handles(self, kind: str) -> bool:
        return kind in self.kinds

    async def wait_applied(self, seqs: Sequence[int], timeout: float) -> None:
        """Returns once every seq is applied. Raises Unavailable when that takes longer than
        ``timeout``, or at once (after a short grace) while a backend of this lane is down."""
        loop = asyncio.get_running_loop()
        futs = []
        for seq in seqs:
            fut: asyncio.Future[None] = loop.create_future()
            self._waiters.setdefault(seq, []).append(fut)
            futs.append((seq, fut))
        self.kick()
        try:
            for seq, fut in futs:
                state = await self._journal.state(seq)
                if state == 1:
                    continue
                if state == 2:
                    raise MemgateError(f"write #{seq} could not be applied; see the audit log")
                await self._wait_one(fut, timeout)
        except TimeoutError:
            why = self.last_error or "the stores are slow"
            raise Unavailable(
                f"the write is journaled and will be applied, but not now ({why}); "
                "retry with the same idempotency key, or read it later"
            ) from None
        finally:
            for seq, fut in futs:
                fut.cancel()
                lst = self._waiters.get(seq)
                if lst and fut in lst:
                    lst.remove(fut)
                    if not lst:
                        del self._waiters[seq]

    async def _wait_one(self, fut: asyncio.Future[None], timeout: float) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        outage_since: float | None = None
        while True:
            now = asyncio.get_running_loop().time()
            if now >= deadline:
                raise TimeoutError
            done, _ = await asyncio.wait({fut}, timeout=min(0.1, deadline - now))
            if done:
                fut.result()
                return
            if self.last_error:
                outage_since = outage_since or now
                if now - outage_since >= OUTAGE_GRACE_S:
                    raise TimeoutError
            else:
                outage_since = None

    def _resolve(self, seqs: Sequence[int], error: BaseException | None = None) -> None:
        for seq in seqs:
            for fut in self._waiters.pop(seq, []):
                if fut.done():
                    continue
                if error is None:
                    fut.set_result(None)
                else:
                    fut.set_exception(error)

    # ---- the loop
    async def _run(self) -> None:
        backoff = 0.05
        while True:
            entries = await self._journal.pending(self._s.apply_batch, kinds=self.kinds)
            if not entries:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=1.0)
                continue
            try:
                await self.apply(entries)
            except BackendUnavailable as exc:
                self.last_error = exc.message
                log.warning("apply deferred: %s (retrying in %.1fs)", exc.message, backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            except Exception:
                log.exception("batch failed; applying its entries one by one")
                await self._apply_one_by_one(entries)
            backoff = 0.05
            self.last_error = ""

    async def _apply_one_by_one(self, entries: Sequence[JournalEntry]) -> None:
        for entry in entries:
            try:
                await self.apply([entry])
            except BackendUnavailable:
                return  # the loop retries from this entry
            except Exception as exc:  # noqa: BLE001 - a poison entry must not block the queue
                log.exception("write %s cannot be applied; marked dead", entry.write_id)
                await self._journal.mark_dead(entry.seq, repr(exc))
                self._resolve([entry.seq], MemgateError("the write could not be applied"))

    async def apply(self, entries: Sequence[JournalEntry]) -> None:
        """Apply entries in journal order (runs of the same kind together), then mark them."""
        namespaces: set[str] = set()
        run: list[JournalEntry] = []
        for entry in entries:
            if run and run[-1].kind != entry.kind:
                namespaces |= await self._apply_run(run)
                run = []
            run.append(entry)
        if run:
            namespaces |= await self._apply_run(run)
        seqs = [e.seq for e in entries]
        await self._journal.mark_applied(seqs)
        self.applied_total += len(seqs)
        self._on_applied(namespaces)
        self._resolve(seqs)

    async def _apply_run(self, run: Sequence[JournalEntry]) -> set[str]:
        kind = run[0].kind
        if kind == "memory":
            return await self._apply_memories(run)
        if kind == "turn":
            return await self._apply_turns(run)
        if kind == "forget":
            return await self._apply_status(run, Status.FORGOTTEN)
        if kind == "archive":
            return await self._apply_status(run, Status.ARCHIVED)
        if kind == "relate":
            await self._stores.graph.relate([relation_from_payload(e.payload) for e in run])
            return set()
        raise ValueError(f"unknown journal entry kind {kind!r}")

    # ---- long-term memories
    async def _apply_memories(self, run: Sequence[JournalEntry]) -> set[str]:
        now = utcnow()
        texts = [e.payload["content"] for e in run]
        vectors = await asyncio.to_thread(self._embedder.embed, texts)
        done = await self._stores.records.get([e.write_id for e in run])
        batch = _Batch(versions={}, puts=[], aliases=[], events=[], relations=[])
        index = self._stores.index
        for entry, vector in zip(run, vectors, strict=True):
            if entry.write_id in done:
                mem = done[entry.write_id]  # applied before a crash: only re-sync derived stores
                if mem.status is Status.ACTIVE and mem.embedding is not None:
                    await index.upsert([_vector_item(mem)])
                if mem.layer is Layer.EPISODIC:
                    batch.events.append(_event(mem))
                continue
            mem = memory_from_payload(entry.write_id, entry.agent_id, entry.payload, now)
            mem.embedding = np.asarray(vector, dtype=np.float32)
            decided = await self._decide(mem, batch)
            if decided is None:
                continue
            batch.versions[decided.id] = decided
            batch.puts.append(decided)
            if decided.status is Status.ACTIVE:
                await index.upsert([_vector_item(decided)])
            if decided.layer is Layer.EPISODIC and decided.status is Status.ACTIVE:
                batch.events.append(_event(decided, entry.payload.get("user_id", "")))
                for rel_type, kind, target in entry.payload.get("links") or []:
                    batch.relations.append(
                        Relation(
                            NodeRef(NodeKind.EVENT, decided.id),
                            rel_type,
                            NodeRef(NodeKind(kind), target),
                            decided.when,
                        )
                    )
        await self._persist(batch)
        return {e.payload["namespace"] for e in run}

    async def _persist(self, batch: _Batch) -> None:
        if batch.puts:
            await self._stores.records.put(batch.puts)
        if batch.events:
            await self._stores.graph.record(batch.events)
        if batch.relations:
            await self._stores.graph.relate(batch.relations)
        if batch.aliases:
            await self._ledger.set_aliases(batch.aliases)

    async def _decide(self, mem: Memory, batch: _Batch) -> Memory | None:
        """New memory, or a new version of the one it duplicates or updates."""
        if mem.status is not Status.ACTIVE or mem.layer not in (Layer.SEMANTIC, Layer.PROCEDURAL):
            return mem
        target = await self._same_fact(mem, batch) if mem.fact_key else None
        if target is None:
            target = await self._near_duplicate(mem, batch)
            if target is None:
                return mem
            return self._merge(target, mem, batch)
        if target.metadata.get(WRITE_ID_KEY) == mem.id:
            return None
        if mem.content.strip() == target.content.strip():
            return self._merge(target, mem, batch)
        # A contradicting claim about the same fact: the stronger claim wins, not the later one.
        if (mem.confidence, len(mem.evidence)) >= (target.confidence, len(target.evidence)):
            return self._supersede(target, mem, batch)
        return mem.with_changes(
            status=Status.SUPERSEDED,
            metadata={**mem.metadata, SUPERSEDED_BY_KEY: target.id},
        )

    async def _same_fact(self, mem: Memory, batch: _Batch) -> Memory | None:
        for m in batch.versions.values():
            if (m.namespace, m.fact_key, m.status) == (mem.namespace, mem.fact_key, Status.ACTIVE):
                return m
        return await self._stores.records.find_fact(mem.namespace, mem.fact_key)

    async def _near_duplicate(self, mem: Memory, batch: _Batch) -> Memory | None:
        assert mem.embedding is not None
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

    def _merge(self, target: Memory, mem: Memory, batch: _Batch) -> Memory | None:
        """A near-twin updates the existing memory instead of adding a second one; a write that
        changes nothing (same text, no new evidence or metadata) adds no version at all."""
        batch.aliases.append((mem.id, target.id))
        if target.metadata.get(WRITE_ID_KEY) == mem.id or _adds_nothing(target, mem):
            return None
        evidence = target.evidence + [e for e in mem.evidence if e not in target.evidence]
        return target.with_changes(
            content=mem.content,
            version=target.version + 1,
            updated_at=mem.updated_at,
            importance=max(target.importance, mem.importance),
            confidence=max(target.confidence, mem.confidence),
            evidence=evidence[-16:],
            metadata={**target.metadata, **mem.metadata, WRITE_ID_KEY: mem.id},
            entities=sorted(set(target.entities) | set(mem.entities)),
            embedding=mem.embedding,
            source_session=mem.source_session or target.source_session,
        )

    def _supersede(self, target: Memory, mem: Memory, batch: _Batch) -> Memory:
        """The new claim becomes the current version; the old one stays in the history."""
        batch.aliases.append((mem.id, target.id))
        return target.with_changes(
            content=mem.content,
            version=target.version + 1,
            updated_at=mem.updated_at,
            importance=mem.importance,
            confidence=mem.confidence,
            evidence=mem.evidence,
            metadata={**mem.metadata, WRITE_ID_KEY: mem.id},
            entities=mem.entities,
            embedding=mem.embedding,
            source_agent=mem.source_agent,
            source_session=mem.source_session,
        )

    # ---- working memory
    async def _apply_turns(self, run: Sequence[JournalEntry]) -> set[str]:
        groups: dict[tuple[str, str], list[Turn]] = {}
        for e in run:
            p = e.payload
            turn = Turn(
                id=e.write_id,
                role=p["role"],
                content=p["content"],
                zone=Zone(p["zone"]),
                at=datetime.fromisoformat(p["at"]) if p.get("at") else utcnow(),
                metadata=dict(p.get("metadata") or {}),
            )
            groups.setdefault((p["namespace"], p["session_id"]), []).append(turn)
        for (ns, session), turns in groups.items():
            lengths = await self._stores.working.append(ns, session, turns, self._s.zone_hard_cap)
            if Zone.DIALOGUE not in lengths:
                continue  # no dialogue turn: nothing rolls (callers read the length if asked)
            dialogue = lengths[Zone.DIALOGUE]
            compacted = dialogue > self._s.dialogue_max_turns
            if compacted:
                dialogue -= (await compact(self._stores, ns, session))[0]
            for turn in turns:
                self.turn_results[turn.id] = (dialogue, compacted and turn.zone is Zone.DIALOGUE)
                self.turn_results.move_to_end(turn.id)
            while len(self.turn_results) > TURN_RESULTS_KEPT:
                self.turn_results.popitem(last=False)
        return {ns for ns, _ in groups}

    # ---- forget (revocation) and archive (decay): a new version with the new status
    async def _apply_status(self, run: Sequence[JournalEntry], status: Status) -> set[str]:
        ids = [e.payload["id"] for e in run]
        current = await self._stores.records.get(ids)
        versions, episodic = [], []
        for e in run:
            mem = current.get(e.payload["id"])
            if mem is None or mem.status is status:
                continue
            if status is Status.ARCHIVED and mem.status is not Status.ACTIVE:
                continue  # only active memories decay; forgotten ones stay forgotten
            versions.append(
                mem.with_changes(
                    status=status,
                    version=mem.version + 1,
                    updated_at=utcnow(),
                    metadata={
                        **mem.metadata,
                        f"memgate.{status.value}_reason": e.payload.get("reason", ""),
                    },
                )
            )
            if mem.layer is Layer.EPISODIC and status is Status.FORGOTTEN:
                episodic.append(
                    mem.id
                )  # an archived event stays on the timeline, a revoked one goes
        if versions:
            await self._stores.records.put(versions)
            await self._stores.index.delete([m.id for m in versions])
        if episodic:
            await self._stores.graph.delete_events(episodic)
        return {m.namespace for m in versions}


async def compact(stores: Stores, namespace: str, session_id: str) -> tuple[int, str]:
    """Summarise the oldest half of the dialogue into the task zone (seed 000 §3.2)."""
    window = await stores.working.window(namespace, session_id, [Zone.DIALOGUE])
    dialogue = window.get(Zone.DIALOGUE, [])
    n = len(dialogue) // 2
    if n == 0:
        return 0, ""
    oldest = await stores.working.take_oldest(namespace, session_id, Zone.DIALOGUE, n)
    if not oldest:
        return 0, ""
    summary = summarise(oldest)
    await stores.working.append(
        namespace,
        session_id,
        [
            Turn(
                id=f"summary:{oldest[0].id}",
                role="system",
                content=f"[history_summary] {summary}",
                zone=Zone.TASK,
            )
        ],
        max_len=64,
    )
    return len(oldest), summary


def _adds_nothing(target: Memory, mem: Memory) -> bool:
    own = {k: v for k, v in mem.metadata.items() if k != WRITE_ID_KEY}
    return (
        mem.content.strip() == target.content.strip()
        and set(mem.evidence) <= set(target.evidence)
        and all(target.metadata.get(k) == v for k, v in own.items())
        and set(mem.entities) <= set(target.entities)
        and mem.importance <= target.importance
        and mem.confidence <= target.confidence
    )


def relation_from_payload(p: dict[str, Any]) -> Relation:
    return Relation(
        NodeRef(NodeKind(p["src_kind"]), p["src_id"]),
        p["type"],
        NodeRef(NodeKind(p["dst_kind"]), p["dst_id"]),
        datetime.fromisoformat(p["at"]),
        tuple(sorted((p.get("properties") or {}).items())),
    )


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
