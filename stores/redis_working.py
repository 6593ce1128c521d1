"""Working memory in Redis (``redis.asyncio``): a list per zone, a state hash, a set of seen ids.

Key scheme (one per session; the hash tag keeps all keys of a session in one cluster slot)::

    mg:wm:{<namespace>|<session>}:z:<zone>   list   JSON turns, oldest at the head (RPUSH)
    mg:wm:{<namespace>|<session>}:state      hash   session state
    mg:wm:{<namespace>|<session>}:seen       set    every turn id appended to the session

Session state counted per agent (``reserve_state``), in one slot for every agent (an update can
move a session from one agent's count to another's)::

    mg:wm:{budget}:a:<agent>                 hash   <namespace>|<session> -> "keys bytes expires"
    mg:wm:{budget}:o:<namespace>|<session>   string the agent the session counts for (TTL)

``%``, ``|``, ``{`` and ``}`` in namespace and session are percent-escaped, so neither can end the
hash tag early nor make two different (namespace, session) pairs share a key.

Every operation is one Lua script (EVALSHA, one round trip, atomic) that also refreshes EXPIRE on
every key of the session; ``ttl_seconds`` alone only reads. Append is idempotent by turn id via the
``seen`` set, which outlives trimming and ``take_oldest`` (but not ``clear`` of the whole session).

Connection refused, timeouts, other socket errors and a peer that does not speak RESP surface as
``BackendUnavailable("redis")``.
A failed connection is retried once (``ConnectionError`` only, e.g. a pooled connection the server
closed); timeouts are never retried, so a slow server cannot make ``take_oldest`` run twice.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import InvalidResponse
from redis.exceptions import TimeoutError as RedisTimeoutError

from gateway.core.model.errors import BackendUnavailable, InvalidArgument
from gateway.core.model.models import Turn, Zone
from gateway.core.model.state_budget import StateShare, StateTotals
from stores.codec import dump_json, parse_json

KEY_PREFIX = "mg:wm"
ZONES: tuple[Zone, ...] = tuple(Zone)  # KEYS[3 + i] of every script is the list of ZONES[i]
_ZONE_INDEX = {zone: i for i, zone in enumerate(ZONES)}

# KEYS of every script: [seen, state, zone list 1..4]; ARGV[1] is always the TTL in seconds.
_REFRESH = """
local function refresh(ttl)
  for k = 1, #KEYS do redis.call('EXPIRE', KEYS[k], ttl) end
end
"""

# ARGV: ttl, max_len, then (turn id, zone number 1..4, JSON turn) per turn.
# Returns the length of each zone list after the append, -1 for zones no turn went to.
_APPEND = (
    _REFRESH
    + """
local maxlen = tonumber(ARGV[2])
local touched = {}
for i = 3, #ARGV, 3 do
  local k = 2 + tonumber(ARGV[i + 1])
  if redis.call('SADD', KEYS[1], ARGV[i]) == 1 then
    redis.call('RPUSH', KEYS[k], ARGV[i + 2])
  end
  touched[k] = true
end
local lens = {}
for k = 3, #KEYS do
  if touched[k] then
    redis.call('LTRIM', KEYS[k], -maxlen, -1)
    lens[#lens + 1] = redis.call('LLEN', KEYS[k])
  else
    lens[#lens + 1] = -1
  end
end
refresh(ARGV[1])
return lens
"""
)

# ARGV: ttl, zone numbers wanted. Returns one list of JSON turns per wanted zone.
_WINDOW = (
    _REFRESH
    + """
local out = {}
for i = 2, #ARGV do
  out[#out + 1] = redis.call('LRANGE', KEYS[2 + tonumber(ARGV[i])], 0, -1)
end
refresh(ARGV[1])
return out
"""
)

# ARGV: ttl, zone number, n. Returns the popped JSON turns, oldest first.
_TAKE = (
    _REFRESH
    + """
local popped = redis.call('LPOP', KEYS[2 + tonumber(ARGV[2])], tonumber(ARGV[3]))
refresh(ARGV[1])
return popped or {}
"""
)

# ARGV: ttl, zone number (0 = the whole session).
_CLEAR = (
    _REFRESH
    + """
local zone = tonumber(ARGV[2])
if zone == 0 then
  redis.call('DEL', unpack(KEYS))
else
  redis.call('DEL', KEYS[2 + zone])
  refresh(ARGV[1])
end
return 1
"""
)

# ARGV: ttl, number of updates n, then n (field, value) pairs, then the fields to remove (one
# HDEL for all; the gateway bounds their number). Returns the state hash as a flat list.
_STATE = (
    _REFRESH
    + """
local n = tonumber(ARGV[2])
if n > 0 then redis.call('HSET', KEYS[2], unpack(ARGV, 3, 2 + 2 * n)) end
if #ARGV >= 3 + 2 * n then redis.call('HDEL', KEYS[2], unpack(ARGV, 3 + 2 * n)) end
refresh(ARGV[1])
return redis.call('HGETALL', KEYS[2])
"""
)

# KEYS: the agent's share hash, the session's owner key. ARGV: budget key base, agent, session
# field, keys, bytes, ttl, max keys, max bytes. The server's clock decides expiry (one clock for
# every replica). Returns {total keys, total bytes, refused ("keys" | "bytes" | "")}.
_RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local field, keys, size = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local held = redis.call('HGETALL', KEYS[1])
local tk, tb, mk, mb = keys, size, 0, 0
for i = 1, #held, 2 do
  local k, b, x = string.match(held[i + 1], '^(%d+) (%d+) (%S+)$')
  if tonumber(x) <= now then
    redis.call('HDEL', KEYS[1], held[i])
  elseif held[i] == field then
    mk, mb = tonumber(k), tonumber(b)
  else
    tk, tb = tk + tonumber(k), tb + tonumber(b)
  end
end
if tk > tonumber(ARGV[7]) and keys > mk then return {tk, tb, 'keys'} end
if tb > tonumber(ARGV[8]) and size > mb then return {tk, tb, 'bytes'} end
local owner = redis.call('GET', KEYS[2])
if owner and owner ~= ARGV[2] then redis.call('HDEL', ARGV[1] .. 'a:' .. owner, field) end
if keys > 0 or size > 0 then
  local ttl = tonumber(ARGV[6])
  redis.call('HSET', KEYS[1], field, string.format('%d %d %.3f', keys, size, now + ttl))
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('SET', KEYS[2], ARGV[2], 'EX', ttl)
else
  redis.call('HDEL', KEYS[1], field)
  redis.call('DEL', KEYS[2])
end
return {tk, tb, ''}
"""

# KEYS: the agent's share hash, the session's owner key. ARGV: agent, session field.
_RELEASE = """
redis.call('HDEL', KEYS[1], ARGV[2])
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1
"""

# Read-only: the largest TTL among the session's keys (-2 when none exists).
_TTL = """
local best = -2
for k = 1, #KEYS do
  local t = redis.call('TTL', KEYS[k])
  if t > best then best = t end
end
return best
"""


def _escape(part: str) -> str:
    return part.replace("%", "%25").replace("|", "%7C").replace("{", "%7B").replace("}", "%7D")


def session_keys(namespace: str, session_id: str) -> list[str]:
    """``[seen, state, <one list per zone in ZONES order>]`` of a session (the scripts' KEYS)."""
    if not namespace:
        raise InvalidArgument("namespace must not be empty", field="namespace")
    if not session_id:
        raise InvalidArgument("session_id must not be empty", field="session_id")
    base = f"{KEY_PREFIX}:{{{_escape(namespace)}|{_escape(session_id)}}}"
    return [f"{base}:seen", f"{base}:state", *(f"{base}:z:{zone.value}" for zone in ZONES)]


#: the hash tag of every key counting session state per agent (one cluster slot)
BUDGET_BASE = f"{KEY_PREFIX}:{{budget}}:"


def budget_keys(agent: str, namespace: str, session_id: str) -> tuple[list[str], str]:
    """``([agent's share hash, session's owner key], session field)`` for ``reserve_state``."""
    session_keys(namespace, session_id)  # the same checks
    field = f"{_escape(namespace)}|{_escape(session_id)}"
    return [f"{BUDGET_BASE}a:{agent}", f"{BUDGET_BASE}o:{field}"], field


def _text(value: bytes | str | None) -> str:
    return value.decode() if isinstance(value, bytes) else str(value or "")


def _utc(at: datetime) -> datetime:
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


def _encode(turn: Turn) -> str:
    return dump_json(
        {
            "id": turn.id,
            "role": turn.role,
            "content": turn.content,
            "at": _utc(turn.at).isoformat(),
            "metadata": dict(turn.metadata),
        }
    )


def _decode(raw: bytes, zone: Zone) -> Turn:
    d = parse_json(raw)
    return Turn(
        id=d["id"],
        role=d["role"],
        content=d["content"],
        zone=zone,
        at=_utc(datetime.fromisoformat(d["at"])),
        metadata=d.get("metadata") or {},
    )


# Erasure. KEYS as every script; ARGV: turn ids. Removes every turn with one of the ids from
# every zone list (the seen set keeps the ids, so a replay cannot bring them back). No refresh:
# erasing must not extend a session's life.
_REMOVE = """
local wanted = {}
for i = 1, #ARGV do wanted[ARGV[i]] = true end
local removed = 0
for k = 3, #KEYS do
  for _, raw in ipairs(redis.call('LRANGE', KEYS[k], 0, -1)) do
    local ok, turn = pcall(cjson.decode, raw)
    if ok and type(turn) == 'table' and wanted[turn['id']] then
      removed = removed + redis.call('LREM', KEYS[k], 0, raw)
    end
  end
end
return removed
"""

_GLOB_SPECIAL = str.maketrans({c: f"\\{c}" for c in "*?[]\\"})


def namespace_pattern(namespace: str) -> str:
    """A SCAN pattern matching every key of every session of ``namespace`` (and only those)."""
    return f"{KEY_PREFIX}:{{{_escape(namespace).translate(_GLOB_SPECIAL)}|*"


class RedisWorkingStore:
    """``WorkingStore`` over a Redis server (``redis://``, ``rediss://`` or ``unix://`` URL)."""

    backend = "redis"

    def __init__(
        self,
        url: str,
        ttl_seconds: int = 3600,
        socket_timeout: float = 2.0,
        max_connections: int = 32,
        cluster: bool = False,
    ) -> None:
        if ttl_seconds <= 0:
            raise ValueError("ttl_seconds must be positive")
        self._ttl = int(ttl_seconds)
        self._closed = False
        retry = Retry(
            ExponentialWithJitterBackoff(base=0.02, cap=0.2),
            retries=1,
            supported_errors=(RedisConnectionError,),
        )
        self._pool: aioredis.BlockingConnectionPool | None = None
        self._client: Any
        if cluster:  # every script's keys share the session's hash tag: one slot
            from redis.asyncio.cluster import RedisCluster

            self._client = RedisCluster.from_url(
                url,
                max_connections=max_connections,
                socket_timeout=socket_timeout,
                socket_connect_timeout=socket_timeout,
                socket_keepalive=True,
            )
        else:
            self._pool = aioredis.BlockingConnectionPool.from_url(
                url,
                max_connections=max_connections,
                timeout=socket_timeout,  # wait for a free pooled connection at most this long
                socket_timeout=socket_timeout,
                socket_connect_timeout=socket_timeout,
                socket_keepalive=True,
                retry=retry,
            )
            self._client = aioredis.Redis(connection_pool=self._pool)
        self._append = self._client.register_script(_APPEND)
        self._window = self._client.register_script(_WINDOW)
        self._take = self._client.register_script(_TAKE)
        self._clear = self._client.register_script(_CLEAR)
        self._state = self._client.register_script(_STATE)
        self._ttl_script = self._client.register_script(_TTL)
        self._remove = self._client.register_script(_REMOVE)
        self._reserve = self._client.register_script(_RESERVE)
        self._release = self._client.register_script(_RELEASE)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Nothing to do: connections are opened on first use (``ping`` probes the server)."""

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._client.aclose()
        if self._pool is not None:
            await self._pool.aclose()

    async def ping(self) -> None:
        with self._guard("ping"):
            await self._client.ping()

    async def durability(self) -> str:
        """Redis acknowledges a write before it reaches the disk unless the AOF is on and
        fsynced on every write (``appendonly yes``, ``appendfsync always``)."""
        try:
            with self._guard("durability"):
                config = await self._client.config_get("append*")
        except BackendUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - e.g. CONFIG renamed or forbidden by an ACL
            return f"cannot read Redis' persistence settings (CONFIG GET: {exc}); check them"
        got = {_text(k): _text(v) for k, v in config.items()}
        if got.get("appendonly") != "yes" or got.get("appendfsync") != "always":
            return (
                f"Redis runs with appendonly {got.get('appendonly', '?')}, appendfsync "
                f"{got.get('appendfsync', '?')}: an OS crash loses working-memory writes it "
                "acknowledged; set appendonly yes and appendfsync always"
            )
        return ""

    # ------------------------------------------------------------------ contract

    async def append(
        self, namespace: str, session_id: str, turns: Sequence[Turn], max_len: int
    ) -> dict[Zone, int]:
        keys = session_keys(namespace, session_id)
        if max_len < 1:
            raise InvalidArgument("max_len must be at least 1", field="max_len")
        args: list[str | int] = [self._ttl, max_len]
        for turn in turns:
            if not turn.id:
                raise InvalidArgument("every turn needs an id", field="turns")
            args += [turn.id, _ZONE_INDEX[Zone(turn.zone)] + 1, _encode(turn)]
        with self._guard("append"):
            lens = await self._append(keys=keys, args=args)
        touched = dict.fromkeys(Zone(t.zone) for t in turns)
        return {zone: int(lens[_ZONE_INDEX[zone]]) for zone in touched}

    async def window(
        self, namespace: str, session_id: str, zones: Sequence[Zone] | None = None
    ) -> dict[Zone, list[Turn]]:
        keys = session_keys(namespace, session_id)
        wanted = list(dict.fromkeys(Zone(z) for z in (zones if zones is not None else ZONES)))
        with self._guard("window"):
            lists = await self._window(
                keys=keys, args=[self._ttl, *(_ZONE_INDEX[z] + 1 for z in wanted)]
            )
        return {
            zone: [_decode(raw, zone) for raw in items]
            for zone, items in zip(wanted, lists, strict=True)
        }

    async def take_oldest(self, namespace: str, session_id: str, zone: Zone, n: int) -> list[Turn]:
        keys = session_keys(namespace, session_id)
        zone = Zone(zone)
        if n <= 0:
            return []
        with self._guard("take_oldest"):
            popped = await self._take(keys=keys, args=[self._ttl, _ZONE_INDEX[zone] + 1, n])
        return [_decode(raw, zone) for raw in popped]

    async def clear(self, namespace: str, session_id: str, zone: Zone | None = None) -> None:
        keys = session_keys(namespace, session_id)
        which = 0 if zone is None else _ZONE_INDEX[Zone(zone)] + 1
        with self._guard("clear"):
            await self._clear(keys=keys, args=[self._ttl, which])

    async def get_state(self, namespace: str, session_id: str) -> dict[str, str]:
        return await self.set_state(namespace, session_id, {})

    async def set_state(
        self, namespace: str, session_id: str, updates: dict[str, str], remove: Sequence[str] = ()
    ) -> dict[str, str]:
        keys = session_keys(namespace, session_id)
        args: list[str | int] = [self._ttl, len(updates)]
        for field, value in updates.items():
            args += [str(field), str(value)]
        args += [str(field) for field in remove]
        with self._guard("set_state"):
            flat = await self._state(keys=keys, args=args)
        return {flat[i].decode(): flat[i + 1].decode() for i in range(0, len(flat), 2)}

    async def ttl_seconds(self, namespace: str, session_id: str) -> int:
        keys = session_keys(namespace, session_id)
        with self._guard("ttl_seconds"):
            return int(await self._ttl_script(keys=keys))

    async def remove_turns(self, namespace: str, session_id: str, turn_ids: Sequence[str]) -> int:
        keys = session_keys(namespace, session_id)
        ids = list(dict.fromkeys(str(i) for i in turn_ids))
        if not ids:
            return 0
        with self._guard("remove_turns"):
            return int(await self._remove(keys=keys, args=ids))

    async def erase_namespace(self, namespace: str) -> int:
        """SCANs the namespace's keys (never KEYS: no long block of the server) and deletes
        them in batches; returns how many sessions had keys."""
        if not namespace:
            raise InvalidArgument("namespace must not be empty", field="namespace")
        sessions: set[str] = set()
        with self._guard("erase_namespace"):
            batch: list[bytes] = []
            async for key in self._client.scan_iter(match=namespace_pattern(namespace), count=500):
                batch.append(key)
                sessions.add(key.decode().rsplit("}", 1)[0])
                if len(batch) >= 500:
                    await self._client.delete(*batch)
                    batch = []
            if batch:
                await self._client.delete(*batch)
        return len(sessions)

    async def reserve_state(self, share: StateShare, max_keys: int, max_bytes: int) -> StateTotals:
        keys, field = budget_keys(share.agent, share.namespace, share.session_id)
        args = [BUDGET_BASE, share.agent, field, share.keys, share.size, self._ttl]
        with self._guard("reserve_state"):
            got = await self._reserve(keys=keys, args=[*args, max_keys, max_bytes])
        return StateTotals(int(got[0]), int(got[1]), _text(got[2]))

    async def release_state(self, agent: str, namespace: str, session_id: str) -> None:
        keys, field = budget_keys(agent, namespace, session_id)
        with self._guard("release_state"):
            await self._release(keys=keys, args=[agent, field])

    # ------------------------------------------------------------------ plumbing

    @contextlib.contextmanager
    def _guard(self, op: str) -> Iterator[None]:
        if self._closed:
            raise BackendUnavailable("redis", "working store is closed")
        try:
            yield
        except (RedisConnectionError, RedisTimeoutError, InvalidResponse, OSError) as exc:
            raise BackendUnavailable("redis", f"{op}: {type(exc).__name__}: {exc}") from exc
