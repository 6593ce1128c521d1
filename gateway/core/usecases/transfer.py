"""Export and import of whole namespaces (master only): every version of every memory with the
graph edges of its event, as they were — for backups, and moves between gateways and backends.

Import journals through the one write path: an ``ImportMemory`` per memory and a ``Relate`` per
edge, each keyed by the digest of what it stores, so importing the same file twice (or retrying a
batch) stores everything once. A memory already there at the same or a newer version is left as
it is; one whose fact another active memory holds is reported, not stored.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from gateway.core.access import namespaces as nsp
from gateway.core.access import write_policy as wp
from gateway.core.apply.eraser import erased_at, erased_key, erased_subject_key
from gateway.core.journal.write_path import WritePath
from gateway.core.model import commands
from gateway.core.model.commands import ImportMemory, Relate
from gateway.core.model.control import AuditEntry, NewEntry, ReviewItem
from gateway.core.model.errors import InvalidArgument
from gateway.core.model.models import (
    LONG_TERM_LAYERS,
    Memory,
    NodeKind,
    Relation,
    Status,
    valid_relation_type,
)
from gateway.core.ports.ports import EpisodicGraph, Ledger, RecordStore
from gateway.core.writing.proposals import require_master

MAX_NAMESPACES = 100
MAX_IMPORT = 100  # memories per Import call
MAX_VERSIONS = 1_000  # versions of one imported memory
MAX_LINKS = 1_000  # edges of one imported memory
MAX_ID_CHARS = 128
MAX_EMBEDDING_DIM = 4_096
PAGE = 200


@dataclass(slots=True)
class Exported:
    """One memory as exported: its versions (oldest first) and the edges of its event.
    With ``embedder`` set, ``versions[-1].embedding`` is the current vector that model made."""

    versions: list[Memory]
    links: list[Relation] = field(default_factory=list)
    embedder: str = ""


@dataclass(frozen=True, slots=True)
class ImportReport:
    imported: int
    unchanged: int
    reembedded: int
    links: int  # edges journaled (not already imported)
    conflicts: list[str]
    erased: list[str] = field(default_factory=list)  # erased since exported: not imported


class Transfers:
    def __init__(
        self,
        records: RecordStore,
        graph: EpisodicGraph,
        ledger: Ledger,
        write_path: WritePath,
        embedder_name: str,
        max_content_chars: int,
        master: str,
    ) -> None:
        self._records = records
        self._graph = graph
        self._ledger = ledger
        self._write_path = write_path
        self._embedder = embedder_name
        self._max_content = max_content_chars
        self._master = master

    # ---- export
    async def export(
        self, agent: str, namespaces: Sequence[str], include_vectors: bool
    ) -> AsyncIterator[Exported]:
        """Every memory of the namespaces, in namespace then id order."""
        require_master(agent, self._master, "export namespaces")
        wanted = list(dict.fromkeys(namespaces))
        if not 1 <= len(wanted) <= MAX_NAMESPACES:
            raise InvalidArgument(f"namespaces: give 1..{MAX_NAMESPACES}", field="namespaces")
        for ns in wanted:
            nsp.parse(ns, "namespaces")
        detail = f"vectors={include_vectors}"
        await self._ledger.audit([AuditEntry(agent, "export", ",".join(wanted)[:200], "", detail)])
        for ns in wanted:
            after = ""
            while page := await self._records.scan(ns, after, PAGE):
                edges = await self._edges([m.id for m in page if m.layer.value == "episodic"])
                for head in page:
                    yield await self._exported(head, edges.get(head.id, []), include_vectors)
                after = page[-1].id

    async def _edges(self, event_ids: list[str]) -> dict[str, list[Relation]]:
        out: dict[str, list[Relation]] = {}
        if not event_ids:
            return out
        wanted = set(event_ids)
        for rel in await self._graph.event_edges(event_ids):
            ends = {n.id for n in (rel.src, rel.dst) if n.kind is NodeKind.EVENT} & wanted
            for end in ends:
                out.setdefault(end, []).append(rel)
        return out

    async def _exported(self, head: Memory, links: list[Relation], vectors: bool) -> Exported:
        versions = [v.with_changes(embedding=None) for v in await self._records.history(head.id)]
        if not versions or versions[-1].version != head.version:
            versions.append(head.with_changes(embedding=None))
        carry = vectors and head.embedding is not None
        if carry:
            versions[-1] = versions[-1].with_changes(embedding=head.embedding)
        return Exported(versions, links, self._embedder if carry else "")

    # ---- import
    async def import_(self, agent: str, items: Sequence[Exported], wait: bool) -> ImportReport:
        require_master(agent, self._master, "import memories")
        if not 1 <= len(items) <= MAX_IMPORT:
            raise InvalidArgument(f"memories: give 1..{MAX_IMPORT} per call", field="memories")
        for i, item in enumerate(items):
            self._check(item, f"memories[{i}]")
            ns = nsp.parse(item.versions[-1].namespace, f"memories[{i}].namespace")
            wp.require(wp.Target.MEMORY, agent, ns, self._master, f"memories[{i}].namespace")
        current = await self._records.get([it.versions[-1].id for it in items])
        claimed: dict[tuple[str, str], str] = {}
        entries: dict[str, NewEntry] = {}
        review: list[ReviewItem] = []
        unchanged = reembedded = 0
        conflicts: list[str] = []
        erased: list[str] = []
        erasures: dict[str, datetime | None] = {}
        for item in items:
            head = item.versions[-1]
            stored = current.get(head.id)
            if await self._erased_since(item, erasures):
                erased.append(head.id)
                continue
            if stored is not None and stored.version >= head.version:
                unchanged += 1
            elif await self._fact_taken(head, claimed):
                conflicts.append(head.id)
                continue
            else:
                vector = self._usable_vector(item)
                reembedded += not vector and head.status is not Status.FORGOTTEN
                cmd = ImportMemory(
                    head.namespace,
                    tuple(v.with_changes(embedding=None) for v in item.versions),
                    vector,
                )
                if self._add(entries, agent, "import", cmd) and head.status is Status.QUARANTINED:
                    review.append(ReviewItem(head.id, head.namespace, "quarantined (imported)"))
            for rel in item.links:
                self._add(entries, agent, "import-link", _relate(rel))
        memory_entries = [e for e in entries.values() if isinstance(e.command, ImportMemory)]
        ordered = memory_entries + [e for e in entries.values() if isinstance(e.command, Relate)]
        committed = await self._write_path.commit(ordered, wait, action="import")
        if review:  # by memory id: the imported memory keeps its own
            await self._ledger.add_review(review)
        n = len(memory_entries)
        duplicates = sum(c.duplicate for c in committed[:n])
        return ImportReport(
            imported=n - duplicates,
            unchanged=unchanged + duplicates,
            reembedded=reembedded,
            links=sum(not c.duplicate for c in committed[n:]),
            conflicts=conflicts,
            erased=erased,
        )

    async def _erased_since(self, item: Exported, erasures: dict[str, datetime | None]) -> bool:
        """True when an erasure applied after the memory's last version: ForgetNamespace or
        ForgetSubject of its namespace, or ForgetSubject of a user its event is ``ABOUT``. A
        memory written after the erasure (the namespace is usable again) is not refused."""
        keys = [erased_key(item.versions[-1].namespace)]
        keys += [
            erased_subject_key(end.id)
            for rel in item.links
            for end in (rel.src, rel.dst)
            if end.kind is NodeKind.USER and rel.type == "ABOUT"
        ]
        last = max(max(v.created_at, v.updated_at) for v in item.versions)
        for key in keys:
            if key not in erasures:
                erasures[key] = erased_at(await self._ledger.get_setting(key))
            when = erasures[key]
            if when is not None and last <= when:
                return True
        return False

    @staticmethod
    def _add(entries: dict[str, NewEntry], agent: str, prefix: str, cmd: commands.Command) -> bool:
        """Adds the entry unless the batch has it already (keyed by what it stores)."""
        key = f"{prefix}:{commands.digest(cmd)[:40]}"
        if key in entries:
            return False
        entries[key] = NewEntry(uuid.uuid4().hex, agent, key, cmd)
        return True

    def _usable_vector(self, item: Exported) -> tuple[float, ...]:
        """The carried vector, when this gateway's embedder made it; else () (embed again)."""
        vec = item.versions[-1].embedding
        if vec is None or item.embedder != self._embedder:
            return ()
        return tuple(float(x) for x in np.asarray(vec, dtype=np.float32).reshape(-1))

    async def _fact_taken(self, head: Memory, claimed: dict[tuple[str, str], str]) -> bool:
        """True when another active memory (here, or earlier in the batch) holds head's fact."""
        if head.status is not Status.ACTIVE or not head.fact_key:
            return False
        key = (head.namespace, head.fact_key)
        if claimed.setdefault(key, head.id) != head.id:
            return True
        holder = await self._records.find_fact(*key)
        return holder is not None and holder.id != head.id

    def _check(self, item: Exported, where: str) -> None:
        versions = item.versions
        if not 1 <= len(versions) <= MAX_VERSIONS:
            raise InvalidArgument(f"{where}.versions: give 1..{MAX_VERSIONS}", field=where)
        head = versions[-1]
        if not head.id or len(head.id) > MAX_ID_CHARS:
            raise InvalidArgument(f"{where}: id must be 1..{MAX_ID_CHARS} chars", field=where)
        nsp.parse(head.namespace, f"{where}.namespace")
        previous = 0
        for v in versions:
            if (v.id, v.namespace) != (head.id, head.namespace):
                raise InvalidArgument(
                    f"{where}: every version needs the same id and namespace", field=where
                )
            if v.version <= previous:
                raise InvalidArgument(
                    f"{where}: versions must be >= 1 and increasing, oldest first", field=where
                )
            previous = v.version
            if v.layer not in LONG_TERM_LAYERS:
                raise InvalidArgument(f"{where}: layer must be long-term", field=where)
            if len(v.content) > self._max_content:
                raise InvalidArgument(
                    f"{where}: content is longer than {self._max_content} chars", field=where
                )
        if head.embedding is not None and head.embedding.size > MAX_EMBEDDING_DIM:
            raise InvalidArgument(
                f"{where}.embedding: at most {MAX_EMBEDDING_DIM} values", field=where
            )
        self._check_links(item, where)

    @staticmethod
    def _check_links(item: Exported, where: str) -> None:
        head = item.versions[-1]
        if len(item.links) > MAX_LINKS:
            raise InvalidArgument(f"{where}.links: at most {MAX_LINKS}", field=where)
        own = (NodeKind.EVENT, head.id)
        for rel in item.links:
            if not valid_relation_type(rel.type) or not rel.src.id or not rel.dst.id:
                raise InvalidArgument(
                    f"{where}.links: a link needs both ends and an UPPER_SNAKE type", field=where
                )
            if own not in ((rel.src.kind, rel.src.id), (rel.dst.kind, rel.dst.id)):
                raise InvalidArgument(
                    f"{where}.links: every link must start or end at this memory's event",
                    field=where,
                )


def _relate(rel: Relation) -> Relate:
    return Relate(rel.src, rel.type, rel.dst, rel.at, dict(rel.properties))
