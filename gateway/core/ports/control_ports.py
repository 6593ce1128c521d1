"""The contracts of the gateway's own records: the write journal (every acknowledged write,
until applied) and the control ledger (audit, aliases, proposals, review, facts, tasks, formation
turns). Re-exported by ``gateway.core.ports.ports``; adapters in ``stores/sqlite_journal.py``,
``stores/sqlite_ledger.py`` (embedded), ``stores/redis_ledger.py`` (shared by replicas)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from gateway.core.model.candidates import DueSession, SessionTurns
from gateway.core.model.control import (
    Accepted,
    AuditEntry,
    JournalEntry,
    NewEntry,
    PendingFact,
    Proposal,
    ReviewItem,
    TaskStep,
)
from gateway.core.model.models import (
    Turn,
)


class Journal(Protocol):
    """Durable, ordered, idempotent log of acknowledged writes (the source of truth until they
    are applied). ``append`` returns once the entries are on disk."""

    pending_count: int
    #: True when other processes append to and apply from the same journal (replicas): a write
    #: may be applied by another process, so waiters poll its state
    shared: bool
    #: how often an idle apply lane looks for new entries
    idle_poll_s: float

    async def start(self) -> None: ...
    async def close(self) -> None: ...
    async def append(self, entries: Sequence[NewEntry]) -> list[Accepted]:
        """All or none. A reused (agent, idempotency key) with the same command returns the first
        write's id (duplicate=True); with another command it raises ``Conflict``."""

    async def pending(
        self, limit: int, kinds: Sequence[str] = (), after: int = 0
    ) -> list[JournalEntry]:
        """The oldest entries not applied yet (of the given kinds, with a seq above ``after``),
        in journal order — exact within a namespace; a partitioned (shared) journal returns only
        the partitions this process applies, and may interleave namespaces differently.
        Decoded with ``control.readable``: only the entries before one whose payload cannot be
        read; when that one comes first, its ``commands.CommandUnreadable`` (with its seq)."""

    async def mark_applied(self, seqs: Sequence[int]) -> None: ...
    async def mark_dead(self, seq: int, error: str) -> None:
        """Takes an entry that can never apply out of the queue (kept, with the error)."""

    async def state(self, seq: int) -> int:
        """An ``EntryState`` value."""

    async def states(self, seqs: Sequence[int]) -> dict[int, int]:
        """``state`` of many entries in one call (unknown seqs map to ``EntryState.UNKNOWN``)."""

    async def counts(self) -> tuple[int, int]:
        """(pending, applied or dead)."""

    async def prune(self, older_than_s: float) -> int:
        """Drop applied entries older than the retention (their idempotency keys expire)."""

    async def oldest_pending_age(self) -> float:
        """Seconds since the oldest entry still waiting was acknowledged (0: none)."""

    async def erase_pending(self, namespace: str, write_ids: Sequence[str], before_seq: int) -> int:
        """Erasure: pending writes and turns before ``before_seq`` in ``namespace`` (if set) or
        with a write id in ``write_ids`` lose their payload and are marked dead, leaving no copy in
        the journal's files. Returns how many."""


class AuditLedger(Protocol):
    """Who did what, when: the audit log (written off the request path by ``AuditLog``)."""

    async def audit(self, entries: Sequence[AuditEntry]) -> None: ...

    async def query_audit(
        self, agent_id: str, namespace: str, since: float, limit: int
    ) -> list[AuditEntry]:
        """Newest first; empty filters match everything."""

    async def prune_audit(self, older_than_s: float) -> int:
        """Drop audit rows older than the retention (by their ``at``); returns how many."""


class AliasLedger(Protocol):
    """Which memory a write id ended up in (a write merged into an existing memory)."""

    async def set_aliases(self, pairs: Sequence[tuple[str, str]]) -> None:
        """(write id, memory id): a write merged into an existing memory."""

    async def resolve(self, write_id: str) -> str:
        """The memory a write id ended up in (itself when not merged)."""

    async def resolve_many(self, write_ids: Sequence[str]) -> dict[str, str]:
        """``resolve`` for many write ids in one call (every id is a key)."""


class ProposalLedger(Protocol):
    """Sub-agents' writes to shared namespaces, waiting for the master."""

    async def add_proposal(self, proposal: Proposal) -> Proposal:
        """Stores a new proposal; an existing id returns the stored one unchanged."""

    async def get_proposal(self, pid: str) -> Proposal | None: ...

    async def list_proposals(self, state: str, limit: int) -> list[Proposal]: ...

    async def decide_proposal(
        self, pid: str, state: str, decided_by: str, reason: str, memory_id: str = ""
    ) -> bool:
        """Moves a pending proposal to ``state``; False when it was not pending."""

    async def proposal_backlog(self) -> tuple[int, float]:
        """(pending proposals, epoch seconds the oldest was made; 0 when none)."""


class ReviewLedger(Protocol):
    """The review queue: quarantined memories and conflicts waiting for the master."""

    async def add_review(self, items: Sequence[ReviewItem]) -> None: ...

    async def list_review(self, limit: int) -> list[ReviewItem]:
        """Queued items not resolved yet, oldest first."""

    async def resolve_review(
        self, memory_id: str, state: str, decided_by: str, reason: str
    ) -> bool:
        """Takes a queued item out of the queue (once); False when it is not queued or was
        already resolved."""


class ErasureLedger(Protocol):
    """What an erasure removes from the control records."""

    async def scrub(self, memory_ids: Sequence[str]) -> None:
        """Erasure: audit rows naming these ids keep who, when and what action but lose their
        free text; proposals, pending facts and review items of these memories are removed.
        Rows recording an erasure itself keep their text."""

    async def scrub_namespace(self, namespace: str) -> None:
        """Erasure: ``scrub`` every row of ``namespace`` (and a ``task/<id>``'s steps)."""


class SettingsLedger(Protocol):
    """Small settings the gateway keeps for itself (index clean flag, vector space, backfills)."""

    async def put_setting(self, key: str, value: dict[str, Any]) -> None: ...

    async def get_setting(self, key: str) -> dict[str, Any] | None: ...


class PendingFactLedger(Protocol):
    """Facts seen in dialogue, waiting for a second session before they are promoted."""

    async def see_fact(
        self,
        pid: str,
        namespace: str,
        fact_key: str,
        fact: str,
        session_id: str,
        evidence: Sequence[str],
        confidence: float,
    ) -> PendingFact:
        """Record one sighting of a fact (``pid`` names a new row); returns the pending row."""

    async def get_pending_fact(self, pid: str) -> PendingFact | None: ...

    async def mark_promoted(self, pid: str, memory_id: str) -> None: ...

    async def pending_facts(self, namespace: str, limit: int) -> list[PendingFact]:
        """The namespace's facts not promoted yet, oldest first, at most ``limit``."""


class FormationTurnLedger(Protocol):
    """Dialogue turns kept until memory formation has mined them."""

    async def record_turns(self, namespace: str, session_id: str, turns: Sequence[Turn]) -> None:
        """Keep dialogue turns for memory formation until they are mined. Idempotent by turn id,
        mined turns too (the session's last ``FORMED_IDS_KEPT`` of them); each new turn gets the
        next position of the ledger."""

    async def unformed_turns(
        self, namespace: str, session_id: str, upto: int = 0, limit: int = 0
    ) -> SessionTurns:
        """The session's turns not mined yet, oldest first, up to position ``upto`` (0: all),
        at most ``limit`` of them (0: no limit)."""

    async def mark_formed(self, namespace: str, session_id: str, upto: int) -> None:
        """Turns up to position ``upto`` were mined: drop them but remember their ids, never
        keep or mine them again."""

    async def due_sessions(
        self, idle_before: float, every_turns: int, limit: int
    ) -> list[DueSession]:
        """Sessions with unmined turns whose last turn came before ``idle_before`` (epoch s), or
        with at least ``every_turns`` unmined turns (0: that rule is off)."""


class TaskLedger(Protocol):
    """The steps of batch tasks."""

    async def start_task(self, task_id: str, steps: Sequence[str]) -> None: ...

    async def task_steps(self, task_id: str) -> list[TaskStep]: ...

    async def update_step(
        self, task_id: str, index: int, state: str, output: str, error: str
    ) -> bool:
        """Sets a step's state; a done step never changes again. False when it is missing."""


class Ledger(
    AuditLedger,
    AliasLedger,
    ProposalLedger,
    ReviewLedger,
    ErasureLedger,
    SettingsLedger,
    PendingFactLedger,
    FormationTurnLedger,
    TaskLedger,
    Protocol,
):
    """The gateway's control records, every area above in one store (what an adapter
    implements). A use case asks only for the areas it uses."""

    async def start(self) -> None: ...
    async def close(self) -> None: ...
