"""What every part of the Redis ledger shares: the connection (one server or a Redis Cluster),
its Lua scripts and the key layout — one hash tag per area (``<prefix>:{l<area>}:``), so every
script touches one slot; a task's steps have a tag of their own (``{lt:<task id>}``).

A script gets one declared key of its area (so a cluster client routes it to the slot's master)
and the area's key prefix as ``ARGV[1]``; the other keys it touches are named from that prefix and
lie in the same slot."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from stores.codec import dump_json_ascii, parse_json
from stores.redis_client import connect, disconnect, mapped

#: the areas, each one hash tag (one slot): audit, write aliases, settings, proposals, review
#: queue, pending facts, formation transcript
AREAS = ("a", "w", "s", "p", "r", "f", "x")


class LocalSettings:
    """Settings that describe this process's own files (e.g. whether its vector index was closed
    cleanly): kept in a small JSON file beside them, not shared with other replicas."""

    def __init__(self, path: Path, keys: frozenset[str]) -> None:
        self.path = path
        self.keys = keys

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            data = parse_json(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return None
        value = data.get(key)
        return value if isinstance(value, dict) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        try:
            data = parse_json(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            data = {}
        data[key] = value
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(dump_json_ascii(data))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)


class RedisLedgerBase:
    backend = "redis"
    #: Lua sources by name; each part of the ledger adds its own
    SCRIPTS: dict[str, str] = {}

    def __init__(
        self,
        url: str,
        prefix: str = "mg",
        cluster: bool = False,
        local: LocalSettings | None = None,
    ) -> None:
        self._url = url
        self._prefix = prefix
        self._cluster = cluster
        self._local = local
        self._r: Any = None
        self._scripts: dict[str, Any] = {}

    # keys ---------------------------------------------------------------------------------------
    def _base(self, area: str) -> str:
        return f"{self._prefix}:{{l{area}}}:"

    def _task_base(self, task_id: str) -> str:
        return f"{self._prefix}:{{lt:{task_id}}}:"

    # lifecycle ----------------------------------------------------------------------------------
    async def start(self) -> None:
        if self._r is not None:
            return
        self._r = connect(self._url, self._cluster)
        for name, src in self._all_scripts().items():
            self._scripts[name] = self._r.register_script(src)
        await self.ping()

    async def close(self) -> None:
        if self._r is not None:
            await disconnect(self._r, self._cluster)
            self._r = None

    async def ping(self) -> None:
        async with mapped("ledger"):
            await self._client().ping()

    async def durability(self) -> str:
        return ""  # the Redis of working memory and the journal, whose persistence they check

    def _all_scripts(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for cls in reversed(type(self).__mro__):
            out.update(cls.__dict__.get("SCRIPTS", {}))
        return out

    def _client(self) -> Any:
        if self._r is None:
            from gateway.core.model.errors import BackendUnavailable

            raise BackendUnavailable("redis", "the ledger is not started (or closed)")
        return self._r

    async def _run(self, script: str, base: str, *args: Any) -> Any:
        """Run a script on the slot of the key prefix ``base`` (its ``ARGV[1]``); the declared
        key ``<base>_`` only routes it."""
        self._client()
        async with mapped("ledger"):
            return await self._scripts[script](keys=[base + "_"], args=[base, *args])
