"""The gateway's control records on Redis, shared by every gateway replica (``ledger_backend =
"redis"``, the default when the journal is on Redis): audit log, write-id aliases, settings,
proposals, the review queue, pending facts, task steps (``redis_ledger_queues``) and the turns
waiting to be mined (``redis_formation``). Same contract as ``sqlite_ledger``.

Each area of records lives under one hash tag (one Redis Cluster slot, ``redis_ledger_base``); an
operation the SQLite ledger runs as one transaction is one Lua script here. Erasure (``scrub``)
touches several areas: each area's part is atomic, and running it again finishes an interrupted
one (every step is idempotent). Erased text leaves Redis' memory at once, its AOF when the AOF is
next rewritten (as for the journal; docs/SECURITY.md "Erasure").

Audit keys (``A`` = ``<prefix>:{la}:``)::

    A n             string  the last audit seq
    A rows          hash    seq (16 digits) -> JSON [at, agent, action, namespace, target, hits]
    A d / A dk      hash    seq -> free text (dk: rows recording an erasure, never scrubbed;
                            an erased row's text in d is ``ERASED_TEXT``)
    A all, A ag:<agent>, A ns:<namespace>   zset  seq by ``at`` (newest first: reverse order)
    A tg:<target>   set     seqs naming a memory or write id, or recalls that returned the memory
                            (erasure)
    A erased        hash    'n:<namespace>' | 't:<memory or write id>' -> when last erased: a
                            row stamped before (``ERASURE_SKEW_S``) that arrives later has no text

Aliases ``<prefix>:{lw}:a`` (hash write id -> memory id) and ``{lw}:rev:<memory id>`` (set);
settings ``<prefix>:{ls}:kv`` (hash key -> JSON), except the ``local`` keys, which describe this
process's own files (whether its vector index was closed cleanly) and stay in a file beside them.

Growth: like the SQLite ledger, rows stay until erased, except the audit log, which
``prune_audit`` trims to a retention.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Sequence
from typing import Any

from gateway.core.model.control import (
    ERASED_TEXT,
    ERASURE_SKEW_S,
    KEPT_AUDIT_ACTIONS,
    AuditEntry,
)
from stores.codec import dump_json, dump_json_ascii, parse_json
from stores.redis_client import mapped, s
from stores.redis_formation import RedisFormation
from stores.redis_ledger_queues import RedisQueues

log = logging.getLogger("memgate.ledger")

# ARGV: base, count, skew, marker, then per row: at, agent, namespace, target, row JSON, detail,
# kept (0|1), hits (JSON list). A row's text becomes the marker when its namespace, target or a
# memory it returned was erased after it was stamped.
_AUDIT = """
local b, n, skew, marker = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local function erased(key, at)
  local t = redis.call('HGET', b .. 'erased', key)
  return t and at <= tonumber(t) + skew
end
local first = redis.call('INCRBY', b .. 'n', n) - n
for i = 0, n - 1 do
  local j = 5 + 8 * i
  local seq = string.format('%016d', first + i + 1)
  local at = ARGV[j]
  local hits = cjson.decode(ARGV[j + 7])
  redis.call('HSET', b .. 'rows', seq, ARGV[j + 4])
  local text = ARGV[j + 5]
  if text ~= '' and ARGV[j + 6] ~= '1' then
    local t = tonumber(at)
    for ns in string.gmatch(ARGV[j + 2], '[^,]+') do
      if erased('n:' .. ns, t) then text = marker end
    end
    if ARGV[j + 3] ~= '' and erased('t:' .. ARGV[j + 3], t) then text = marker end
    for _, h in ipairs(hits) do
      if erased('t:' .. h, t) then text = marker end
    end
  end
  if text ~= '' then
    redis.call('HSET', b .. (ARGV[j + 6] == '1' and 'dk' or 'd'), seq, text)
  end
  redis.call('ZADD', b .. 'all', at, seq)
  redis.call('ZADD', b .. 'ag:' .. ARGV[j + 1], at, seq)
  for ns in string.gmatch(ARGV[j + 2], '[^,]+') do redis.call('ZADD', b .. 'ns:' .. ns, at, seq) end
  if ARGV[j + 3] ~= '' then redis.call('SADD', b .. 'tg:' .. ARGV[j + 3], seq) end
  for _, h in ipairs(hits) do redis.call('SADD', b .. 'tg:' .. h, seq) end
end
return first
"""

# ARGV: base, "t" targets | "n" namespace, now, marker, names. The free text of their rows
# becomes the marker, and when is remembered (for rows that arrive later, ``_AUDIT``).
_SCRUB_AUDIT = """
local b, how, marker = ARGV[1], ARGV[2], ARGV[4]
local n = 0
for i = 5, #ARGV do
  redis.call('HSET', b .. 'erased', how .. ':' .. ARGV[i], ARGV[3])
  local seqs
  if how == 't' then seqs = redis.call('SMEMBERS', b .. 'tg:' .. ARGV[i])
  else seqs = redis.call('ZRANGE', b .. 'ns:' .. ARGV[i], 0, -1) end
  for _, seq in ipairs(seqs) do
    local text = redis.call('HGET', b .. 'd', seq)
    if text and text ~= marker then
      redis.call('HSET', b .. 'd', seq, marker)
      n = n + 1
    end
  end
end
return n
"""

# ARGV: base, cutoff (epoch s), batch. Drops rows older than the cutoff; returns how many.
_PRUNE_AUDIT = """
local b = ARGV[1]
local seqs = redis.call('ZRANGEBYSCORE', b .. 'all', '-inf', '(' .. ARGV[2], 'LIMIT', 0, ARGV[3])
for _, seq in ipairs(seqs) do
  local row = cjson.decode(redis.call('HGET', b .. 'rows', seq))
  redis.call('ZREM', b .. 'ag:' .. row[2], seq)
  for ns in string.gmatch(row[4], '[^,]+') do redis.call('ZREM', b .. 'ns:' .. ns, seq) end
  if row[5] ~= '' then redis.call('SREM', b .. 'tg:' .. row[5], seq) end
  if row[6] then
    for _, h in ipairs(row[6]) do redis.call('SREM', b .. 'tg:' .. h, seq) end
  end
  redis.call('HDEL', b .. 'rows', seq)
  redis.call('HDEL', b .. 'd', seq)
  redis.call('HDEL', b .. 'dk', seq)
  redis.call('ZREM', b .. 'all', seq)
end
return #seqs
"""

# ARGV: base, cutoff. Forgets erasures older than the cutoff (rows stamped before them are
# older than the retention too).
_PRUNE_ERASED = """
local b = ARGV[1]
local all = redis.call('HGETALL', b .. 'erased')
local n = 0
for i = 1, #all, 2 do
  if tonumber(all[i + 1]) < tonumber(ARGV[2]) then n = n + redis.call('HDEL', b .. 'erased', all[i]) end
end
return n
"""

# ARGV: base, the key of a row set indexed under several namespaces at once ("ns:a,b", written
# before each namespace had the row): its rows join each namespace's set, and it goes.
_SPLIT_NAMES = """
local b, key = ARGV[1], ARGV[2]
local items = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
for ns in string.gmatch(string.sub(key, #b + 4), '[^,]+') do
  for i = 1, #items, 2 do redis.call('ZADD', b .. 'ns:' .. ns, items[i + 1], items[i]) end
end
redis.call('DEL', key)
return #items / 2
"""

_PAGE = 256


class RedisLedger(RedisQueues, RedisFormation):
    """``Ledger`` on Redis, shared by every replica that names the same prefix."""

    SCRIPTS = {
        "audit": _AUDIT,
        "scrub_audit": _SCRUB_AUDIT,
        "prune_audit": _PRUNE_AUDIT,
        "prune_erased": _PRUNE_ERASED,
        "split_names": _SPLIT_NAMES,
    }

    async def start(self) -> None:
        await super().start()
        await self._split_names()

    async def _split_names(self) -> None:
        """A row of several namespaces is indexed under each of them (``_AUDIT``); rows written
        before that, under the joined names only, are moved once (a flag key remembers it)."""
        b = self._base("a")
        r = self._client()
        async with mapped("ledger"):
            if await r.exists(b + "names"):
                return
            log.info("indexing older audit rows of several namespaces under each (once)")
            pattern = re.sub(r"([*?\[\]\\])", r"\\\1", b) + "ns:*,*"
            moved = 0
            async for key in r.scan_iter(match=pattern, count=1000):
                moved += int(await self._run("split_names", b, s(key)))
            await r.set(b + "names", "1")
            log.info("indexed %d older audit rows of several namespaces", moved)

    # ---- audit
    async def audit(self, entries: Sequence[AuditEntry]) -> None:
        if not entries:
            return
        now = time.time()
        args: list[Any] = [len(entries), repr(ERASURE_SKEW_S), ERASED_TEXT]
        for e in entries:
            at = e.at or now
            hits = list(dict.fromkeys(e.hits))
            fields = [at, e.agent_id, e.action, e.namespace, e.target]
            row = dump_json([*fields, hits] if hits else fields)
            kept = "1" if e.action in KEPT_AUDIT_ACTIONS else "0"
            args += [repr(at), e.agent_id, e.namespace, e.target, row, e.detail, kept]
            args.append(dump_json(hits) if hits else "[]")
        await self._run("audit", self._base("a"), *args)

    async def query_audit(
        self, agent_id: str, namespace: str, since: float, limit: int
    ) -> list[AuditEntry]:
        b = self._base("a")
        index = b + (f"ag:{agent_id}" if agent_id else f"ns:{namespace}" if namespace else "all")
        out: list[AuditEntry] = []
        offset = 0
        # one filter is the index itself; with two, rows of other namespaces are skipped
        page = _PAGE if agent_id and namespace else max(1, min(limit, _PAGE))
        r = self._client()
        async with mapped("ledger"):
            while len(out) < limit:
                seqs = await r.zrevrangebyscore(index, "+inf", since, start=offset, num=page)
                if not seqs:
                    break
                offset += len(seqs)
                pipe = r.pipeline(transaction=False)
                pipe.hmget(b + "rows", seqs)
                pipe.hmget(b + "d", seqs)
                pipe.hmget(b + "dk", seqs)
                rows, details, kept = await pipe.execute()
                for raw, d, dk in zip(rows, details, kept, strict=True):
                    if raw is None:
                        continue  # pruned meanwhile
                    at, agent, action, ns, target = parse_json(raw)[:5]  # (then hits)
                    if namespace and namespace not in ns.split(","):
                        continue
                    detail = s(d) if d is not None else s(dk) if dk is not None else ""
                    out.append(AuditEntry(agent, action, ns, target, detail, at=at))
                    if len(out) == limit:
                        break
        return out

    async def prune_audit(self, older_than_s: float) -> int:
        """Drop audit rows older than the retention; returns how many."""
        cutoff = repr(time.time() - older_than_s)
        await self._run("prune_erased", self._base("a"), cutoff)
        total = 0
        while n := int(await self._run("prune_audit", self._base("a"), cutoff, 2000)):
            total += n
        return total

    # ---- aliases
    async def set_aliases(self, pairs: Sequence[tuple[str, str]]) -> None:
        if not pairs:
            return
        b = self._base("w")
        async with mapped("ledger"):
            pipe = self._client().pipeline(transaction=False)
            pipe.hset(b + "a", mapping=dict(pairs))
            for write_id, memory_id in pairs:
                pipe.sadd(b + "rev:" + memory_id, write_id)
            await pipe.execute()

    async def resolve(self, write_id: str) -> str:
        return (await self.resolve_many([write_id]))[write_id]

    async def resolve_many(self, write_ids: Sequence[str]) -> dict[str, str]:
        unique = list(dict.fromkeys(write_ids))
        if not unique:
            return {}
        async with mapped("ledger"):
            got = await self._client().hmget(self._base("w") + "a", unique)
        return {w: s(m) if m is not None else w for w, m in zip(unique, got, strict=True)}

    # ---- small settings
    async def put_setting(self, key: str, value: dict[str, Any]) -> None:
        if self._local is not None and key in self._local.keys:
            self._local.put(key, value)
            return
        async with mapped("ledger"):
            await self._client().hset(self._base("s") + "kv", key, dump_json_ascii(value))

    async def get_setting(self, key: str) -> dict[str, Any] | None:
        if self._local is not None and key in self._local.keys:
            return self._local.get(key)
        async with mapped("ledger"):
            raw = await self._client().hget(self._base("s") + "kv", key)
        return parse_json(raw) if raw is not None else None

    # ---- erasure
    async def scrub(self, memory_ids: Sequence[str]) -> None:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return
        b = self._base("w")
        async with mapped("ledger"):
            pipe = self._client().pipeline(transaction=False)
            for mid in ids:
                pipe.smembers(b + "rev:" + mid)
            merged = [s(w) for ws in await pipe.execute() for w in ws]
        targets = list(dict.fromkeys(ids + merged))
        now = repr(time.time())
        for i in range(0, len(targets), 500):
            part = targets[i : i + 500]
            await self._run("scrub_audit", self._base("a"), "t", now, ERASED_TEXT, *part)
        await self._drop_queued("m", ids)
        await self._drop_turns("t", ids)

    async def scrub_namespace(self, namespace: str) -> None:
        now = repr(time.time())
        await self._run("scrub_audit", self._base("a"), "n", now, ERASED_TEXT, namespace)
        await self._drop_queued("n", [namespace])
        await self._drop_turns("n", [namespace])
        if namespace.startswith("task/"):
            async with mapped("ledger"):
                await self._client().delete(self._task_base(namespace[5:]) + "steps")
