"""``GatewayClient``: the blocking client over one gRPC channel, with retries of UNAVAILABLE.

Its methods are the RPCs of ``gateway.client.api.Api``; this module only carries them."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

import grpc

from gateway.client import types as t
from gateway.client import wire
from gateway.client.api import Api, Blocking, Call, export_request
from gateway.client.errors import typed

T = TypeVar("T")


class GatewayClient(Api, Blocking):
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
            return grpc.insecure_channel(target, options=options)
        return grpc.secure_channel(target, credentials, options=options)

    def _run(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            try:
                return call.parse(self._send(call))
            except grpc.RpcError as err:
                time.sleep(self._retry.after_failure(call, err, attempt))
                attempt += 1

    def __enter__(self) -> GatewayClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._channel.close()

    def export(
        self, namespaces: Sequence[str], *, include_vectors: bool = False, timeout: float = 3600
    ) -> Iterator[t.ExportedMemory]:
        """Every memory of the namespaces (master only), streamed."""
        stream = self._stubs["gateway"].Export(
            export_request(namespaces, include_vectors), metadata=self._metadata, timeout=timeout
        )
        try:
            for msg in stream:
                yield wire.exported(msg)
        except grpc.RpcError as err:
            raise typed(err) from None
