"""What the client returns: small frozen dataclasses, independent of the server's code. Layers,
statuses and zones are plain strings ("semantic", "active", "dialogue")."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True, slots=True)
class WriteResult:
    id: str  # '' when the write was skipped or became a proposal
    duplicate: bool = False
    applied: bool = False
    journal_seq: int = 0
    redactions: list[str] = field(default_factory=list)
    quarantined: bool = False
    skipped: str = ""
    proposal_id: str = ""


@dataclass(frozen=True, slots=True)
class Memory:
    id: str
    namespace: str
    layer: str
    content: str
    type: str = ""
    importance: float = 0.0
    confidence: float = 0.0
    source_agent: str = ""
    source_session: str = ""
    task_id: str = ""
    created_at: datetime | None = None
    updated_at: datetime | None = None
    last_accessed_at: datetime | None = None
    access_count: int = 0
    version: int = 0
    metadata: dict[str, str] = field(default_factory=dict)
    evidence: list[str] = field(default_factory=list)
    event_time: datetime | None = None
    status: str = ""
    entities: list[str] = field(default_factory=list)
    slot: str = ""  # "<subject>:<attribute>" of a fact, e.g. "user:residence"
    slot_value: str = ""
    valid_from: datetime | None = None  # when this version began to hold
    valid_to: datetime | None = None  # when a later version replaced it (None: still holds)
    superseded_by: str = ""


@dataclass(frozen=True, slots=True)
class Hit:
    id: str
    content: str
    score: float
    layer: str
    namespace: str
    metadata: dict[str, str]
    event_time: datetime | None
    type: str = ""
    similarity: float = 0.0
    version: int = 1
    slot: str = ""
    valid_from: datetime | None = None
    valid_to: datetime | None = None  # set on a hit of a recall as_of a past time
    keyword: float = 0.0  # the lexical (word-match) part of the score, 0 when no word matched
    recency: float = 0.0  # the recency part of the score
    created_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Recall:
    """Hits best first, plus the memory block to put in the model's context."""

    hits: list[Hit]
    memory_block: str
    block_tokens: int
    routed_layers: list[str]
    degraded: list[str] = field(default_factory=list)

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, i: int) -> Hit:
        return self.hits[i]


@dataclass(frozen=True, slots=True)
class Turn:
    id: str
    role: str
    content: str
    zone: str
    at: datetime | None = None
    metadata: dict[str, str] = field(default_factory=dict)


class Window(list[Turn]):
    """A session's turns, oldest first; ``degraded`` when working memory was unreachable and
    the window is the empty fallback rather than the truth."""

    def __init__(self, turns: list[Turn], degraded: bool = False) -> None:
        super().__init__(turns)
        self.degraded = degraded


@dataclass(frozen=True, slots=True)
class AppendTurnResult:
    id: str
    duplicate: bool
    compacted: bool
    dialogue_length: int
    redactions: list[str] = field(default_factory=list)
    proposal_id: str = ""  # a sub-agent's turn into a shared session awaits the master
    quarantined: bool = False  # looks like a prompt injection: not placed in the window


@dataclass(frozen=True, slots=True)
class CompactResult:
    summarised: int
    summary: str


@dataclass(frozen=True, slots=True)
class EndSessionResult:
    """A memory-formation job for a session's new turns ("" job id: nothing new to mine)."""

    job_id: str
    turns: int
    duplicate: bool
    applied: bool
    extractor: str  # with wait: the extractor that ran
    outcomes: dict[str, int]  # with wait: pending / promoted / confirmed / review / dropped


@dataclass(frozen=True, slots=True)
class Event:
    id: str
    namespace: str
    type: str
    summary: str
    at: datetime | None
    importance: float = 0.0
    agent_id: str = ""
    user_id: str = ""
    session_id: str = ""
    task_id: str = ""
    entities: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class NodeRef:
    kind: str
    id: str


@dataclass(frozen=True, slots=True)
class Neighbour:
    node: NodeRef
    relation: str
    at: datetime | None
    distance: int
    label: str = ""


@dataclass(frozen=True, slots=True)
class FactResult:
    pending_id: str
    sessions_seen: int
    promoted: bool
    memory_id: str


@dataclass(frozen=True, slots=True)
class PendingFact:
    """A fact waiting for a second session; ``confirm_fact(id)`` promotes it (master)."""

    id: str
    namespace: str
    fact: str
    sessions: list[str]
    evidence: list[str]
    confidence: float


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    trigger: str = ""
    parameter_schema: str = ""
    entry_point: str = ""
    version: int = 0
    namespace: str = "global"
    id: str = ""


@dataclass(frozen=True, slots=True)
class RegisterResult:
    skill: Skill
    duplicate: bool


@dataclass(frozen=True, slots=True)
class SkillMatch:
    skill: Skill
    score: float


@dataclass(frozen=True, slots=True)
class ProposedItem:
    namespace: str
    layer: str
    content: str
    type: str = ""
    importance: float = 0.0
    confidence: float = 0.0
    session_id: str = ""
    task_id: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    evidence: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    role: str = ""
    zone: str = ""


@dataclass(frozen=True, slots=True)
class Proposal:
    id: str
    proposer: str
    item: ProposedItem
    state: str
    decided_by: str = ""
    reason: str = ""
    created_at: datetime | None = None
    memory_id: str = ""
    slot: str = ""  # the proposed fact's slot ("" when none was found)
    #: the active fact on the same slot with another value: approving supersedes it
    conflicts_with: Memory | None = None


@dataclass(frozen=True, slots=True)
class NamespaceList:
    namespaces: list[str]
    truncated: bool = False  # more matched than the limit


@dataclass(frozen=True, slots=True)
class SubmitResult:
    event_id: str
    committed: list[WriteResult] = field(default_factory=list)
    proposals: list[Proposal] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class SharedWritePolicy:
    auto_approve: list[str]
    min_confidence: float


@dataclass(frozen=True, slots=True)
class Step:
    index: int
    name: str
    state: str
    output: str = ""
    error: str = ""
    attempts: int = 0


@dataclass(frozen=True, slots=True)
class Task:
    id: str
    steps: list[Step]
    resume_at: int
    state: str


@dataclass(frozen=True, slots=True)
class AuditEntry:
    at: datetime | None
    agent_id: str
    action: str
    namespace: str
    target: str
    detail: str


@dataclass(frozen=True, slots=True)
class BreakerState:
    layer: str
    state: str
    trips: int
    last_error: str


@dataclass(frozen=True, slots=True)
class LayerStats:
    layer: str
    latency_p50_ms: float
    latency_p99_ms: float
    breaker: str
    calls: int
    failures: int


@dataclass(frozen=True, slots=True)
class RecallStats:
    layer: str
    recalls: int
    hits: int
    hit_rate: float


@dataclass(frozen=True, slots=True)
class Stats:
    journal_pending: int
    journal_applied: int
    vectors: int
    memories: dict[str, int]
    embedder: str
    shards: int
    recall_cache_hits: int
    recall_cache_misses: int
    apply_lag_seconds: float
    layers: list[LayerStats]
    recall: list[RecallStats]
    #: share of the stored texts per language ("zh", "other"), from a sample of
    #: ``languages_sampled`` texts
    languages: dict[str, float] = field(default_factory=dict)
    languages_sampled: int = 0
    #: "" or what to do about the embedder (a Chinese store under an English-only one)
    embedder_advice: str = ""


@dataclass(frozen=True, slots=True)
class MaintainResult:
    namespaces: int
    examined: int
    archived: list[str]
    summaries: list[str]


@dataclass(frozen=True, slots=True)
class GraphLink:
    """One edge of the episodic graph, as exported."""

    src: NodeRef
    type: str
    dst: NodeRef
    at: datetime | None = None
    properties: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ExportedMemory:
    """A memory as exported: every version (oldest first, all metadata), the fact each version
    holds, the current vector with the model that made it (when asked for), its event's edges."""

    versions: list[Memory]
    fact_keys: list[str] = field(default_factory=list)
    embedding: list[float] = field(default_factory=list)
    embedder: str = ""
    links: list[GraphLink] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.versions[-1].id if self.versions else ""


@dataclass(frozen=True, slots=True)
class ImportResult:
    imported: int
    unchanged: int
    reembedded: int
    links: int
    conflicts: list[str] = field(default_factory=list)
    erased: list[str] = field(default_factory=list)  # erased since exported: not imported


@dataclass(frozen=True, slots=True)
class EraseResult:
    """A ForgetNamespace / ForgetSubject: its id in the audit log, and whether every store has
    erased it (with ``wait``)."""

    erase_id: str
    applied: bool
