"""What callers send, in domain form, and its validation. Every error names the field."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from gateway.core.access.namespaces import Namespace, check_id, parse
from gateway.core.model.commands import MemoryWrite, TurnAppend
from gateway.core.model.errors import InvalidArgument
from gateway.core.model.limits import Limits
from gateway.core.model.models import Layer, NodeKind, Zone, utcnow, valid_relation_type
from gateway.core.model.refusals import refuse_sensitive_id
from gateway.core.screening import importance as importance_rules
from gateway.core.screening.screening import clean, screen, screen_all

RESERVED_METADATA_PREFIX = "memgate."
ROLES = ("user", "assistant", "system", "tool")
#: how far ahead of the gateway's clock a turn's stated time may be (clocks drift)
TURN_CLOCK_SKEW = timedelta(minutes=5)


@dataclass(slots=True)
class WriteInput:
    namespace: str
    layer: str
    content: str
    type: str = ""
    importance: float | None = None
    confidence: float | None = None
    session_id: str = ""
    task_id: str = ""
    event_time: datetime | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    evidence: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    idempotency_key: str = ""
    role: str = ""
    zone: str = ""
    # episodic extras (RecordEvent)
    user_id: str = ""
    links: list[tuple[str, str, str]] = field(default_factory=list)  # (type, kind, id)


@dataclass(slots=True)
class Prepared:
    """A validated, screened write, ready for the journal."""

    command: MemoryWrite | TurnAppend
    layer: Layer
    parsed: Namespace  # parsed once, here; ``namespace`` is its text
    redactions: list[str]
    quarantined: bool
    skipped: str  # reason the write is not stored long-term ("" = stored)
    idempotency_key: str
    injection: str = ""  # the injection phrase found, when quarantined
    #: quarantined by the second screen (``second_screen.py``), ``injection`` holds its reason
    similar: bool = False

    @property
    def namespace(self) -> str:
        return str(self.parsed)


def _check_text(value: str, name: str, limit: int) -> None:
    if len(value) > limit:
        raise InvalidArgument(
            f"{name} is too long: {len(value)} chars, the limit is {limit}", field=name
        )


def _check_unit(value: float | None, name: str) -> None:
    if value is not None and not 0.0 <= value <= 1.0:
        raise InvalidArgument(f"{name} must be between 0 and 1, got {value}", field=name)


def _check_metadata(metadata: Mapping[str, str], name: str, limits: Limits) -> None:
    if len(metadata) > limits.max_metadata_entries:
        raise InvalidArgument(
            f"{name} has {len(metadata)} entries, the limit is {limits.max_metadata_entries}",
            field=name,
        )
    for key, value in metadata.items():
        if not key or len(key) > limits.max_metadata_key_chars:
            raise InvalidArgument(
                f"{name} key {key[:40]!r} must be 1..{limits.max_metadata_key_chars} chars",
                field=name,
            )
        if key.startswith(RESERVED_METADATA_PREFIX):
            raise InvalidArgument(
                f"{name} key {key!r} uses the reserved prefix 'memgate.'", field=name
            )
        if len(value) > limits.max_metadata_value_chars:
            raise InvalidArgument(
                f"{name}[{key!r}] is {len(value)} chars, the limit is "
                f"{limits.max_metadata_value_chars}",
                field=name,
            )


def _count(items: Sequence[object], name: str, limit: int) -> None:
    if len(items) > limit:
        raise InvalidArgument(f"{name} has {len(items)} items, the limit is {limit}", field=name)


def check_batch(items: Sequence[object], name: str, what: str, limit: int) -> None:
    """A batch of ``what`` (writes, turns) holds 1..``limit`` of them; INVALID_ARGUMENT naming
    ``name`` otherwise."""
    if not items:
        raise InvalidArgument(f"{name} is empty: send at least one", field=name)
    if len(items) > limit:
        raise InvalidArgument(f"{name} has {len(items)} {what}, the limit is {limit}", field=name)


def batch_prefix(items: Sequence[object], name: str) -> Callable[[int], str]:
    """How the fields of item ``i`` are named in errors: ``name[i].`` in a batch of several,
    nothing for a lone item."""
    return (lambda i: f"{name}[{i}].") if len(items) > 1 else (lambda i: "")


def _check_lists(item: WriteInput, limits: Limits, f: str) -> None:
    """Evidence, entities and links: how many, and how long each."""
    _count(item.evidence, f"{f}evidence", limits.max_evidence_items)
    for i, ev in enumerate(item.evidence):
        _check_text(ev, f"{f}evidence[{i}]", limits.max_content_chars)
    _count(item.entities, f"{f}entities", limits.max_entities)
    for i, entity in enumerate(item.entities):
        _check_text(entity, f"{f}entities[{i}]", limits.max_entity_chars)
    _count(item.links, f"{f}links", limits.max_entities)


def parse_layer(value: str, name: str = "layer") -> Layer:
    try:
        return Layer(value)
    except ValueError:
        allowed = ", ".join(x.value for x in Layer)
        raise InvalidArgument(
            f"{name} {value!r} is unknown: use one of {allowed}", field=name
        ) from None


def parse_zone(value: str, name: str = "zone") -> Zone:
    try:
        return Zone(value or Zone.DIALOGUE.value)
    except ValueError:
        allowed = ", ".join(z.value for z in Zone)
        raise InvalidArgument(
            f"{name} {value!r} is unknown: use one of {allowed}", field=name
        ) from None


def prepare(item: WriteInput, limits: Limits, prefix: str = "") -> Prepared:
    """Validate and screen one write. ``prefix`` (e.g. ``items[3].``) goes in front of field names."""
    f = prefix
    parsed = parse(item.namespace, field=f"{f}namespace")
    ns = str(parsed)
    layer = parse_layer(item.layer, f"{f}layer")
    if not item.content or not item.content.strip():
        raise InvalidArgument(f"{f}content is empty: a memory needs some text", field=f"{f}content")
    _check_text(item.content, f"{f}content", limits.max_content_chars)
    _check_text(item.type, f"{f}type", 64)
    check_id(item.session_id, f"{f}session_id")
    check_id(item.task_id, f"{f}task_id")
    _check_text(item.idempotency_key, f"{f}idempotency_key", limits.max_id_chars)
    refuse_sensitive_id(item.idempotency_key, f"{f}idempotency_key")
    _check_unit(item.importance, f"{f}importance")
    _check_unit(item.confidence, f"{f}confidence")
    _check_metadata(item.metadata, f"{f}metadata", limits)
    _check_lists(item, limits, f)
    user_id = check_id(item.user_id, f"{f}user_id") or (
        parsed.owner if parsed.kind == "user" else ""
    )
    zone = role = ""
    if layer is Layer.WORKING:
        if not item.session_id:
            raise InvalidArgument(
                f"{f}session_id is required for the working layer", field=f"{f}session_id"
            )
        zone = parse_zone(item.zone, f"{f}zone").value
        role = item.role or "user"
        if role not in ROLES:
            raise InvalidArgument(
                f"{f}role {role!r} is unknown: use one of {', '.join(ROLES)}", field=f"{f}role"
            )

    # every text field is screened: content, evidence, metadata keys and values, entities, link
    # targets; an injection anywhere quarantines the write
    screened = screen(item.content)
    evidence, ev_kinds, ev_injection = screen_all(item.evidence)
    md_values, md_kinds, md_injection = screen_all(item.metadata.values())
    metadata = {clean(k): v for k, v in zip(item.metadata, md_values, strict=True)}
    entities = tuple(clean(e.strip()) for e in item.entities if e.strip())
    links = tuple(
        (
            rel,
            kind,
            check_node(node_kind(kind, f"{f}links.target.kind"), target, f"{f}links.target.id"),
        )
        for rel, kind, target in item.links
    )
    injection = screened.injection or ev_injection or md_injection
    redactions = list(dict.fromkeys([*screened.redactions, *ev_kinds, *md_kinds]))
    imp = item.importance
    if imp is None:
        imp = importance_rules.score(item.content, item.type)
    skipped = ""
    if layer is not Layer.WORKING and imp < importance_rules.KEEP_THRESHOLD:
        skipped = "small talk is not stored long-term"
    received = utcnow()
    command: MemoryWrite | TurnAppend
    if layer is Layer.WORKING:
        said = item.event_time
        if said is not None and said > received + TURN_CLOCK_SKEW:
            raise InvalidArgument(
                f"{f}at {said.isoformat()} is in the future: a turn's time is when it was said "
                "(leave it unset for now)",
                field=f"{f}at",
            )
        command = TurnAppend(
            namespace=ns,
            session_id=item.session_id,
            content=screened.text,
            role=role,
            zone=Zone(zone),
            metadata=metadata,
            at=said or received,
        )
    else:
        command = MemoryWrite(
            namespace=ns,
            layer=layer,
            content=screened.text,
            type=clean(item.type) if item.type else "note",  # a label, but stored: screened
            importance=imp,
            confidence=1.0 if item.confidence is None else item.confidence,
            session_id=item.session_id,
            task_id=item.task_id,
            event_time=item.event_time,
            metadata=metadata,
            evidence=tuple(evidence),
            entities=entities,
            quarantined=bool(injection),
            user_id=user_id,
            links=links,
            explicit=importance_rules.is_explicit(item.content),
            received_at=received,
        )
    return Prepared(
        command=command,
        layer=layer,
        parsed=parsed,
        redactions=redactions,
        quarantined=bool(injection),
        skipped=skipped,
        idempotency_key=item.idempotency_key,
        injection=injection,
    )


def check_relation(rel_type: str, name: str) -> str:
    if not valid_relation_type(rel_type):
        raise InvalidArgument(
            f"{name} {rel_type!r} must be UPPER_SNAKE_CASE (A-Z, 0-9, _), at most 40 chars",
            field=name,
        )
    return rel_type


def node_kind(kind: str, name: str) -> NodeKind:
    try:
        return NodeKind(kind)
    except ValueError:
        allowed = ", ".join(k.value for k in NodeKind)
        raise InvalidArgument(
            f"{name} {kind!r} is unknown: use one of {allowed}", field=name
        ) from None


def check_node(kind: NodeKind, value: str, name: str) -> str:
    """A graph node's id: an entity is free text (1..256 chars, secrets and personal data
    redacted); a step is ``<task id>#<index>``; every other kind is an id (``check_id``)."""
    if kind is NodeKind.ENTITY:
        if not value.strip() or len(value) > 256:
            raise InvalidArgument(f"{name} must be 1..256 chars", field=name)
        return clean(value)
    if kind is NodeKind.STEP:
        task, sep, index = value.rpartition("#")
        if not sep or not index.isdigit() or len(index) > 9:
            raise InvalidArgument(f"{name} {value[:40]!r}: a step is <task id>#<index>", field=name)
        check_id(task, name, required=True)
        return value
    return check_id(value, name, required=True)
