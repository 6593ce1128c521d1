"""Proto <-> domain conversion, in one place (round-trip tested in tests/unit/test_conversions.py)."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
from google.protobuf.timestamp_pb2 import Timestamp

from gateway.core.formation.formation_jobs import EndSessionOutcome
from gateway.core.model.commands import TurnAppend
from gateway.core.model.control import AuditEntry, PendingFact, Proposal
from gateway.core.model.errors import InvalidArgument
from gateway.core.model.models import (
    Event,
    Layer,
    Memory,
    Neighbour,
    NodeKind,
    NodeRef,
    Relation,
    Status,
    Turn,
)
from gateway.core.model.provenance import VISIBLE
from gateway.core.ports.ports import BreakerStatus
from gateway.core.recall.recall import RecallQuery, RecallResult
from gateway.core.truth import validity as vd
from gateway.core.truth.reconcile import SUPERSEDED_BY_KEY
from gateway.core.usecases.erasure import Erased
from gateway.core.usecases.facts import FactOutcome
from gateway.core.usecases.skills import Skill
from gateway.core.usecases.tasks import Task
from gateway.core.usecases.transfer import Exported, ImportReport
from gateway.core.writing.inputs import WriteInput
from gateway.core.writing.proposals import Competing
from gateway.core.writing.working import TurnInput, TurnOutcome
from gateway.core.writing.writes import WriteOutcome
from memgate.v1 import memgate_pb2 as pb

_LAYER_TO_PB = {
    Layer.WORKING: pb.WORKING,
    Layer.EPISODIC: pb.EPISODIC,
    Layer.SEMANTIC: pb.SEMANTIC,
    Layer.PROCEDURAL: pb.PROCEDURAL,
}
_PB_TO_LAYER = {v: k for k, v in _LAYER_TO_PB.items()}
_STATUS_TO_PB = {
    Status.ACTIVE: pb.ACTIVE,
    Status.SUPERSEDED: pb.SUPERSEDED,
    Status.ARCHIVED: pb.ARCHIVED,
    Status.FORGOTTEN: pb.FORGOTTEN,
    Status.QUARANTINED: pb.QUARANTINED,
}
_PB_TO_STATUS = {v: k for k, v in _STATUS_TO_PB.items()}


# ---- scalars
def ts(value: datetime | None) -> Timestamp | None:
    if value is None:
        return None
    # what Timestamp.FromDatetime computes, without its Python-level calendar arithmetic
    # (~3x faster; a recall answer carries ~40 timestamps)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    us = (value - _EPOCH) // _MICROSECOND
    return Timestamp(seconds=us // 1_000_000, nanos=(us % 1_000_000) * 1000)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


#: the times a request may carry: 1970-01-01T00:00:00Z .. 9999-12-31T23:59:59.999999999Z
MIN_SECONDS = 0
MAX_SECONDS = 253_402_300_799


def from_ts(msg: object, name: str, prefix: str = "") -> datetime | None:
    """The timestamp field ``name`` of ``msg`` as an aware datetime, or None when unset.
    Out of range (before 1970, after 9999, nanos outside 0..999999999): INVALID_ARGUMENT naming
    ``prefix + name``."""
    if not msg.HasField(name):  # type: ignore[attr-defined]
        return None
    value = getattr(msg, name)
    if not (MIN_SECONDS <= value.seconds <= MAX_SECONDS and 0 <= value.nanos <= 999_999_999):
        raise InvalidArgument(
            f"{prefix}{name} is out of range (seconds={value.seconds}, nanos={value.nanos}): "
            "send a time between 1970-01-01 and 9999-12-31 UTC",
            field=f"{prefix}{name}",
        )
    return value.ToDatetime(tzinfo=UTC)  # type: ignore[no-any-return]


def layer_name(value: int) -> str:
    """Proto enum -> the domain's layer name ('' when unspecified; unknown numbers pass through
    as text so validation can name them)."""
    if value == pb.LAYER_UNSPECIFIED:
        return ""
    layer = _PB_TO_LAYER.get(value)  # type: ignore[call-overload]
    return layer.value if layer else f"#{value}"


# ---- memories
def _shown(key: str) -> bool:
    """Callers see their own metadata and a formed memory's or observation's provenance, not the gateway's
    bookkeeping (write ids, superseded-by links)."""
    return not key.startswith("memgate.") or key.startswith(VISIBLE)


def memory_to_pb(m: Memory, internal: bool = False) -> pb.Memory:
    """``internal``: keep the gateway's own ``memgate.*`` metadata too (export only)."""
    return pb.Memory(
        id=m.id,
        namespace=m.namespace,
        layer=_LAYER_TO_PB[m.layer],  # type: ignore[arg-type]
        type=m.type,
        content=m.content,
        importance=m.importance,
        confidence=m.confidence,
        source_agent=m.source_agent,
        source_session=m.source_session,
        task_id=m.task_id,
        created_at=ts(m.created_at),
        updated_at=ts(m.updated_at),
        last_accessed_at=ts(m.last_accessed_at),
        access_count=m.access_count,
        version=m.version,
        metadata={k: v for k, v in m.metadata.items() if internal or _shown(k)},
        evidence=m.evidence,
        event_time=ts(m.event_time),
        status=_STATUS_TO_PB[m.status],  # type: ignore[arg-type]
        entities=m.entities,
        **_truth_to_pb(m.metadata),
    )


def _truth_to_pb(md: dict[str, str]) -> dict[str, Any]:
    """The slot and validity fields of a memory, from the metadata the gateway derived."""
    out: dict[str, Any] = {
        "slot": md.get(vd.SLOT_KEY, ""),
        "slot_value": md.get(vd.VALUE_KEY, ""),
        "superseded_by": md.get(vd.SUPERSEDED_BY_VERSION_KEY, "")
        or md.get(SUPERSEDED_BY_KEY, "")
        or md.get(vd.CONFLICTS_WITH_KEY, ""),
    }
    for field, key in (("valid_from", vd.VALID_FROM_KEY), ("valid_to", vd.VALID_TO_KEY)):
        raw = md.get(key, "")
        if raw:
            with contextlib.suppress(ValueError):
                out[field] = ts(datetime.fromisoformat(raw))
    return out


def _truth_from_pb(p: pb.Memory) -> dict[str, str]:
    md = {}
    if p.slot:
        md[vd.SLOT_KEY] = p.slot
    if p.slot_value:
        md[vd.VALUE_KEY] = p.slot_value
    for field, key in (("valid_from", vd.VALID_FROM_KEY), ("valid_to", vd.VALID_TO_KEY)):
        when = from_ts(p, field)
        if when is not None:
            md[key] = when.isoformat()
    return md


def memory_from_pb(p: pb.Memory) -> Memory:
    return Memory(
        id=p.id,
        namespace=p.namespace,
        layer=_PB_TO_LAYER[p.layer],
        content=p.content,
        type=p.type,
        importance=p.importance,
        confidence=p.confidence,
        source_agent=p.source_agent,
        source_session=p.source_session,
        task_id=p.task_id,
        created_at=from_ts(p, "created_at") or datetime.fromtimestamp(0, UTC),
        updated_at=from_ts(p, "updated_at") or datetime.fromtimestamp(0, UTC),
        last_accessed_at=from_ts(p, "last_accessed_at"),
        access_count=p.access_count,
        version=p.version,
        metadata={**dict(p.metadata), **_truth_from_pb(p)},
        evidence=list(p.evidence),
        event_time=from_ts(p, "event_time"),
        status=_PB_TO_STATUS.get(p.status, Status.ACTIVE),
        entities=list(p.entities),
    )


# ---- writes
def write_item_from_pb(p: pb.WriteItem, prefix: str = "") -> WriteInput:
    return WriteInput(
        namespace=p.namespace,
        layer=layer_name(p.layer),
        content=p.content,
        type=p.type,
        importance=p.importance if p.HasField("importance") else None,
        confidence=p.confidence if p.HasField("confidence") else None,
        session_id=p.session_id,
        task_id=p.task_id,
        event_time=from_ts(p, "event_time", prefix),
        metadata=dict(p.metadata),
        evidence=list(p.evidence),
        entities=list(p.entities),
        idempotency_key=p.idempotency_key,
        role=p.role,
        zone=p.zone,
    )


def write_item_to_pb(w: WriteInput) -> pb.WriteItem:
    layer = _LAYER_TO_PB.get(Layer(w.layer)) if w.layer in Layer._value2member_map_ else None
    msg = pb.WriteItem(
        namespace=w.namespace,
        layer=layer or pb.LAYER_UNSPECIFIED,  # type: ignore[arg-type]
        content=w.content,
        type=w.type,
        session_id=w.session_id,
        task_id=w.task_id,
        event_time=ts(w.event_time),
        metadata=w.metadata,
        evidence=w.evidence,
        entities=w.entities,
        idempotency_key=w.idempotency_key,
        role=w.role,
        zone=w.zone,
    )
    if w.importance is not None:
        msg.importance = w.importance
    if w.confidence is not None:
        msg.confidence = w.confidence
    return msg


def write_result_to_pb(o: WriteOutcome) -> pb.WriteResult:
    return pb.WriteResult(
        id=o.id,
        duplicate=o.duplicate,
        applied=o.applied,
        journal_seq=o.journal_seq,
        redactions=o.redactions,
        quarantined=o.quarantined,
        skipped=o.skipped,
        proposal_id=o.proposal_id,
    )


def write_result_from_pb(p: pb.WriteResult) -> WriteOutcome:
    return WriteOutcome(
        id=p.id,
        duplicate=p.duplicate,
        applied=p.applied,
        journal_seq=p.journal_seq,
        redactions=list(p.redactions),
        quarantined=p.quarantined,
        skipped=p.skipped,
        proposal_id=p.proposal_id,
    )


# ---- working memory
def turn_input(p: pb.AppendTurnRequest, prefix: str = "") -> TurnInput:
    return TurnInput(
        namespace=p.namespace,
        session_id=p.session_id,
        role=p.role,
        content=p.content,
        zone=p.zone,
        metadata=dict(p.metadata),
        idempotency_key=p.idempotency_key,
        at=from_ts(p, "at", prefix),
    )


def turn_outcome_to_pb(o: TurnOutcome) -> pb.AppendTurnResponse:
    return pb.AppendTurnResponse(
        id=o.id,
        duplicate=o.duplicate,
        compacted=o.compacted,
        dialogue_length=o.dialogue_length,
        redactions=o.redactions,
        proposal_id=o.proposal_id,
        quarantined=o.quarantined,
    )


# ---- recall
def recall_query_from_pb(p: pb.RecallRequest) -> RecallQuery:
    unknown = [x for x in p.layers if x and x not in _PB_TO_LAYER]
    if unknown:
        raise InvalidArgument(
            f"layers holds {unknown[0]}, not a layer number: use working, episodic, semantic or "
            "procedural",
            field="layers",
        )
    return RecallQuery(
        query=p.query,
        namespaces=tuple(dict.fromkeys(p.namespaces)),
        layers=tuple(_PB_TO_LAYER[x] for x in p.layers if x in _PB_TO_LAYER),
        top_k=p.top_k or 10,
        token_budget=p.token_budget,
        session_id=p.session_id,
        start=from_ts(p, "start"),
        end=from_ts(p, "end"),
        types=tuple(p.types),
        as_of=from_ts(p, "as_of"),
    )


def recall_result_to_pb(r: RecallResult) -> pb.RecallResponse:
    return pb.RecallResponse(
        hits=[
            pb.Hit(
                memory=memory_to_pb(h.memory),
                score=h.score,
                similarity=h.similarity,
                recency=h.recency,
                keyword=h.keyword,
            )
            for h in r.hits
        ],
        memory_block=r.block,
        block_tokens=r.block_tokens,
        routed_layers=[_LAYER_TO_PB[x] for x in r.routed],  # type: ignore[misc]
        degraded=r.degraded,
    )


# ---- working memory
def turn_to_pb(t: Turn) -> pb.Turn:
    return pb.Turn(
        id=t.id, role=t.role, content=t.content, zone=t.zone.value, at=ts(t.at), metadata=t.metadata
    )


def turn_from_pb(p: pb.Turn) -> Turn:
    from gateway.core.model.models import Zone

    return Turn(
        id=p.id,
        role=p.role,
        content=p.content,
        zone=Zone(p.zone),
        at=from_ts(p, "at") or datetime.fromtimestamp(0, UTC),
        metadata=dict(p.metadata),
    )


# ---- episodic
def event_to_pb(e: Event) -> pb.Event:
    return pb.Event(
        id=e.id,
        namespace=e.namespace,
        type=e.type,
        summary=e.summary,
        at=ts(e.at),
        importance=e.importance,
        agent_id=e.agent_id,
        user_id=e.user_id,
        session_id=e.session_id,
        task_id=e.task_id,
        entities=e.entities,
    )


def event_from_pb(p: pb.Event) -> Event:
    return Event(
        id=p.id,
        namespace=p.namespace,
        type=p.type,
        summary=p.summary,
        at=from_ts(p, "at") or datetime.fromtimestamp(0, UTC),
        importance=p.importance,
        agent_id=p.agent_id,
        user_id=p.user_id,
        session_id=p.session_id,
        task_id=p.task_id,
        entities=list(p.entities),
    )


def neighbour_to_pb(n: Neighbour) -> pb.Neighbour:
    return pb.Neighbour(
        node=pb.NodeRef(kind=n.node.kind.value, id=n.node.id),
        relation=n.relation,
        at=ts(n.at),
        distance=n.distance,
        label=n.label,
    )


def neighbour_from_pb(p: pb.Neighbour) -> Neighbour:
    return Neighbour(
        node=NodeRef(NodeKind(p.node.kind), p.node.id),
        relation=p.relation,
        at=from_ts(p, "at") or datetime.fromtimestamp(0, UTC),
        distance=p.distance,
        label=p.label,
    )


# ---- arbitration
def proposal_to_pb(p: Proposal, competing: Competing | None = None) -> pb.Proposal:
    item = p.item
    if isinstance(item, TurnAppend):
        msg = pb.WriteItem(
            namespace=item.namespace,
            layer=pb.WORKING,
            content=item.content,
            session_id=item.session_id,
            metadata=dict(item.metadata),
            role=item.role,
            zone=item.zone.value,
        )
    else:
        msg = pb.WriteItem(
            namespace=item.namespace,
            layer=_LAYER_TO_PB[item.layer],  # type: ignore[arg-type]
            content=item.content,
            session_id=item.session_id,
            metadata=dict(item.metadata),
            type=item.type,
            importance=item.importance,
            confidence=item.confidence,
            task_id=item.task_id,
            evidence=list(item.evidence),
            entities=list(item.entities),
            event_time=ts(item.event_time),
        )
    return pb.Proposal(
        id=p.id,
        proposer=p.proposer,
        item=msg,
        state=p.state,
        decided_by=p.decided_by,
        reason=p.reason,
        created_at=ts(datetime.fromtimestamp(p.created, UTC)) if p.created else None,
        memory_id=p.memory_id,
        slot=competing.slot if competing else "",
        slot_value=competing.value if competing else "",
        conflicts_with=memory_to_pb(competing.fact) if competing and competing.fact else None,
    )


def skill_to_pb(s: Skill) -> pb.Skill:
    return pb.Skill(
        name=s.name,
        description=s.description,
        trigger=s.trigger,
        parameter_schema=s.parameter_schema,
        entry_point=s.entry_point,
        version=s.version,
        namespace=s.namespace,
        id=s.id,
    )


def skill_from_pb(p: pb.Skill) -> Skill:
    return Skill(
        name=p.name,
        description=p.description,
        trigger=p.trigger,
        parameter_schema=p.parameter_schema,
        entry_point=p.entry_point,
        namespace=p.namespace or "global",
        version=p.version,
        id=p.id,
    )


def task_to_pb(t: Task) -> pb.Task:
    return pb.Task(
        id=t.id,
        steps=[
            pb.Step(
                index=s.index,
                name=s.name,
                state=s.state,
                output=s.output,
                error=s.error,
                attempts=s.attempts,
            )
            for s in t.steps
        ],
        resume_at=t.resume_at,
        state=t.state,
    )


def end_session_to_pb(o: EndSessionOutcome) -> pb.EndSessionResponse:
    return pb.EndSessionResponse(
        job_id=o.job_id,
        turns=o.turns,
        duplicate=o.duplicate,
        applied=o.applied,
        extractor=o.result.extractor if o.result else "",
        outcomes=dict(o.result.outcomes) if o.result else {},
    )


def fact_outcome_to_pb(o: FactOutcome) -> pb.ProposeFactResponse:
    return pb.ProposeFactResponse(
        pending_id=o.pending_id,
        sessions_seen=o.sessions_seen,
        promoted=o.promoted,
        memory_id=o.memory_id,
    )


def pending_fact_to_pb(f: PendingFact) -> pb.PendingFact:
    return pb.PendingFact(
        id=f.id,
        namespace=f.namespace,
        fact=f.fact,
        sessions=f.sessions,
        evidence=f.evidence,
        confidence=f.confidence,
    )


def layer_stats_to_pb(b: BreakerStatus) -> pb.LayerStats:
    return pb.LayerStats(
        layer=b.layer,
        latency_p50_ms=b.p50_ms,
        latency_p99_ms=b.p99_ms,
        breaker=b.state,
        calls=b.calls,
        failures=b.failures,
    )


def audit_entry_to_pb(e: AuditEntry) -> pb.AuditEntry:
    return pb.AuditEntry(
        at=ts(datetime.fromtimestamp(e.at, UTC)),
        agent_id=e.agent_id,
        action=e.action,
        namespace=e.namespace,
        target=e.target,
        detail=e.detail,
    )


def recall_stats_to_pb(r: dict[str, Any]) -> pb.RecallStats:
    return pb.RecallStats(
        layer=_LAYER_TO_PB[r["layer"]],
        recalls=r["recalls"],  # type: ignore[arg-type]
        hits=r["hits"],
        hit_rate=r["hit_rate"],
    )


# ---- export / import
def link_to_pb(r: Relation) -> pb.GraphLink:
    return pb.GraphLink(
        src=pb.NodeRef(kind=r.src.kind.value, id=r.src.id),
        type=r.type,
        dst=pb.NodeRef(kind=r.dst.kind.value, id=r.dst.id),
        at=ts(r.at),
        properties=dict(r.properties),
    )


def link_from_pb(p: pb.GraphLink, where: str = "links") -> Relation:
    try:
        src, dst = NodeKind(p.src.kind), NodeKind(p.dst.kind)
    except ValueError:
        raise InvalidArgument(
            f"{where}: node kind must be one of {', '.join(k.value for k in NodeKind)}",
            field=where,
        ) from None
    return Relation(
        NodeRef(src, p.src.id),
        p.type,
        NodeRef(dst, p.dst.id),
        from_ts(p, "at") or datetime.fromtimestamp(0, UTC),
        tuple(sorted(p.properties.items())),
    )


def exported_to_pb(e: Exported) -> pb.ExportedMemory:
    head = e.versions[-1]
    return pb.ExportedMemory(
        versions=[memory_to_pb(v, internal=True) for v in e.versions],
        fact_keys=[v.fact_key for v in e.versions],
        embedding=head.embedding.tolist() if e.embedder and head.embedding is not None else [],
        embedder=e.embedder,
        links=[link_to_pb(r) for r in e.links],
    )


def exported_from_pb(p: pb.ExportedMemory, where: str = "memories") -> Exported:
    if p.fact_keys and len(p.fact_keys) != len(p.versions):
        raise InvalidArgument(f"{where}.fact_keys: one per version", field=where)
    versions = []
    for i, v in enumerate(p.versions):
        if v.layer not in _PB_TO_LAYER or v.status not in _PB_TO_STATUS:
            raise InvalidArgument(
                f"{where}.versions[{i}]: layer and status are required", field=where
            )
        mem = memory_from_pb(v)
        mem.fact_key = p.fact_keys[i] if p.fact_keys else ""
        versions.append(mem)
    if versions and p.embedding:
        versions[-1].embedding = np.asarray(p.embedding, dtype=np.float32)
    links = [link_from_pb(link, f"{where}.links") for link in p.links]
    return Exported(versions, links, p.embedder if p.embedding else "")


def import_report_to_pb(r: ImportReport) -> pb.ImportResponse:
    return pb.ImportResponse(
        imported=r.imported,
        unchanged=r.unchanged,
        reembedded=r.reembedded,
        links=r.links,
        conflicts=r.conflicts,
        erased=r.erased,
    )


def erased_to_pb(e: Erased) -> pb.EraseResponse:
    return pb.EraseResponse(erase_id=e.erase_id, applied=e.applied)
