"""``GatewayClient`` for asyncio (grpc.aio): the same methods, types, errors, retries and
idempotency as the blocking client, each method awaitable.

    from gateway.client.aio import GatewayClient
    async with GatewayClient("127.0.0.1:50051", agent_id="master") as c:
        mid = await c.write(namespace="user/u1", layer="semantic", content="...", wait=True)
        hits = await c.recall("...", namespaces=["user/u1"])

Its methods are the RPCs of ``gateway.client.api.Api``; this module only carries them. Create
and use a client on one event loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any, TypeVar

import grpc
import grpc.aio

from gateway.client import types as t
from gateway.client import wire
from gateway.client.api import Api, Asynchronous, Call, export_request
from gateway.client.errors import typed

T = TypeVar("T")


class GatewayClient(Api, Asynchronous):
    """``GatewayClient(target, agent_id, api_key=None, timeout=30.0, retries=3)``; ``target``
    names one gateway or several (a list, ``"ip:port,ip:port"`` or ``"dns:///name:port"``):
    calls go round robin over the healthy ones, UNAVAILABLE is retried on another."""

    def _open(
        self,
        target: str,
        credentials: grpc.ChannelCredentials | None,
        options: list[tuple[str, Any]],
    ) -> Any:
        if credentials is None:
            return grpc.aio.insecure_channel(target, options=options)
        return grpc.aio.secure_channel(target, credentials, options=options)

    async def _run(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            try:
                return call.parse(await self._send(call))
            except grpc.RpcError as err:
                await asyncio.sleep(self._retry.after_failure(call, err, attempt))
                attempt += 1

    async def __aenter__(self) -> GatewayClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._channel.close()

    async def export(
        self, namespaces: Sequence[str], *, include_vectors: bool = False, timeout: float = 3600
    ) -> AsyncIterator[t.ExportedMemory]:
        """Every memory of the namespaces (master only), streamed."""
        stream = self._stubs["gateway"].Export(
            export_request(namespaces, include_vectors), metadata=self._metadata, timeout=timeout
        )
        try:
            async for msg in stream:
                yield wire.exported(msg)
        except grpc.RpcError as err:
            raise typed(err) from None
