"""Writes of long-term memories and events: validate and screen every item, arbitrate each
namespace (direct, or a proposal for the master), then commit through the write path. A batch is
all or nothing: nothing is journaled unless every item is valid and allowed."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gateway.core.access import namespaces as nsp
from gateway.core.access import write_policy as wp
from gateway.core.journal.write_path import WritePath
from gateway.core.model.commands import MemoryWrite, TurnAppend
from gateway.core.model.control import AuditEntry, NewEntry
from gateway.core.model.limits import Limits
from gateway.core.model.models import Layer, NodeKind, NodeRef
from gateway.core.ports.injection_screen import RULES_ONLY, InjectionScreen
from gateway.core.ports.ports import Ledger
from gateway.core.writing import proposals
from gateway.core.writing.inputs import (
    Prepared,
    WriteInput,
    batch_prefix,
    check_batch,
    check_relation,
    prepare,
)
from gateway.core.writing.second_screen import quarantine_similar, unscreened
from gateway.core.writing.working import turn_access

if TYPE_CHECKING:
    from gateway.core.usecases.episodes import GraphEnds

#: a memory this important but this unsure goes to the review queue (seed 000 §5.2)
REVIEW_IMPORTANCE = 0.8
REVIEW_CONFIDENCE = 0.5


@dataclass(slots=True)
class WriteOutcome:
    id: str
    duplicate: bool = False
    applied: bool = False
    journal_seq: int = 0
    redactions: list[str] = field(default_factory=list)
    quarantined: bool = False
    skipped: str = ""
    proposal_id: str = ""


def review_reason(p: Prepared) -> str:
    if p.quarantined:
        # the rules' phrase stays out of the queue; the second screen says why (issue 33 M5)
        return "quarantined: looks like a prompt injection" + (
            f", {p.injection}" if p.similar else ""
        )
    c = p.command
    if (
        isinstance(c, MemoryWrite)
        and c.importance >= REVIEW_IMPORTANCE
        and c.confidence < REVIEW_CONFIDENCE
    ):
        return "low confidence, high impact"
    return ""


class Writer:
    def __init__(
        self,
        write_path: WritePath,
        ledger: Ledger,
        policies: nsp.SharedWritePolicies,
        limits: Limits,
        master: str,
        turn_policy: str = "proposal",
        graph_ends: GraphEnds | None = None,
        *,
        injection_screen: InjectionScreen = RULES_ONLY,
    ) -> None:
        self._write_path = write_path
        self._ledger = ledger
        self._policies = policies
        self._limits = limits
        self._master = master
        self._turn_policy = turn_policy
        self._graph_ends = graph_ends
        self._screen = injection_screen

    async def write(
        self, agent: str, items: Sequence[WriteInput], wait: bool
    ) -> list[WriteOutcome]:
        """All-or-nothing: every item is validated before any is journaled."""
        nsp.check_agent_id(agent)
        check_batch(items, "items", "writes", self._limits.max_batch_items)
        prefix = batch_prefix(items, "items")
        prepared = [prepare(item, self._limits, prefix(i)) for i, item in enumerate(items)]
        # permission is checked for every item before anything is stored (all or nothing)
        access = [await self._access(agent, p, prefix(i)) for i, p in enumerate(prepared)]
        policy = await self._policies.current()
        # the second injection screen (a model): one call for the texts of the request that
        # need its verdict now — a turn (it enters a window at once), a proposal (a reviewer
        # reads it) and every write when the caller waits for the result; a write that does
        # not wait is acknowledged at the journal and screened by the applier before anything
        # is stored or served (a model never stands between a write and its ack)
        now = [
            wait
            or isinstance(p.command, TurnAppend)
            or (
                access[i] is wp.Outcome.PROPOSAL
                and not policy.approves(p.namespace, _confidence(p.command))
            )
            for i, p in enumerate(prepared)
        ]
        if any(now):
            screened = await quarantine_similar(
                self._screen,
                [it for it, n in zip(items, now, strict=True) if n],
                [p for p, n in zip(prepared, now, strict=True) if n],
            )
            later = iter(screened)
            prepared = [next(later) if n else p for p, n in zip(prepared, now, strict=True)]
        prepared = [p if n else unscreened(p) for p, n in zip(prepared, now, strict=True)]
        outcomes: list[WriteOutcome | None] = [None] * len(items)
        direct: list[tuple[int, NewEntry]] = []
        for i, p in enumerate(prepared):
            if p.skipped:
                outcomes[i] = WriteOutcome(id="", skipped=p.skipped, redactions=p.redactions)
            elif p.quarantined and isinstance(p.command, TurnAppend):
                # as AppendTurn: an injection turn is audited, never placed in a window
                await self._ledger.audit(
                    [AuditEntry(agent, "quarantine", p.namespace, "", p.injection[:200])]
                )
                outcomes[i] = WriteOutcome(id="", redactions=p.redactions, quarantined=True)
            elif access[i] is wp.Outcome.PROPOSAL and not policy.approves(
                p.namespace, _confidence(p.command)
            ):
                outcomes[i] = await self._propose(agent, p)
            else:
                entry = NewEntry(uuid.uuid4().hex, agent, p.idempotency_key, p.command)
                direct.append((i, entry))
        if direct:
            committed = await self._write_path.commit(
                [e for _, e in direct],
                wait,
                details=[prepared[i].layer.value for i, _ in direct],
                review=[review_reason(prepared[i]) for i, _ in direct],
            )
            for (i, _), c in zip(direct, committed, strict=True):
                outcomes[i] = WriteOutcome(
                    id=c.write_id,
                    duplicate=c.duplicate,
                    applied=c.applied,
                    journal_seq=c.seq,
                    redactions=prepared[i].redactions,
                    quarantined=prepared[i].quarantined,
                )
        return [o for o in outcomes if o is not None]

    async def _access(self, agent: str, p: Prepared, prefix: str) -> wp.Outcome:
        """The one write policy (``write_policy.TABLE``) for the item's target: a turn (steering
        or not) or a long-term memory, and each of an event's links as a graph end."""
        ns = p.parsed
        c = p.command
        if isinstance(c, TurnAppend):
            return turn_access(agent, ns, self._master, c, self._turn_policy)
        outcome = wp.require(wp.Target.MEMORY, agent, ns, self._master, f"{prefix}namespace")
        if c.links and self._graph_ends is not None and agent != self._master:
            for _, kind, target in c.links:
                await self._graph_ends.check(
                    agent, NodeRef(NodeKind(kind), target), f"{prefix}links.target"
                )
        return outcome

    async def _propose(self, agent: str, p: Prepared) -> WriteOutcome:
        stored = await proposals.submit(self._ledger, agent, p.idempotency_key, p.command)
        return WriteOutcome(
            id="", proposal_id=stored.id, redactions=p.redactions, quarantined=p.quarantined
        )

    async def record_event(self, agent: str, item: WriteInput, wait: bool) -> WriteOutcome:
        """An episodic memory with links; without an event time it happened when received."""
        item.layer = Layer.EPISODIC.value
        for rel_type, _, _ in item.links:
            check_relation(rel_type, "links.type")  # kinds and ids: prepare() checks them
        return (await self.write(agent, [item], wait))[0]


def _confidence(command: MemoryWrite | TurnAppend) -> float:
    return command.confidence if isinstance(command, MemoryWrite) else 1.0
