"""Domain types shared by the core and the store adapters. No transport, no driver."""

from __future__ import annotations

import enum
import re
import unicodedata
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import numpy as np


def utcnow() -> datetime:
    return datetime.now(UTC)


class Layer(enum.StrEnum):
    WORKING = "working"
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"


#: Layers whose memories are long-term records with vectors (working memory lives in its own store).
LONG_TERM_LAYERS = (Layer.EPISODIC, Layer.SEMANTIC, Layer.PROCEDURAL)


class Status(enum.StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"  # an older version of a fact; kept for history
    ARCHIVED = "archived"  # decayed out of everyday recall, still readable
    FORGOTTEN = "forgotten"  # explicitly forgotten / revoked
    QUARANTINED = "quarantined"  # held for review (e.g. injection suspect)


class Zone(enum.StrEnum):
    """Working-memory zones (seed 000 §2.1): each has its own lifetime."""

    INSTRUCTIONS = "instructions"  # stays for the session
    TASK = "task"  # refreshed; receives summaries of rolled-off dialogue
    DIALOGUE = "dialogue"  # recent turns, rolls
    SCRATCH = "scratch"  # tool output, dropped when done


@dataclass(slots=True)
class Memory:
    """One version of a long-term memory. ``id`` is stable across versions."""

    id: str
    namespace: str
    layer: Layer
    content: str
    type: str = "note"
    importance: float = 0.5
    confidence: float = 1.0
    source_agent: str = ""
    source_session: str = ""
    task_id: str = ""
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)
    last_accessed_at: datetime | None = None
    access_count: int = 0
    version: int = 1
    metadata: dict[str, str] = field(default_factory=dict)
    evidence: list[str] = field(default_factory=list)
    event_time: datetime | None = None
    status: Status = Status.ACTIVE
    fact_key: str = ""  # normalised fact, unique per namespace among active memories
    entities: list[str] = field(default_factory=list)
    embedding: np.ndarray | None = None  # float32 (dim,), L2-normalised
    #: conversational context indexed beside the content (lexically and densely), never shown:
    #: for a dialogue turn the speaker, the session date and the turn(s) before it (``apply.py``)
    context: str = ""

    def with_changes(self, **changes: object) -> Memory:
        return replace(self, **changes)  # type: ignore[arg-type]

    @property
    def when(self) -> datetime:
        """The time the memory is about: its event time, else its creation."""
        return self.event_time or self.created_at


@dataclass(slots=True, frozen=True)
class VectorItem:
    id: str
    namespace: str
    layer: Layer
    vector: np.ndarray  # float32 (dim,), L2-normalised


@dataclass(slots=True, frozen=True)
class MemoryFilter:
    """Filter applied before scoring (seed 000 §4.1: filter first, then similarity)."""

    namespaces: tuple[str, ...]
    layers: tuple[Layer, ...] = LONG_TERM_LAYERS
    types: tuple[str, ...] = ()
    statuses: tuple[Status, ...] = (Status.ACTIVE,)
    start: datetime | None = None  # on Memory.when, inclusive
    end: datetime | None = None  # exclusive
    limit: int = 100
    session_id: str = ""  # only memories written in this session (``Memory.source_session``)


@dataclass(slots=True)
class Turn:
    """One entry of working memory."""

    id: str
    role: str
    content: str
    zone: Zone = Zone.DIALOGUE
    at: datetime = field(default_factory=utcnow)
    metadata: dict[str, str] = field(default_factory=dict)


class NodeKind(enum.StrEnum):
    USER = "user"
    AGENT = "agent"
    SESSION = "session"
    EVENT = "event"
    ENTITY = "entity"
    TASK = "task"
    STEP = "step"


@dataclass(slots=True, frozen=True)
class NodeRef:
    kind: NodeKind
    id: str


@dataclass(slots=True)
class Event:
    """An episodic event node. ``id`` equals the id of its episodic Memory."""

    id: str
    namespace: str
    type: str
    summary: str
    at: datetime
    importance: float = 0.5
    agent_id: str = ""
    user_id: str = ""
    session_id: str = ""
    task_id: str = ""
    entities: list[str] = field(default_factory=list)


@dataclass(slots=True, frozen=True)
class Relation:
    """A timestamped edge. Idempotent by (src, type, dst)."""

    src: NodeRef
    type: str  # upper snake case, e.g. CAUSED, FOLLOWS, MENTIONS
    dst: NodeRef
    at: datetime
    properties: tuple[tuple[str, str], ...] = ()


@dataclass(slots=True, frozen=True)
class Neighbour:
    node: NodeRef
    relation: str  # type of the edge that reached it (last hop)
    at: datetime
    distance: int  # 1 or 2
    label: str = ""  # event summary or entity name, when known


#: The one rule for relationship types, at the edge and in every adapter (they end up in Cypher
#: text): upper snake case, starting with a letter, at most 40 characters.
RELATION_TYPE = re.compile(r"[A-Z][A-Z0-9_]{0,39}")


def valid_relation_type(value: str) -> bool:
    return RELATION_TYPE.fullmatch(value) is not None


def normalise_name(name: str) -> str:
    """An entity's name as it keys a node: NFKC, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


#: Node kinds that belong to one namespace: their ids are ``scoped_id(namespace, name)``, and a
#: caller who cannot read the namespace never sees them (events carry their namespace).
SCOPED_KINDS = frozenset({NodeKind.ENTITY, NodeKind.SESSION})
#: Node kinds whose visibility follows a namespace (scoped kinds and events).
NAMESPACED_KINDS = SCOPED_KINDS | {NodeKind.EVENT}


def scoped_id(namespace: str, name: str) -> str:
    """The id of an entity or session node of ``namespace``: ``<namespace>/<name>`` (e.g.
    ``user/alice/kyoto``), so two namespaces' "Kyoto" are two nodes."""
    return f"{namespace}/{name}"


def scope_of(node_id: str) -> str:
    """The namespace a scoped node id belongs to ("" for an id that is not scoped, such as a
    node created before ids were scoped). Namespace ids never contain "/", so the split is
    unambiguous whatever the name holds."""
    head, sep, rest = node_id.partition("/")
    if not sep:
        return ""
    if head == "global":
        return "global"
    if head in ("agent", "user", "task"):
        owner, sep, _ = rest.partition("/")
        if sep and owner:
            return f"{head}/{owner}"
    return ""


#: The links an event owns (re-created whenever the event is recorded): relationship type and the
#: kind of node it points to. Every graph adapter records exactly these, via ``event_links``.
EVENT_LINK_TYPES: tuple[tuple[str, NodeKind], ...] = (
    ("IN_SESSION", NodeKind.SESSION),
    ("BY", NodeKind.AGENT),
    ("ABOUT", NodeKind.USER),
    ("PART_OF", NodeKind.TASK),
    ("MENTIONS", NodeKind.ENTITY),
)


@dataclass(slots=True, frozen=True)
class EventLink:
    type: str
    node: NodeRef
    label: str = ""  # an entity's display name


def event_links(e: Event) -> list[EventLink]:
    """Every link recording ``e`` makes: its session, agent, user and task (when set) and each
    entity it mentions (one node per normalised name, the first spelling as its label).

    Session and entity nodes belong to the event's namespace (``scoped_id``): the researcher's
    private "Kyoto" and alice's "Kyoto" are different nodes. Agents, users and tasks are
    identities shared by every namespace."""
    ids = {
        NodeKind.SESSION: scoped_id(e.namespace, e.session_id) if e.session_id else "",
        NodeKind.AGENT: e.agent_id,
        NodeKind.USER: e.user_id,
        NodeKind.TASK: e.task_id,
    }
    links = [
        EventLink(rel, NodeRef(kind, ids[kind]))
        for rel, kind in EVENT_LINK_TYPES
        if kind is not NodeKind.ENTITY and ids[kind]
    ]
    seen: set[str] = set()
    for name in e.entities:
        key = normalise_name(name)
        if key and key not in seen:
            seen.add(key)
            entity = NodeRef(NodeKind.ENTITY, scoped_id(e.namespace, key))
            links.append(EventLink("MENTIONS", entity, name))
    return links
