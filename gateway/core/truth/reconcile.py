"""How a new long-term memory meets what is stored (seed 002 §3.1; 000 §2.3, §5.3): a near twin
updates the existing memory, a claim about the same fact supersedes it when stronger and is kept
as history when weaker. Pure functions: the applier looks the candidates up and stores the result."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from gateway.core.model.models import Layer, Memory, Status
from gateway.core.truth import validity as vd

#: metadata key holding the id of the write that made a version
WRITE_ID_KEY = "memgate.write_id"
#: metadata key of a weaker claim kept as history: the memory that holds the fact
SUPERSEDED_BY_KEY = "memgate.superseded_by"
EVIDENCE_KEPT = 16
#: two claims on one fact recorded this close together are concurrent: the stronger one wins
#: (confidence, then evidence), not the later one (seed 000 §5.3)
CONCURRENT = timedelta(seconds=60)
#: how much less sure an update may be than the fact it replaces when it says it is an update
#: ("now", "moved", "已经"…)
CUE_MARGIN = 0.2


def normalise_fact(text: str) -> str:
    """The key of a fact: trimmed, lower-cased, whitespace collapsed."""
    return re.sub(r"\s+", " ", text.strip().lower())


def reconciles(mem: Memory) -> bool:
    """Whether ``mem`` is checked against stored memories (active semantic and procedural ones;
    episodes are events, every one kept)."""
    return mem.status is Status.ACTIVE and mem.layer in (Layer.SEMANTIC, Layer.PROCEDURAL)


@dataclass(frozen=True, slots=True)
class Decision:
    version: Memory | None  # the version to store; None: the write changes nothing
    merged_into: str = ""  # the memory the write id now resolves to ("" = itself)
    #: the active fact a weaker contradicting claim conflicts with (the claim is held for review)
    conflict: Memory | None = None


def decide(mem: Memory, same_fact: Memory | None, near_twin: Memory | None) -> Decision:
    """``same_fact``: the active memory holding ``mem.fact_key``; ``near_twin``: an active memory
    at least as similar as the dedup threshold (looked up only when there is no ``same_fact``)."""
    if not reconciles(mem):
        return Decision(mem)
    if same_fact is None:
        if near_twin is None or (mem.fact_key and near_twin.fact_key != mem.fact_key):
            return Decision(mem)  # a keyed fact is never folded into another fact (or a note)
        return merge(near_twin, mem)
    if same_fact.metadata.get(WRITE_ID_KEY) == mem.id:
        return Decision(None)  # this write already made the current version (a replay)
    if same_value(mem, same_fact):
        return merge(same_fact, mem)
    if prevails(mem, same_fact):
        return supersede(same_fact, mem)
    held = {**mem.metadata, SUPERSEDED_BY_KEY: same_fact.id}
    older = _from(mem) < _from(same_fact) - CONCURRENT
    if mem.metadata.get(vd.SLOT_KEY) and not older:
        # a weaker claim that the fact changed: the master decides (releasing it supersedes)
        held = {**mem.metadata, vd.CONFLICTS_WITH_KEY: same_fact.id}
        return Decision(mem.with_changes(status=Status.QUARANTINED, metadata=held), "", same_fact)
    return Decision(mem.with_changes(status=Status.SUPERSEDED, metadata=held))


def same_value(mem: Memory, stored: Memory) -> bool:
    """Whether ``mem`` restates ``stored``: the same slot value (in any wording or language),
    or the same text."""
    a, b = vd.value_of(mem), vd.value_of(stored)
    if a and b:
        return a == b
    return mem.content.strip() == stored.content.strip()


def prevails(mem: Memory, stored: Memory) -> bool:
    """Whether a contradicting claim replaces the stored fact. A decision of the master always
    does; otherwise the more confident claim; at equal confidence the later one (a knowledge
    update), except for concurrent claims, where the evidence decides; a less confident claim
    only when it says it is an update and is recorded later."""
    if mem.metadata.get(vd.DECIDED_KEY):
        return True
    later = _from(mem) - _from(stored)
    if abs(mem.confidence - stored.confidence) < 1e-9:
        if abs(later) <= CONCURRENT:
            return len(mem.evidence) >= len(stored.evidence)
        return later > timedelta(0)
    if mem.confidence > stored.confidence:
        return True
    cue = bool(mem.metadata.get(vd.UPDATE_CUE_KEY))
    return cue and later > timedelta(0) and mem.confidence >= stored.confidence - CUE_MARGIN


def _from(mem: Memory) -> datetime:
    return vd.valid_from(mem) or mem.created_at


def merge(target: Memory, mem: Memory) -> Decision:
    """A near twin updates the existing memory instead of adding a second one; a write that
    changes nothing (same text, no new evidence or metadata) adds no version at all."""
    if target.metadata.get(WRITE_ID_KEY) == mem.id or adds_nothing(target, mem):
        return Decision(None, target.id)
    evidence = target.evidence + [e for e in mem.evidence if e not in target.evidence]
    return Decision(
        target.with_changes(
            content=mem.content,
            version=target.version + 1,
            updated_at=mem.updated_at,
            importance=max(target.importance, mem.importance),
            confidence=max(target.confidence, mem.confidence),
            evidence=evidence[-EVIDENCE_KEPT:],
            metadata=_merged_metadata(target, mem),
            entities=sorted(set(target.entities) | set(mem.entities)),
            embedding=mem.embedding,
            context=mem.context,
            source_session=mem.source_session or target.source_session,
        ),
        target.id,
    )


def _merged_metadata(target: Memory, mem: Memory) -> dict[str, str]:
    """A restatement keeps when the fact began to hold (and says nothing of an update)."""
    merged = {**target.metadata, **mem.metadata, WRITE_ID_KEY: mem.id}
    merged.pop(vd.UPDATE_CUE_KEY, None)
    merged.pop(vd.DECIDED_KEY, None)
    if vd.VALID_FROM_KEY in target.metadata:
        merged[vd.VALID_FROM_KEY] = target.metadata[vd.VALID_FROM_KEY]
    return merged


def supersede(target: Memory, mem: Memory) -> Decision:
    """The new claim becomes the current version; the old one stays in the history (valid
    until the new one's ``valid_from``)."""
    replaced = vd.value_of(target)
    metadata = {**mem.metadata, WRITE_ID_KEY: mem.id}
    metadata.pop(vd.CONFLICTS_WITH_KEY, None)
    if replaced:
        metadata[vd.REPLACED_VALUE_KEY] = replaced
    return Decision(
        target.with_changes(
            content=mem.content,
            version=target.version + 1,
            updated_at=mem.updated_at,
            importance=mem.importance,
            confidence=mem.confidence,
            evidence=mem.evidence,
            metadata=metadata,
            entities=mem.entities,
            embedding=mem.embedding,
            context=mem.context,
            source_agent=mem.source_agent,
            source_session=mem.source_session,
        ),
        target.id,
    )


def adds_nothing(target: Memory, mem: Memory) -> bool:
    own = {k: v for k, v in mem.metadata.items() if k != WRITE_ID_KEY}
    return (
        mem.content.strip() == target.content.strip()
        and set(mem.evidence) <= set(target.evidence)
        and all(target.metadata.get(k) == v for k, v in own.items())
        and set(mem.entities) <= set(target.entities)
        and mem.importance <= target.importance
        and mem.confidence <= target.confidence
    )
