"""The journal's commands — what an acknowledged write asks the applier to do — typed, with one
versioned codec. Old journals (payloads written before the codec had a version) still replay.

Codec versions: v0 (no ``v`` key), v1 (``v`` and ``received_at``), v2 (the erasure commands
``ForgetNamespace``, ``ForgetSubject`` and ``EraseWorking``; ``Forget`` now erases). Every
older payload decodes unchanged."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar

from gateway.core.models import Layer, NodeKind, NodeRef, Zone

#: the version ``encode`` writes; ``decode`` reads this one and every older one
CODEC_VERSION = 2


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


@dataclass(frozen=True, slots=True)
class Forget:
    """Erase a memory at once: every version, its vector, its event node and its audit text go;
    a tombstone (id, content hash, who, when, why) is all that stays."""

    kind: ClassVar[str] = "forget"
    id: str
    namespace: str
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Archive:
    """Take a decayed memory out of everyday recall (a new version with status archived)."""

    kind: ClassVar[str] = "archive"
    id: str
    namespace: str
    reason: str = ""


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


Command = (
    MemoryWrite
    | TurnAppend
    | Forget
    | Archive
    | Relate
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
        ForgetNamespace,
        ForgetSubject,
        EraseWorking,
    )
}
#: fields that record when a command was received: a retry differs in them only
_RECEIVED = ("received_at", "at")


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _parse_time(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def encode(cmd: Command) -> dict[str, Any]:
    """The command as a JSON-able dict (with the codec version)."""
    if isinstance(cmd, MemoryWrite):
        body: dict[str, Any] = {
            "namespace": cmd.namespace,
            "layer": cmd.layer.value,
            "content": cmd.content,
            "type": cmd.type,
            "importance": cmd.importance,
            "confidence": cmd.confidence,
            "session_id": cmd.session_id,
            "task_id": cmd.task_id,
            "event_time": _time(cmd.event_time),
            "metadata": dict(cmd.metadata),
            "evidence": list(cmd.evidence),
            "entities": list(cmd.entities),
            "quarantined": cmd.quarantined,
            "user_id": cmd.user_id,
            "links": [list(link) for link in cmd.links],
            "explicit": cmd.explicit,
            "received_at": _time(cmd.received_at),
        }
    elif isinstance(cmd, TurnAppend):
        body = {
            "namespace": cmd.namespace,
            "layer": Layer.WORKING.value,
            "session_id": cmd.session_id,
            "content": cmd.content,
            "role": cmd.role,
            "zone": cmd.zone.value,
            "metadata": dict(cmd.metadata),
            "at": _time(cmd.at),
        }
    elif isinstance(cmd, Forget | Archive):
        body = {"id": cmd.id, "namespace": cmd.namespace, "reason": cmd.reason}
    elif isinstance(cmd, ForgetNamespace):
        body = {"namespace": cmd.namespace, "reason": cmd.reason}
    elif isinstance(cmd, ForgetSubject):
        body = {"user_id": cmd.user_id, "namespace": cmd.namespace, "reason": cmd.reason}
    elif isinstance(cmd, EraseWorking):
        body = {
            "namespace": cmd.namespace,
            "session_id": cmd.session_id,
            "turn_ids": list(cmd.turn_ids),
        }
    else:
        body = {
            "src_kind": cmd.src.kind.value,
            "src_id": cmd.src.id,
            "type": cmd.type,
            "dst_kind": cmd.dst.kind.value,
            "dst_id": cmd.dst.id,
            "at": _time(cmd.at),
            "properties": dict(cmd.properties),
        }
    return {"v": CODEC_VERSION, **body}


def decode(kind: str, data: dict[str, Any]) -> Command:
    """A command from what ``encode`` wrote, at this or any older codec version (v0 payloads
    had the same keys, without ``v`` and ``received_at``)."""
    if kind == MemoryWrite.kind:
        return MemoryWrite(
            namespace=data["namespace"],
            layer=Layer(data["layer"]),
            content=data["content"],
            type=data.get("type") or "note",
            importance=float(data.get("importance", 0.5)),
            confidence=float(data.get("confidence", 1.0)),
            session_id=data.get("session_id") or "",
            task_id=data.get("task_id") or "",
            event_time=_parse_time(data.get("event_time")),
            metadata=dict(data.get("metadata") or {}),
            evidence=tuple(data.get("evidence") or ()),
            entities=tuple(data.get("entities") or ()),
            quarantined=bool(data.get("quarantined")),
            user_id=data.get("user_id") or "",
            links=tuple((str(t), str(k), str(i)) for t, k, i in data.get("links") or ()),
            explicit=bool(data.get("explicit")),
            received_at=_parse_time(data.get("received_at")),
        )
    if kind == TurnAppend.kind:
        return TurnAppend(
            namespace=data["namespace"],
            session_id=data["session_id"],
            content=data["content"],
            role=data.get("role") or "user",
            zone=Zone(data.get("zone") or Zone.DIALOGUE.value),
            metadata=dict(data.get("metadata") or {}),
            at=_parse_time(data.get("at")),
        )
    if kind in (Forget.kind, Archive.kind):
        cls = Forget if kind == Forget.kind else Archive
        return cls(
            id=data["id"], namespace=data.get("namespace", ""), reason=data.get("reason", "")
        )
    if kind == ForgetNamespace.kind:
        return ForgetNamespace(namespace=data["namespace"], reason=data.get("reason", ""))
    if kind == ForgetSubject.kind:
        return ForgetSubject(user_id=data["user_id"], reason=data.get("reason", ""))
    if kind == EraseWorking.kind:
        return EraseWorking(
            namespace=data["namespace"],
            session_id=data.get("session_id") or "",
            turn_ids=tuple(data.get("turn_ids") or ()),
        )
    if kind == Relate.kind:
        at = _parse_time(data.get("at"))
        assert at is not None, "a relation always has a time"
        return Relate(
            src=NodeRef(NodeKind(data["src_kind"]), data["src_id"]),
            type=data["type"],
            dst=NodeRef(NodeKind(data["dst_kind"]), data["dst_id"]),
            at=at,
            properties=dict(data.get("properties") or {}),
        )
    raise ValueError(f"unknown journal command kind {kind!r}")


def dumps(cmd: Command) -> str:
    return json.dumps(encode(cmd), ensure_ascii=False, separators=(",", ":"))


def loads(kind: str, text: str) -> Command:
    return decode(kind, json.loads(text))


def digest(cmd: Command) -> str:
    """What makes two writes the same write: everything but when they were received."""
    body = {k: v for k, v in encode(cmd).items() if k not in ("v", *_RECEIVED)}
    if isinstance(cmd, Relate):
        body["at"] = _time(cmd.at)  # a relation's time is what it says, not when it came
    text = json.dumps([cmd.kind, body], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
