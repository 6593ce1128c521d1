"""One server interceptor: authenticates the caller and maps domain errors to gRPC statuses.

Internal errors never leak their text: the caller gets INTERNAL with a request id, the log gets
the traceback under the same id.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from typing import Any

import grpc

from gateway.core.errors import MemgateError, Overloaded
from gateway.core.tracing import NULL_TRACER, AttributeValue, Tracer
from gateway.rpc.auth import authenticate

log = logging.getLogger("memgate.rpc")

_API_PREFIX = "/memgate.v1."
#: trailing metadata of a RESOURCE_EXHAUSTED answer: how long to wait before retrying
RETRY_AFTER_HEADER = "retry-after-ms"


def _trailers(exc: MemgateError) -> tuple[tuple[str, str], ...]:
    if isinstance(exc, Overloaded) and exc.retry_after_ms > 0:
        return ((RETRY_AFTER_HEADER, str(exc.retry_after_ms)),)
    return ()


class _Call:
    """What one call came to: its status code and, for an error, the message to send."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.code = "OK"
        self.message = ""
        self.agent = ""
        self.trailers: tuple[tuple[str, str], ...] = ()


class ErrorMapping(grpc.aio.ServerInterceptor):
    def __init__(
        self,
        api_keys: Mapping[str, str],
        metrics: Callable[[str, float, str], None] | None = None,
        tracer: Tracer = NULL_TRACER,
    ) -> None:
        self._api_keys = api_keys
        self._metrics = metrics
        self._tracer = tracer

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        method = details.method
        if handler is None or not method.startswith(_API_PREFIX):
            return handler
        name = method.rsplit("/", 1)[-1]
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._unary(name, handler.unary_unary),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self._stream(name, handler.unary_stream),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler

    def _unary(self, name: str, inner: Any) -> Callable[..., Awaitable[Any]]:
        async def guarded(request: Any, context: grpc.aio.ServicerContext) -> Any:
            with self._call(name, context) as call:
                call.agent = authenticate(context, self._api_keys)
                return await inner(request, context)
            await self._abort(call, context)
            return None

        return guarded

    def _stream(self, name: str, inner: Any) -> Callable[..., AsyncIterator[Any]]:
        async def guarded(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            with self._call(name, context) as call:
                call.agent = authenticate(context, self._api_keys)
                async for message in inner(request, context):
                    yield message
            await self._abort(call, context)

        return guarded

    @contextlib.contextmanager
    def _call(self, name: str, context: grpc.aio.ServicerContext) -> Iterator[_Call]:
        """Times the call, traces it, and turns an error into the status to abort with."""
        call = _Call(name)
        started = time.perf_counter()
        carrier = {k: v for k, v in context.invocation_metadata() or () if isinstance(v, str)}
        attributes: dict[str, AttributeValue] = {
            "rpc.system": "grpc",
            "rpc.service": "memgate.v1.MemoryGateway",
            "rpc.method": name,
        }
        with self._tracer.span(f"rpc {name}", attributes, "server", carrier) as span:
            try:
                yield call
            except MemgateError as exc:
                call.code, call.message, call.trailers = exc.status, exc.message, _trailers(exc)
            except grpc.aio.AbortError:
                raise
            except Exception:
                request_id = uuid.uuid4().hex[:12]
                call.code = "INTERNAL"
                call.message = f"internal error (request id {request_id}); see the gateway log"
                log.exception("internal error in %s (request %s)", name, request_id)
            finally:
                span.set_attribute("rpc.grpc.status_code", call.code)
                if call.agent:
                    span.set_attribute("memgate.agent", call.agent)
                if call.code != "OK":
                    span.set_error(call.message or call.code)
                if self._metrics is not None:
                    self._metrics(name, time.perf_counter() - started, call.code)

    @staticmethod
    async def _abort(call: _Call, context: grpc.aio.ServicerContext) -> None:
        if call.message:
            await context.abort(getattr(grpc.StatusCode, call.code), call.message, call.trailers)
