"""LangGraph ``BaseStore`` over a memgate gateway: ``MemgateStore`` (blocking client) and
``AsyncMemgateStore`` (asyncio client), with the same behaviour.

    from gateway.client import GatewayClient
    from gateway.integrations.langgraph import MemgateStore

    store = MemgateStore(GatewayClient("127.0.0.1:50051", agent_id="master"),
                         namespaces=["user/alice"], index={"fields": ["text"]})
    graph = builder.compile(store=store)

How LangGraph's model maps onto memgate's (README, "LangGraph store", lists the differences
measured against LangGraph's ``InMemoryStore``):

* **Namespaces.** A tuple that starts with a memgate namespace kind is stored in that memgate
  namespace: ``("user", "alice", "memories")`` → ``user/alice``, ``("agent", "a1", …)`` →
  ``agent/a1``, ``("task", "t9", …)`` → ``task/t9``, ``("global", …)`` → ``global``. Any other
  tuple goes to the store's ``namespace`` (default: the agent's own ``agent/<agent id>``). Every
  label LangGraph allows is accepted: one memgate's id grammar cannot hold (``"dave smith"``) is
  mapped reversibly to ``lg.<base64url of its UTF-8>`` (``user/lg.ZGF2ZSBzbWl0aA``); LangGraph
  labels never contain ``.``, so the two forms never collide. The whole tuple is kept with the
  item, so reads return the tuple that was written.
* **Where reads look.** A prefix that names a memgate namespace (``("user", "alice")``) reads it.
  A shorter prefix (``("user",)``) or none (``()``) reads every namespace the store knows of:
  its ``namespace``, the ``namespaces`` given, and every memgate namespace a store with the same
  ``namespace`` ever put into (a directory kept in that namespace, type ``langgraph-dir``), each
  filtered by the prefix; a prefix of one kind (``("user",)``, ``("agent",)``, ``("task",)``)
  also reads the namespaces of that kind the gateway lists for the agent (``ListNamespaces``:
  those holding a memory it may read, the first ``MAX_LISTED``), so items another agent put into
  ``user/bob`` are found by ``search(("user",))``. ``()`` stays within what the store knows (a
  master's ``()`` over every namespace would read them all).
* **Items.** An item is an *episodic* memory of type ``langgraph:<tuple hash>:<key hash>``; its
  value is kept exactly as put (JSON, in the memory's metadata, at most ``MAX_VALUE_CHARS``).
  The text memgate embeds and searches is taken from the ``index`` fields (the put's, else the
  store's ``index={"fields": [...]}``), else the value's ``content``/``text``/``memory``/``data``
  string, else the value as JSON. ``index=False`` (or fields absent from the value) stores the
  item unindexed: search returns it only after the ranked items, with ``score=None``.
* **Screening.** memgate screens everything it stores; a value in which it finds a secret or PII
  would come back redacted, so such a put is refused (``MemgateStoreError`` naming what was found)
  and nothing changes; a value that reads as a prompt injection is refused the same way.
  A sub-agent's put into a shared namespace becomes a proposal for the master and is refused too.
* **Other memories.** By default the store sees only items put through LangGraph. With
  ``memgate_memories=True``, ``search(query=…)`` also returns the other memories recall finds in
  the namespaces it reads, as items ``(kind, id)`` / key = memory id / value ``{"content",
  "layer", "type", "memgate_id"}`` (read-only: a put under that key makes a LangGraph item).
* **Lifetime.** ``ttl`` as in LangGraph's SQLite and Postgres stores (its ``InMemoryStore`` has
  none): minutes per put, ``ttl={"default_ttl": …, "refresh_on_read": …}`` for the store. An
  expired item is invisible at once and forgotten when met (``sweep_ttl()`` forgets them all).
  A refresh rewrites the item with a new expiry, where this agent writes directly (its own
  namespace, a task's, or an item it wrote): a sub-agent's read never makes a proposal. Items
  without a ttl decay like other episodes (after about two months unread they are archived:
  ``get`` and query-less ``search`` still see them, ranked search no longer does).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import re
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)
from langgraph.store.base.embed import get_text_at_path

from gateway.client import GatewayClient, GatewayError, types
from gateway.client.aio import GatewayClient as AsyncGatewayClient

T = TypeVar("T")

KINDS = ("user", "agent", "task")
TYPE_PREFIX = "langgraph:"
DIRECTORY_TYPE = "langgraph-dir"
TEXT_FIELDS = ("content", "text", "memory", "data")
NOT_INDEXED = "LangGraph item (not indexed)"
CHUNK_CHARS = 1000  # under the gateway's 1024-char metadata values
#: with the 7 other entries (lg.ns, lg.key, lg.created, lg.updated, lg.noindex, lg.ttl,
#: lg.expires), under the gateway's 32 metadata entries
MAX_CHUNKS = 25
MAX_VALUE_CHARS = CHUNK_CHARS * MAX_CHUNKS
MAX_CONTENT_CHARS = 8000
MAX_KEY_CHARS = 1000
MAX_NAMESPACE_JSON_CHARS = 1000
MAX_INDEX_FIELDS = 16
MAX_FIELD_CHARS = 200
MAX_RECALL_NAMESPACES = 32  # the gateway's limit per recall
MAX_TTL_MINUTES = 10 * 365 * 24 * 60.0  # ten years
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}")  # memgate's id grammar
_MEMGATE_NS = re.compile(r"global|(agent|user|task)/" + _ID.pattern)


#: a short or empty prefix reads at most this many of the namespaces the gateway lists (each is
#: read on its own: a master over thousands of users names the ones it wants instead)
MAX_LISTED = 200


class MemgateStoreError(RuntimeError):
    """A put the gateway did not store as asked (redacted, quarantined, a proposal): nothing
    changed."""


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()[:16]


# ------------------------------------------------------------------ namespaces


def encode_label(label: str) -> str:
    """A LangGraph label as a memgate id: itself when memgate's grammar holds it, else
    ``lg.<base64url>`` (reversible), or ``lg.h.<hash>`` past memgate's 128 characters."""
    if _ID.fullmatch(label):
        return label
    coded = "lg." + base64.urlsafe_b64encode(label.encode()).rstrip(b"=").decode()
    if len(coded) <= 128:
        return coded
    return "lg.h." + hashlib.sha256(label.encode()).hexdigest()[:40]


def decode_label(memgate_id: str) -> str:
    """The LangGraph label a memgate id stands for (``encode_label`` reversed; a hashed label
    stays as it is: the item keeps its full tuple)."""
    if memgate_id.startswith("lg.") and "." not in memgate_id[3:]:
        raw = memgate_id[3:]
        return base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode()
    return memgate_id


def memgate_namespace(namespace: Sequence[str], default: str) -> str:
    """The memgate namespace a LangGraph namespace tuple is stored in."""
    if len(namespace) >= 2 and namespace[0] in KINDS:
        return f"{namespace[0]}/{encode_label(namespace[1])}"
    if namespace and namespace[0] == "global":
        return "global"
    return default


def langgraph_namespace(memgate: str) -> tuple[str, ...]:
    """The tuple under which a memgate namespace's own memories appear (``memgate_memories``)."""
    if memgate == "global":
        return ("global",)
    kind, _, owner = memgate.partition("/")
    return (kind, decode_label(owner))


def _check_namespace(namespace: tuple[str, ...], key: str) -> None:
    if len(key) > MAX_KEY_CHARS:
        raise ValueError(f"a key is at most {MAX_KEY_CHARS} characters (got {len(key)})")
    size = len(json.dumps(list(namespace)))
    if size > MAX_NAMESPACE_JSON_CHARS:
        raise ValueError(
            f"namespace {namespace[:3]}… is {size} characters as JSON; at most "
            f"{MAX_NAMESPACE_JSON_CHARS}"
        )


def check_fields(fields: Any, what: str) -> list[str]:
    """``index`` fields: a list of 1..16 LangGraph paths (``"text"``, ``"a.b"``, ``"tags[*]"``,
    ``"$"``), each 1..200 characters."""
    if isinstance(fields, str) or not isinstance(fields, Sequence):
        raise ValueError(f"{what} must be a list of field paths, e.g. ['text'], not {fields!r}")
    if not 1 <= len(fields) <= MAX_INDEX_FIELDS:
        raise ValueError(f"{what} holds 1..{MAX_INDEX_FIELDS} field paths (got {len(fields)})")
    for f in fields:
        if not isinstance(f, str) or not 1 <= len(f) <= MAX_FIELD_CHARS:
            raise ValueError(f"{what}: each path is a string of 1..{MAX_FIELD_CHARS} characters")
    return list(fields)


def _check_memgate_namespaces(names: Iterable[str], what: str) -> list[str]:
    out = []
    for name in names:
        if not isinstance(name, str) or not _MEMGATE_NS.fullmatch(name):
            raise ValueError(
                f"{what}: {name!r} is not a memgate namespace (agent/<id>, user/<id>, "
                "task/<id> or global)"
            )
        out.append(name)
    return out


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


# ------------------------------------------------------------------ values


def item_text(value: Mapping[str, Any], fields: Sequence[str] | None) -> str:
    """The text memgate embeds and searches for an item ('' : nothing to index)."""
    if fields:
        parts = [t for path in fields for t in get_text_at_path(value, path)]
        return "\n".join(p for p in parts if p).strip()[:MAX_CONTENT_CHARS]
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
    if "lg.ns" not in metadata or "lg.key" not in metadata or expired(metadata):
        return None
    raw = "".join(metadata.get(f"lg.v{i}", "") for i in range(MAX_CHUNKS))
    try:
        namespace, value = tuple(json.loads(metadata["lg.ns"])), json.loads(raw)
    except ValueError:  # not a readable item
        return None
    created = metadata.get("lg.created")
    stamped = metadata.get("lg.updated")
    updated = datetime.fromisoformat(stamped) if stamped else when or datetime.now(UTC)
    return SearchItem(
        namespace=namespace,
        key=metadata["lg.key"],
        value=value,
        created_at=datetime.fromisoformat(created) if created else updated,
        updated_at=updated,
        score=score,
    )


def expired(metadata: Mapping[str, str], now: datetime | None = None) -> bool:
    """Whether an item's TTL has run out."""
    at = metadata.get("lg.expires")
    return at is not None and datetime.fromisoformat(at) <= (now or datetime.now(UTC))


def check_ttl(ttl: Any) -> float | None:
    """A put's ``ttl``: None (no expiry) or minutes, more than 0, at most ten years."""
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not 0 < ttl <= MAX_TTL_MINUTES:
        raise ValueError(f"ttl is minutes, more than 0 and at most {MAX_TTL_MINUTES:.0f}: {ttl!r}")
    return float(ttl)


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


def _scored(found: SearchItem, score: float | None) -> SearchItem:
    return SearchItem(
        found.namespace, found.key, found.value, found.created_at, found.updated_at, score
    )


# ------------------------------------------------------------------ filters


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


def _under(namespace: tuple[str, ...], prefix: tuple[str, ...]) -> bool:
    return len(namespace) >= len(prefix) and all(
        p in ("*", n) for p, n in zip(prefix, namespace, strict=False)
    )


# ------------------------------------------------------------------ the shared logic


class _Blocking:
    """A blocking client's methods as coroutines that never suspend (``_run_now`` runs them)."""

    def __init__(self, client: GatewayClient) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        method = getattr(self._client, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            return method(*args, **kwargs)

        return call


def _run_now(coro: Coroutine[Any, Any, T]) -> T:
    """Runs a coroutine that never suspends (the store's logic over ``_Blocking``)."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coro.close()
    raise RuntimeError("a blocking store operation suspended")  # pragma: no cover


class _Engine:
    """The store's operations, written once as coroutines over either client."""

    def __init__(
        self,
        client: Any,
        agent_id: str,
        home: str,
        namespaces: Sequence[str],
        fields: list[str] | None,
        memgate_memories: bool,
        timeline_limit: int,
        ttl_in_use: bool = False,
    ) -> None:
        self.client = client
        self.agent_id = agent_id
        self.ttl_in_use = ttl_in_use  # a ttl config: search refreshes what it returns
        self.home = home
        self.configured = list(dict.fromkeys([home, *namespaces]))
        self.fields = fields
        self.memgate_memories = memgate_memories
        self.timeline_limit = timeline_limit
        self.directory: dict[str, str] = {}  # directory memory id -> memgate namespace

    def place(self, namespace: Sequence[str]) -> Place:
        ns = tuple(namespace)
        return Place(ns, memgate_namespace(ns, self.home))

    async def batch(self, ops: Iterable[Op]) -> list[Result]:
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(await self.get(op))
            elif isinstance(op, PutOp):
                await self.put(op)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(await self.search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(await self.list_namespaces(op))
            else:
                raise TypeError(f"unknown store operation {type(op).__name__}")
        return results

    # ---- get / put
    async def versions(self, place: Place, key: str) -> list[tuple[types.Memory, SearchItem]]:
        """This key's live stored items as (memory, item), oldest first: more than one only
        after an interrupted put. An expired one met on the way is forgotten."""
        found = []
        for event in await self.client.timeline(place.memgate, limit=10, types=[place.tag(key)]):
            mem = await self.client.get(event.id)
            item = read_item(mem)
            if item is None and mem.status == "active" and expired(mem.metadata):
                await self.forget_quietly(mem.id, "LangGraph item past its ttl")
            if item is not None and (item.namespace, item.key) == (place.namespace, key):
                found.append((mem, item))
        return found

    async def get(self, op: GetOp) -> Item | None:
        place = self.place(op.namespace)
        versions = await self.versions(place, op.key)
        if not versions:
            return None
        mem, item = versions[-1]
        if op.refresh_ttl:
            await self.refresh(place, mem)
        return _item(item)

    async def put(self, op: PutOp) -> None:
        _check_namespace(op.namespace, op.key)
        ttl = check_ttl(op.ttl)
        place = self.place(op.namespace)
        previous = await self.versions(place, op.key)
        stale = [mem.id for mem, _ in previous]
        if op.value is None:
            await self.forget(stale, "deleted through the LangGraph store")
            return
        metadata = encode_value(place.namespace, op.key, op.value)
        now = datetime.now(UTC)
        metadata["lg.updated"] = now.isoformat()
        metadata["lg.created"] = (previous[0][1].created_at if previous else now).isoformat()
        if ttl is not None:
            metadata["lg.ttl"] = repr(ttl)
            metadata["lg.expires"] = (now + timedelta(minutes=ttl)).isoformat()
        fields = self.fields if op.index is None else op.index
        text = "" if fields is False else item_text(op.value, fields or None)
        if not text:
            metadata["lg.noindex"] = "1"
        result = await self.client.write_result(
            place.memgate,
            "episodic",
            text or NOT_INDEXED,
            type=place.tag(op.key),
            importance=1.0,
            metadata=metadata,
            wait=True,
        )
        await self._refuse_unless_stored(op, result)
        await self.forget([i for i in stale if i != result.id], "replaced by a newer LangGraph put")
        await self.remember_place(place.memgate)

    # ---- ttl
    def may_rewrite(self, memgate: str, mem: types.Memory) -> bool:
        """Whether this agent's rewrite of ``mem`` is stored directly (never a proposal): its
        own namespace, a task's, or a memory it wrote itself."""
        return (
            memgate == f"agent/{self.agent_id}"
            or memgate.startswith("task/")
            or mem.source_agent == self.agent_id
        )

    async def refresh(self, place: Place, mem: types.Memory) -> None:
        """Restarts an item's ttl (LangGraph's refresh on read): the same item, rewritten with
        a new expiry; items without a ttl, or that this agent may only propose, are left."""
        minutes = mem.metadata.get("lg.ttl")
        if not minutes or not self.may_rewrite(place.memgate, mem):
            return
        metadata = dict(mem.metadata)
        metadata["lg.expires"] = (datetime.now(UTC) + timedelta(minutes=float(minutes))).isoformat()
        metadata.setdefault("lg.created", (mem.created_at or datetime.now(UTC)).isoformat())
        result = await self.client.write_result(
            place.memgate,
            "episodic",
            mem.content,
            type=mem.type,
            importance=1.0,
            metadata=metadata,
            wait=True,
        )
        if result.id and not result.quarantined and result.id != mem.id:
            await self.forget_quietly(mem.id, "LangGraph item refreshed")

    async def sweep(self) -> int:
        """Forgets every expired item in the namespaces the store knows; returns how many."""
        swept = 0
        for name in await self.readable(()):
            for event in await self.item_events(name):
                mem = await self.client.get(event.id)
                if mem.status == "active" and expired(mem.metadata):
                    swept += await self.forget_quietly(mem.id, "LangGraph item past its ttl")
        return swept

    async def forget_quietly(self, memory_id: str, reason: str) -> int:
        """Forgets when this agent may (1), else leaves it to a reader that may (0)."""
        try:
            await self.client.forget(memory_id, reason)
        except GatewayError:
            return 0
        return 1

    async def _refuse_unless_stored(self, op: PutOp, result: types.WriteResult) -> None:
        where = f"put {op.namespace}/{op.key}"
        if not result.id:
            why = (
                f"it became proposal {result.proposal_id} for the master to approve"
                if result.proposal_id
                else result.skipped or "the gateway did not store it"
            )
            raise MemgateStoreError(f"{where} was not stored: {why}")
        if result.quarantined or result.redactions:
            await self.forget([result.id], "refused LangGraph item")
            if result.quarantined:
                raise MemgateStoreError(
                    f"{where} was refused: memgate's screening reads it as a prompt injection; "
                    "nothing was stored"
                )
            raise MemgateStoreError(
                f"{where} was refused: memgate redacts {', '.join(result.redactions)} from what "
                "it stores, so the value would not come back as put; nothing was stored (keep "
                "secrets and personal data out of the value, or store a reference to them)"
            )

    async def forget(self, ids: Iterable[str], reason: str) -> None:
        for memory_id in ids:
            await self.client.forget(memory_id, reason)

    # ---- the directory of memgate namespaces the store put into
    async def remember_place(self, memgate: str) -> None:
        if memgate in self.configured or memgate in self.directory.values():
            return
        await self.read_directory()
        if memgate in self.directory.values():
            return
        result = await self.client.write_result(
            self.home,
            "episodic",
            f"LangGraph store directory entry {_digest(memgate)}",
            type=DIRECTORY_TYPE,
            importance=0.1,
            metadata={"lg.dir": memgate.encode().hex()},
            wait=True,
        )
        if result.id:  # a home the agent may only propose into keeps no directory
            self.directory[result.id] = memgate

    async def read_directory(self) -> None:
        events = await self.client.timeline(
            self.home, limit=self.timeline_limit, types=[DIRECTORY_TYPE]
        )
        for event in events:
            if event.id in self.directory:
                continue
            mem = await self.client.get(event.id)
            hexed = mem.metadata.get("lg.dir", "")
            try:
                name = bytes.fromhex(hexed).decode()
            except ValueError:
                continue
            if _MEMGATE_NS.fullmatch(name):
                self.directory[event.id] = name

    async def readable(self, prefix: Sequence[str]) -> list[str]:
        """The memgate namespaces that can hold items under ``prefix``."""
        prefix = tuple(prefix)
        if prefix and prefix[0] != "*":
            pinned = memgate_namespace(prefix, "") if "*" not in prefix[:2] else ""
            if pinned and not (prefix[0] in KINDS and len(prefix) < 2):
                return [pinned]
        await self.read_directory()
        listed: list[str] = []
        if prefix and prefix[0] in KINDS and prefix[0] != "global":
            found = await self.client.namespaces(prefix=f"{prefix[0]}/", limit=MAX_LISTED)
            listed = list(found.namespaces)
        known = list(dict.fromkeys([*self.configured, *self.directory.values(), *listed]))
        if not prefix or prefix[0] == "*":
            return known
        kind = prefix[0]
        if kind not in KINDS:  # a tuple that names no memgate namespace: in some store's home
            return known
        return [n for n in known if n == self.home or n.split("/")[0] == kind]

    # ---- search
    async def search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        names = await self.readable(prefix)
        wanted = op.offset + op.limit
        found: list[SearchItem] = []
        seen: set[tuple[tuple[str, ...], str]] = set()
        if op.query:
            for item in await self.ranked(op.query, names, prefix, wanted):
                if (item.namespace, item.key) not in seen and filter_matches(item.value, op.filter):
                    seen.add((item.namespace, item.key))
                    found.append(item)
        if len(found) < wanted:  # unranked (or every item, without a query): newest first
            async for item in self.newest(names, prefix):
                if (item.namespace, item.key) in seen or not filter_matches(item.value, op.filter):
                    continue
                seen.add((item.namespace, item.key))
                found.append(_scored(item, None))
                if len(found) >= wanted:
                    break
        page = found[op.offset : wanted]
        if op.refresh_ttl and self.ttl_in_use:
            for item in page:
                place = self.place(item.namespace)
                for mem, _ in (await self.versions(place, item.key))[-1:]:
                    await self.refresh(place, mem)
        return page

    async def ranked(
        self, query: str, names: list[str], prefix: tuple[str, ...], wanted: int
    ) -> list[SearchItem]:
        """Items under ``prefix`` that memgate's Recall finds for ``query``, best first."""
        hits: list[types.Hit] = []
        for at in range(0, len(names), MAX_RECALL_NAMESPACES):
            recall = await self.client.recall(
                query,
                names[at : at + MAX_RECALL_NAMESPACES],
                top_k=min(100, max(wanted * 3, 10)),
                layers=None if self.memgate_memories else ["episodic"],
            )
            hits.extend(recall.hits)
        hits.sort(key=lambda h: h.score, reverse=True)
        out = []
        for hit in hits:
            item = self.hit_item(hit)
            if item is not None and _under(item.namespace, prefix):
                out.append(item)
        return out

    def hit_item(self, hit: types.Hit) -> SearchItem | None:
        if hit.type.startswith(TYPE_PREFIX):
            if hit.metadata.get("lg.noindex"):
                return None
            return decode_item(hit.metadata, hit.event_time, hit.score)
        if not self.memgate_memories or hit.type == DIRECTORY_TYPE:
            return None
        when = hit.event_time or datetime.now(UTC)
        value = {"content": hit.content, "layer": hit.layer, "type": hit.type, "memgate_id": hit.id}
        return SearchItem(langgraph_namespace(hit.namespace), hit.id, value, when, when, hit.score)

    async def item_events(self, memgate: str) -> list[types.Event]:
        events = await self.client.timeline(memgate, limit=self.timeline_limit)
        return [e for e in events if e.type.startswith(TYPE_PREFIX)]

    async def newest(self, names: list[str], prefix: tuple[str, ...]) -> Any:
        """Items under ``prefix``, newest first; read lazily, and a namespace tuple seen not to
        match is not read again."""
        events = [e for name in names for e in await self.item_events(name)]
        events.sort(key=lambda e: e.at or datetime.min.replace(tzinfo=UTC), reverse=True)
        family_matches: dict[str, bool] = {}
        for event in events:
            family = event.type.rsplit(":", 1)[0]
            if family_matches.get(family) is False:
                continue
            item = read_item(await self.client.get(event.id))
            if item is None:
                continue
            family_matches[family] = _under(item.namespace, prefix)
            if family_matches[family]:
                yield item

    # ---- list_namespaces
    async def list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = op.match_conditions or ()
        prefix = next((tuple(c.path) for c in conditions if c.match_type == "prefix"), ())
        namespaces: set[tuple[str, ...]] = set()
        for memgate in await self.readable(prefix):
            families: dict[str, list[str]] = {}
            for event in await self.item_events(memgate):
                families.setdefault(event.type.rsplit(":", 1)[0], []).append(event.id)
            for ids in families.values():
                for memory_id in reversed(ids):  # the newest live item names the tuple
                    item = read_item(await self.client.get(memory_id))
                    if item is not None:
                        namespaces.add(item.namespace)
                        break
        out = sorted(n for n in namespaces if all(_path_matches(n, c) for c in conditions))
        if op.max_depth is not None:
            out = sorted({n[: op.max_depth] for n in out})
        return out[op.offset : op.offset + op.limit]


def _engine(
    client: Any,
    agent_id: str,
    namespace: str | None,
    namespaces: Sequence[str],
    index: IndexConfig | None,
    memgate_memories: bool,
    timeline_limit: int,
    ttl: TTLConfig | None = None,
) -> _Engine:
    home = _check_memgate_namespaces([namespace or f"agent/{agent_id}"], "namespace")[0]
    extra = _check_memgate_namespaces(namespaces, "namespaces")
    fields = None
    if index is not None:
        if not isinstance(index, Mapping):
            raise ValueError("index is a dict such as {'fields': ['text']}")
        if index.get("fields") is not None:
            fields = check_fields(index["fields"], "index['fields']")
        # memgate embeds with its own model: 'dims' and 'embed' are accepted and not used
    if not 1 <= timeline_limit <= 1000:
        raise ValueError("timeline_limit is 1..1000 (the gateway's timeline limit)")
    if ttl is not None:
        if not isinstance(ttl, Mapping):
            raise ValueError("ttl is a dict such as {'default_ttl': 60, 'refresh_on_read': True}")
        check_ttl(ttl.get("default_ttl"))
    return _Engine(
        client, agent_id, home, extra, fields, memgate_memories, timeline_limit, ttl is not None
    )


def _checked_ops(ops: Iterable[Op]) -> list[Op]:
    ops = list(ops)
    for op in ops:
        if isinstance(op, PutOp):
            if op.index not in (None, False):
                check_fields(op.index, "put(index=…)")
            check_ttl(op.ttl)
    return ops


class MemgateStore(BaseStore):
    """A LangGraph store over a memgate gateway through the blocking client (see the module
    docstring). ``namespace``: where tuples that name no memgate namespace go (default
    ``agent/<agent id>``); ``namespaces``: more memgate namespaces searched and listed (e.g.
    ``["user/alice", "global"]``); ``index``: LangGraph's index config, of which ``fields`` is
    used; ``memgate_memories``: ranked search also returns the gateway's other memories.
    ``abatch`` runs ``batch`` in a worker thread (the blocking client is thread-safe)."""

    supports_ttl = True

    def __init__(
        self,
        client: GatewayClient,
        *,
        namespace: str | None = None,
        namespaces: Sequence[str] = (),
        scan: Sequence[str] = (),
        index: IndexConfig | None = None,
        memgate_memories: bool = False,
        timeline_limit: int = 1000,
        ttl: TTLConfig | None = None,
    ) -> None:
        self.client = client
        self._engine = _engine(
            _Blocking(client),
            client.agent_id,
            namespace,
            [*namespaces, *scan],
            index,
            memgate_memories,
            timeline_limit,
            ttl,
        )
        self.namespace = self._engine.home
        self.index_config = index
        self.ttl_config = ttl

    def place(self, namespace: Sequence[str]) -> Place:
        return self._engine.place(namespace)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return _run_now(self._engine.batch(_checked_ops(ops)))

    def sweep_ttl(self) -> int:
        """Forgets the expired items of the namespaces the store knows; returns how many
        (expired items are invisible anyway: this frees them)."""
        return _run_now(self._engine.sweep())

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))


class AsyncMemgateStore(BaseStore):
    """``MemgateStore`` over the asyncio client (``gateway.client.aio.GatewayClient``): the same
    options and behaviour, ``abatch`` native. Use it on the event loop its client belongs to;
    ``batch`` (the sync methods) works from other threads while that loop runs, like LangGraph's
    own async stores."""

    supports_ttl = True

    def __init__(
        self,
        client: AsyncGatewayClient,
        *,
        namespace: str | None = None,
        namespaces: Sequence[str] = (),
        index: IndexConfig | None = None,
        memgate_memories: bool = False,
        timeline_limit: int = 1000,
        ttl: TTLConfig | None = None,
    ) -> None:
        self.client = client
        self._engine = _engine(
            client,
            client.agent_id,
            namespace,
            namespaces,
            index,
            memgate_memories,
            timeline_limit,
            ttl,
        )
        self.namespace = self._engine.home
        self.index_config = index
        self.ttl_config = ttl
        self._loop: asyncio.AbstractEventLoop | None = None
        with contextlib.suppress(RuntimeError):
            self._loop = asyncio.get_running_loop()

    def place(self, namespace: Sequence[str]) -> Place:
        return self._engine.place(namespace)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        self._loop = asyncio.get_running_loop()
        return await self._engine.batch(_checked_ops(ops))

    async def asweep_ttl(self) -> int:
        """``MemgateStore.sweep_ttl``, awaited."""
        return await self._engine.sweep()

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        loop = self._loop
        if loop is None or not loop.is_running():
            raise RuntimeError(
                "AsyncMemgateStore's sync methods need its event loop running in another "
                "thread: use the async methods (aget, aput, asearch …), or MemgateStore"
            )
        if _on_loop(loop):
            raise RuntimeError(
                "AsyncMemgateStore's sync methods were called on its event loop: use aget, "
                "aput, asearch … there"
            )
        future = asyncio.run_coroutine_threadsafe(self.abatch(list(ops)), loop)
        return future.result()


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


__all__ = [
    "AsyncMemgateStore",
    "MemgateStore",
    "MemgateStoreError",
    "decode_label",
    "encode_label",
]
