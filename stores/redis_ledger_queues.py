"""The Redis ledger's queues: proposals to shared namespaces, the review queue, pending facts
awaiting their second confirmation and batch-task steps. Each operation is one Lua script on its
area's slot (atomic, like the SQLite ledger's one transaction).

Keys (``P``/``R``/``F`` = ``<prefix>:{lp}:``, ``{lr}:``, ``{lf}:``; ``T`` = ``<prefix>:{lt:<id>}:``)::

    P p:<id>      hash   proposer, item, state, decided_by, reason, created, memory_id, ns
    P all         zset   id by created;  P st:<state>  zset  id by created
    P ns:<ns>     set    ids of a namespace;  P m:<memory id>  set  ids decided into it
    R q           zset   memory ids queued and not resolved, by created
    R i:<id>      hash   ns, reason, created;  R dec  hash  id -> decision (JSON)
    R ns:<ns>     set    queued ids of a namespace
    F f:<pid>     hash   namespace, fact_key, fact, sessions, evidence (JSON), confidence,
                         promoted_to, created
    F key         hash   "<ns>\\x1f<fact key>" -> pid;  F ns:<ns>, F pr:<memory id>  sets of pids
    T steps       hash   "<i>:n|s|o|e|a" name, state, output, error, attempts; "max" steps
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from gateway.core.model import commands
from gateway.core.model.control import PendingFact, Proposal, ReviewItem, TaskStep
from stores.codec import dump_json, parse_json
from stores.redis_client import mapped, s
from stores.redis_ledger_base import RedisLedgerBase

_LUA_ENC = """
local function enc(t) if #t == 0 then return '[]' end return cjson.encode(t) end
"""

_ADD_PROPOSAL = """
local b, id = ARGV[1], ARGV[2]
local k = b .. 'p:' .. id
if redis.call('EXISTS', k) == 1 then return 0 end
redis.call('HSET', k, 'proposer', ARGV[3], 'item', ARGV[4], 'state', 'pending',
           'decided_by', '', 'reason', '', 'created', ARGV[5], 'memory_id', '', 'ns', ARGV[6])
redis.call('ZADD', b .. 'all', ARGV[5], id)
redis.call('ZADD', b .. 'st:pending', ARGV[5], id)
redis.call('SADD', b .. 'ns:' .. ARGV[6], id)
return 1
"""

# ARGV: base, index ("" = the ids that follow), limit, ids. Returns per proposal found: id and
# its fields: proposer, item, state, decided_by, reason, created, memory_id (one reply, whatever the count).
_GET_PROPOSALS = """
local b = ARGV[1]
local ids = {}
if ARGV[2] ~= '' then
  ids = redis.call('ZRANGE', b .. ARGV[2], 0, tonumber(ARGV[3]) - 1)
else
  for i = 4, #ARGV do ids[#ids + 1] = ARGV[i] end
end
local out = {}
for _, id in ipairs(ids) do
  local f = redis.call('HMGET', b .. 'p:' .. id, 'proposer', 'item', 'state', 'decided_by',
                       'reason', 'created', 'memory_id')
  if f[1] then
    out[#out + 1] = id
    for j = 1, 7 do out[#out + 1] = f[j] end
  end
end
return out
"""

# ARGV: base, limit. Per queued item: memory id, namespace, reason.
_LIST_REVIEW = """
local b = ARGV[1]
local out = {}
for _, id in ipairs(redis.call('ZRANGE', b .. 'q', 0, tonumber(ARGV[2]) - 1)) do
  local f = redis.call('HMGET', b .. 'i:' .. id, 'ns', 'reason')
  if f[1] then out[#out + 1] = id; out[#out + 1] = f[1]; out[#out + 1] = f[2] end
end
return out
"""

_DECIDE = """
local b, id, state = ARGV[1], ARGV[2], ARGV[3]
local k = b .. 'p:' .. id
if redis.call('HGET', k, 'state') ~= 'pending' then return 0 end
local created = redis.call('HGET', k, 'created')
redis.call('HSET', k, 'state', state, 'decided_by', ARGV[4], 'reason', ARGV[5],
           'memory_id', ARGV[6])
redis.call('ZREM', b .. 'st:pending', id)
redis.call('ZADD', b .. 'st:' .. state, created, id)
if ARGV[6] ~= '' then redis.call('SADD', b .. 'm:' .. ARGV[6], id) end
return 1
"""

# ARGV: base, then "m" memory ids (proposals decided into them) or "n" a namespace, then names
_DROP_PROPOSALS = """
local b, how = ARGV[1], ARGV[2]
local ids = {}
for i = 3, #ARGV do
  local set = b .. (how == 'm' and 'm:' or 'ns:') .. ARGV[i]
  for _, id in ipairs(redis.call('SMEMBERS', set)) do ids[#ids + 1] = id end
  redis.call('DEL', set)
end
for _, id in ipairs(ids) do
  local k = b .. 'p:' .. id
  local f = redis.call('HMGET', k, 'state', 'ns', 'memory_id')
  if f[1] then
    redis.call('ZREM', b .. 'all', id)
    redis.call('ZREM', b .. 'st:' .. f[1], id)
    redis.call('SREM', b .. 'ns:' .. f[2], id)
    if f[3] ~= '' then redis.call('SREM', b .. 'm:' .. f[3], id) end
    redis.call('DEL', k)
  end
end
return #ids
"""

# ARGV: base, now, then per item memory id, namespace, reason
_ADD_REVIEW = """
local b = ARGV[1]
for i = 3, #ARGV, 3 do
  local id, k = ARGV[i], b .. 'i:' .. ARGV[i]
  if redis.call('EXISTS', k) == 0 then
    redis.call('HSET', k, 'ns', ARGV[i + 1], 'reason', ARGV[i + 2], 'created', ARGV[2])
    redis.call('SADD', b .. 'ns:' .. ARGV[i + 1], id)
    if redis.call('HEXISTS', b .. 'dec', id) == 0 then
      redis.call('ZADD', b .. 'q', 'NX', ARGV[2], id)
    end
  end
end
return 0
"""

_RESOLVE_REVIEW = """
local b, id = ARGV[1], ARGV[2]
if redis.call('EXISTS', b .. 'i:' .. id) == 0 then return 0 end
if redis.call('HSETNX', b .. 'dec', id, ARGV[3]) == 0 then return 0 end
redis.call('ZREM', b .. 'q', id)
return 1
"""

# ARGV: base, "m" memory ids or "n" namespace, names
_DROP_REVIEW = """
local b, how = ARGV[1], ARGV[2]
local ids = {}
for i = 3, #ARGV do
  if how == 'm' then ids[#ids + 1] = ARGV[i] else
    for _, id in ipairs(redis.call('SMEMBERS', b .. 'ns:' .. ARGV[i])) do ids[#ids + 1] = id end
  end
end
for _, id in ipairs(ids) do
  local k = b .. 'i:' .. id
  local ns = redis.call('HGET', k, 'ns')
  if ns then redis.call('SREM', b .. 'ns:' .. ns, id) end
  redis.call('DEL', k)
  redis.call('ZREM', b .. 'q', id)
  local d = redis.call('HGET', b .. 'dec', id)
  if d then  -- the decision stays (who, what, when), without the reviewer's words
    local t = cjson.decode(d)
    t[3] = ''
    redis.call('HSET', b .. 'dec', id, cjson.encode(t))
  end
end
return #ids
"""

# ARGV: base, pid, ns, fact key, fact, session id, evidence JSON, confidence, now
_SEE_FACT = (
    _LUA_ENC
    + """
local b, pid, ns, fk, sid = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[6]
local field = ns .. '\\31' .. fk
local rid = redis.call('HGET', b .. 'key', field)
if not rid then
  redis.call('HSET', b .. 'f:' .. pid, 'namespace', ns, 'fact_key', fk, 'fact', ARGV[5],
             'sessions', enc({sid}), 'evidence', ARGV[7], 'confidence', ARGV[8],
             'promoted_to', '', 'created', ARGV[9])
  redis.call('HSET', b .. 'key', field, pid)
  redis.call('SADD', b .. 'ns:' .. ns, pid)
  return pid
end
local k = b .. 'f:' .. rid
local f = redis.call('HMGET', k, 'sessions', 'evidence', 'confidence')
local sessions = cjson.decode(f[1])
local seen = false
for _, x in ipairs(sessions) do if x == sid then seen = true end end
if sid ~= '' and not seen then sessions[#sessions + 1] = sid end
local ev = cjson.decode(f[2])
local known = {}
for _, x in ipairs(ev) do known[x] = true end
for _, x in ipairs(cjson.decode(ARGV[7])) do
  if not known[x] then ev[#ev + 1] = x; known[x] = true end
end
local conf = f[3]
if tonumber(ARGV[8]) > tonumber(conf) then conf = ARGV[8] end
redis.call('HSET', k, 'sessions', enc(sessions), 'evidence', enc(ev), 'confidence', conf)
return rid
"""
)

_PROMOTE = """
local b, pid = ARGV[1], ARGV[2]
if redis.call('EXISTS', b .. 'f:' .. pid) == 0 then return 0 end
redis.call('HSET', b .. 'f:' .. pid, 'promoted_to', ARGV[3])
redis.call('SADD', b .. 'pr:' .. ARGV[3], pid)
return 1
"""

_DROP_FACTS = """
local b, how = ARGV[1], ARGV[2]
local pids = {}
for i = 3, #ARGV do
  local set = b .. (how == 'm' and 'pr:' or 'ns:') .. ARGV[i]
  for _, p in ipairs(redis.call('SMEMBERS', set)) do pids[#pids + 1] = p end
  redis.call('DEL', set)
end
for _, p in ipairs(pids) do
  local k = b .. 'f:' .. p
  local f = redis.call('HMGET', k, 'namespace', 'fact_key', 'promoted_to')
  if f[1] then
    redis.call('HDEL', b .. 'key', f[1] .. '\\31' .. f[2])
    redis.call('SREM', b .. 'ns:' .. f[1], p)
    if f[3] ~= '' then redis.call('SREM', b .. 'pr:' .. f[3], p) end
    redis.call('DEL', k)
  end
end
return #pids
"""

_START_TASK = """
local k = ARGV[1] .. 'steps'
for i = 2, #ARGV do
  local idx = i - 2
  if redis.call('HSETNX', k, idx .. ':n', ARGV[i]) == 1 then
    redis.call('HSET', k, idx .. ':s', 'pending', idx .. ':o', '', idx .. ':e', '', idx .. ':a', 0)
  end
end
local max = tonumber(redis.call('HGET', k, 'max') or '0')
if #ARGV - 1 > max then redis.call('HSET', k, 'max', #ARGV - 1) end
return 0
"""

_UPDATE_STEP = """
local k, idx = ARGV[1] .. 'steps', ARGV[2]
local st = redis.call('HGET', k, idx .. ':s')
if not st then return 0 end
if st == 'done' then return 1 end
redis.call('HSET', k, idx .. ':s', ARGV[3], idx .. ':o', ARGV[4], idx .. ':e', ARGV[5])
if ARGV[3] == 'running' then redis.call('HINCRBY', k, idx .. ':a', 1) end
return 1
"""


def _pending(pid: str, r: dict[str, str]) -> PendingFact:
    return PendingFact(
        pid,
        r["namespace"],
        r["fact_key"],
        r["fact"],
        parse_json(r["sessions"]),
        parse_json(r["evidence"]),
        float(r["confidence"]),
        r["promoted_to"],
    )


def _text(row: dict[Any, Any]) -> dict[str, str]:
    return {s(k): s(v) for k, v in row.items()}


class RedisQueues(RedisLedgerBase):
    """Mixed into ``RedisLedger``: proposals, review queue, pending facts, task steps."""

    SCRIPTS = {
        "add_proposal": _ADD_PROPOSAL,
        "get_proposals": _GET_PROPOSALS,
        "list_review": _LIST_REVIEW,
        "decide": _DECIDE,
        "drop_proposals": _DROP_PROPOSALS,
        "add_review": _ADD_REVIEW,
        "resolve_review": _RESOLVE_REVIEW,
        "drop_review": _DROP_REVIEW,
        "see_fact": _SEE_FACT,
        "promote": _PROMOTE,
        "drop_facts": _DROP_FACTS,
        "start_task": _START_TASK,
        "update_step": _UPDATE_STEP,
    }

    # ---- proposals
    async def add_proposal(self, proposal: Proposal) -> Proposal:
        p = proposal
        ns = getattr(p.item, "namespace", "")
        created = p.created or time.time()
        await self._run(
            "add_proposal",
            self._base("p"),
            p.id,
            p.proposer,
            commands.dumps(p.item),
            repr(created),
            ns,
        )
        stored = await self.get_proposal(p.id)
        assert stored is not None
        return stored

    async def get_proposal(self, pid: str) -> Proposal | None:
        found = await self._proposals("", 1, [pid])
        return found[0] if found else None

    async def list_proposals(self, state: str, limit: int) -> list[Proposal]:
        if limit <= 0:
            return []
        return await self._proposals(f"st:{state}" if state else "all", limit)

    async def proposal_backlog(self) -> tuple[int, float]:
        key = self._base("p") + "st:pending"
        async with mapped("ledger"):
            pipe = self._client().pipeline(transaction=False)
            pipe.zcard(key)
            pipe.zrange(key, 0, 0, withscores=True)
            n, head = await pipe.execute()
        return int(n), float(head[0][1]) if head else 0.0

    async def _proposals(self, index: str, limit: int, ids: Sequence[str] = ()) -> list[Proposal]:
        flat = await self._run("get_proposals", self._base("p"), index, limit, *ids)
        out = []
        for i in range(0, len(flat), 8):
            pid, proposer, raw, state, decided_by, reason, created, memory_id = map(
                s, flat[i : i + 8]
            )
            data = parse_json(raw)
            kind = "turn" if data.get("layer") == "working" else "memory"
            item = commands.decode(kind, data)
            assert isinstance(item, commands.MemoryWrite | commands.TurnAppend)
            out.append(
                Proposal(pid, proposer, item, state, decided_by, reason, float(created), memory_id)
            )
        return out

    async def decide_proposal(
        self, pid: str, state: str, decided_by: str, reason: str, memory_id: str = ""
    ) -> bool:
        done = await self._run("decide", self._base("p"), pid, state, decided_by, reason, memory_id)
        return int(done) == 1

    # ---- review queue
    async def add_review(self, items: Sequence[ReviewItem]) -> None:
        if not items:
            return
        args: list[Any] = [repr(time.time())]
        for i in items:
            args += [i.memory_id, i.namespace, i.reason]
        await self._run("add_review", self._base("r"), *args)

    async def list_review(self, limit: int) -> list[ReviewItem]:
        if limit <= 0:
            return []
        flat = [s(v) for v in await self._run("list_review", self._base("r"), limit)]
        return [ReviewItem(*flat[i : i + 3]) for i in range(0, len(flat), 3)]

    async def resolve_review(
        self, memory_id: str, state: str, decided_by: str, reason: str
    ) -> bool:
        decision = dump_json([state, decided_by, reason, time.time()])
        return int(await self._run("resolve_review", self._base("r"), memory_id, decision)) == 1

    # ---- pending facts
    async def see_fact(
        self,
        pid: str,
        namespace: str,
        fact_key: str,
        fact: str,
        session_id: str,
        evidence: Sequence[str],
        confidence: float,
    ) -> PendingFact:
        rid = await self._run(
            "see_fact",
            self._base("f"),
            pid,
            namespace,
            fact_key,
            fact,
            session_id,
            dump_json(list(evidence)),
            repr(float(confidence)),
            repr(time.time()),
        )
        got = await self.get_pending_fact(s(rid))
        assert got is not None
        return got

    async def get_pending_fact(self, pid: str) -> PendingFact | None:
        async with mapped("ledger"):
            raw = await self._client().hgetall(self._base("f") + "f:" + pid)
        return _pending(pid, _text(raw)) if raw else None

    async def pending_facts(self, namespace: str, limit: int) -> list[PendingFact]:
        base = self._base("f")
        async with mapped("ledger"):
            pids = sorted(s(p) for p in await self._client().smembers(base + "ns:" + namespace))
            pipe = self._client().pipeline(transaction=False)
            for pid in pids:
                pipe.hgetall(base + "f:" + pid)
            rows = await pipe.execute() if pids else []
        waiting = [
            (float(r["created"]), pid, r)
            for pid, r in ((p, _text(raw)) for p, raw in zip(pids, rows, strict=True) if raw)
            if not r["promoted_to"]
        ]
        waiting.sort(key=lambda x: (x[0], x[1]))
        return [_pending(pid, r) for _, pid, r in waiting[:limit]]

    async def mark_promoted(self, pid: str, memory_id: str) -> None:
        await self._run("promote", self._base("f"), pid, memory_id)

    # ---- batch tasks
    async def start_task(self, task_id: str, steps: Sequence[str]) -> None:
        await self._run("start_task", self._task_base(task_id), *steps)

    async def task_steps(self, task_id: str) -> list[TaskStep]:
        async with mapped("ledger"):
            raw = _text(await self._client().hgetall(self._task_base(task_id) + "steps"))
        out = []
        for i in range(int(raw.get("max", "0"))):
            if f"{i}:n" in raw:
                out.append(
                    TaskStep(
                        i,
                        raw[f"{i}:n"],
                        raw[f"{i}:s"],
                        raw[f"{i}:o"],
                        raw[f"{i}:e"],
                        int(raw[f"{i}:a"]),
                    )
                )
        return out

    async def update_step(
        self, task_id: str, index: int, state: str, output: str, error: str
    ) -> bool:
        base = self._task_base(task_id)
        return int(await self._run("update_step", base, index, state, output, error)) == 1

    # ---- erasure of the queues
    async def _drop_queued(self, how: str, names: Sequence[str]) -> None:
        """``how`` "m": rows of these memory ids; "n": every row of these namespaces."""
        for area, script in (("p", "drop_proposals"), ("r", "drop_review"), ("f", "drop_facts")):
            for i in range(0, len(names), 500):
                await self._run(script, self._base(area), how, *names[i : i + 500])
