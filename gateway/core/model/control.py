"""The gateway's control records, typed: journal entries and what appending them returns, and the
ledger's rows (audit entries, proposals, pending facts, task steps, review items)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from gateway.core.model.commands import Command, CommandUnreadable, MemoryWrite, TurnAppend, loads
from gateway.core.screening.screening import clean


@dataclass(frozen=True, slots=True)
class NewEntry:
    """A command to journal, from ``agent_id``; ``idem_key`` makes a retry the same write."""

    write_id: str
    agent_id: str
    idem_key: str
    command: Command

    @property
    def kind(self) -> str:
        return self.command.kind


@dataclass(frozen=True, slots=True)
class Accepted:
    """A journaled entry: its sequence number and write id (the first one, for a retry)."""

    seq: int
    write_id: str
    duplicate: bool
    applied: bool


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """An acknowledged entry waiting to be applied."""

    seq: int
    write_id: str
    agent_id: str
    command: Command

    @property
    def kind(self) -> str:
        return self.command.kind


def readable(rows: Iterable[tuple[int, str, str, str, str]]) -> list[JournalEntry]:
    """The entries of journal rows ``(seq, write_id, kind, agent_id, payload)``, in the order
    given, up to the first whose payload cannot be read (``commands.loads``): the entries after
    it wait for it. When it is the first row, its ``CommandUnreadable`` is raised, naming its seq,
    for the lane to settle (a corrupt entry is marked dead; a newer one waits for an upgrade)."""
    found: list[JournalEntry] = []
    for seq, write_id, kind, agent_id, payload in rows:
        try:
            command = loads(kind, payload)
        except CommandUnreadable as exc:
            if found:
                break
            raise exc.at(seq) from None
        found.append(JournalEntry(seq, write_id, agent_id, command))
    return found


class EntryState:
    PENDING = 0
    APPLIED = 1
    DEAD = 2  # could never be applied; kept with its error
    UNKNOWN = -1


#: audit actions whose rows keep their text through an erasure (who erased what, when and why)
KEPT_AUDIT_ACTIONS = frozenset(
    ("forget", "forget_namespace", "forget_subject", "erase_working", "erased")
)
#: an audit row that reaches the ledger after an erasure of its namespace or target loses its
#: text when it is stamped no later than this after the erasure: it was queued before it (on
#: another replica, or kept through a ledger outage) and would land after the scrub; the margin
#: covers replicas whose clocks differ
ERASURE_SKEW_S = 30.0
#: what an erased audit row's free text becomes: the row (who, when, action, namespace, target)
#: stays, and a reader tells a scrubbed row from one that never had text
ERASED_TEXT = "[erased]"


@dataclass(frozen=True, slots=True)
class AuditEntry:
    agent_id: str
    action: str
    namespace: str
    target: str = ""
    detail: str = ""
    at: float = 0.0  # epoch seconds; set by the ledger when written
    #: the ids a recall returned (written, not read back): erasing one of them scrubs the
    #: row's text (the query that found it), as erasing its ``target`` does
    hits: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # the audit log never holds a raw secret: a new entry's text (recall queries, reasons,
        # errors) is redacted here, once; entries read back (``at`` set) are already clean
        if not self.at and self.detail:
            object.__setattr__(self, "detail", clean(self.detail))


@dataclass(frozen=True, slots=True)
class Proposal:
    """A sub-agent's write to a shared namespace, waiting for the master (or a policy)."""

    id: str
    proposer: str
    item: MemoryWrite | TurnAppend
    state: str = "pending"  # pending | approved | rejected
    decided_by: str = ""
    reason: str = ""
    created: float = 0.0
    memory_id: str = ""


@dataclass(frozen=True, slots=True)
class PendingFact:
    """A fact seen in ``sessions``; promoted to a semantic memory once confirmed."""

    id: str
    namespace: str
    fact_key: str
    fact: str
    sessions: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    confidence: float = 0.5
    promoted_to: str = ""


@dataclass(frozen=True, slots=True)
class TaskStep:
    index: int
    name: str
    state: str = "pending"  # pending | running | done | failed
    output: str = ""
    error: str = ""
    attempts: int = 0


@dataclass(frozen=True, slots=True)
class ReviewItem:
    memory_id: str
    namespace: str
    reason: str
