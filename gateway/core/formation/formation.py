"""Formation policy (seed 000 §3.4, §5.1–5.3; 004 §3.4): what becomes of a candidate fact. It
waits in the pending table until a second, independent session yields the same key and value;
an explicit "remember" promotes it at once; a correction of a stored fact replaces it. A value
that contradicts the stored one replaces it (old version kept in the history) only when its
claim is at least as strong, otherwise it goes to the review queue. Every formed memory carries
its provenance: sessions, evidence turns, quotes, extractor and confidence; a later session that
says the stored fact again adds its session, turns and quote to it (a new version)."""

from __future__ import annotations

import enum
import hashlib
import uuid
from dataclasses import dataclass, replace
from typing import Protocol

from gateway.core.journal.write_path import WritePath
from gateway.core.model import candidates as cd
from gateway.core.model.commands import MemoryWrite
from gateway.core.model.control import NewEntry, PendingFact, ReviewItem
from gateway.core.model.errors import BackendUnavailable, Overloaded, Unavailable
from gateway.core.model.limits import Limits
from gateway.core.model.models import Layer, Memory
from gateway.core.ports.control_ports import PendingFactLedger, ReviewLedger
from gateway.core.ports.ports import RecordStore
from gateway.core.truth import slots
from gateway.core.truth import validity as vd
from gateway.core.truth.reconcile import CUE_MARGIN
from gateway.core.writing.inputs import WriteInput, prepare


class FormationLedger(ReviewLedger, PendingFactLedger, Protocol):
    """The ledger areas this module uses."""


#: the identity formed memories are written (and audited) under
FORMATION_AGENT = "memgate.formation"
CONFIRMING_SESSIONS = 2
#: candidates less sure than this are not even kept pending
MIN_CONFIDENCE = 0.3
PROMOTED_IMPORTANCE = 0.7


class Outcome(enum.StrEnum):
    PENDING = "pending"  # seen in one session so far
    PROMOTED = "promoted"  # a new semantic memory, or a new version of one
    CONFIRMED = "confirmed"  # already the stored value: nothing to write
    REVIEW = "review"  # contradicts a stronger stored value: the master decides
    DROPPED = "dropped"  # no evidence, or too unsure


@dataclass(frozen=True, slots=True)
class Considered:
    candidate: cd.Candidate
    outcome: Outcome
    pending_id: str = ""
    memory_id: str = ""


def stronger(confidence: float, evidence: int, stored: Memory) -> bool:
    """Whether a claim may replace ``stored``: confidence at least as high, evidence breaking a
    tie (the same rule ``reconcile.decide`` applies, so a promotion never lands as history)."""
    return (confidence, evidence) >= (stored.confidence, len(stored.evidence))


def stored_value(mem: Memory) -> str:
    return cd.normalise_value(mem.metadata.get(cd.VALUE, mem.content))


class FormationPolicy:
    def __init__(
        self, ledger: FormationLedger, records: RecordStore, write_path: WritePath, limits: Limits
    ) -> None:
        self._ledger = ledger
        self._records = records
        self._write_path = write_path
        self._limits = limits

    async def consider(
        self, namespace: str, session_id: str, c: cd.Candidate, trigger: str
    ) -> Considered:
        if not c.turn_ids or not c.quote.strip() or c.confidence < MIN_CONFIDENCE:
            return Considered(c, Outcome.DROPPED)
        row = await self._ledger.see_fact(
            uuid.uuid4().hex,
            namespace,
            c.pending_key,
            c.statement,
            session_id,
            [cd.evidence_item(c.turn_ids, c.quote)],
            c.confidence,
        )
        # the fact's slot, when its statement has one, is where written and formed facts meet
        slot = slots.parse(c.statement, namespace)
        fact = slot.key if slot is not None else c.key
        stored = await self._records.find_fact(namespace, fact)
        same = stored is not None and (
            stored_value(stored) == cd.normalise_value(c.value)
            or (slot is not None and vd.value_of(stored) == slot.value)
        )
        if same:
            assert stored is not None
            memory_id = await self._confirm(stored, c, session_id, trigger, fact)
            return Considered(c, Outcome.CONFIRMED, row.id, memory_id)
        if c.explicit:
            reason = "explicit"
        elif len(row.sessions) >= CONFIRMING_SESSIONS:
            reason = "two-sessions"
        elif c.correction and stored is not None:
            reason = "correction"
        else:
            return Considered(c, Outcome.PENDING, row.id)
        confidence = max(row.confidence, c.confidence)
        # a correction may be a little less sure than what it corrects (as an update may)
        corrects = (
            c.correction and confidence >= stored.confidence - CUE_MARGIN if stored else False
        )
        if (
            stored is not None
            and not corrects
            and not stronger(confidence, len(row.evidence), stored)
        ):
            await self._ledger.add_review(
                [
                    ReviewItem(
                        stored.id,
                        namespace,
                        f"formation: {c.key} = {c.value!r} (session {session_id}, confidence "
                        f"{confidence:.2f}) contradicts the stored value, which is held with more "
                        f"confidence; ConfirmFact {row.id} to apply it",
                    )
                ]
            )
            return Considered(c, Outcome.REVIEW, row.id, stored.id)
        memory_id = await self._promote(row, c, session_id, reason, trigger, confidence, fact)
        return Considered(c, Outcome.PROMOTED, row.id, memory_id)

    async def _confirm(
        self, stored: Memory, c: cd.Candidate, session_id: str, trigger: str, fact: str
    ) -> str:
        """The stored fact said again: a new version whose provenance adds this session, these
        turns and this quote (nothing when they are already there, or the memory was not formed
        from dialogue — an agent's own write keeps its own provenance)."""
        md = stored.metadata
        if cd.KEY not in md:
            return stored.id
        sessions, turns = _items(md.get(cd.SESSIONS, "")), _items(md.get(cd.TURNS, ""))
        new_turns = [t for t in c.turn_ids if t not in turns]
        if session_id in sessions and not new_turns:
            return stored.id
        confidence = max(stored.confidence, c.confidence)
        digest = hashlib.sha256(f"{session_id}\n{','.join(c.turn_ids)}".encode()).hexdigest()
        item = WriteInput(
            namespace=stored.namespace,
            layer=Layer.SEMANTIC.value,
            content=stored.content,  # the same text: the applier merges it into the stored fact
            type=stored.type,
            importance=stored.importance,
            confidence=confidence,
            session_id=session_id,
            evidence=[c.quote],
            metadata={"fact_key": fact},
            idempotency_key=f"confirm:{stored.id}:{digest[:24]}",
        )
        provenance = {
            **{k: v for k, v in md.items() if k.startswith(cd.PROVENANCE_PREFIX)},
            cd.SESSION: session_id,
            cd.SESSIONS: ",".join(sessions + [s for s in [session_id] if s not in sessions])[:1000],
            cd.TURNS: ",".join(turns + new_turns)[:1000],
            cd.EXTRACTOR: c.extractor,
            cd.CONFIDENCE: f"{confidence:.2f}",
            cd.TRIGGER: trigger,
        }
        detail = (
            f"{c.extractor} confirmed {c.key} session={session_id} turns={','.join(c.turn_ids)}"
        )
        return await self._commit(item, provenance, "confirm", detail)

    async def _promote(
        self,
        row: PendingFact,
        c: cd.Candidate,
        session_id: str,
        reason: str,
        trigger: str,
        confidence: float,
        fact: str,
    ) -> str:
        quotes = [cd.split_evidence(e) for e in row.evidence][-self._limits.max_evidence_items :]
        turn_ids = [i for ids, _ in quotes for i in ids]
        importance = {"explicit": 0.9, "correction": 0.8}.get(reason, PROMOTED_IMPORTANCE)
        item = WriteInput(
            namespace=row.namespace,
            layer=Layer.SEMANTIC.value,
            content=c.statement,
            type=c.type,
            importance=max(importance, c.importance if c.explicit else 0.0),
            confidence=confidence,
            session_id=session_id,
            evidence=[q for _, q in quotes],
            metadata={"fact_key": fact},
            idempotency_key=f"form:{row.id}:{session_id}",
        )
        provenance = {
            cd.SESSION: session_id,
            cd.SESSIONS: ",".join(row.sessions)[:1000],
            cd.TURNS: ",".join(turn_ids)[:1000],
            cd.EXTRACTOR: c.extractor,
            cd.CONFIDENCE: f"{confidence:.2f}",
            cd.KEY: c.key,
            cd.VALUE: c.value[:500],
            cd.REASON: reason,
            cd.TRIGGER: trigger,
            **({vd.UPDATE_CUE_KEY: "1"} if reason == "correction" else {}),
        }
        detail = f"{c.extractor} {reason} {c.key} session={session_id} turns={','.join(turn_ids)}"
        write_id = await self._commit(item, provenance, "form", detail)
        await self._ledger.mark_promoted(row.id, write_id)
        return write_id

    async def _commit(
        self, item: WriteInput, provenance: dict[str, str], action: str, detail: str
    ) -> str:
        """Journal one formed write with its provenance (reserved keys, added after the checks
        callers' writes go through) and wait until it is applied."""
        p = prepare(item, self._limits)
        assert isinstance(p.command, MemoryWrite)
        command = replace(p.command, metadata={**p.command.metadata, **provenance})
        entry = NewEntry(uuid.uuid4().hex, FORMATION_AGENT, p.idempotency_key, command)
        try:
            done = await self._write_path.commit(
                [entry], wait=True, action=action, details=[detail[:500]]
            )
        except (Unavailable, Overloaded) as exc:
            if isinstance(exc, BackendUnavailable):
                raise
            # journaled or not, the job is retried (the write's key makes it one write)
            raise BackendUnavailable("long-term apply lane", exc.message) from exc
        return done[0].write_id


def _items(joined: str) -> list[str]:
    return [x for x in joined.split(",") if x]
