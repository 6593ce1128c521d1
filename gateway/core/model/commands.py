"""The journal's commands — what an acknowledged write asks the applier to do — and their one
versioned codec. Old journals (payloads written before the codec had a version) still replay.
The command types themselves live in ``gateway.core.model.command_types`` (re-exported here).

Codec versions: v0 (no ``v`` key), v1 (``v`` and ``received_at``), v2 (the erasure commands
``ForgetNamespace``, ``ForgetSubject`` and ``EraseWorking``; ``Forget`` now erases). Every
older payload decodes unchanged."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from gateway.core.model.command_types import (
    KINDS,
    MAX_REASON,
    Archive,
    Command,
    EraseWorking,
    Erasure,
    Forget,
    ForgetNamespace,
    ForgetSubject,
    FormSession,
    ImportMemory,
    MemoryWrite,
    Relate,
    Release,
    SummariseOverflow,
    TurnAppend,
)
from gateway.core.model.models import Layer, Memory, NodeKind, NodeRef, Status, Zone

__all__ = [
    "Archive",
    "CODEC_VERSION",
    "Command",
    "CommandUnreadable",
    "decode",
    "digest",
    "dumps",
    "encode",
    "EraseWorking",
    "Erasure",
    "Forget",
    "ForgetNamespace",
    "ForgetSubject",
    "FormSession",
    "SummariseOverflow",
    "ImportMemory",
    "KINDS",
    "loads",
    "MAX_REASON",
    "namespace_of",
    "MemoryWrite",
    "Relate",
    "Release",
    "TurnAppend",
]

#: the version ``encode`` writes; ``decode`` reads this one and every older one
CODEC_VERSION = 2

#: fields that record when or by whom a command was received, or that the second screen had not
#: judged it yet when it was acknowledged: a retry differs in them only
_RECEIVED = ("received_at", "at", "requested_by", "unscreened")


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _parse_time(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _memory_dict(m: Memory) -> dict[str, Any]:
    return {
        "id": m.id,
        "namespace": m.namespace,
        "layer": m.layer.value,
        "content": m.content,
        "type": m.type,
        "importance": m.importance,
        "confidence": m.confidence,
        "source_agent": m.source_agent,
        "source_session": m.source_session,
        "task_id": m.task_id,
        "created_at": _time(m.created_at),
        "updated_at": _time(m.updated_at),
        "last_accessed_at": _time(m.last_accessed_at),
        "access_count": m.access_count,
        "version": m.version,
        "metadata": dict(m.metadata),
        "evidence": list(m.evidence),
        "event_time": _time(m.event_time),
        "status": m.status.value,
        "fact_key": m.fact_key,
        "entities": list(m.entities),
    }


def _memory_of(d: dict[str, Any]) -> Memory:
    created, updated = _parse_time(d["created_at"]), _parse_time(d["updated_at"])
    assert created is not None and updated is not None, "a stored memory has both times"
    return Memory(
        id=d["id"],
        namespace=d["namespace"],
        layer=Layer(d["layer"]),
        content=d["content"],
        type=d["type"],
        importance=float(d["importance"]),
        confidence=float(d["confidence"]),
        source_agent=d["source_agent"],
        source_session=d["source_session"],
        task_id=d["task_id"],
        created_at=created,
        updated_at=updated,
        last_accessed_at=_parse_time(d.get("last_accessed_at")),
        access_count=int(d.get("access_count") or 0),
        version=int(d["version"]),
        metadata=dict(d.get("metadata") or {}),
        evidence=list(d.get("evidence") or ()),
        event_time=_parse_time(d.get("event_time")),
        status=Status(d["status"]),
        fact_key=d.get("fact_key") or "",
        entities=list(d.get("entities") or ()),
    )


def encode(cmd: Command) -> dict[str, Any]:
    """The command as a JSON-able dict (with the codec version)."""
    if isinstance(cmd, ImportMemory):
        body: dict[str, Any] = {
            "namespace": cmd.namespace,
            "versions": [_memory_dict(m) for m in cmd.versions],
            "embedding": list(cmd.embedding),
        }
    elif isinstance(cmd, MemoryWrite):
        body = {
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
        if cmd.unscreened:  # written only when set: a screened write encodes as before
            body["unscreened"] = True
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
    elif isinstance(cmd, Forget | Archive | Release):
        body = {"id": cmd.id, "namespace": cmd.namespace, "reason": cmd.reason}
    elif isinstance(cmd, FormSession):
        body = {
            "namespace": cmd.namespace,
            "session_id": cmd.session_id,
            "upto": cmd.upto,
            "requested_by": cmd.requested_by,
        }
    elif isinstance(cmd, SummariseOverflow):
        body = {
            "namespace": cmd.namespace,
            "session_id": cmd.session_id,
            "summary_id": cmd.summary_id,
            "turns": [list(t) for t in cmd.turns],
        }
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
            unscreened=bool(data.get("unscreened")),
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
    if kind == ImportMemory.kind:
        return ImportMemory(
            namespace=data["namespace"],
            versions=tuple(_memory_of(v) for v in data["versions"]),
            embedding=tuple(float(x) for x in data.get("embedding") or ()),
        )
    if kind in (Forget.kind, Archive.kind, Release.kind):
        status_kinds: dict[str, type[Forget | Archive | Release]] = {
            Forget.kind: Forget,
            Archive.kind: Archive,
            Release.kind: Release,
        }
        return status_kinds[kind](
            id=data["id"], namespace=data.get("namespace", ""), reason=data.get("reason", "")
        )
    if kind == FormSession.kind:
        return FormSession(
            namespace=data["namespace"],
            session_id=data["session_id"],
            upto=int(data["upto"]),
            requested_by=data.get("requested_by") or "",
        )
    if kind == SummariseOverflow.kind:
        return SummariseOverflow(
            namespace=data["namespace"],
            session_id=data["session_id"],
            summary_id=data["summary_id"],
            turns=tuple((str(i), str(r), str(c)) for i, r, c in data.get("turns") or ()),
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


class CommandUnreadable(Exception):
    """A journaled payload this gateway cannot read back. ``newer``: written by a newer memgate
    (a codec version above ``CODEC_VERSION``, or a kind this one does not know), which will read
    it; otherwise it is corrupt and no version ever will. ``seq``: its journal entry, once
    known."""

    def __init__(self, kind: str, reason: str, newer: bool = False, seq: int = 0) -> None:
        super().__init__(f"journal entry {seq} ({kind}): {reason}")
        self.kind = kind
        self.reason = reason
        self.newer = newer
        self.seq = seq

    def at(self, seq: int) -> CommandUnreadable:
        """The same error, naming its journal entry."""
        return CommandUnreadable(self.kind, self.reason, self.newer, seq)


def loads(kind: str, text: str) -> Command:
    """The command of a journaled payload; ``CommandUnreadable`` when it cannot be read: a
    newer codec version or kind is not guessed at (a field this version does not know would be
    dropped without a word)."""
    if kind not in KINDS:
        raise CommandUnreadable(kind, f"unknown command kind {kind!r}", newer=True)
    try:
        data = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise CommandUnreadable(kind, f"the payload is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise CommandUnreadable(kind, f"the payload is a JSON {type(data).__name__}, not an object")
    version = data.get("v", 0)
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        raise CommandUnreadable(kind, f"the payload's codec version is {version!r}")
    if version > CODEC_VERSION:
        raise CommandUnreadable(
            kind,
            f"written with codec v{version}; this memgate reads up to v{CODEC_VERSION}",
            newer=True,
        )
    try:
        return decode(kind, data)
    except Exception as exc:  # noqa: BLE001 - whatever fails, the payload is unreadable
        raise CommandUnreadable(kind, f"the payload does not decode ({exc!r})") from None


def namespace_of(text: str | None) -> str:
    """The ``namespace`` a journaled payload names, read without decoding it ("" when it names
    none or is not a JSON object): erasure finds pending writes by it, whatever their version."""
    try:
        data = json.loads(text or "")
    except ValueError:
        return ""
    value = data.get("namespace") if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""


def digest(cmd: Command) -> str:
    """What makes two writes the same write: everything but when they were received."""
    body = {k: v for k, v in encode(cmd).items() if k not in ("v", *_RECEIVED)}
    if isinstance(cmd, Relate):
        body["at"] = _time(cmd.at)  # a relation's time is what it says, not when it came
    text = json.dumps([cmd.kind, body], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
