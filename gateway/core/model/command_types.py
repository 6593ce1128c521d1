"""The journal's commands, as types: what an acknowledged write asks the applier to do. Their
one codec (versioned, so old journals still replay) is ``gateway.core.model.commands``."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import ClassVar

from gateway.core.model.models import Layer, Memory, NodeRef, Zone
from gateway.core.screening.screening import clean

MAX_REASON = 500


@dataclass(frozen=True, slots=True)
class MemoryWrite:
    """Store a long-term memory (episodic, semantic or procedural)."""

    kind: ClassVar[str] = "memory"
    namespace: str
    layer: Layer
    content: str
    type: str = "note"
    importance: float = 0.5
    confidence: float = 1.0
    session_id: str = ""
    task_id: str = ""
    event_time: datetime | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    evidence: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    quarantined: bool = False
    user_id: str = ""
    links: tuple[tuple[str, str, str], ...] = ()  # (relation type, node kind, node id)
    explicit: bool = False
    #: when the gateway acknowledged it; the event time of an event sent without one.
    #: Not part of what makes two writes the same (a retry is received later).
    received_at: datetime | None = None
    #: acknowledged before the second injection screen judged it (a write that does not wait):
    #: the applier screens it before anything is stored or served
    unscreened: bool = False


@dataclass(frozen=True, slots=True)
class TurnAppend:
    """Append a turn to a session's working memory."""

    kind: ClassVar[str] = "turn"
    namespace: str
    session_id: str
    content: str
    role: str = "user"
    zone: Zone = Zone.DIALOGUE
    metadata: dict[str, str] = field(default_factory=dict)
    at: datetime | None = None  # when received; not part of the digest


def _clean_reason(cmd: Forget | Archive) -> None:
    """A reason is free text from the caller: it is journaled with secrets redacted, at most
    ``MAX_REASON`` chars."""
    if cmd.reason:
        object.__setattr__(cmd, "reason", clean(cmd.reason[:MAX_REASON]))


@dataclass(frozen=True, slots=True)
class Forget:
    """Erase a memory at once: every version, its vector, its event node and its audit text go;
    a tombstone (id, content hash, who, when, why) is all that stays."""

    kind: ClassVar[str] = "forget"
    id: str
    namespace: str
    reason: str = ""

    def __post_init__(self) -> None:
        _clean_reason(self)


@dataclass(frozen=True, slots=True)
class Archive:
    """Take a decayed memory out of everyday recall (a new version with status archived)."""

    kind: ClassVar[str] = "archive"
    id: str
    namespace: str
    reason: str = ""

    def __post_init__(self) -> None:
        _clean_reason(self)


@dataclass(frozen=True, slots=True)
class ForgetNamespace:
    """Erase everything a namespace holds: records, vectors, events and its graph nodes, the
    audit text and ledger rows about it, and pending journal entries acknowledged before it."""

    kind: ClassVar[str] = "forget_namespace"
    namespace: str
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ForgetSubject:
    """Erase a user: ``ForgetNamespace("user/<id>")`` plus every event, in any namespace, that
    names the user (``Event.user_id``) and the user's graph node (see docs/SECURITY.md)."""

    kind: ClassVar[str] = "forget_subject"
    user_id: str
    reason: str = ""

    @property
    def namespace(self) -> str:
        return f"user/{self.user_id}"


@dataclass(frozen=True, slots=True)
class EraseWorking:
    """Drop every working-memory session of a namespace, or (with ``session_id``) the turns
    ``turn_ids`` of one session. Journaled beside ``ForgetNamespace``, ``ForgetSubject`` and
    ``Forget`` so the working lane applies it after every turn acknowledged before it."""

    kind: ClassVar[str] = "erase_working"
    namespace: str
    session_id: str = ""
    turn_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Relate:
    """Add or update one timestamped edge of the episodic graph."""

    kind: ClassVar[str] = "relate"
    src: NodeRef
    type: str
    dst: NodeRef
    at: datetime
    properties: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FormSession:
    """Mine a session's turns up to ledger position ``upto`` for facts (memory formation). The
    same session and range is the same job, whoever asked (``requested_by`` is not part of it)."""

    kind: ClassVar[str] = "form"
    namespace: str
    session_id: str
    upto: int
    requested_by: str = ""  # the agent that ended the session, or "idle" / "every-n"


@dataclass(frozen=True, slots=True)
class SummariseOverflow:
    """Summarise turns that rolled out of a session's dialogue with the configured (slow)
    summariser, on the formation lane, replacing the extractive summary ``summary_id`` that the
    overflow put in the task zone at once. ``turns``: (id, role, content) of the rolled-off turns."""

    kind: ClassVar[str] = "summarise"
    namespace: str
    session_id: str
    summary_id: str
    turns: tuple[tuple[str, str, str], ...]


@dataclass(frozen=True, slots=True)
class Release:
    """Release a quarantined memory after review (a new version with status active)."""

    kind: ClassVar[str] = "release"
    id: str
    namespace: str
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ImportMemory:
    """Store an exported memory as it was: every version, its id, statuses and times."""

    kind: ClassVar[str] = "import"
    namespace: str
    versions: tuple[Memory, ...]  # oldest first, without embeddings
    #: the current version's vector, made by the gateway's own embedder; () = embed it again
    embedding: tuple[float, ...] = ()


Command = (
    MemoryWrite
    | TurnAppend
    | Forget
    | Archive
    | Relate
    | FormSession
    | SummariseOverflow
    | Release
    | ImportMemory
    | ForgetNamespace
    | ForgetSubject
    | EraseWorking
)
Erasure = ForgetNamespace | ForgetSubject | EraseWorking
KINDS: dict[str, type[Command]] = {
    c.kind: c  # type: ignore[misc]
    for c in (
        MemoryWrite,
        TurnAppend,
        Forget,
        Archive,
        Relate,
        FormSession,
        SummariseOverflow,
        Release,
        ImportMemory,
        ForgetNamespace,
        ForgetSubject,
        EraseWorking,
    )
}

#: the lane that applies each kind: working memory apart from long-term memory (a dead Redis never
#: holds up long-term writes, nor the reverse), memory formation apart from both (a slow model
#: never holds up writes). The lanes are made from this (``usecases/service.py``).
WORKING, LONG_TERM, FORMATION = "working", "long-term", "formation"
LANE_OF: dict[str, str] = {
    TurnAppend.kind: WORKING,
    EraseWorking.kind: WORKING,
    MemoryWrite.kind: LONG_TERM,
    Forget.kind: LONG_TERM,
    Archive.kind: LONG_TERM,
    Relate.kind: LONG_TERM,
    Release.kind: LONG_TERM,
    ImportMemory.kind: LONG_TERM,
    ForgetNamespace.kind: LONG_TERM,
    ForgetSubject.kind: LONG_TERM,
    FormSession.kind: FORMATION,
    SummariseOverflow.kind: FORMATION,
}


def kinds_of(lane: str) -> tuple[str, ...]:
    """The command kinds ``lane`` applies, in ``LANE_OF``'s order."""
    return tuple(kind for kind, owner in LANE_OF.items() if owner == lane)
