"""What the applier derives from commands and stored memories: the memory a write becomes, its
vector item, the graph event of an episode, the relation of a Relate command."""

from __future__ import annotations

from datetime import datetime

from gateway.core.model.commands import MemoryWrite, Relate
from gateway.core.model.models import Event, Layer, Memory, Relation, Status, VectorItem
from gateway.core.truth import reconcile, slots
from gateway.core.truth import validity as vd


def memory_from_command(
    write_id: str, agent_id: str, c: MemoryWrite, now: datetime, fact_slots: bool = True
) -> Memory:
    """The memory a write becomes. A semantic fact gets its slot (``truth.slots``): the slot is
    its fact key unless the caller gave one, and it is valid from the time it states (its event
    time), else from when it was received."""
    fact = c.metadata.get("fact_key", "")
    derived: dict[str, str] = {}
    if c.layer is Layer.SEMANTIC:
        slot = slots.parse(c.content, c.namespace) if fact_slots else None
        if slot is not None:
            fact = fact or slot.key
            derived = {vd.SLOT_KEY: f"{slot.subject}:{slot.attribute}", vd.VALUE_KEY: slot.value}
            if slot.cue:
                derived[vd.UPDATE_CUE_KEY] = "1"
        derived[vd.VALID_FROM_KEY] = (c.event_time or c.received_at or now).isoformat()
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
        metadata={**c.metadata, **derived, reconcile.WRITE_ID_KEY: write_id},
        evidence=list(c.evidence),
        event_time=c.event_time
        or (c.received_at if c.layer is Layer.EPISODIC and c.received_at else None),
        status=Status.QUARANTINED if c.quarantined else Status.ACTIVE,
        fact_key=reconcile.normalise_fact(fact) if fact else "",
        entities=list(c.entities),
    )


def relation_of(c: Relate) -> Relation:
    return Relation(c.src, c.type, c.dst, c.at, tuple(sorted(c.properties.items())))


def vector_item(mem: Memory) -> VectorItem:
    assert mem.embedding is not None
    return VectorItem(mem.id, mem.namespace, mem.layer, mem.embedding)


def event_of(mem: Memory, user_id: str = "") -> Event:
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


def dialogue_text(mem: Memory) -> str:
    """What is embedded for a memory: its context (if any) and its content."""
    return f"{mem.context}\n{mem.content}" if mem.context else mem.content
