"""One way to open a Redis connection for the shared stores (a single server or a Redis Cluster)
and to map its socket failures to ``BackendUnavailable``."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from gateway.core.model.errors import BackendUnavailable


def connect(url: str, cluster: bool = False, max_connections: int = 64) -> Any:
    """A client for ``url``: ``RedisCluster`` (it follows the cluster's slot map from any node)
    when ``cluster``, else a blocking pool of ``max_connections``."""
    if cluster:
        from redis.asyncio.cluster import RedisCluster

        return RedisCluster.from_url(
            url, max_connections=max_connections, socket_timeout=10, socket_connect_timeout=5
        )
    pool = aioredis.BlockingConnectionPool.from_url(
        url,
        max_connections=max_connections,
        timeout=10,
        socket_timeout=10,
        socket_connect_timeout=5,
    )
    return aioredis.Redis(connection_pool=pool)


async def disconnect(client: Any, cluster: bool) -> None:
    if cluster:
        await client.aclose()
    else:
        await client.aclose(close_connection_pool=True)


@contextlib.asynccontextmanager
async def mapped(what: str) -> AsyncIterator[None]:
    """Socket-level Redis failures surface as ``BackendUnavailable("redis")``."""
    try:
        yield
    except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
        raise BackendUnavailable("redis", f"{what}: {exc}") from exc


def s(v: Any) -> str:
    """A reply value as text."""
    return v.decode() if isinstance(v, bytes) else str(v)
