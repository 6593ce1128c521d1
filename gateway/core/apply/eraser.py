"""Applies the erasure commands to every store: ``Forget`` (one memory, leaving a tombstone),
``ForgetNamespace``, ``ForgetSubject`` and ``EraseWorking``. Content leaves records (every
version), vectors, the graph (event nodes, summaries, entity and session nodes), working memory,
pending journal payloads and the ledger's free text.

Order, for crash safety: derived stores first, the records last. A replay after a crash finds
the memory still there and erases it again (every step is idempotent); a finished erasure is a
tombstone (or nothing), which a replay skips."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any

from gateway.core.model.commands import EraseWorking, Forget, ForgetNamespace, ForgetSubject
from gateway.core.model.control import AuditEntry, JournalEntry
from gateway.core.model.models import Memory, NodeKind, NodeRef, Status, utcnow
from gateway.core.ports.ports import Journal, Ledger, Stores
from gateway.core.screening import memo

#: memories (and events) per store call: no single call holds a store for long
ERASE_BATCH = 500
#: a tombstone's metadata (shown to callers: no ``memgate.`` prefix)
CONTENT_HASH = "content_sha256"
FORGOTTEN_BY = "forgotten_by"
FORGOTTEN_AT = "forgotten_at"
FORGOTTEN_REASON = "forgotten_reason"


def tombstone(mem: Memory, by: str, at: datetime, reason: str) -> Memory:
    """What stays of an erased memory: its id, namespace, layer, type, author and creation time,
    the SHA-256 of its content, and who erased it, when and why. No content, evidence,
    entities, metadata, fact key, session, task or embedding."""
    return Memory(
        id=mem.id,
        namespace=mem.namespace,
        layer=mem.layer,
        content="",
        type=mem.type,
        importance=0.0,
        confidence=0.0,
        source_agent=mem.source_agent,
        created_at=mem.created_at,
        updated_at=at,
        version=mem.version + 1,
        metadata={
            CONTENT_HASH: hashlib.sha256(mem.content.encode("utf-8")).hexdigest(),
            FORGOTTEN_BY: by,
            FORGOTTEN_AT: at.isoformat(),
            FORGOTTEN_REASON: reason,
        },
        status=Status.FORGOTTEN,
    )


def is_tombstone(mem: Memory) -> bool:
    return mem.status is Status.FORGOTTEN and CONTENT_HASH in mem.metadata


def erased_key(namespace: str) -> str:
    """The ledger setting recording when ``namespace`` was last erased (``ForgetNamespace``,
    ``ForgetSubject``): an import of a memory from before then refuses it (issue 33 M6)."""
    return f"erased:{namespace}"


def erased_subject_key(user_id: str) -> str:
    """The same for a user erased by ``ForgetSubject``: events about the user, anywhere."""
    return f"erased_subject:{user_id}"


async def record_erasure(ledger: Ledger, key: str, entry: JournalEntry) -> None:
    """When the erasure applied (kept across a replay of the same entry: its first time)."""
    stored = await ledger.get_setting(key)
    if stored and stored.get("write_id") == entry.write_id:
        return
    await ledger.put_setting(
        key, {"write_id": entry.write_id, "at": utcnow().isoformat(), "by": entry.agent_id}
    )


def erased_at(stored: dict[str, Any] | None) -> datetime | None:
    return datetime.fromisoformat(str(stored["at"])) if stored and stored.get("at") else None


class Eraser:
    def __init__(
        self,
        stores: Stores,
        journal: Journal,
        ledger: Ledger,
        audit_flush: Callable[[], Awaitable[None]],
    ) -> None:
        """``audit_flush`` writes the audit rows still queued (``AuditLog.flush``): a namespace's
        audit text is scrubbed after every row of what was asked before the erasure is in."""
        self._stores = stores
        self._journal = journal
        self._ledger = ledger
        self._audit_flush = audit_flush

    async def forget(self, run: Sequence[JournalEntry]) -> set[str]:
        """Each memory named by a ``Forget`` of ``run`` becomes a tombstone."""
        wanted = [(e, e.command) for e in run if isinstance(e.command, Forget)]
        current = await self._stores.records.get([c.id for _, c in wanted])
        now = utcnow()
        graves: dict[str, Memory] = {}
        for entry, c in wanted:
            mem = current.get(c.id)
            if mem is None or is_tombstone(mem) or c.id in graves:
                continue
            graves[c.id] = tombstone(mem, entry.agent_id, now, c.reason)
        if graves:
            await self._bury(list(graves.values()), run[-1].seq)
        return {m.namespace for m in graves.values()}

    async def _bury(self, graves: Sequence[Memory], before_seq: int) -> None:
        ids = [g.id for g in graves]
        await self._stores.index.delete(ids)
        await self._stores.graph.delete_events(ids)
        await self._journal.erase_pending("", ids, before_seq)
        await self._ledger.scrub(ids)
        await self._stores.records.erase(graves)
        await self._stores.index.flush()
        memo.forget()

    async def forget_namespace(self, entry: JournalEntry) -> set[str]:
        cmd = entry.command
        assert isinstance(cmd, ForgetNamespace | ForgetSubject)
        ns = cmd.namespace
        await self._journal.erase_pending(ns, (), entry.seq)
        memories = 0
        last: list[str] = []
        while ids := await self._stores.records.ids_in(ns, ERASE_BATCH):
            if ids == last:
                raise RuntimeError(f"the record store did not delete {len(ids)} ids of {ns}")
            await self._stores.index.delete(ids)
            await self._stores.graph.delete_events(ids)
            await self._stores.records.delete(ids)
            memories += len(ids)
            last = ids
        events = await self._stores.graph.erase_namespace(ns)
        await self._stores.index.flush()
        await self._audit_flush()  # recalls of the namespace still queued: in, then scrubbed
        await self._ledger.scrub_namespace(ns)
        touched = {ns}
        elsewhere = 0
        if isinstance(cmd, ForgetSubject):
            elsewhere, namespaces = await self._forget_about(entry, cmd)
            touched |= namespaces
        memo.forget()
        await record_erasure(self._ledger, erased_key(ns), entry)
        if isinstance(cmd, ForgetSubject):
            await record_erasure(self._ledger, erased_subject_key(cmd.user_id), entry)
        await self._ledger.audit(
            [
                AuditEntry(
                    entry.agent_id,
                    "erased",
                    ns,
                    entry.write_id,
                    f"{cmd.kind}: {memories} memories and {events} more events of {ns}, "
                    f"{elsewhere} events about the user elsewhere; reason: {cmd.reason}",
                )
            ]
        )
        return touched

    async def _forget_about(self, entry: JournalEntry, cmd: ForgetSubject) -> tuple[int, set[str]]:
        """Every event naming the user, in any namespace, becomes a tombstone; then the user's
        node goes with every edge touching it."""
        count, touched = 0, set()
        last: list[str] = []
        while about := await self._stores.graph.events_about(cmd.user_id, ERASE_BATCH):
            ids = [event_id for event_id, _ in about]
            if ids == last:
                raise RuntimeError(f"the graph did not delete {len(ids)} events")
            current = await self._stores.records.get(ids)
            now = utcnow()
            graves = [
                tombstone(m, entry.agent_id, now, cmd.reason)
                for m in current.values()
                if not is_tombstone(m)
            ]
            await self._stores.index.delete(ids)
            await self._stores.graph.delete_events(ids)
            await self._ledger.scrub(ids)
            await self._stores.records.erase(graves)
            count += len(ids)
            touched |= {ns for _, ns in about}
            last = ids
        await self._stores.graph.delete_nodes([NodeRef(NodeKind.USER, cmd.user_id)])
        await self._stores.index.flush()
        return count, touched

    async def erase_working(self, run: Sequence[JournalEntry]) -> set[str]:
        touched = set()
        for entry in run:
            cmd = entry.command
            if not isinstance(cmd, EraseWorking):
                continue
            if cmd.session_id:
                await self._stores.working.remove_turns(cmd.namespace, cmd.session_id, cmd.turn_ids)
                await self._ledger.scrub(cmd.turn_ids)  # and the transcript kept for formation
            else:
                await self._stores.working.erase_namespace(cmd.namespace)
            touched.add(cmd.namespace)
        memo.forget()
        return touched
