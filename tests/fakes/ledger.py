"""``InMemoryLedger``: every area port of the ledger (``gateway.core.ports.control_ports``) in
plain dicts, for unit tests. It runs the area contract suites (``tests/contract/ledger/``)
beside the SQLite and Redis ledgers. A test subclasses it to hold or fail a call."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gateway.core.model.candidates import FORMED_IDS_KEPT, DueSession, SessionTurns
from gateway.core.model.control import (
    ERASED_TEXT,
    ERASURE_SKEW_S,
    KEPT_AUDIT_ACTIONS,
    AuditEntry,
    PendingFact,
    Proposal,
    ReviewItem,
    TaskStep,
)
from gateway.core.model.models import Turn, Zone

Session = tuple[str, str]  # (namespace, session id)


@dataclass
class _Decision:
    state: str
    decided_by: str
    reason: str


@dataclass
class _Session:
    """A session's turns waiting to be mined, by position; the ids of the last mined ones (with
    their positions, oldest first); how far mining got; its last turn."""

    turns: dict[int, Turn] = field(default_factory=dict)
    formed: dict[str, int] = field(default_factory=dict)
    formed_upto: int = 0
    last_turn: float = 0.0


@dataclass
class LedgerRecords:
    """What an ``InMemoryLedger`` keeps: the ledgers opened over one of these are the same ledger
    reopened (a restart)."""

    audit: dict[int, AuditEntry] = field(default_factory=dict)  # by seq
    audit_seq: int = 0
    #: 'n:<namespace>' | 't:<memory or write id>' -> when last erased
    erased: dict[str, float] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    proposals: dict[str, Proposal] = field(default_factory=dict)
    review: dict[str, tuple[ReviewItem, float]] = field(default_factory=dict)
    decisions: dict[str, _Decision] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)  # JSON, as the adapters keep them
    facts: dict[str, PendingFact] = field(default_factory=dict)
    tasks: dict[str, dict[int, TaskStep]] = field(default_factory=dict)
    sessions: dict[Session, _Session] = field(default_factory=dict)
    position: int = 0  # the last position given to a formation turn


def _names(namespace: str) -> list[str]:
    return [ns for ns in dict.fromkeys(namespace.split(",")) if ns]


class InMemoryLedger:
    """The ``Ledger`` contract in memory. ``records`` shared by two ledgers makes the second a
    restart of the first."""

    def __init__(self, records: LedgerRecords | None = None) -> None:
        self.records = records if records is not None else LedgerRecords()

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None

    # ---- AuditLedger
    async def audit(self, entries: Sequence[AuditEntry]) -> None:
        now, r = time.time(), self.records
        for e in entries:
            at = e.at or now
            detail = e.detail
            if detail and e.action not in KEPT_AUDIT_ACTIONS and self._erased_after(e, at):
                detail = ERASED_TEXT  # queued before an erasure that has run since
            r.audit_seq += 1
            r.audit[r.audit_seq] = replace(e, at=at, detail=detail)

    def _erased_after(self, e: AuditEntry, at: float) -> bool:
        keys = [f"n:{ns}" for ns in _names(e.namespace)] + ([f"t:{e.target}"] if e.target else [])
        keys += [f"t:{hit}" for hit in e.hits]  # a recall that returned an erased memory
        times = [self.records.erased[k] for k in keys if k in self.records.erased]
        return bool(times) and at <= max(times) + ERASURE_SKEW_S

    async def query_audit(
        self, agent_id: str, namespace: str, since: float, limit: int
    ) -> list[AuditEntry]:
        rows = [
            e
            for _, e in sorted(self.records.audit.items(), reverse=True)
            if e.at >= since
            and (not agent_id or e.agent_id == agent_id)
            and (not namespace or namespace in _names(e.namespace))
        ]
        return rows[:limit]

    async def prune_audit(self, older_than_s: float) -> int:
        cutoff, r = time.time() - older_than_s, self.records
        r.erased = {k: at for k, at in r.erased.items() if at >= cutoff}
        old = [seq for seq, e in r.audit.items() if e.at < cutoff]
        for seq in old:
            del r.audit[seq]
        return len(old)

    # ---- AliasLedger
    async def set_aliases(self, pairs: Sequence[tuple[str, str]]) -> None:
        self.records.aliases.update(pairs)

    async def resolve(self, write_id: str) -> str:
        return self.records.aliases.get(write_id, write_id)

    async def resolve_many(self, write_ids: Sequence[str]) -> dict[str, str]:
        return {w: self.records.aliases.get(w, w) for w in write_ids}

    # ---- ProposalLedger
    async def add_proposal(self, proposal: Proposal) -> Proposal:
        return self.records.proposals.setdefault(
            proposal.id,
            replace(
                proposal,
                state="pending",
                decided_by="",
                reason="",
                memory_id="",
                created=proposal.created or time.time(),
            ),
        )

    async def get_proposal(self, pid: str) -> Proposal | None:
        return self.records.proposals.get(pid)

    async def list_proposals(self, state: str, limit: int) -> list[Proposal]:
        rows = [p for p in self.records.proposals.values() if not state or p.state == state]
        return sorted(rows, key=lambda p: p.created)[:limit]

    async def decide_proposal(
        self, pid: str, state: str, decided_by: str, reason: str, memory_id: str = ""
    ) -> bool:
        p = self.records.proposals.get(pid)
        if p is None or p.state != "pending":
            return False
        self.records.proposals[pid] = replace(
            p, state=state, decided_by=decided_by, reason=reason, memory_id=memory_id
        )
        return True

    async def proposal_backlog(self) -> tuple[int, float]:
        created = [p.created for p in self.records.proposals.values() if p.state == "pending"]
        return len(created), min(created, default=0.0)

    # ---- ReviewLedger
    async def add_review(self, items: Sequence[ReviewItem]) -> None:
        now = time.time()
        for item in items:
            self.records.review.setdefault(item.memory_id, (item, now))

    async def list_review(self, limit: int) -> list[ReviewItem]:
        queued = [
            (created, item)
            for mid, (item, created) in self.records.review.items()
            if mid not in self.records.decisions
        ]
        return [item for _, item in sorted(queued, key=lambda q: q[0])][:limit]

    async def resolve_review(
        self, memory_id: str, state: str, decided_by: str, reason: str
    ) -> bool:
        if memory_id not in self.records.review or memory_id in self.records.decisions:
            return False
        self.records.decisions[memory_id] = _Decision(state, decided_by, reason)
        return True

    # ---- ErasureLedger
    async def scrub(self, memory_ids: Sequence[str]) -> None:
        ids = set(memory_ids)
        if not ids:
            return
        r, now = self.records, time.time()
        targets = ids | {w for w, m in r.aliases.items() if m in ids}
        r.erased.update((f"t:{t}", now) for t in targets)
        self._scrub_audit(lambda e: e.target in targets or not targets.isdisjoint(e.hits))
        r.proposals = {k: p for k, p in r.proposals.items() if p.memory_id not in ids}
        r.facts = {k: f for k, f in r.facts.items() if f.promoted_to not in ids}
        self._drop_review(ids)
        for s in r.sessions.values():
            s.turns = {pos: t for pos, t in s.turns.items() if t.id not in ids}
            s.formed = {tid: pos for tid, pos in s.formed.items() if tid not in ids}

    async def scrub_namespace(self, namespace: str) -> None:
        r = self.records
        r.erased[f"n:{namespace}"] = time.time()
        self._scrub_audit(lambda e: namespace in _names(e.namespace))
        r.proposals = {k: p for k, p in r.proposals.items() if p.item.namespace != namespace}
        r.facts = {k: f for k, f in r.facts.items() if f.namespace != namespace}
        self._drop_review({m for m, (item, _) in r.review.items() if item.namespace == namespace})
        r.sessions = {k: s for k, s in r.sessions.items() if k[0] != namespace}
        if namespace.startswith("task/"):
            r.tasks.pop(namespace[5:], None)

    def _scrub_audit(self, naming: Callable[[AuditEntry], bool]) -> None:
        for seq, e in self.records.audit.items():
            if e.detail and e.action not in KEPT_AUDIT_ACTIONS and naming(e):
                self.records.audit[seq] = replace(e, detail=ERASED_TEXT)

    def _drop_review(self, ids: set[str]) -> None:
        r = self.records
        for mid in ids:
            r.review.pop(mid, None)
            if mid in r.decisions:
                r.decisions[mid].reason = ""  # the decision stays, without the reviewer's words

    # ---- SettingsLedger
    async def put_setting(self, key: str, value: dict[str, Any]) -> None:
        self.records.settings[key] = json.dumps(value)  # what the adapters store: JSON values

    async def get_setting(self, key: str) -> dict[str, Any] | None:
        raw = self.records.settings.get(key)
        return json.loads(raw) if raw is not None else None

    # ---- PendingFactLedger
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
        facts = self.records.facts
        row = next(
            (f for f in facts.values() if (f.namespace, f.fact_key) == (namespace, fact_key)), None
        )
        if row is None:
            row = PendingFact(
                pid, namespace, fact_key, fact, [session_id], list(evidence), confidence
            )
        else:
            sessions = row.sessions + (
                [session_id] if session_id and session_id not in row.sessions else []
            )
            ev = row.evidence + [e for e in evidence if e not in row.evidence]
            row = replace(
                row, sessions=sessions, evidence=ev, confidence=max(row.confidence, confidence)
            )
        facts[row.id] = row
        return replace(row, sessions=list(row.sessions), evidence=list(row.evidence))

    async def get_pending_fact(self, pid: str) -> PendingFact | None:
        row = self.records.facts.get(pid)
        return (
            replace(row, sessions=list(row.sessions), evidence=list(row.evidence)) if row else None
        )

    async def pending_facts(self, namespace: str, limit: int) -> list[PendingFact]:
        rows = [
            f for f in self.records.facts.values() if f.namespace == namespace and not f.promoted_to
        ]
        return [replace(f, sessions=list(f.sessions), evidence=list(f.evidence)) for f in rows][
            :limit
        ]

    async def mark_promoted(self, pid: str, memory_id: str) -> None:
        if pid in self.records.facts:
            self.records.facts[pid] = replace(self.records.facts[pid], promoted_to=memory_id)

    # ---- FormationTurnLedger
    async def record_turns(self, namespace: str, session_id: str, turns: Sequence[Turn]) -> None:
        if not turns:
            return
        r = self.records
        s = r.sessions.setdefault((namespace, session_id), _Session())
        for t in turns:
            if t.id not in s.formed and all(kept.id != t.id for kept in s.turns.values()):
                r.position += 1
                s.turns[r.position] = replace(t, zone=Zone.DIALOGUE, metadata=dict(t.metadata))
        s.last_turn = time.time()

    async def unformed_turns(
        self, namespace: str, session_id: str, upto: int = 0, limit: int = 0
    ) -> SessionTurns:
        s = self.records.sessions.get((namespace, session_id), _Session())
        rows = [
            (pos, t)
            for pos, t in sorted(s.turns.items())
            if pos > s.formed_upto and (not upto or pos <= upto)
        ]
        rows = rows[:limit] if limit else rows
        last = rows[-1][0] if rows else s.formed_upto
        return SessionTurns(namespace, session_id, s.formed_upto, last, [t for _, t in rows])

    async def mark_formed(self, namespace: str, session_id: str, upto: int) -> None:
        s = self.records.sessions.get((namespace, session_id))
        if s is not None:
            s.formed_upto = max(s.formed_upto, upto)
            s.formed.update((t.id, pos) for pos, t in sorted(s.turns.items()) if pos <= upto)
            s.formed = dict(sorted(s.formed.items(), key=lambda kv: kv[1])[-FORMED_IDS_KEPT:])
            s.turns = {pos: t for pos, t in s.turns.items() if pos > upto}

    async def due_sessions(
        self, idle_before: float, every_turns: int, limit: int
    ) -> list[DueSession]:
        due = []
        for (ns, sid), s in sorted(self.records.sessions.items()):
            waiting = [pos for pos in s.turns if pos > s.formed_upto]
            idle = s.last_turn < idle_before
            if waiting and (idle or 0 < every_turns <= len(waiting)):
                due.append(DueSession(ns, sid, max(waiting), len(waiting), idle))
        return due[:limit]

    # ---- TaskLedger
    async def start_task(self, task_id: str, steps: Sequence[str]) -> None:
        kept = self.records.tasks.setdefault(task_id, {})
        for i, name in enumerate(steps):
            kept.setdefault(i, TaskStep(i, name))

    async def task_steps(self, task_id: str) -> list[TaskStep]:
        return [step for _, step in sorted(self.records.tasks.get(task_id, {}).items())]

    async def update_step(
        self, task_id: str, index: int, state: str, output: str, error: str
    ) -> bool:
        steps = self.records.tasks.get(task_id, {})
        step = steps.get(index)
        if step is None:
            return False
        if step.state != "done":
            bump = 1 if state == "running" else 0
            steps[index] = replace(
                step, state=state, output=output, error=error, attempts=step.attempts + bump
            )
        return True
