"""When a version of a fact was true (bi-temporal: the event time a write states, else the time it
was recorded). A fact is one memory whose versions are its values over time: a version is valid
from its own ``valid_from`` until the next version that changed the value (``valid_to``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from gateway.core.model.models import Memory, Status

#: metadata the applier derives for a slotted fact (reserved keys: callers cannot write them)
SLOT_KEY = "memgate.slot"  # "<subject>:<attribute>"
VALUE_KEY = "memgate.value"  # the value's one name
VALID_FROM_KEY = "memgate.valid_from"  # ISO 8601, UTC
#: the write said it is an update ("now", "moved", "现在", "已经"…)
UPDATE_CUE_KEY = "memgate.update_cue"
#: set on a version the master decided (an approved proposal or review item): it supersedes
DECIDED_KEY = "memgate.decided"
#: a weaker contradicting claim held for review: the memory it contradicts
CONFLICTS_WITH_KEY = "memgate.conflicts_with"
#: the value of the version this one replaced (on a superseding version)
REPLACED_VALUE_KEY = "memgate.replaced_value"


@dataclass(frozen=True, slots=True)
class Validity:
    valid_from: datetime | None
    valid_to: datetime | None  # None: still valid (or never replaced)
    superseded_by: str = ""  # the version (``<id>@<version>``) that replaced it


def valid_from(mem: Memory) -> datetime | None:
    raw = mem.metadata.get(VALID_FROM_KEY, "")
    if not raw:
        return None
    try:
        return datetime.fromisoformat(raw)
    except ValueError:
        return None


def value_of(mem: Memory) -> str:
    return mem.metadata.get(VALUE_KEY, "")


def changes_value(older: Memory, newer: Memory) -> bool:
    """Whether ``newer`` replaced ``older``'s value (a supersede), rather than restating it."""
    a, b = value_of(older), value_of(newer)
    if a or b:
        return a != b
    return older.content.strip() != newer.content.strip()


def timeline(versions: Sequence[Memory]) -> list[Validity]:
    """The validity of each version (oldest first, as ``RecordStore.history`` returns them).
    Only versions that hold the memory's content count; status versions (archived, forgotten)
    end nothing by themselves."""
    out: list[Validity] = []
    for i, mem in enumerate(versions):
        end: datetime | None = None
        by = ""
        for later in versions[i + 1 :]:
            if later.status in (Status.ACTIVE, Status.ARCHIVED) and changes_value(mem, later):
                end = valid_from(later) or later.updated_at
                by = f"{later.id}@{later.version}"
                break
        out.append(Validity(valid_from(mem) or mem.created_at, end, by))
    return out


def at(versions: Sequence[Memory], when: datetime) -> Memory | None:
    """The version that was true at ``when``: the last whose validity began by then and had not
    ended; None when the fact was not yet known to hold (or had been replaced by nothing)."""
    spans = timeline(versions)
    chosen: Memory | None = None
    for mem, span in zip(versions, spans, strict=True):
        start = span.valid_from
        if start is not None and start > when:
            continue
        if span.valid_to is not None and span.valid_to <= when:
            continue
        if mem.status in (Status.ACTIVE, Status.ARCHIVED):
            chosen = mem
    return chosen


#: metadata shown on a version read back (never stored): when its validity ended, and by what
VALID_TO_KEY = "memgate.valid_to"
SUPERSEDED_BY_VERSION_KEY = "memgate.superseded_by_version"


def annotated(versions: Sequence[Memory]) -> list[Memory]:
    """``versions`` (oldest first) with their validity in their metadata: ``valid_from`` always,
    ``valid_to`` and the replacing version where a later version changed the value."""
    out = []
    for mem, span in zip(versions, timeline(versions), strict=True):
        extra = {VALID_FROM_KEY: mem.metadata.get(VALID_FROM_KEY) or mem.created_at.isoformat()}
        if span.valid_to is not None:
            extra[VALID_TO_KEY] = span.valid_to.isoformat()
            extra[SUPERSEDED_BY_VERSION_KEY] = span.superseded_by
        out.append(mem.with_changes(metadata={**mem.metadata, **extra}))
    return out


def as_of(versions: Sequence[Memory], when: datetime) -> Memory | None:
    """The version true at ``when``, annotated with its validity; None if none was."""
    marked = annotated(versions)
    chosen = at(versions, when)
    return None if chosen is None else next(m for m in marked if m.version == chosen.version)
