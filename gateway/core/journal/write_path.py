"""The one write path every use case commits through: back-pressure, journal (fsync = the write is
acknowledged), wake the lanes, audit, queue for review, and — with ``wait`` — until applied."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from gateway.core.journal.lanes import Lanes
from gateway.core.model.commands import Command, Relate
from gateway.core.model.control import AuditEntry, NewEntry, ReviewItem
from gateway.core.model.errors import Overloaded
from gateway.core.ports.control_ports import AliasLedger, AuditLedger, ReviewLedger
from gateway.core.ports.ports import Journal


@dataclass(frozen=True, slots=True)
class Committed:
    seq: int
    write_id: str  # after ``wait``: the memory it ended up in (a merge resolves to the target)
    duplicate: bool
    applied: bool


class WritePathLedger(ReviewLedger, AuditLedger, AliasLedger, Protocol):
    """The ledger areas this module uses."""


def namespace_of(cmd: Command) -> str:
    return "" if isinstance(cmd, Relate) else cmd.namespace


class WritePath:
    def __init__(
        self,
        journal: Journal,
        ledger: WritePathLedger,
        lanes: Lanes,
        max_pending: int,
        wait_timeout_s: float,
    ) -> None:
        self._journal = journal
        self._ledger = ledger
        self._lanes = lanes
        self._max_pending = max_pending
        self._wait_timeout_s = wait_timeout_s

    def check_backlog(self, incoming: int) -> None:
        backlog = self._journal.pending_count
        if backlog + incoming > self._max_pending:
            why = "; ".join(error for _, error in self._lanes.errors())
            raise Overloaded(
                f"{backlog} acknowledged writes are still waiting to be applied "
                f"({why or 'the stores are behind'}); retry later with the same idempotency keys"
            )

    async def commit(
        self,
        entries: Sequence[NewEntry],
        wait: bool,
        action: str = "write",
        details: Sequence[str] = (),
        review: Sequence[str] = (),
    ) -> list[Committed]:
        """Journal ``entries`` all or none and acknowledge them. ``details`` and ``review`` (a
        reason per entry, "" for none) go to the audit log and the review queue."""
        if not entries:
            return []
        self.check_backlog(len(entries))
        accepted = await self._journal.append(entries)
        self._lanes.kick()
        await self._ledger.audit(
            [
                AuditEntry(
                    e.agent_id,
                    action,
                    namespace_of(e.command),
                    a.write_id,
                    details[i] if i < len(details) else "",
                )
                for i, (e, a) in enumerate(zip(entries, accepted, strict=True))
            ]
        )
        queued = [
            ReviewItem(a.write_id, namespace_of(e.command), reason)
            for e, a, reason in zip(entries, accepted, review, strict=False)
            if reason
        ]
        if queued:
            await self._ledger.add_review(queued)
        if not wait:
            return [Committed(a.seq, a.write_id, a.duplicate, a.applied) for a in accepted]
        for lane in self._lanes.all:
            seqs = [a.seq for e, a in zip(entries, accepted, strict=True) if lane.handles(e.kind)]
            if seqs:
                await lane.wait_applied(seqs, self._wait_timeout_s)
        resolved = await self._ledger.resolve_many([a.write_id for a in accepted])
        return [
            Committed(a.seq, resolved.get(a.write_id, a.write_id), a.duplicate, True)
            for a in accepted
        ]
