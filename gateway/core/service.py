"""The gateway's domain core: one method per use case, no transport, no driver.

Writes: validate → screen → arbitrate → journal (fsync) → acknowledge → the applier stores them.
Reads: permission check → the store or the recaller.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gateway.core import lifecycle
from gateway.core import namespaces as nsp
from gateway.core.applier import Applier, compact, normalise_fact
from gateway.core.arbitration import POLICY_KEY
from gateway.core.errors import (
    BackendUnavailable,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    Overloaded,
    PermissionDenied,
)
from gateway.core.inputs import Prepared, WriteInput, parse_layer, parse_zone, prepare
from gateway.core.metrics import Metrics
from gateway.core.models import (
    Event,
    Layer,
    Memory,
    Neighbour,
    NodeKind,
    NodeRef,
    Status,
    Turn,
    Zone,
    utcnow,
)
from gateway.core.ports import Embedder, Journal, Ledger, NewEntry, Stores
from gateway.core.recall import Recaller, RecallQuery, RecallResult
from gateway.settings import Settings

log = logging.getLogger("memgate.service")

RELATION_TYPE_CHARS = set("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


@dataclass(slots=True)
class WriteOutcome:
    id: str
    duplicate: bool = False
    applied: bool = False
    journal_seq: int = 0
    redactions: list[str] = field(default_factory=list)
    quarantined: bool = False
    skipped: str = ""
    proposal_id: str = ""


@dataclass(slots=True)
class TurnOutcome:
    id: str
    duplicate: bool
    compacted: bool
    dialogue_length: int
    redactions: list[str]


def _new_id() -> str:
    return uuid.uuid4().hex


class MemoryService:
    def __init__(
        self,
        settings: Settings,
        stores: Stores,
        embedder: Embedder,
        journal: Journal,
        ledger: Ledger,
    ) -> None:
        self.settings = settings
        self.stores = stores
        self.embedder = embedder
        self.journal = journal
        self.ledger = ledger
        self.metrics = Metrics()
        self.recaller = Recaller(settings, stores, embedder, self.metrics)
        # two lanes, so a dead Redis does not hold up long-term writes, nor a dead Neo4j turns
        self.lanes = {
            "turn": Applier(
                settings,
                stores,
                embedder,
                journal,
                ledger,
                self._applied,
                kinds=("turn",),
                name="apply-working",
            ),
            "memory": Applier(
                settings,
                stores,
                embedder,
                journal,
                ledger,
                self._applied,
                kinds=("memory", "forget", "archive", "relate"),
                name="apply-long-term",
            ),
        }
        self._flusher: asyncio.Task[None] | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._index_dirty = False
        # the index mirrors the records: only then may close() mark it clean
        self._index_ready = False
        self.policy: dict[str, Any] | None = None  # the shared-write policy, once read

    # ---------------------------------------------------------------- lifecycle
    async def start(self) -> None:
        await self.journal.start()
        await self.ledger.start()
        for store in self.stores.all():
            await store.start()
        await self._ensure_index()
        self._index_ready = True
        for lane in self.lanes.values():
            lane.start()
        self._flusher = asyncio.create_task(self._flush_loop(), name="index-flush")
        if self.settings.decay_interval_s > 0:
            self._sweeper = asyncio.create_task(self._decay_loop(), name="decay-sweep")

    async def close(self) -> None:
        for task in (self._flusher, self._sweeper):
            if task:
                task.cancel()
        for lane in self.lanes.values():
            await lane.close()
        if self._index_ready:
            try:
                await self.stores.index.flush()
                await self.ledger.put_setting("index_clean", {"clean": True})
            except Exception:  # noqa: BLE001
                log.exception(
                    "could not flush the vector index on close; it is rebuilt at next start"
                )
        for store in reversed(self.stores.all()):
            try:
                await store.close()
            except Exception:  # noqa: BLE001
                log.exception("closing %s failed", type(store).__name__)
        await self.ledger.close()
        await self.journal.close()

    async def _ensure_index(self) -> None:
        """Rebuild the vector index from the durable records unless it was closed cleanly."""
        clean = await self.ledger.get_setting("index_clean")
        index = self.stores.index
        if getattr(index, "needs_rebuild", False) or not (clean and clean.get("clean")):
            reset = getattr(index, "reset", None)
            if reset is not None:
                await reset()
            n = skipped = 0
            dim = self.embedder.dim
            async for batch in self.stores.records.iter_vectors(2000):
                fit = [item for item in batch if item.vector.shape == (dim,)]
                skipped += len(batch) - len(fit)
                await index.upsert(fit)
                n += len(fit)
                if n // 50_000 != (n - len(fit)) // 50_000:
                    log.info("rebuilding the vector index from the records: %d vectors so far", n)
            log.info("vector index rebuilt from records: %d vectors", n)
            if skipped:
                log.warning(
                    "%d records have embeddings of another size than %s's %d: not indexed",
                    skipped,
                    getattr(self.embedder, "name", "the embedder"),
                    dim,
                )
            await index.flush()
        await self.ledger.put_setting("index_clean", {"clean": False})

    async def _flush_loop(self) -> None:
        last_prune = 0.0
        while True:
            await asyncio.sleep(self.settings.flush_interval_s)
            now = asyncio.get_running_loop().time()
            if now - last_prune > 3600:
                last_prune = now
                try:
                    await self.journal.prune(self.settings.journal_retention_days * 86_400)
                except Exception:  # noqa: BLE001
                    log.exception("journal pruning failed; will retry")
            if self._index_dirty:
                self._index_dirty = False
                try:
                    await self.stores.index.flush()
                except Exception:  # noqa: BLE001
                    log.exception("vector index flush failed; will retry")
                    self._index_dirty = True

    async def _decay_loop(self) -> None:
        while True:
            await asyncio.sleep(self.settings.decay_interval_s)
            try:
                report = await self.maintain(self.settings.master_agent, [], 0.0, 0, False)
                log.info(
                    "decay sweep: %d examined, %d archived, %d summaries",
                    report.examined,
                    len(report.archived),
                    len(report.summaries),
                )
            except Exception:  # noqa: BLE001 - the next sweep tries again
                log.exception("decay sweep failed; will retry at the next interval")

    async def maintain(
        self,
        agent: str,
        namespaces: Sequence[str],
        threshold: float,
        compact_min: int,
        dry_run: bool,
    ) -> lifecycle.SweepReport:
        self.require_master(agent, "run the decay sweep")
        report = await lifecycle.sweep(
            self,
            namespaces,
            threshold or self.settings.decay_threshold,
            compact_min or self.settings.compact_min_episodes,
            dry_run,
        )
        await self.ledger.audit(
            [
                (
                    agent,
                    "maintain",
                    ",".join(namespaces)[:200],
                    "",
                    f"archived {len(report.archived)}, dry_run={dry_run}",
                )
            ]
        )
        return report

    def _applied(self, namespaces: set[str]) -> None:
        self._index_dirty = True
        if namespaces:
            self.recaller.cache.invalidate(namespaces)

    # ---------------------------------------------------------------- writes
    async def write(
        self, agent: str, items: Sequence[WriteInput], wait: bool
    ) -> list[WriteOutcome]:
        """All-or-nothing: every item is validated before any is journaled."""
        nsp.check_agent_id(agent)
        if not items:
            raise InvalidArgument("items is empty: send at least one write", field="items")
        limit = self.settings.limits.max_batch_items
        if len(items) > limit:
            raise InvalidArgument(
                f"items has {len(items)} writes, the limit is {limit}", field="items"
            )
        prefix = (lambda i: f"items[{i}].") if len(items) > 1 else (lambda i: "")
        prepared = [prepare(item, self.settings.limits, prefix(i)) for i, item in enumerate(items)]
        # permission is checked for every item before anything is stored (all or nothing)
        master = self.settings.master_agent
        access = [nsp.write_access(agent, nsp.parse(p.namespace), master) for p in prepared]
        policy = await self._policy()
        outcomes: list[WriteOutcome | None] = [None] * len(items)
        entries: list[tuple[int, NewEntry]] = []
        for i, p in enumerate(prepared):
            if p.skipped:
                outcomes[i] = WriteOutcome(id="", skipped=p.skipped, redactions=p.redactions)
            elif access[i] is nsp.Access.PROPOSAL and not _auto_approved(
                policy, p.namespace, p.payload
            ):
                pid = _stable_id(agent, p.idempotency_key) if p.idempotency_key else _new_id()
                await self.ledger.add_proposal(pid, agent, p.payload)
                outcomes[i] = WriteOutcome(
                    id="", proposal_id=pid, redactions=p.redactions, quarantined=p.quarantined
                )
            else:
                kind = "turn" if p.layer is Layer.WORKING else "memory"
                if kind == "turn":
                    p.payload["at"] = utcnow().isoformat()
                entries.append((i, NewEntry(_new_id(), kind, agent, p.idempotency_key, p.payload)))
        if entries:
            self._check_backlog(len(entries))
            for i, outcome in await self._journal_writes(agent, prepared, entries, wait):
                outcomes[i] = outcome
        return [o for o in outcomes if o is not None]

    async def _journal_writes(
        self, agent: str, prepared: list[Prepared], entries: list[tuple[int, NewEntry]], wait: bool
    ) -> list[tuple[int, WriteOutcome]]:
        """Journal (fsync) = acknowledge; with ``wait``, also until each lane applied them."""
        accepted = await self.journal.append([e for _, e in entries])
        out = [
            (
                i,
                WriteOutcome(
                    id=acc.write_id,
                    duplicate=acc.duplicate,
                    applied=acc.applied,
                    journal_seq=acc.seq,
                    redactions=prepared[i].redactions,
                    quarantined=prepared[i].quarantined,
                ),
            )
            for (i, _), acc in zip(entries, accepted, strict=True)
        ]
        for lane in self.lanes.values():
            lane.kick()
        await self.ledger.audit(
            [
                (agent, "write", prepared[i].namespace, e.write_id, prepared[i].layer.value)
                for i, e in entries
            ]
        )
        review = [
            (acc.write_id, prepared[i].namespace, reason)
            for (i, _), acc in zip(entries, accepted, strict=True)
            if (reason := _review_reason(prepared[i]))
        ]
        if review:
            await self.ledger.add_review(review)
        if not wait:
            return out
        for lane in self.lanes.values():
            seqs = [
                acc.seq
                for (_, e), acc in zip(entries, accepted, strict=True)
                if lane.handles(e.kind)
            ]
            if seqs:
                await lane.wait_applied(seqs, self.settings.wait_timeout_s)
        for _, outcome in out:
            outcome.applied = True
            outcome.id = await self.ledger.resolve(outcome.id)
        return out

    def _check_backlog(self, incoming: int) -> None:
        backlog = self.journal.pending_count
        if backlog + incoming > self.settings.max_pending_writes:
            why = "; ".join(lane.last_error for lane in self.lanes.values() if lane.last_error)
            raise Overloaded(
                f"{backlog} acknowledged writes are still waiting to be applied "
                f"({why or 'the stores are behind'}); retry later with the same idempotency keys"
            )

    async def _policy(self) -> dict[str, Any]:
        """The master's shared-write policy, read once and kept (``set_policy`` replaces it)."""
        if self.policy is None:
            stored = await self.ledger.get_setting(POLICY_KEY)
            self.policy = stored or {"auto_approve": [], "min_confidence": 0.0}
        return self.policy

    # ---------------------------------------------------------------- reads
    async def get(self, agent: str, memory_id: str) -> Memory:
        mem = await self._visible(agent, memory_id)
        await self.ledger.audit([(agent, "read", mem.namespace, mem.id, "get")])
        return mem

    async def _visible(self, agent: str, memory_id: str) -> Memory:
        nsp.check_agent_id(agent)
        if not memory_id:
            raise InvalidArgument("id is empty", field="id")
        resolved = await self.ledger.resolve(memory_id)
        mem = (await self.stores.records.get([resolved])).get(resolved)
        if mem is None:
            raise NotFound(
                f"memory {memory_id!r} does not exist (or is not applied yet: write with wait)"
            )
        nsp.check_read(agent, nsp.parse(mem.namespace), self.settings.master_agent)
        return mem

    async def history(self, agent: str, memory_id: str) -> list[Memory]:
        mem = await self._visible(agent, memory_id)
        versions = await self.stores.records.history(mem.id)
        # every version but the newest has been replaced by a later one
        return [
            v.with_changes(status=Status.SUPERSEDED) if v.version < mem.version else v
            for v in versions
        ]

    async def forget(self, agent: str, memory_id: str, reason: str) -> Memory:
        mem = await self._visible(agent, memory_id)
        access = nsp.write_access(agent, nsp.parse(mem.namespace), self.settings.master_agent)
        if access is not nsp.Access.DIRECT and mem.source_agent != agent:
            raise PermissionDenied(
                f"agent {agent!r} may not forget {mem.id} in {mem.namespace}: ask the master",
                field="id",
            )
        entry = NewEntry(
            _new_id(),
            "forget",
            agent,
            "",
            {"id": mem.id, "reason": reason[:500], "namespace": mem.namespace},
        )
        accepted = await self.journal.append([entry])
        await self.ledger.audit([(agent, "forget", mem.namespace, mem.id, reason[:200])])
        await self.lanes["memory"].wait_applied([accepted[0].seq], self.settings.wait_timeout_s)
        return (await self.stores.records.get([mem.id]))[mem.id]

    async def recall(self, agent: str, q: RecallQuery) -> RecallResult:
        nsp.check_agent_id(agent)
        if not q.query.strip():
            raise InvalidArgument("query is empty", field="query")
        if not q.namespaces:
            raise InvalidArgument(
                "namespaces is empty: name the namespaces to search", field="namespaces"
            )
        for ns in q.namespaces:
            nsp.check_read(agent, nsp.parse(ns, "namespaces"), self.settings.master_agent)
        if not 1 <= q.top_k <= self.settings.limits.max_top_k:
            raise InvalidArgument(
                f"top_k must be 1..{self.settings.limits.max_top_k}", field="top_k"
            )
        if not 0 <= q.token_budget <= self.settings.limits.max_token_budget:
            raise InvalidArgument(
                f"token_budget must be 0..{self.settings.limits.max_token_budget}",
                field="token_budget",
            )
        result = await self.recaller.recall(q)
        await self.ledger.audit([(agent, "recall", ",".join(q.namespaces), "", q.query[:200])])
        return result

    # ---------------------------------------------------------------- working memory
    def _session(self, agent: str, namespace: str, session_id: str, write: bool) -> str:
        nsp.check_agent_id(agent)
        ns = nsp.parse(namespace)
        if not session_id or len(session_id) > 128:
            raise InvalidArgument("session_id is required (1..128 chars)", field="session_id")
        if write:
            nsp.write_access(agent, ns, self.settings.master_agent)
        else:
            nsp.check_read(agent, ns, self.settings.master_agent)
        return str(ns)

    async def append_turn(
        self,
        agent: str,
        namespace: str,
        session_id: str,
        role: str,
        content: str,
        zone: str,
        metadata: dict[str, str],
        idempotency_key: str,
    ) -> TurnOutcome:
        self._session(agent, namespace, session_id, write=True)
        item = WriteInput(
            namespace=namespace,
            layer=Layer.WORKING.value,
            content=content,
            session_id=session_id,
            role=role or "user",
            zone=zone,
            metadata=metadata,
            idempotency_key=idempotency_key,
        )
        p = prepare(item, self.settings.limits)
        p.payload["at"] = utcnow().isoformat()
        self._check_backlog(1)
        acc = (
            await self.journal.append(
                [NewEntry(_new_id(), "turn", agent, idempotency_key, p.payload)]
            )
        )[0]
        lane = self.lanes["turn"]
        lane.kick()
        await lane.wait_applied([acc.seq], self.settings.wait_timeout_s)
        result = lane.turn_results.get(acc.write_id)
        if result is None:  # applied earlier (a retry) or before a restart: read the window
            result = (await self._dialogue_len(p.namespace, session_id), False)
        return TurnOutcome(acc.write_id, acc.duplicate, result[1], result[0], p.redactions)

    async def _dialogue_len(self, namespace: str, session_id: str) -> int:
        window = await self.stores.working.window(namespace, session_id, [Zone.DIALOGUE])
        return len(window.get(Zone.DIALOGUE, []))

    async def window(
        self, agent: str, namespace: str, session_id: str, zones: Sequence[str]
    ) -> tuple[list[Turn], bool]:
        ns = self._session(agent, namespace, session_id, write=False)
        wanted = [parse_zone(z, "zones") for z in zones] or list(Zone)
        try:
            window = await self.stores.working.window(ns, session_id, wanted)
        except BackendUnavailable:
            return [], True  # fallback: an empty context, never an error (seed 003 §4.2)
        return [t for z in Zone if z in wanted for t in window.get(z, [])], False

    async def session_state(
        self, agent: str, namespace: str, session_id: str
    ) -> tuple[dict[str, str], int]:
        ns = self._session(agent, namespace, session_id, write=False)
        state = await self.stores.working.get_state(ns, session_id)
        return state, await self.stores.working.ttl_seconds(ns, session_id)

    async def update_session_state(
        self,
        agent: str,
        namespace: str,
        session_id: str,
        updates: dict[str, str],
        remove: Sequence[str],
    ) -> tuple[dict[str, str], int]:
        ns = self._session(agent, namespace, session_id, write=True)
        if len(updates) > self.settings.limits.max_metadata_entries:
            raise InvalidArgument("set has too many entries", field="set")
        state = await self.stores.working.set_state(ns, session_id, updates, remove)
        return state, await self.stores.working.ttl_seconds(ns, session_id)

    async def compact_window(self, agent: str, namespace: str, session_id: str) -> tuple[int, str]:
        ns = self._session(agent, namespace, session_id, write=True)
        return await compact(self.stores, ns, session_id)

    async def clear_scratch(self, agent: str, namespace: str, session_id: str) -> None:
        ns = self._session(agent, namespace, session_id, write=True)
        await self.stores.working.clear(ns, session_id, Zone.SCRATCH)

    # ---------------------------------------------------------------- episodic graph
    async def record_event(self, agent: str, item: WriteInput, wait: bool) -> WriteOutcome:
        item.layer = Layer.EPISODIC.value
        if item.event_time is None:
            item.event_time = utcnow()
        for rel_type, kind, target in item.links:
            _check_relation(rel_type, "links.type")
            _node_kind(kind, "links.target.kind")
            if not target:
                raise InvalidArgument("links.target.id is empty", field="links.target.id")
        return (await self.write(agent, [item], wait))[0]

    async def relate(
        self,
        agent: str,
        src: tuple[str, str],
        rel_type: str,
        dst: tuple[str, str],
        at: datetime | None,
        properties: dict[str, str],
        wait: bool = True,
    ) -> None:
        nsp.check_agent_id(agent)
        _check_relation(rel_type, "type")
        for kind, node_id, name in ((src[0], src[1], "src"), (dst[0], dst[1], "dst")):
            if _node_kind(kind, f"{name}.kind") is NodeKind.EVENT:
                await self._visible(
                    agent, _node_id(node_id, f"{name}.id")
                )  # no linking others' private events
        payload = {
            "src_kind": _node_kind(src[0], "src.kind").value,
            "src_id": _node_id(src[1], "src.id"),
            "dst_kind": _node_kind(dst[0], "dst.kind").value,
            "dst_id": _node_id(dst[1], "dst.id"),
            "type": rel_type,
            "at": (at or utcnow()).isoformat(),
            "properties": properties,
        }
        acc = await self.journal.append([NewEntry(_new_id(), "relate", agent, "", payload)])
        self.lanes["memory"].kick()
        if wait:
            await self.lanes["memory"].wait_applied([acc[0].seq], self.settings.wait_timeout_s)

    async def timeline(
        self,
        agent: str,
        namespace: str,
        start: datetime | None,
        end: datetime | None,
        limit: int,
        types: Sequence[str],
    ) -> list[Event]:
        nsp.check_agent_id(agent)
        ns = nsp.parse(namespace)
        nsp.check_read(agent, ns, self.settings.master_agent)
        if start and end and end <= start:
            raise InvalidArgument("end must be after start", field="end")
        return await self.stores.graph.timeline(
            str(ns), start, end, min(max(limit, 1), 1000), types
        )

    async def neighbourhood(
        self, agent: str, node: tuple[str, str], depth: int, limit: int
    ) -> list[Neighbour]:
        nsp.check_agent_id(agent)
        if depth not in (1, 2):
            raise InvalidArgument("depth must be 1 or 2", field="depth")
        ref = NodeRef(_node_kind(node[0], "node.kind"), _node_id(node[1], "node.id"))
        if ref.kind is NodeKind.EVENT:
            await self._visible(agent, ref.id)
        found = await self.stores.graph.neighbourhood(ref, depth, min(max(limit, 1), 200))
        if agent == self.settings.master_agent:
            return found
        # events in another agent's private namespace stay hidden
        event_ids = [n.node.id for n in found if n.node.kind is NodeKind.EVENT]
        mems = await self.stores.records.get(event_ids)
        visible = {
            i
            for i, m in mems.items()
            if nsp.can_read(agent, nsp.parse(m.namespace), self.settings.master_agent)
        }
        return [n for n in found if n.node.kind is not NodeKind.EVENT or n.node.id in visible]

    # ---------------------------------------------------------------- operations
    async def stats(self) -> dict[str, Any]:
        pending, applied = await self.journal.counts()
        counts = await self.stores.records.count()
        return {
            "journal_pending": pending,
            "journal_applied": applied,
            "vectors": await self.stores.index.count(),
            "memories": counts,
            "embedder": getattr(self.embedder, "name", type(self.embedder).__name__),
            "shards": self.settings.shards,
            "recall_cache_hits": self.recaller.cache.hits,
            "recall_cache_misses": self.recaller.cache.misses,
            "apply_lag_seconds": await self.journal.oldest_pending_age(),
            "recall": [
                {
                    "layer": layer,
                    "recalls": self.metrics.recalls[layer],
                    "hits": self.metrics.recall_hits[layer],
                    "hit_rate": self.metrics.hit_rate(layer),
                }
                for layer in Layer
            ],
            "last_apply_error": "; ".join(
                f"{lane.name}: {lane.last_error}" for lane in self.lanes.values() if lane.last_error
            ),
        }

    def breakers(self) -> list[dict[str, Any]]:
        """State and latency of each store's circuit breaker (stores without one are skipped)."""
        out = []
        for store in self.stores.all():
            if hasattr(store, "policy") and hasattr(store, "trips"):
                out.append(
                    {
                        "layer": store.name,
                        "state": str(store.state),
                        "trips": store.trips,
                        "last_error": store.last_error,
                        "p50_ms": store.percentile_ms(50),
                        "p99_ms": store.percentile_ms(99),
                        "calls": store.calls,
                        "failures": store.failures,
                    }
                )
        return out

    async def review_queue(self, agent: str, limit: int) -> list[tuple[Memory, str]]:
        self.require_master(agent, "read the review queue")
        rows = await self.ledger.list_review(min(max(limit, 1), 500))
        mems = await self.stores.records.get([r[0] for r in rows])
        return [(mems[r[0]], r[2]) for r in rows if r[0] in mems]

    async def query_audit(
        self, agent: str, filter_agent: str, namespace: str, since: float, limit: int
    ) -> list[tuple[float, str, str, str, str, str]]:
        self.require_master(agent, "read the audit log")
        return await self.ledger.query_audit(
            filter_agent, namespace, since, min(max(limit, 1), 1000)
        )

    def require_master(self, agent: str, what: str) -> None:
        nsp.check_agent_id(agent)
        if agent != self.settings.master_agent:
            raise PermissionDenied(f"only the master agent may {what}")

    async def health(self) -> dict[str, str]:
        out = {}
        for name in ("working", "records", "graph", "index"):
            try:
                await getattr(self.stores, name).ping()
                out[name] = "ok"
            except Exception as exc:  # noqa: BLE001
                out[name] = f"down: {exc}"
        return out


#: a memory this important but this unsure goes to the review queue (seed 000 §5.2)
REVIEW_IMPORTANCE = 0.8
REVIEW_CONFIDENCE = 0.5


def _review_reason(p: Prepared) -> str:
    if p.quarantined:
        return "quarantined: looks like a prompt injection"
    if (
        p.layer is not Layer.WORKING
        and float(p.payload["importance"]) >= REVIEW_IMPORTANCE
        and float(p.payload["confidence"]) < REVIEW_CONFIDENCE
    ):
        return "low confidence, high impact"
    return ""


def _auto_approved(policy: dict[str, Any], namespace: str, payload: dict[str, Any]) -> bool:
    if float(payload.get("confidence", 1.0)) < float(policy.get("min_confidence", 0.0)):
        return False
    for pattern in policy.get("auto_approve", []):
        if pattern == namespace or (pattern.endswith("*") and namespace.startswith(pattern[:-1])):
            return True
    return False


def _stable_id(agent: str, key: str) -> str:
    return hashlib.sha256(f"{agent}\x00{key}".encode()).hexdigest()[:32]


def _check_relation(rel_type: str, name: str) -> None:
    if (
        not rel_type
        or len(rel_type) > 40
        or not set(rel_type) <= RELATION_TYPE_CHARS
        or not rel_type[0].isalpha()
    ):
        raise InvalidArgument(
            f"{name} {rel_type!r} must be UPPER_SNAKE_CASE (A-Z, 0-9, _), at most 40 chars",
            field=name,
        )


def _node_kind(kind: str, name: str) -> NodeKind:
    try:
        return NodeKind(kind)
    except ValueError:
        allowed = ", ".join(k.value for k in NodeKind)
        raise InvalidArgument(
            f"{name} {kind!r} is unknown: use one of {allowed}", field=name
        ) from None


def _node_id(value: str, name: str) -> str:
    if not value or len(value) > 256:
        raise InvalidArgument(f"{name} must be 1..256 chars", field=name)
    return value


__all__ = [
    "FailedPrecondition",
    "MemoryService",
    "TurnOutcome",
    "WriteOutcome",
    "normalise_fact",
    "parse_layer",
]
