"""The Redis ledger's memory-formation records: dialogue turns kept until they are mined for facts
(shared by every replica, so a session whose turns came through several replicas is mined as one),
the ids of the last mined ones (a turn recorded again is not kept twice), and per session how far
mining got and when its last turn came. One Lua script per operation on
the formation area's slot (``<prefix>:{lx}:``)::

    pos              string  the last position given to a turn
    o:<sk>           zset    positions of a session's unmined turns (sk = "<ns>\\x1f<session>")
    r:<sk>           hash    position -> "<turn id>\\x1f<turn JSON>"
    id:<sk>          hash    turn id -> position (a replayed turn is kept once)
    f:<sk>           zset    ids of the session's last mined turns, by position
    m:<sk>           hash    formed_upto, last_turn
    act              zset    sessions with unmined turns, by last turn (the idle trigger)
    cnt              zset    the same sessions by unmined turns (the every-N trigger)
    ns:<ns>          set     a namespace's sessions (erasure)
    tu:<turn id>     set     sessions holding that turn or its id (erasure by turn id)
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from gateway.core.model.candidates import FORMED_IDS_KEPT, DueSession, SessionTurns
from gateway.core.model.models import Turn, Zone
from stores.codec import dump_json, parse_json
from stores.redis_client import s
from stores.redis_ledger_base import RedisLedgerBase

SEP = "\x1f"

_TALLY = """
local function tally(b, sk)
  local n = redis.call('ZCARD', b .. 'o:' .. sk)
  if n == 0 then
    redis.call('ZREM', b .. 'act', sk); redis.call('ZREM', b .. 'cnt', sk)
  else
    redis.call('ZADD', b .. 'cnt', n, sk)
    local last = redis.call('HGET', b .. 'm:' .. sk, 'last_turn')
    if last then redis.call('ZADD', b .. 'act', last, sk) end
  end
end
local function drop_turn(b, sk, tid)
  local pos = redis.call('HGET', b .. 'id:' .. sk, tid)
  if pos then
    redis.call('HDEL', b .. 'id:' .. sk, tid)
    redis.call('HDEL', b .. 'r:' .. sk, pos)
    redis.call('ZREM', b .. 'o:' .. sk, pos)
  end
  redis.call('ZREM', b .. 'f:' .. sk, tid)
  redis.call('SREM', b .. 'tu:' .. tid, sk)
end
"""

# ARGV: base, sk, namespace, now, then per turn: id, JSON
_RECORD = (
    _TALLY
    + """
local b, sk = ARGV[1], ARGV[2]
for i = 5, #ARGV, 2 do
  local tid = ARGV[i]
  if redis.call('HEXISTS', b .. 'id:' .. sk, tid) == 0
      and not redis.call('ZSCORE', b .. 'f:' .. sk, tid) then
    local pos = redis.call('INCR', b .. 'pos')
    redis.call('HSET', b .. 'id:' .. sk, tid, pos)
    redis.call('HSET', b .. 'r:' .. sk, pos, tid .. '\\31' .. ARGV[i + 1])
    redis.call('ZADD', b .. 'o:' .. sk, pos, pos)
    redis.call('SADD', b .. 'tu:' .. tid, sk)
  end
end
redis.call('HSETNX', b .. 'm:' .. sk, 'formed_upto', 0)
redis.call('HSET', b .. 'm:' .. sk, 'last_turn', ARGV[4])
redis.call('SADD', b .. 'ns:' .. ARGV[3], sk)
tally(b, sk)
return 0
"""
)

# ARGV: base, sk, upto (0: all), limit (0: all). Returns {after, pos, row, pos, row, ...}
_UNFORMED = """
local b, sk = ARGV[1], ARGV[2]
local after = tonumber(redis.call('HGET', b .. 'm:' .. sk, 'formed_upto') or '0')
local hi = '+inf'
if tonumber(ARGV[3]) > 0 then hi = ARGV[3] end
local poss
if tonumber(ARGV[4]) > 0 then
  poss = redis.call('ZRANGEBYSCORE', b .. 'o:' .. sk, '(' .. after, hi, 'LIMIT', 0, ARGV[4])
else
  poss = redis.call('ZRANGEBYSCORE', b .. 'o:' .. sk, '(' .. after, hi)
end
local out = {tostring(after)}
for _, p in ipairs(poss) do
  out[#out + 1] = p
  out[#out + 1] = redis.call('HGET', b .. 'r:' .. sk, p)
end
return out
"""

_MARK_FORMED = (
    _TALLY
    + """
local b, sk, upto, kept = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local m, f = b .. 'm:' .. sk, b .. 'f:' .. sk
if redis.call('EXISTS', m) == 1 then
  local prev = tonumber(redis.call('HGET', m, 'formed_upto') or '0')
  if upto > prev then redis.call('HSET', m, 'formed_upto', upto) end
end
for _, p in ipairs(redis.call('ZRANGEBYSCORE', b .. 'o:' .. sk, '-inf', upto)) do
  local row = redis.call('HGET', b .. 'r:' .. sk, p)
  local tid = string.match(row, '^([^\\31]*)\\31')
  redis.call('HDEL', b .. 'id:' .. sk, tid)
  redis.call('HDEL', b .. 'r:' .. sk, p)
  redis.call('ZREM', b .. 'o:' .. sk, p)
  redis.call('ZADD', f, p, tid)  -- the id stays (and in tu:<tid>, for erasure)
end
for _, tid in ipairs(redis.call('ZRANGE', f, 0, -kept - 1)) do
  redis.call('SREM', b .. 'tu:' .. tid, sk)
end
redis.call('ZREMRANGEBYRANK', f, 0, -kept - 1)
tally(b, sk)
return 0
"""
)

# ARGV: base, idle_before, every_turns, limit. Returns {sk, upto, count, last_turn, ...}
_DUE = """
local b, idle, every, limit = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local picked, order = {}, {}
for _, sk in ipairs(redis.call('ZRANGEBYSCORE', b .. 'act', '-inf', '(' .. idle)) do
  if not picked[sk] then picked[sk] = true; order[#order + 1] = sk end
end
if every > 0 then
  for _, sk in ipairs(redis.call('ZRANGEBYSCORE', b .. 'cnt', every, '+inf')) do
    if not picked[sk] then picked[sk] = true; order[#order + 1] = sk end
  end
end
local out = {}
for _, sk in ipairs(order) do
  if #out >= 4 * limit then break end
  local top = redis.call('ZRANGE', b .. 'o:' .. sk, -1, -1)
  if #top > 0 then
    out[#out + 1] = sk
    out[#out + 1] = top[1]
    out[#out + 1] = redis.call('ZCARD', b .. 'o:' .. sk)
    out[#out + 1] = redis.call('HGET', b .. 'm:' .. sk, 'last_turn') or '0'
  end
end
return out
"""

# ARGV: base, "t" turn ids | "n" namespace, names
_DROP = (
    _TALLY
    + """
local b, how = ARGV[1], ARGV[2]
for i = 3, #ARGV do
  if how == 't' then
    local tid = ARGV[i]
    for _, sk in ipairs(redis.call('SMEMBERS', b .. 'tu:' .. tid)) do
      drop_turn(b, sk, tid)
      tally(b, sk)
    end
    redis.call('DEL', b .. 'tu:' .. tid)
  else
    local nskey = b .. 'ns:' .. ARGV[i]
    for _, sk in ipairs(redis.call('SMEMBERS', nskey)) do
      for _, tid in ipairs(redis.call('HKEYS', b .. 'id:' .. sk)) do
        redis.call('SREM', b .. 'tu:' .. tid, sk)
      end
      for _, tid in ipairs(redis.call('ZRANGE', b .. 'f:' .. sk, 0, -1)) do
        redis.call('SREM', b .. 'tu:' .. tid, sk)
      end
      redis.call('DEL', b .. 'o:' .. sk, b .. 'r:' .. sk, b .. 'id:' .. sk, b .. 'm:' .. sk,
                 b .. 'f:' .. sk)
      redis.call('ZREM', b .. 'act', sk); redis.call('ZREM', b .. 'cnt', sk)
    end
    redis.call('DEL', nskey)
  end
end
return 0
"""
)


def _turn(row: str) -> Turn:
    _tid, body = row.split(SEP, 1)
    d = parse_json(body)
    return Turn(d["i"], d["r"], d["c"], Zone.DIALOGUE, datetime.fromisoformat(d["at"]), d["m"])


class RedisFormation(RedisLedgerBase):
    """Mixed into ``RedisLedger``: the formation part of the ``Ledger`` contract."""

    SCRIPTS = {
        "record_turns": _RECORD,
        "unformed": _UNFORMED,
        "mark_formed": _MARK_FORMED,
        "due": _DUE,
        "drop_turns": _DROP,
    }

    async def record_turns(self, namespace: str, session_id: str, turns: Sequence[Turn]) -> None:
        if not turns:
            return
        import time

        args: list[str] = [namespace + SEP + session_id, namespace, repr(time.time())]
        for t in turns:
            body = {"i": t.id, "r": t.role, "c": t.content, "at": t.at.isoformat(), "m": t.metadata}
            args += [t.id, dump_json(body)]
        await self._run("record_turns", self._base("x"), *args)

    async def unformed_turns(
        self, namespace: str, session_id: str, upto: int = 0, limit: int = 0
    ) -> SessionTurns:
        out = await self._run(
            "unformed", self._base("x"), namespace + SEP + session_id, upto, limit
        )
        after = int(s(out[0]))
        positions = [int(s(p)) for p in out[1::2]]
        turns = [_turn(s(r)) for r in out[2::2]]
        last = positions[-1] if positions else after
        return SessionTurns(namespace, session_id, after, last, turns)

    async def mark_formed(self, namespace: str, session_id: str, upto: int) -> None:
        await self._run(
            "mark_formed", self._base("x"), namespace + SEP + session_id, upto, FORMED_IDS_KEPT
        )

    async def due_sessions(
        self, idle_before: float, every_turns: int, limit: int
    ) -> list[DueSession]:
        out = await self._run("due", self._base("x"), repr(idle_before), every_turns, limit)
        due = []
        for i in range(0, len(out), 4):
            ns, session = s(out[i]).split(SEP, 1)
            last = float(s(out[i + 3]))
            count = int(out[i + 2])
            idle = last < idle_before
            if idle or (every_turns > 0 and count >= every_turns):
                due.append(DueSession(ns, session, int(s(out[i + 1])), count, idle))
        return due[:limit]

    async def _drop_turns(self, how: str, names: Sequence[str]) -> None:
        """``how`` "t": these turn ids in every session; "n": every session of a namespace."""
        for i in range(0, len(names), 500):
            await self._run("drop_turns", self._base("x"), how, *names[i : i + 500])
