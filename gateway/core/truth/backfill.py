"""Slots for facts that have none: facts stored before slots existed, or imported from an export
made without them. Each gets its slot as a new version, then meets the fact already holding that
slot exactly as a new write would (``reconcile.decide``), oldest first — so an update stored
before slots existed supersedes what it changed, a restatement merges, and a weaker
contradiction goes to review. Pure: the runner (``core/apply/slot_backfill.py``) reads and stores."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from gateway.core.model.control import ReviewItem
from gateway.core.model.models import Layer, Memory, Status
from gateway.core.truth import reconcile, slots
from gateway.core.truth import validity as vd
from gateway.core.truth.conflicts import conflict_item

#: the rules' version: facts left without a slot are tried again when it changes
VOCABULARY_VERSION = 2


def unslotted(mem: Memory) -> bool:
    """Whether ``mem`` is an active semantic fact the applier never gave a slot."""
    return (
        mem.layer is Layer.SEMANTIC
        and mem.status is Status.ACTIVE
        and vd.SLOT_KEY not in mem.metadata
    )


def slotted(mem: Memory, now: datetime) -> Memory | None:
    """``mem``'s next version with its slot (None: the rules find none). It keeps its own fact
    key when it has one and says since when it holds (its event time, else when it was made)."""
    slot = slots.parse(mem.content, mem.namespace)
    if slot is None:
        return None
    derived = {
        vd.SLOT_KEY: f"{slot.subject}:{slot.attribute}",
        vd.VALUE_KEY: slot.value,
        vd.VALID_FROM_KEY: mem.metadata.get(vd.VALID_FROM_KEY)
        or (mem.event_time or mem.created_at).isoformat(),
    }
    if slot.cue:
        derived[vd.UPDATE_CUE_KEY] = "1"
    return mem.with_changes(
        version=mem.version + 1,
        updated_at=now,
        fact_key=mem.fact_key or reconcile.normalise_fact(slot.key),
        metadata={**mem.metadata, **derived, reconcile.WRITE_ID_KEY: mem.id},
    )


@dataclass(slots=True)
class Plan:
    """What slotting a group of facts stores: new versions (``puts``, in order), vectors to keep
    (active versions) and to drop (facts merged or superseded into another), write ids that now
    resolve to another memory, and conflicts for review."""

    puts: list[Memory] = field(default_factory=list)
    indexed: dict[str, Memory] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)
    aliases: list[tuple[str, str]] = field(default_factory=list)
    conflicts: list[ReviewItem] = field(default_factory=list)
    slotted: int = 0


def plan(candidates: Sequence[Memory], holders: Mapping[str, Memory], now: datetime) -> Plan:
    """Slot ``candidates`` (unslotted facts of one namespace) against ``holders`` (the active
    fact holding each fact key now). Candidates meet the holder in the order their facts began
    to hold, so the newest statement of a single-valued slot ends up current."""
    out = Plan()
    current = dict(holders)
    ready = [(m, s) for m in candidates if unslotted(m) and (s := slotted(m, now)) is not None]
    ready.sort(key=lambda pair: (vd.valid_from(pair[1]) or pair[1].created_at, pair[1].id))
    for original, mem in ready:
        out.slotted += 1
        holder = current.get(mem.fact_key)
        if holder is None or holder.id == mem.id:
            _keep(out, mem)
            current[mem.fact_key] = mem
            continue
        decision = reconcile.decide(mem, holder, None)
        version = decision.version
        if version is None:  # a restatement that adds nothing: the holder stands
            _retire(out, original, holder, now)
        elif version.id == holder.id:  # merged into the holder or superseded it
            _keep(out, version)
            current[mem.fact_key] = version
            _retire(out, original, version, now)
        else:  # an older claim (kept as history) or a weaker contradiction (held for review)
            out.puts.append(version)
            out.dropped.append(version.id)
            if decision.conflict is not None:
                out.conflicts.append(conflict_item(version, decision.conflict))
    return out


def _keep(out: Plan, mem: Memory) -> None:
    out.puts.append(mem)
    out.indexed[mem.id] = mem


def _retire(out: Plan, original: Memory, into: Memory, now: datetime) -> None:
    """``original`` now lives on in ``into``: its last version says so, its id resolves there."""
    out.puts.append(
        original.with_changes(
            version=original.version + 1,
            updated_at=now,
            status=Status.SUPERSEDED,
            metadata={**original.metadata, reconcile.SUPERSEDED_BY_KEY: into.id},
        )
    )
    out.dropped.append(original.id)
    out.aliases.append((original.id, into.id))
