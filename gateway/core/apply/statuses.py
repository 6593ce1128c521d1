"""Status changes applied from the journal: archive (decay), release (after review), and
revocation: each a new version of the memory. Releasing a held conflict (a weaker claim that
contradicted an active fact) supersedes that fact instead: the master decided."""

from __future__ import annotations

from collections.abc import Sequence

from gateway.core.apply.derive import event_of, vector_item
from gateway.core.model.commands import Archive, Forget, Release
from gateway.core.model.control import JournalEntry
from gateway.core.model.models import Layer, Memory, Status, utcnow
from gateway.core.ports.control_ports import AliasLedger
from gateway.core.ports.ports import Stores
from gateway.core.truth import reconcile
from gateway.core.truth import validity as vd

_STATUS_OF: dict[type, Status] = {
    Forget: Status.FORGOTTEN,
    Archive: Status.ARCHIVED,
    Release: Status.ACTIVE,
}


def settle(claim: Memory, holder: Memory) -> tuple[Memory, Memory]:
    """A held conflict released by the master: the fact's new version (the claim supersedes
    it) and the claim's own last version (history, pointing at the fact)."""
    decided = claim.with_changes(metadata={**claim.metadata, vd.DECIDED_KEY: "1"})
    fact = reconcile.supersede(holder, decided).version
    assert fact is not None
    kept = claim.with_changes(
        status=Status.SUPERSEDED,
        version=claim.version + 1,
        updated_at=utcnow(),
        metadata={**claim.metadata, reconcile.SUPERSEDED_BY_KEY: holder.id},
    )
    return fact, kept


class StatusChanges:
    def __init__(self, stores: Stores, ledger: AliasLedger) -> None:
        self._stores = stores
        self._ledger = ledger

    async def apply(self, run: Sequence[JournalEntry]) -> set[str]:
        commands = [e.command for e in run if isinstance(e.command, Forget | Archive | Release)]
        current = await self._stores.records.get([c.id for c in commands])
        holders = await self._stores.records.get(
            [h for m in current.values() if (h := m.metadata.get(vd.CONFLICTS_WITH_KEY))]
        )
        versions: dict[str, Memory] = {}
        aliases: list[tuple[str, str]] = []
        revoked_events: list[str] = []
        released: list[Memory] = []
        for c in commands:
            status = _STATUS_OF[type(c)]
            mem = versions.get(c.id) or current.get(c.id)
            if mem is None or mem.status is status:
                continue
            if status is Status.ARCHIVED and mem.status is not Status.ACTIVE:
                continue  # only active memories decay; forgotten ones stay forgotten
            if status is Status.ACTIVE and mem.status is not Status.QUARANTINED:
                continue  # only a quarantined memory is released
            holder_id = mem.metadata.get(vd.CONFLICTS_WITH_KEY, "")
            holder = versions.get(holder_id) or holders.get(holder_id)
            if status is Status.ACTIVE and holder is not None and holder.status is Status.ACTIVE:
                fact, versions[c.id] = settle(mem, holder)
                versions[holder.id] = fact
                released.append(fact)
                aliases.append((mem.id, holder.id))
                continue
            versions[c.id] = mem.with_changes(
                status=status,
                version=mem.version + 1,
                updated_at=utcnow(),
                metadata={**mem.metadata, f"memgate.{status.value}_reason": c.reason},
            )
            if mem.layer is Layer.EPISODIC and status is Status.FORGOTTEN:
                revoked_events.append(mem.id)  # an archived event stays on the timeline
            if status is Status.ACTIVE:
                released.append(versions[c.id])
        await self._store(versions, aliases, released, revoked_events)
        return {m.namespace for m in versions.values()}

    async def _store(
        self,
        versions: dict[str, Memory],
        aliases: list[tuple[str, str]],
        released: list[Memory],
        revoked_events: list[str],
    ) -> None:
        if versions:
            await self._stores.records.put(list(versions.values()))
            if aliases:
                await self._ledger.set_aliases(aliases)
            gone = [mid for mid, m in versions.items() if m.status is not Status.ACTIVE]
            if gone:
                await self._stores.index.delete(gone, erased=False)  # the texts stay
        if released:
            await self._stores.index.upsert(
                [vector_item(m) for m in released if m.embedding is not None]
            )
            events = [event_of(m) for m in released if m.layer is Layer.EPISODIC]
            if events:
                await self._stores.graph.record(events)
        if revoked_events:
            await self._stores.graph.delete_events(revoked_events)
