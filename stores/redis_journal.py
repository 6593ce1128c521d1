"""The write journal on Redis Streams, shared by every gateway replica: an acknowledged write is an
entry of a stream; apply workers of all replicas read through one consumer group.

Partitions. A write goes to partition ``crc32(namespace) % partitions``, one stream per partition,
so the writes of one namespace keep their order. Each partition has a lease (``SET NX PX``,
renewed in the background); only its holder reads the partition, so one replica at a time applies
a namespace's writes, in order. Replicas register in a member set and hold at most
``ceil(partitions / live replicas)`` leases, so partitions spread over the replicas.

Reclaim. Entries are read with ``XREADGROUP`` (they join the reader's pending-entries list) and
leave the stream once applied (``XACK`` + ``XDEL``). When a replica dies, its leases expire; the
next holder first takes the dead consumer's pending entries with ``XAUTOCLAIM`` (once they have
been idle ``reclaim_idle_ms``) and reads new entries only after no other consumer holds any, so the
order within a partition survives the failover. The holder also takes, at each lease renewal,
entries another consumer has left idle in its partitions since (a replica that had lost its
lease without noticing yet may still have read some). Applying twice is harmless (stores are
idempotent by ids), so at-least-once delivery applies each write once.

Keys (one hash tag per partition, so each partition's keys share one Redis Cluster slot)::

    <prefix>:{j<p>}:s      stream  pending entries; id "<counter>-0"; fields w k a p t
    <prefix>:{j<p>}:n      string  the partition's counter
    <prefix>:{j<p>}:i      hash    "<agent>\\x1f<key>" -> "<seq>\\x1f<write id>\\x1f<digest>"
    <prefix>:{j<p>}:st     hash    seq -> 0 pending | 1 applied | 2 dead
    <prefix>:{j<p>}:ik     hash    seq -> idempotency field (so pruning drops the key too)
    <prefix>:{j<p>}:done   zset    applied/dead seq -> when (pruning)
    <prefix>:{j<p>}:err    hash    dead seq -> error
    <prefix>:{j<p>}:lease  string  the replica applying this partition
    <prefix>:{jm}:members  zset    replica -> heartbeat expiry (ms)

On a Redis Cluster (``cluster=True``) every script touches one slot; a batch spanning partitions
is appended partition by partition (see ``_append_per_partition``); ``wait`` is not supported.

A sequence number is ``counter * 1024 + partition``: unique, increasing within a partition (the
order that matters); ``pending(after=…)`` is exact within a partition.

Durability (``durability``): ``aof`` — the append returns once Redis has it; it is on disk when
the server runs ``appendonly yes`` with ``appendfsync always`` (``everysec`` can lose the last
second on a power cut; a warning is logged at start). ``wait`` — after the append, ``WAIT
<wait_replicas> <wait_timeout_ms>``: acknowledged once that many replicas hold it (survives the
loss of the primary's disk, not of every copy at once); too few acks raise UNAVAILABLE — the entry
may still apply, and a retry with the same idempotency key returns it (duplicate).

Idempotency keys live in the partition of the write's namespace: a retry (the same command)
always finds its first write; a key reused for a different write to a namespace of another
partition is not detected as a conflict (it is stored as a new write).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import socket
import time
import uuid
import zlib
from collections.abc import Sequence
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from gateway.core.model import commands
from gateway.core.model.control import Accepted, EntryState, JournalEntry, NewEntry, readable
from gateway.core.model.errors import BackendUnavailable, Conflict, InvalidArgument

log = logging.getLogger("memgate.redis_journal")

MAX_PARTITIONS = 1024
GROUP = "apply"
SEP = "\x1f"

# KEYS: per partition group g (0-based): stream, counter, idem, state, ik at 5g+1..5g+5.
# ARGV: now, then per entry: group (1-based), write id, kind, agent, idem field, digest, payload.
# Returns per entry {seq, write id, duplicate, applied}, or {"conflict", idem field}.
_APPEND = """
local now = ARGV[1]
local seen = {}
for i = 2, #ARGV, 7 do
  local g = tonumber(ARGV[i]) - 1
  local f, d = ARGV[i + 4], ARGV[i + 5]
  if f ~= '' then
    local prior = redis.call('HGET', KEYS[5 * g + 3], f)
    if prior then
      local pd = string.match(prior, '[^\\31]*\\31[^\\31]*\\31(.*)')
      if pd ~= d then return {'conflict', f} end
    elseif seen[g .. '|' .. f] and seen[g .. '|' .. f] ~= d then
      return {'conflict', f}
    end
    seen[g .. '|' .. f] = d
  end
end
local out = {}
for i = 2, #ARGV, 7 do
  local g = tonumber(ARGV[i]) - 1
  local s, n, idem, st, ik = KEYS[5*g+1], KEYS[5*g+2], KEYS[5*g+3], KEYS[5*g+4], KEYS[5*g+5]
  local f = ARGV[i + 4]
  local prior = false
  if f ~= '' then prior = redis.call('HGET', idem, f) end
  if prior then
    local pseq, pwid = string.match(prior, '([^\\31]*)\\31([^\\31]*)\\31')
    local state = redis.call('HGET', st, pseq)
    out[#out + 1] = {pseq, pwid, 1, (state == '1') and 1 or 0}
  else
    local c = redis.call('INCR', n)
    local seq = c * 1024 + tonumber(string.match(s, '{j(%d+)}'))
    redis.call('XADD', s, c .. '-0', 'w', ARGV[i + 1], 'k', ARGV[i + 2], 'a', ARGV[i + 3],
               'p', ARGV[i + 6], 't', now)
    redis.call('HSET', st, seq, 0)
    if f ~= '' then
      redis.call('HSET', idem, f, seq .. '\\31' .. ARGV[i + 1] .. '\\31' .. ARGV[i + 5])
      redis.call('HSET', ik, seq, f)
    end
    out[#out + 1] = {tostring(seq), ARGV[i + 1], 0, 0}
  end
end
return out
"""

# KEYS: stream, state, done, err. ARGV: now, new state (1|2), error, then stream ids and seqs.
_SETTLE = """
local changed = 0
for i = 4, #ARGV, 2 do
  if redis.call('HGET', KEYS[2], ARGV[i + 1]) == '0' then
    redis.call('HSET', KEYS[2], ARGV[i + 1], ARGV[2])
    redis.call('ZADD', KEYS[3], ARGV[1], ARGV[i + 1])
    if ARGV[2] == '2' then redis.call('HSET', KEYS[4], ARGV[i + 1], ARGV[3]) end
    changed = changed + 1
  end
  redis.call('XACK', KEYS[1], 'apply', ARGV[i])
  redis.call('XDEL', KEYS[1], ARGV[i])
end
return changed
"""

# KEYS: idem, state, ik, done, err. ARGV: cutoff. Drops settled entries older than the cutoff.
_PRUNE = """
local seqs = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', ARGV[1], 'LIMIT', 0, 5000)
for _, seq in ipairs(seqs) do
  local f = redis.call('HGET', KEYS[3], seq)
  if f then redis.call('HDEL', KEYS[1], f); redis.call('HDEL', KEYS[3], seq) end
  redis.call('HDEL', KEYS[2], seq)
  redis.call('HDEL', KEYS[5], seq)
  redis.call('ZREM', KEYS[4], seq)
end
return #seqs
"""

# KEYS: lease. ARGV: me, ttl ms. 1 when we hold it (renewed), 0 otherwise.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2]); return 1
end
return 0
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def partition_of(namespace: str, partitions: int) -> int:
    """The journal partition (and so the apply order domain) of a namespace."""
    return zlib.crc32(namespace.encode()) % partitions


def _ns(cmd: commands.Command) -> str:
    return getattr(cmd, "namespace", "") or ""


def _stream_id(seq: int) -> str:
    return f"{seq // MAX_PARTITIONS}-0"


def _seq(stream_id: bytes | str, p: int) -> int:
    raw = stream_id.decode() if isinstance(stream_id, bytes) else stream_id
    return int(raw.split("-", 1)[0]) * MAX_PARTITIONS + p


class RedisJournal:
    """``Journal`` over Redis Streams, shared by every replica that names the same prefix."""

    shared = True
    #: lanes look for new entries this often when idle (another replica may have appended)
    idle_poll_s = 0.05

    def __init__(
        self,
        url: str,
        prefix: str = "mg",
        partitions: int = 8,
        durability: str = "aof",
        wait_replicas: int = 1,
        wait_timeout_ms: int = 1000,
        lease_ms: int = 5000,
        reclaim_idle_ms: int = 5000,
        consumer: str = "",
        cluster: bool = False,
    ) -> None:
        if not 1 <= partitions <= MAX_PARTITIONS:
            raise InvalidArgument(
                f"journal partitions must be 1..{MAX_PARTITIONS}", field="redis_journal_partitions"
            )
        if durability not in ("aof", "wait"):
            raise InvalidArgument(
                "journal durability must be 'aof' or 'wait'", field="redis_journal_durability"
            )
        if cluster and durability == "wait":
            raise InvalidArgument(
                "journal durability 'wait' is not supported on a Redis Cluster yet; use 'aof'",
                field="redis_journal_durability",
            )
        self._url = url
        self._cluster = cluster
        self._prefix = prefix
        self.partitions = partitions
        self._durability = durability
        self._wait_replicas = wait_replicas
        self._wait_timeout_ms = wait_timeout_ms
        self._lease_ms = lease_ms
        self._reclaim_idle_ms = reclaim_idle_ms
        self.consumer = consumer or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self._r: aioredis.Redis | None = None
        self._owned: set[int] = set()
        self._settled: set[int] = (
            set()
        )  # owned partitions whose earlier consumers' entries are ours
        self._lease_task: asyncio.Task[None] | None = None
        self._scripts: dict[str, Any] = {}
        #: entries acknowledged but not applied yet, over every replica (refreshed in background)
        self.pending_count = 0

    # keys -----------------------------------------------------------------
    def _k(self, p: int, name: str) -> str:
        return f"{self._prefix}:{{j{p}}}:{name}"

    @property
    def _members(self) -> str:
        return f"{self._prefix}:{{jm}}:members"

    @property
    def owned(self) -> frozenset[int]:
        return frozenset(self._owned)

    # lifecycle ------------------------------------------------------------
    async def start(self) -> None:
        if self._cluster:
            from redis.asyncio.cluster import RedisCluster

            self._r = RedisCluster.from_url(  # type: ignore[assignment]
                self._url, max_connections=64, socket_timeout=10, socket_connect_timeout=5
            )
        else:
            pool = aioredis.BlockingConnectionPool.from_url(
                self._url,
                max_connections=64,
                timeout=10,
                socket_timeout=10,
                socket_connect_timeout=5,
            )
            self._r = aioredis.Redis(connection_pool=pool)
        assert self._r is not None
        for name, src in (
            ("append", _APPEND),
            ("settle", _SETTLE),
            ("prune", _PRUNE),
            ("renew", _RENEW),
            ("release", _RELEASE),
        ):
            self._scripts[name] = self._r.register_script(src)
        async with _mapped():
            for p in range(self.partitions):
                with contextlib.suppress(ResponseError):  # BUSYGROUP: it exists already
                    await self._r.xgroup_create(self._k(p, "s"), GROUP, id="0", mkstream=True)
            if self._durability == "aof" and not self._cluster:
                await self._warn_unless_fsync_always()
            await self._balance()
            await self._refresh_pending()
        self._lease_task = asyncio.create_task(self._lease_loop(), name="journal-leases")

    async def close(self) -> None:
        if self._lease_task:
            self._lease_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._lease_task
            self._lease_task = None
        if self._r is not None:
            with contextlib.suppress(Exception):  # hand the partitions over at once
                for p in list(self._owned):
                    await self._scripts["release"](keys=[self._k(p, "lease")], args=[self.consumer])
                await self._r.zrem(self._members, self.consumer)
            if self._cluster:
                await self._r.aclose()
            else:
                await self._r.aclose(close_connection_pool=True)
            self._r = None
        self._owned.clear()
        self._settled.clear()

    async def _warn_unless_fsync_always(self) -> None:
        assert self._r is not None
        try:
            conf = await self._r.config_get("append*")
        except ResponseError:
            return  # CONFIG disabled (managed Redis): the operator vouches for it
        if conf.get("appendonly") != "yes" or conf.get("appendfsync") != "always":
            log.warning(
                "Redis runs appendonly=%s appendfsync=%s: an acknowledged write can be lost on a "
                "crash of the Redis host; set appendfsync always, or use journal durability "
                "'wait' with replicas",
                conf.get("appendonly"),
                conf.get("appendfsync"),
            )

    # leases ---------------------------------------------------------------
    async def _lease_loop(self) -> None:
        while True:
            await asyncio.sleep(self._lease_ms / 3000)
            try:
                await self._balance()
                await self._refresh_pending()
            except BackendUnavailable as exc:
                log.warning("journal leases not renewed: %s", exc.message)
            except Exception:  # noqa: BLE001 - keep renewing
                log.exception("journal lease loop failed; retrying")

    async def _balance(self) -> None:
        """Renew our leases, take free partitions up to our share, give back what is over it."""
        assert self._r is not None
        now_ms = int(time.time() * 1000)
        async with _mapped():
            await self._r.zadd(self._members, {self.consumer: now_ms + self._lease_ms})
            await self._r.zremrangebyscore(self._members, "-inf", now_ms)
            live = max(1, int(await self._r.zcard(self._members)))
            share = math.ceil(self.partitions / live)
            for p in list(self._owned):
                held = await self._scripts["renew"](
                    keys=[self._k(p, "lease")], args=[self.consumer, self._lease_ms]
                )
                if not held:
                    self._owned.discard(p)
                    self._settled.discard(p)
            while len(self._owned) > share:
                p = max(self._owned)
                await self._scripts["release"](keys=[self._k(p, "lease")], args=[self.consumer])
                self._owned.discard(p)
                self._settled.discard(p)
            # a replica that lost a lease it had not noticed yet may have read new entries of
            # the partition after we settled it: they would wait in its list for good
            for p in sorted(self._owned & self._settled):
                await self._claim_idle(p)
            start = zlib.crc32(self.consumer.encode()) % self.partitions
            for i in range(self.partitions):
                if len(self._owned) >= share:
                    break
                p = (start + i) % self.partitions
                if p in self._owned:
                    continue
                if await self._r.set(
                    self._k(p, "lease"), self.consumer, nx=True, px=self._lease_ms
                ):
                    # taken (back): whoever held it since may have left entries pending
                    self._settled.discard(p)
                    self._owned.add(p)

    async def _claim_idle(self, p: int) -> None:
        """Take the entries of partition ``p`` that other consumers have left idle."""
        assert self._r is not None
        cursor: Any = "0-0"
        while True:
            res = await self._r.execute_command(
                "XAUTOCLAIM", self._k(p, "s"), GROUP, self.consumer, self._reclaim_idle_ms,
                cursor, "COUNT", 500,
            )  # fmt: skip
            cursor = res[0]
            if cursor in (b"0-0", "0-0"):
                break

    async def _settle_ownership(self, p: int) -> bool:
        """Take over the pending entries earlier consumers left in partition ``p``; True once
        no other consumer holds any (only then may new entries be read, to keep the order)."""
        assert self._r is not None
        stream = self._k(p, "s")
        await self._claim_idle(p)
        info = await self._r.xpending(stream, GROUP)
        others = [
            c for c in info.get("consumers", []) if _s(c["name"]) != self.consumer and c["pending"]
        ]
        if others:
            return False
        if p not in self._owned:
            # given back while this ran: a later holder's entries may follow, so taking it
            # again must settle again (a stale mark read new entries past a dead consumer's)
            return False
        self._settled.add(p)
        return True

    async def _refresh_pending(self) -> None:
        assert self._r is not None
        async with self._r.pipeline(transaction=False) as pipe:
            for p in range(self.partitions):
                pipe.xlen(self._k(p, "s"))
            self.pending_count = sum(int(n) for n in await pipe.execute())

    # Journal ----------------------------------------------------------------
    async def append(self, entries: Sequence[NewEntry]) -> list[Accepted]:
        assert self._r is not None, "journal not started"
        if not entries:
            return []
        parts = [partition_of(_ns(e.command), self.partitions) for e in entries]
        groups = list(dict.fromkeys(parts))
        if self._cluster and len(groups) > 1:
            return await self._append_per_partition(entries, parts)
        keys: list[str] = []
        for p in groups:
            keys += [self._k(p, n) for n in ("s", "n", "i", "st", "ik")]
        args: list[Any] = [repr(time.time())]
        for e, p in zip(entries, parts, strict=True):
            args += [
                groups.index(p) + 1,
                e.write_id,
                e.kind,
                e.agent_id,
                f"{e.agent_id}{SEP}{e.idem_key}" if e.idem_key else "",
                commands.digest(e.command),
                commands.dumps(e.command),
            ]
        async with _mapped():
            rows = await self._scripts["append"](keys=keys, args=args)
            if rows and _s(rows[0]) == "conflict":
                key = _s(rows[1]).split(SEP, 1)[-1]
                raise Conflict(
                    f"idempotency_key {key!r} was already used for a different write; "
                    "use a new key for new content",
                    field="idempotency_key",
                )
            if self._durability == "wait":
                acked = await self._r.execute_command(
                    "WAIT", self._wait_replicas, self._wait_timeout_ms
                )
                if int(acked) < self._wait_replicas:
                    raise BackendUnavailable(
                        "redis",
                        f"only {acked} of {self._wait_replicas} replicas confirmed the journal "
                        "entry; retry with the same idempotency key",
                    )
        out = [
            Accepted(seq=int(r[0]), write_id=_s(r[1]), duplicate=bool(r[2]), applied=bool(r[3]))
            for r in rows
        ]
        self.pending_count += sum(not a.duplicate for a in out)
        return out

    async def _append_per_partition(
        self, entries: Sequence[NewEntry], parts: list[int]
    ) -> list[Accepted]:
        """On a Redis Cluster one script may only touch one slot: a batch spanning partitions
        is appended one partition at a time, after checking every idempotency key first. All
        or none holds unless Redis fails between two partitions (then a retry with the same
        keys completes the batch: the partitions already written answer as duplicates)."""
        assert self._r is not None
        async with _mapped():
            for e, p in zip(entries, parts, strict=True):
                if not e.idem_key:
                    continue
                prior = await self._r.hget(self._k(p, "i"), f"{e.agent_id}{SEP}{e.idem_key}")
                if prior and _s(prior).split(SEP)[2] != commands.digest(e.command):
                    raise Conflict(
                        f"idempotency_key {e.idem_key!r} was already used for a different "
                        "write; use a new key for new content",
                        field="idempotency_key",
                    )
        out: dict[int, Accepted] = {}
        for p in dict.fromkeys(parts):
            idx = [i for i, q in enumerate(parts) if q == p]
            for i, accepted in zip(idx, await self.append([entries[i] for i in idx]), strict=True):
                out[i] = accepted
        return [out[i] for i in range(len(entries))]

    async def pending(
        self, limit: int, kinds: Sequence[str] = (), after: int = 0
    ) -> list[JournalEntry]:
        """The oldest entries not applied yet of the partitions this replica holds."""
        assert self._r is not None
        found: list[tuple[int, str, str, str, str]] = []
        async with _mapped():
            for p in sorted(self._owned):
                if p not in self._settled and not await self._settle_ownership(p):
                    continue
                stream = self._k(p, "s")
                # deliver new entries to us (they join our pending list), then read our list
                await self._r.xreadgroup(GROUP, self.consumer, {stream: ">"}, count=limit * 4)
                start = max(0, (after - p) // MAX_PARTITIONS) if after else 0
                got: Any = await self._r.xreadgroup(
                    GROUP, self.consumer, {stream: f"{start}-0"}, count=limit * 4
                )
                for _, items in got or []:
                    for sid, fields in items:
                        if not fields:
                            continue  # deleted after delivery: applied already
                        seq = _seq(sid, p)
                        kind = _s(fields[b"k"])
                        if seq <= after or (kinds and kind not in kinds):
                            continue
                        found.append(
                            (seq, _s(fields[b"w"]), kind, _s(fields[b"a"]), _s(fields[b"p"]))
                        )
        found.sort()
        return readable(found[:limit])

    async def mark_applied(self, seqs: Sequence[int]) -> None:
        self.pending_count -= await self._settle(seqs, EntryState.APPLIED, "")
        self.pending_count = max(0, self.pending_count)

    async def mark_dead(self, seq: int, error: str) -> None:
        self.pending_count -= await self._settle([seq], EntryState.DEAD, error[:500])
        self.pending_count = max(0, self.pending_count)

    async def _settle(self, seqs: Sequence[int], state: int, error: str) -> int:
        assert self._r is not None
        by_part: dict[int, list[int]] = {}
        for seq in seqs:
            by_part.setdefault(seq % MAX_PARTITIONS, []).append(int(seq))
        changed = 0
        now = repr(time.time())
        async with _mapped():
            for p, part in by_part.items():
                args: list[Any] = [now, state, error]
                for seq in part:
                    args += [_stream_id(seq), seq]
                keys = [self._k(p, n) for n in ("s", "st", "done", "err")]
                changed += int(await self._scripts["settle"](keys=keys, args=args))
        return changed

    async def erase_pending(self, namespace: str, write_ids: Sequence[str], before_seq: int) -> int:
        """Erasure: pending writes and turns before ``before_seq`` of ``namespace`` (or with one
        of ``write_ids``) leave their stream (``XDEL``, so no copy stays in Redis but the AOF until
        it is rewritten) and are marked dead, across every partition."""
        assert self._r is not None
        wanted = set(write_ids)
        doomed: list[int] = []
        async with _mapped():
            for p in range(self.partitions):
                items: Any = await self._r.xrange(self._k(p, "s"), "-", "+")
                for sid, fields in items or []:
                    if not fields:
                        continue
                    seq = _seq(sid, p)
                    kind = _s(fields[b"k"])
                    if seq >= before_seq or kind not in ("memory", "turn"):
                        continue
                    if _s(fields[b"w"]) in wanted or (
                        namespace and commands.namespace_of(_s(fields[b"p"])) == namespace
                    ):
                        doomed.append(seq)
        if not doomed:
            return 0
        n = await self._settle(doomed, EntryState.DEAD, "erased before it was applied")
        self.pending_count = max(0, self.pending_count - n)
        return n

    async def state(self, seq: int) -> int:
        return (await self.states([seq]))[int(seq)]

    async def states(self, seqs: Sequence[int]) -> dict[int, int]:
        assert self._r is not None
        unique = list(dict.fromkeys(int(s) for s in seqs))
        if not unique:
            return {}
        async with _mapped(), self._r.pipeline(transaction=False) as pipe:
            for seq in unique:
                p = seq % MAX_PARTITIONS
                if p >= self.partitions:
                    pipe.echo("")  # not a partition of ours: unknown
                else:
                    pipe.hget(self._k(p, "st"), str(seq))
            values = await pipe.execute()
        return {
            seq: int(v) if v not in (None, b"", "") else EntryState.UNKNOWN
            for seq, v in zip(unique, values, strict=True)
        }

    async def counts(self) -> tuple[int, int]:
        assert self._r is not None
        async with _mapped(), self._r.pipeline(transaction=False) as pipe:
            for p in range(self.partitions):
                pipe.xlen(self._k(p, "s"))
                pipe.hlen(self._k(p, "st"))
            raw = [int(v) for v in await pipe.execute()]
        pending = sum(raw[0::2])
        return pending, sum(raw[1::2]) - pending

    async def prune(self, older_than_s: float) -> int:
        assert self._r is not None
        cutoff = repr(time.time() - older_than_s)
        total = 0
        async with _mapped():
            for p in range(self.partitions):
                keys = [self._k(p, n) for n in ("i", "st", "ik", "done", "err")]
                while True:
                    n = int(await self._scripts["prune"](keys=keys, args=[cutoff]))
                    total += n
                    if n < 5000:
                        break
        return total

    async def oldest_pending_age(self) -> float:
        assert self._r is not None
        async with _mapped(), self._r.pipeline(transaction=False) as pipe:
            for p in range(self.partitions):
                pipe.xrange(self._k(p, "s"), count=1)
            heads = await pipe.execute()
        created = [float(items[0][1][b"t"]) for items in heads if items]
        return max(0.0, time.time() - min(created)) if created else 0.0


def _s(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


@contextlib.asynccontextmanager
async def _mapped() -> Any:
    """Socket-level Redis failures surface as ``BackendUnavailable("redis")``."""
    try:
        yield
    except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
        raise BackendUnavailable("redis", f"journal: {exc}") from exc
