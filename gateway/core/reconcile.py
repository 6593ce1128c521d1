"""How a new long-term memory meets what is stored (seed 002 §3.1; 000 §2.3, §5.3): a near twin
updates the existing memory, a claim about the same fact supersedes it when stronger and is kept
as history when weaker. Pure functions: the applier looks the candidates up and stores the result."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gateway.core.models import Layer, Memory, Status

#: metadata key holding the id of the write that made a version
WRITE_ID_KEY = "memgate.write_id"
#: metadata key of a weaker claim kept as history: the memory that holds the fact
SUPERSEDED_BY_KEY = "memgate.superseded_by"
EVIDENCE_KEPT = 16


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
    if mem.content.strip() == same_fact.content.strip():
        return merge(same_fact, mem)
    # A contradicting claim about the same fact: the stronger claim wins, not the later one.
    if (mem.confidence, len(mem.evidence)) >= (same_fact.confidence, len(same_fact.evidence)):
        return supersede(same_fact, mem)
    return Decision(
        mem.with_changes(
            status=Status.SUPERSEDED, metadata={**mem.metadata, SUPERSEDED_BY_KEY: same_fact.id}
        )
    )


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
            metadata={**target.metadata, **mem.metadata, WRITE_ID_KEY: mem.id},
            entities=sorted(set(target.entities) | set(mem.entities)),
            embedding=mem.embedding,
            context=mem.context,
            source_session=mem.source_session or target.source_session,
        ),
        target.id,
    )


def supersede(target: Memory, mem: Memory) -> Decision:
    """The new claim becomes the current version; the old one stays in the history."""
    return Decision(
        target.with_changes(
            content=mem.content,
            version=target.version + 1,
            updated_at=mem.updated_at,
            importance=mem.importance,
            confidence=mem.confidence,
            evidence=mem.evidence,
            metadata={**mem.metadata, WRITE_ID_KEY: mem.id},
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
