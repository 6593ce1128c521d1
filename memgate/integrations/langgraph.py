"""``MemgateStore``: a LangGraph ``BaseStore`` whose items live in a memgate gateway.

    from gateway.client import GatewayClient
    from memgate.integrations.langgraph import MemgateStore

    store = MemgateStore(GatewayClient("127.0.0.1:50051", agent_id="master"))
    graph = builder.compile(store=store)

How LangGraph's model maps onto memgate's (and what that costs):

* **Namespaces.** A tuple that starts with a memgate namespace kind is stored in that memgate
  namespace: ``("user", "alice", "memories")`` → ``user/alice``, ``("agent", "a1", …)`` →
  ``agent/a1``, ``("task", "t9", …)`` → ``task/t9``, ``("global", …)`` → ``global``. Any other
  tuple, e.g. ``("memories", "alice")``, goes to the store's ``namespace`` (default: the agent's
  own ``agent/<agent id>``). The whole tuple is kept with the item, so reads return the tuple
  that was written. memgate's rules apply unchanged: the agent must be allowed to read and write
  the memgate namespace (a sub-agent's put into ``user/…`` or ``global`` becomes a proposal for
  the master, which ``put`` reports as ``MemgateStoreError``), ids must match memgate's id rule,
  and the gateway answers bad input with ``gateway.client.InvalidArgument``.
* **Items.** An item is an *episodic* memory of type ``langgraph:<tuple hash>:<key hash>``: its
  text (for search) is taken from ``index`` fields, else the value's ``content``/``text``/
  ``memory``/``data`` string, else the value as JSON; the value itself is kept as JSON in the
  memory's metadata (at most ``MAX_VALUE_CHARS`` characters). Episodic, because memgate never
  merges two episodes, so two keys with the same text stay two items. A put of an existing key
  writes the new version and forgets the old one (``get`` always returns the newest). Like every
  memory, text and value are screened: secrets and PII are redacted, and a value whose text reads
  as a prompt injection is quarantined (``put`` raises ``MemgateStoreError``).
* **Reads.** ``get`` looks the key up on the memgate namespace's timeline (filtered by the item's
  type). ``search`` with a ``query`` goes through memgate's Recall (ranked, scores in ``score``);
  without one it lists the newest items. ``list_namespaces`` and query-less ``search`` see the
  newest ``timeline_limit`` (≤ 1000) events of each memgate namespace they scan: the one a
  prefix pins, or the store's ``namespace`` plus ``scan``.
* **Lifetime.** Items decay like other episodes (importance 1.0: after about two months without
  a read they are archived; ``get`` still reads them, ``search(query=…)`` no longer returns them).
  There is no TTL (``supports_ttl`` is False).

``abatch`` runs ``batch`` in a worker thread (the blocking client is thread-safe), so one store
serves sync and async graphs on any event loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)
from langgraph.store.base.embed import get_text_at_path

from gateway.client import GatewayClient, types

KINDS = ("user", "agent", "task")
TYPE_PREFIX = "langgraph:"
TEXT_FIELDS = ("content", "text", "memory", "data")
CHUNK_CHARS = 1000  # under the gateway's 1024-char metadata values
MAX_CHUNKS = 28  # with the 3 other entries, under its 32 metadata entries
MAX_VALUE_CHARS = CHUNK_CHARS * MAX_CHUNKS
MAX_CONTENT_CHARS = 8000


class MemgateStoreError(RuntimeError):
    """A put the gateway accepted but did not store as an item (a proposal, quarantine)."""


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Place:
    """Where a LangGraph namespace lives in memgate."""

    namespace: tuple[str, ...]
    memgate: str  # the memgate namespace

    @property
    def family(self) -> str:
        """The type prefix every item of this namespace carries."""
        return f"{TYPE_PREFIX}{_digest(list(self.namespace))}:"

    def tag(self, key: str) -> str:
        return f"{self.family}{_digest(key)}"


def memgate_namespace(namespace: Sequence[str], default: str) -> str:
    """The memgate namespace a LangGraph namespace tuple is stored in."""
    if len(namespace) >= 2 and namespace[0] in KINDS:
        return f"{namespace[0]}/{namespace[1]}"
    if namespace and namespace[0] == "global":
        return "global"
    return default


def item_text(value: Mapping[str, Any], index: Sequence[str] | None) -> str:
    """The text memgate embeds and searches for an item."""
    if index:
        parts = [t for path in index for t in get_text_at_path(value, path)]
        text = "\n".join(p for p in parts if p)
    else:
        text = next((value[f] for f in TEXT_FIELDS if isinstance(value.get(f), str)), "")
    return (text.strip() or json.dumps(value, ensure_ascii=False, sort_keys=True))[
        :MAX_CONTENT_CHARS
    ]


def encode_value(namespace: tuple[str, ...], key: str, value: Mapping[str, Any]) -> dict[str, str]:
    raw = json.dumps(value, ensure_ascii=False, sort_keys=True)
    if len(raw) > MAX_VALUE_CHARS:
        raise ValueError(
            f"the value of {namespace}/{key} is {len(raw)} characters as JSON; a memgate item "
            f"holds at most {MAX_VALUE_CHARS}: store large blobs elsewhere and keep a reference"
        )
    chunks = {
        f"lg.v{i}": raw[at : at + CHUNK_CHARS]
        for i, at in enumerate(range(0, len(raw), CHUNK_CHARS))
    }
    return {"lg.ns": json.dumps(list(namespace)), "lg.key": key, **chunks}


def decode_item(
    metadata: Mapping[str, str], when: datetime | None, score: float | None = None
) -> SearchItem | None:
    """The LangGraph item a memgate memory's metadata holds (None: not one of ours)."""
    if "lg.ns" not in metadata or "lg.key" not in metadata:
        return None
    raw = "".join(metadata.get(f"lg.v{i}", "") for i in range(MAX_CHUNKS))
    try:
        namespace, value = tuple(json.loads(metadata["lg.ns"])), json.loads(raw)
    except ValueError:  # altered on the way in (e.g. redacted): not a readable item
        return None
    created = metadata.get("lg.created")
    updated = when or datetime.now(UTC)
    return SearchItem(
        namespace=namespace,
        key=metadata["lg.key"],
        value=value,
        created_at=datetime.fromisoformat(created) if created else updated,
        updated_at=updated,
        score=score,
    )


def read_item(mem: types.Memory) -> SearchItem | None:
    """The item a stored memory holds, unless it was forgotten."""
    if mem.status not in ("active", "archived"):
        return None
    return decode_item(mem.metadata, mem.created_at)


def _item(found: SearchItem) -> Item:
    return Item(
        namespace=found.namespace,
        key=found.key,
        value=found.value,
        created_at=found.created_at,
        updated_at=found.updated_at,
    )


def _matches(value: Any, condition: Any) -> bool:
    if not isinstance(condition, dict) or not all(k.startswith("$") for k in condition):
        return bool(value == condition)
    checks = {
        "$eq": lambda a, b: a == b,
        "$ne": lambda a, b: a != b,
        "$gt": lambda a, b: a is not None and a > b,
        "$gte": lambda a, b: a is not None and a >= b,
        "$lt": lambda a, b: a is not None and a < b,
        "$lte": lambda a, b: a is not None and a <= b,
    }
    for op, operand in condition.items():
        if op not in checks:
            raise ValueError(f"filter operator {op!r} is not supported: use {', '.join(checks)}")
        if not checks[op](value, operand):
            return False
    return True


def filter_matches(value: Mapping[str, Any], flt: Mapping[str, Any] | None) -> bool:
    return all(_matches(value.get(k), cond) for k, cond in (flt or {}).items())


def _path_matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(p in ("*", n) for p, n in zip(path, part, strict=True))


class MemgateStore(BaseStore):
    """A LangGraph store over a memgate gateway (see the module docstring for the mapping)."""

    supports_ttl = False

    def __init__(
        self,
        client: GatewayClient,
        *,
        namespace: str | None = None,
        scan: Sequence[str] = (),
        timeline_limit: int = 1000,
    ) -> None:
        self.client = client
        self.namespace = namespace or f"agent/{client.agent_id}"
        self.scan = list(dict.fromkeys([self.namespace, *scan]))
        self.timeline_limit = timeline_limit

    def place(self, namespace: Sequence[str]) -> Place:
        ns = tuple(namespace)
        return Place(ns, memgate_namespace(ns, self.namespace))

    # ---- BaseStore
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op.namespace, op.key))
            elif isinstance(op, PutOp):
                self._put(op)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise TypeError(f"unknown store operation {type(op).__name__}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    # ---- operations
    def _versions(self, place: Place, key: str) -> list[tuple[str, SearchItem]]:
        """This key's stored items as (memory id, item), oldest first: more than one only
        after an interrupted put."""
        found = []
        for event in self.client.timeline(place.memgate, limit=10, types=[place.tag(key)]):
            item = read_item(self.client.get(event.id))
            if item is not None and (item.namespace, item.key) == (place.namespace, key):
                found.append((event.id, item))
        return found

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        versions = self._versions(self.place(namespace), key)
        return _item(versions[-1][1]) if versions else None

    def _put(self, op: PutOp) -> None:
        place = self.place(op.namespace)
        previous = self._versions(place, op.key)
        stale = [memory_id for memory_id, _ in previous]
        if op.value is None:
            self._forget(stale, "deleted through the LangGraph store")
            return
        metadata = encode_value(place.namespace, op.key, op.value)
        if previous:
            metadata["lg.created"] = previous[0][1].created_at.isoformat()
        index = None if op.index is None or op.index is False else list(op.index)
        result = self.client.write_result(
            place.memgate,
            "episodic",
            item_text(op.value, index),
            type=place.tag(op.key),
            importance=1.0,
            metadata=metadata,
            wait=True,
        )
        if not result.id:
            why = (
                f"it became proposal {result.proposal_id} for the master to approve"
                if result.proposal_id
                else result.skipped or "the gateway did not store it"
            )
            raise MemgateStoreError(f"put {op.namespace}/{op.key} was not stored: {why}")
        if result.quarantined:
            self._forget([result.id], "quarantined LangGraph item")
            raise MemgateStoreError(
                f"put {op.namespace}/{op.key} was quarantined by memgate's injection screening"
            )
        self._forget([i for i in stale if i != result.id], "replaced by a newer LangGraph put")

    def _forget(self, ids: Iterable[str], reason: str) -> None:
        for memory_id in ids:
            self.client.forget(memory_id, reason)

    def _events(self, memgate: str) -> list[types.Event]:
        events = self.client.timeline(memgate, limit=self.timeline_limit)
        return [e for e in events if e.type.startswith(TYPE_PREFIX)]

    def _scanned(self, prefix: Sequence[str]) -> list[str]:
        pinned = memgate_namespace(tuple(prefix), "") if prefix else ""
        return [pinned] if pinned else self.scan

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        wanted = op.offset + op.limit
        found = self._ranked(op.query, prefix, wanted) if op.query else self._newest(prefix)
        kept = (i for i in found if filter_matches(i.value, op.filter))
        return list(itertools.islice(kept, op.offset, wanted))

    def _ranked(self, query: str, prefix: tuple[str, ...], wanted: int) -> Iterator[SearchItem]:
        """Items under ``prefix`` that memgate's Recall finds for ``query``, best first."""
        recall = self.client.recall(
            query, self._scanned(prefix), top_k=min(100, max(wanted * 3, 10)), layers=["episodic"]
        )
        for hit in recall.hits:
            if hit.type.startswith(TYPE_PREFIX):
                item = decode_item(hit.metadata, hit.event_time, hit.score)
                if item is not None and item.namespace[: len(prefix)] == prefix:
                    yield item

    def _newest(self, prefix: tuple[str, ...]) -> Iterator[SearchItem]:
        """Items under ``prefix``, newest first; read lazily, and a namespace seen not to
        match is not read again."""
        for memgate in self._scanned(prefix):
            family_matches: dict[str, bool] = {}
            for event in reversed(self._events(memgate)):
                family = event.type.rsplit(":", 1)[0]
                if family_matches.get(family) is False:
                    continue
                item = read_item(self.client.get(event.id))
                if item is None:
                    continue
                family_matches[family] = item.namespace[: len(prefix)] == prefix
                if family_matches[family]:
                    yield item

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = op.match_conditions or ()
        prefix = next((c.path for c in conditions if c.match_type == "prefix"), ())
        concrete = tuple(p for p in prefix[:2] if p != "*") if "*" not in prefix[:2] else ()
        namespaces: set[tuple[str, ...]] = set()
        for memgate in self._scanned(concrete):
            families: dict[str, str] = {}
            for event in self._events(memgate):
                families.setdefault(event.type.rsplit(":", 1)[0], event.id)
            for memory_id in families.values():
                item = read_item(self.client.get(memory_id))
                if item is not None:
                    namespaces.add(item.namespace)
        out = sorted(n for n in namespaces if all(_path_matches(n, c) for c in conditions))
        if op.max_depth is not None:
            out = sorted({n[: op.max_depth] for n in out})
        return out[op.offset : op.offset + op.limit]
