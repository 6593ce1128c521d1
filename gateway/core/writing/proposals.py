"""Proposals to shared namespaces (seed 004 §4.2): the master lists them, approves (written as
the proposer's) or rejects them, and sets the policy that approves some without asking."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from gateway.core.access import namespaces as nsp
from gateway.core.journal.write_path import WritePath
from gateway.core.model import commands
from gateway.core.model.commands import MemoryWrite, TurnAppend
from gateway.core.model.control import AuditEntry, NewEntry, Proposal
from gateway.core.model.errors import (
    Conflict,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)
from gateway.core.model.models import Layer, Memory, utcnow
from gateway.core.ports.control_ports import AuditLedger, ProposalLedger
from gateway.core.ports.ports import RecordStore
from gateway.core.screening.screening import clean
from gateway.core.truth import slots
from gateway.core.truth import validity as vd


class ProposalsLedger(ProposalLedger, AuditLedger, Protocol):
    """The ledger areas this module uses."""


PROPOSAL_STATES = ("pending", "approved", "rejected")
MAX_LISTED = 500


def require_master(agent: str, master: str, what: str) -> None:
    nsp.check_agent_id(agent)
    if agent != master:
        raise PermissionDenied(f"only the master agent may {what}")


def stable_id(agent: str, key: str) -> str:
    return hashlib.sha256(f"{agent}\x00{key}".encode()).hexdigest()[:32]


async def submit(
    ledger: ProposalsLedger, agent: str, idempotency_key: str, item: MemoryWrite | TurnAppend
) -> Proposal:
    """Store a proposal of ``agent``. With an idempotency key a retry returns the same proposal;
    the same key with other content is a Conflict (ABORTED), never a silent drop."""
    pid = stable_id(agent, idempotency_key) if idempotency_key else uuid.uuid4().hex
    stored = await ledger.add_proposal(Proposal(pid, agent, item))
    if stored.proposer != agent or commands.digest(stored.item) != commands.digest(item):
        raise Conflict(
            f"idempotency key {idempotency_key[:64]!r} was already used for another proposal "
            f"({pid}): use a new key for new content",
            field="idempotency_key",
        )
    return stored


@dataclass(frozen=True, slots=True)
class Competing:
    """What a proposed fact competes with: its slot and value, and the active fact on the same
    slot holding another value (None: it contradicts nothing stored)."""

    slot: str
    value: str
    fact: Memory | None


class Proposals:
    def __init__(
        self,
        ledger: ProposalsLedger,
        write_path: WritePath,
        policies: nsp.SharedWritePolicies,
        master: str,
        records: RecordStore,
    ) -> None:
        self._records = records
        self._ledger = ledger
        self._write_path = write_path
        self._policies = policies
        self._master = master

    async def list(self, agent: str, state: str, limit: int) -> list[Proposal]:
        require_master(agent, self._master, "list proposals")
        if state and state not in PROPOSAL_STATES:
            raise InvalidArgument("state must be pending, approved or rejected", field="state")
        return await self._ledger.list_proposals(state, min(max(limit, 1), MAX_LISTED))

    async def competing(self, proposals: Sequence[Proposal]) -> dict[str, Competing]:
        """For each proposed semantic fact with a slot (by proposal id): the active fact it
        would supersede, looked up in one call."""
        found: dict[str, tuple[str, slots.Slot]] = {}
        for p in proposals:
            item = p.item
            if isinstance(item, MemoryWrite) and item.layer is Layer.SEMANTIC:
                slot = slots.parse(item.content, item.namespace)
                if slot is not None:
                    found[p.id] = (item.namespace, slot)
        if not found:
            return {}
        keys = sorted({(ns, slot.key) for ns, slot in found.values()})
        held = await self._records.find_facts(keys)
        out = {}
        for pid, (ns, slot) in found.items():
            fact = held.get((ns, slot.key))
            if fact is not None and vd.value_of(fact) == slot.value:
                fact = None  # it restates the stored fact: nothing competes
            out[pid] = Competing(f"{slot.subject}:{slot.attribute}", slot.value, fact)
        return out

    async def decide(self, agent: str, pid: str, approve: bool, reason: str) -> Proposal:
        """The master approves (the proposal is written, as the proposer's) or rejects it. An
        approved fact that contradicts an active one supersedes it (one decision, audited with
        the fact it replaced); the old value stays in that fact's history. The same decision
        made again answers as the first did (safe to retry); the other one is refused."""
        require_master(agent, self._master, "decide proposals")
        proposal = await self._ledger.get_proposal(pid)
        if proposal is None:
            raise NotFound(f"proposal {pid!r} does not exist")
        if proposal.state == ("approved" if approve else "rejected"):
            return proposal  # the same decision again (a retry whose answer was lost): as made
        if proposal.state != "pending":
            raise FailedPrecondition(f"proposal {pid} is already {proposal.state}")
        memory_id = ""
        replaced = ""
        if approve:
            item = proposal.item
            if isinstance(item, MemoryWrite) and item.layer is Layer.SEMANTIC:
                rival = (await self.competing([proposal])).get(pid)
                replaced = rival.fact.id if rival and rival.fact else ""
                item = replace(item, metadata={**item.metadata, vd.DECIDED_KEY: agent})
            if isinstance(item, MemoryWrite):
                # it holds from the decision, not from when it was proposed (a fact it replaces
                # held until now); a time the proposer stated (``event_time``) stays
                item = replace(item, received_at=utcnow())
            entry = NewEntry(uuid.uuid4().hex, proposal.proposer, f"proposal:{pid}", item)
            committed = await self._write_path.commit([entry], wait=True, action="write")
            memory_id = committed[0].write_id
        state = "approved" if approve else "rejected"
        reason = clean(reason[:500])
        detail = f"{reason[:200]} (supersedes {replaced})" if replaced else reason[:200]
        if not await self._ledger.decide_proposal(pid, state, agent, reason, memory_id):
            raise FailedPrecondition(f"proposal {pid} was decided concurrently")
        await self._ledger.audit([AuditEntry(agent, state, proposal.item.namespace, pid, detail)])
        decided = await self._ledger.get_proposal(pid)
        assert decided is not None
        return decided

    async def set_policy(
        self, agent: str, auto_approve: Sequence[str], min_confidence: float
    ) -> nsp.SharedWritePolicy:
        """Namespaces (or prefixes ending in '*') where sub-agent proposals commit directly."""
        require_master(agent, self._master, "set the shared-write policy")
        policy = nsp.SharedWritePolicy.checked(auto_approve, min_confidence)
        await self._policies.replace(policy)
        detail = json.dumps(policy.to_dict())
        await self._ledger.audit([AuditEntry(agent, "policy", "", "", detail)])
        return policy
