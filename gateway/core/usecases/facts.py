"""Two-confirmation facts (seed 000 §3.4): an extracted fact waits in the pending table until it
is seen in two different sessions (or said explicitly), then becomes a semantic memory keyed by
its normalised text."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from gateway.core.access import namespaces as nsp
from gateway.core.model.candidates import key_of_pending, split_evidence
from gateway.core.model.control import PendingFact
from gateway.core.model.errors import InvalidArgument, NotFound
from gateway.core.model.models import Layer
from gateway.core.ports.ports import Ledger
from gateway.core.screening.screening import clean
from gateway.core.truth.reconcile import normalise_fact
from gateway.core.writing.inputs import WriteInput
from gateway.core.writing.proposals import require_master
from gateway.core.writing.writes import Writer

CONFIRMING_SESSIONS = 2
MAX_EVIDENCE = 16
#: ListPendingFacts: at most this many per call; 0 asks for the default
MAX_LISTED = 500
DEFAULT_LISTED = 100
PROMOTED_IMPORTANCE = 0.7


@dataclass(slots=True)
class FactOutcome:
    pending_id: str
    sessions_seen: int
    promoted: bool
    memory_id: str


class Facts:
    def __init__(self, ledger: Ledger, writer: Writer, max_chars: int, master: str) -> None:
        self._ledger = ledger
        self._writer = writer
        self._max_chars = max_chars
        self._master = master

    async def propose(
        self,
        agent: str,
        namespace: str,
        fact: str,
        session_id: str,
        evidence: Sequence[str],
        confidence: float,
        explicit: bool,
    ) -> FactOutcome:
        ns = nsp.parse(namespace)
        nsp.write_access(agent, ns, self._master)
        if not fact.strip():
            raise InvalidArgument("fact is empty", field="fact")
        if len(fact) > self._max_chars:
            raise InvalidArgument("fact is too long", field="fact")
        if not session_id:
            raise InvalidArgument(
                "session_id is required: promotion counts distinct sessions", field="session_id"
            )
        if not 0 <= confidence <= 1:
            raise InvalidArgument("confidence must be between 0 and 1", field="confidence")
        nsp.check_id(session_id, "session_id")
        if len(evidence) > MAX_EVIDENCE or any(len(e) > self._max_chars for e in evidence):
            raise InvalidArgument(
                f"evidence: at most {MAX_EVIDENCE} items of at most {self._max_chars} chars",
                field="evidence",
            )
        # the pending row is stored: screened like a write (injection is caught on promotion)
        fact = clean(fact)
        row = await self._ledger.see_fact(
            uuid.uuid4().hex,
            str(ns),
            normalise_fact(fact),
            fact,
            session_id,
            [clean(e) for e in evidence],
            confidence or 0.5,
        )
        if row.promoted_to:
            return FactOutcome(row.id, len(row.sessions), True, row.promoted_to)
        if explicit or len(row.sessions) >= CONFIRMING_SESSIONS:
            outcome = await self._promote(agent, row)
        else:
            outcome = FactOutcome(row.id, len(row.sessions), False, "")
        return self._as_seen_by(agent, outcome)

    def _as_seen_by(self, agent: str, outcome: FactOutcome) -> FactOutcome:
        """A pending row is shared by every agent proposing the same fact; a sub-agent must not
        learn that another agent proposed it (issue 33 L4): until the fact is a memory, it gets
        an id of its own for the row (stable for it; ConfirmFact is the master's, with the real
        id) and no count of other sessions."""
        if agent == self._master or outcome.promoted:
            return outcome
        alias = hashlib.blake2b(f"{agent}\0{outcome.pending_id}".encode(), digest_size=16)
        return FactOutcome(alias.hexdigest(), 1, False, "")

    async def waiting(self, agent: str, namespace: str, limit: int) -> list[PendingFact]:
        """The namespace's facts waiting for a second session, oldest first, with the ids
        ``confirm`` takes: the master's (a sub-agent's ids for a row are its own aliases)."""
        require_master(agent, self._master, "list the pending facts")
        ns = nsp.parse(namespace)
        if not 0 <= limit <= MAX_LISTED:
            raise InvalidArgument(
                f"limit must be between 1 and {MAX_LISTED} (0 = {DEFAULT_LISTED})", field="limit"
            )
        return await self._ledger.pending_facts(str(ns), limit or DEFAULT_LISTED)

    async def confirm(self, agent: str, pending_id: str) -> FactOutcome:
        require_master(agent, self._master, "confirm a pending fact")
        row = await self._ledger.get_pending_fact(pending_id)
        if row is None:
            raise NotFound(f"pending fact {pending_id!r} does not exist")
        if row.promoted_to:
            return FactOutcome(row.id, len(row.sessions), True, row.promoted_to)
        return await self._promote(agent, row)

    async def _promote(self, agent: str, row: PendingFact) -> FactOutcome:
        """Also how the master confirms a formed candidate held for review (its key and quotes
        come out of the pending row)."""
        item = WriteInput(
            namespace=row.namespace,
            layer=Layer.SEMANTIC.value,
            content=row.fact,
            type="fact",
            importance=PROMOTED_IMPORTANCE,
            confidence=float(row.confidence),
            evidence=[split_evidence(e)[1] for e in row.evidence][:16],
            metadata={
                "fact_key": key_of_pending(row.fact_key),
                "sessions": ",".join(row.sessions)[:1000],
            },
            idempotency_key=f"promote:{row.id}",
        )
        outcome = (await self._writer.write(agent, [item], wait=True))[0]
        if outcome.id:
            await self._ledger.mark_promoted(row.id, outcome.id)
        return FactOutcome(row.id, len(row.sessions), bool(outcome.id), outcome.id)
