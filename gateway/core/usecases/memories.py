"""Long-term memories by id: read one (if the caller may see it), its history, and forget it
(erasure: what stays is a tombstone without content, see ``core/apply/eraser.py``); and the
namespaces a caller may read."""

from __future__ import annotations

import uuid
from datetime import datetime

from gateway.core.access import namespaces as nsp
from gateway.core.apply.eraser import is_tombstone
from gateway.core.journal.write_path import WritePath
from gateway.core.model.commands import EraseWorking, Forget
from gateway.core.model.control import AuditEntry, NewEntry
from gateway.core.model.errors import InvalidArgument, NotFound, PermissionDenied
from gateway.core.model.models import Memory, Status
from gateway.core.ports.ports import Ledger, RecordStore
from gateway.core.recall.audit_log import AuditLog
from gateway.core.truth import validity as vd

MAX_NAMESPACES = 10_000
DEFAULT_NAMESPACES = 1_000
MAX_PREFIX_CHARS = 200


class Memories:
    def __init__(
        self,
        records: RecordStore,
        ledger: Ledger,
        write_path: WritePath,
        master: str,
        audit: AuditLog,
    ) -> None:
        """``audit``: the gateway's queue of audit rows (``Recaller.audit``): a read is audited
        off its path, as a recall is (no ledger write and its fsync per read)."""
        self._records = records
        self._ledger = ledger
        self._audit = audit
        self._write_path = write_path
        self._master = master

    async def visible(self, agent: str, memory_id: str) -> Memory:
        """The current version of a memory (or of the one a write id was merged into), if
        ``agent`` may read its namespace."""
        nsp.check_agent_id(agent)
        if not memory_id:
            raise InvalidArgument("id is empty", field="id")
        resolved = await self._ledger.resolve(memory_id)
        mem = (await self._records.get([resolved])).get(resolved)
        # an id in a namespace the caller cannot read answers exactly like a missing one (L4)
        if mem is None or not nsp.can_read(agent, nsp.parse(mem.namespace), self._master):
            raise NotFound(
                f"memory {memory_id!r} does not exist (or is not applied yet: write with wait)"
            )
        return mem

    async def namespaces(self, agent: str, prefix: str, limit: int) -> tuple[list[str], bool]:
        """Namespaces holding an active memory that ``agent`` may read, starting with
        ``prefix``, sorted; at most ``limit`` (0: the default), and whether more matched. A
        sub-agent is not shown ``user/*``: it reads a user's namespace it is given, but cannot
        enumerate the users (their ids can be e-mail addresses)."""
        nsp.check_agent_id(agent)
        if len(prefix) > MAX_PREFIX_CHARS:
            raise InvalidArgument(f"prefix: at most {MAX_PREFIX_CHARS} chars", field="prefix")
        if not 0 <= limit <= MAX_NAMESPACES:
            raise InvalidArgument(f"limit must be 0..{MAX_NAMESPACES}", field="limit")
        limit = limit or DEFAULT_NAMESPACES
        names = []
        for name in await self._records.namespaces():
            if not name.startswith(prefix):
                continue
            try:
                ns = nsp.parse(name)
                readable = nsp.can_read(agent, ns, self._master)
            except InvalidArgument:
                continue  # not a namespace a caller could name (imported oddities)
            if agent != self._master and ns.kind == "user":
                continue
            if readable:
                names.append(name)
        return names[:limit], len(names) > limit

    async def get(self, agent: str, memory_id: str, action: str = "read") -> Memory:
        mem = await self.visible(agent, memory_id)
        self._audit.add(AuditEntry(agent, action, mem.namespace, mem.id, "get"))
        return mem

    async def history(
        self, agent: str, memory_id: str, as_of: datetime | None = None
    ) -> list[Memory]:
        """Every version, oldest first, with its validity (``valid_from``/``valid_to`` in its
        metadata); with ``as_of``, only the version true then (none if none was)."""
        mem = await self.visible(agent, memory_id)
        versions = await self._records.history(mem.id)
        if as_of is not None:
            then = vd.as_of(versions, as_of)
            return [] if then is None else [then]
        # every version but the newest has been replaced by a later one
        return [
            v.with_changes(status=Status.SUPERSEDED) if v.version < mem.version else v
            for v in vd.annotated(versions)
        ]

    async def forget(self, agent: str, memory_id: str, reason: str) -> Memory:
        mem = await self.visible(agent, memory_id)
        ns = nsp.parse(mem.namespace)
        access = nsp.write_access(agent, ns, self._master)
        # shared memory (user/*, global: a sub-agent's writes there are proposals) changes only
        # through the master, and a forget cannot be a proposal: refused, even for the memory
        # its proposal became (issue 33 L1)
        if access is nsp.Access.PROPOSAL:
            raise PermissionDenied(
                f"agent {agent!r} may not forget {mem.id} in shared {mem.namespace}: shared "
                "memory changes only through the master; ask the master",
                field="id",
            )
        # a sub-agent forgets in its own namespace, or what it wrote itself into task/* (L3: not
        # others' task/* memories)
        if agent != self._master and ns.kind != "agent" and mem.source_agent != agent:
            raise PermissionDenied(
                f"agent {agent!r} may not forget {mem.id} in {mem.namespace}: ask the master",
                field="id",
            )
        if is_tombstone(mem):
            return mem  # erased already
        entry = NewEntry(uuid.uuid4().hex, agent, "", Forget(mem.id, mem.namespace, reason[:500]))
        await self._write_path.commit(
            [entry], wait=True, action="forget", details=[f"{mem.id}: {reason[:200]}"]
        )
        if mem.source_session:  # a turn of the session with this id, if any (working lane)
            turns = EraseWorking(mem.namespace, mem.source_session, (mem.id,))
            await self._write_path.commit(
                [NewEntry(uuid.uuid4().hex, agent, "", turns)],
                wait=False,
                action="erase_working",
                details=[mem.id],
            )
        return (await self._records.get([mem.id]))[mem.id]
