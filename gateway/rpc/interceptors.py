"""One server interceptor: authenticates the caller and maps domain errors to gRPC statuses.

Server reflection (the API's schema, for grpcurl and the like) asks for the same credentials as
the API once any are configured (API keys, or the client certificate naming the agent): an
unauthenticated caller gets UNAUTHENTICATED. Health checking stays open (load balancers, probes).

Internal errors never leak their text: the caller gets INTERNAL with a request id, the log gets
the traceback under the same id. A body that does not decode (not protobuf, invalid UTF-8 in a
string field) is INVALID_ARGUMENT: the interceptor wraps the request deserializer, which grpc
runs before any handler, and logs such requests once per ``UNDECODABLE_LOG_WINDOW_S``.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from typing import Any

import grpc

from gateway.core.model.errors import InvalidArgument, MemgateError, Overloaded
from gateway.core.ports.tracing import NULL_TRACER, AttributeValue, Tracer
from gateway.rpc.auth import CALLER, FailureLimiter, authenticate

log = logging.getLogger("memgate.rpc")

_API_PREFIX = "/memgate.v1."
#: server reflection, v1alpha and v1: authenticated when the gateway has credentials
_REFLECTION_PREFIX = "/grpc.reflection."
#: trailing metadata of a RESOURCE_EXHAUSTED answer: how long to wait before retrying
RETRY_AFTER_HEADER = "retry-after-ms"


#: an error's message is cut past this many characters: a message that echoes a huge field (an
#: id of 20,000 characters) would exceed gRPC's metadata limit and reach the caller as
#: RESOURCE_EXHAUSTED "metadata size exceeds hard limit" instead of the real error
MAX_DETAILS = 1024


def bounded(message: str) -> str:
    """``message`` within ``MAX_DETAILS`` characters (cut with "…")."""
    return message if len(message) <= MAX_DETAILS else message[: MAX_DETAILS - 1] + "…"


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


UNDECODABLE_LOG_WINDOW_S = 60.0


class Undecodable:
    """What the wrapped deserializer returns for a body it cannot decode."""

    __slots__ = ("error",)

    def __init__(self, error: str) -> None:
        self.error = error


class RateLimitedLog:
    """Logs the first event of each window and how many were suppressed since the last line."""

    def __init__(self, window_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._window = window_s
        self._clock = clock
        self._next = 0.0
        self.suppressed = 0

    def __call__(self, message: str, *args: object) -> bool:
        now = self._clock()
        if now < self._next:
            self.suppressed += 1
            return False
        self._next = now + self._window
        log.warning(message + " (%d more since the last report)", *args, self.suppressed)
        self.suppressed = 0
        return True


def tolerant(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    """``deserializer`` that returns ``Undecodable`` instead of raising."""
    if deserializer is None:
        return None

    def decode(body: bytes) -> Any:
        try:
            return deserializer(body)
        except Exception as exc:  # noqa: BLE001 - any decode failure is the caller's input
            return Undecodable(type(exc).__name__)

    return decode


class ErrorMapping(grpc.aio.ServerInterceptor):
    def __init__(
        self,
        api_keys: Mapping[str, str],
        metrics: Callable[[str, float, str], None] | None = None,
        tracer: Tracer = NULL_TRACER,
        agent_from_cert: bool = False,
        auth_limiter: FailureLimiter | None = None,
    ) -> None:
        self._api_keys = api_keys
        self._auth_limiter = auth_limiter
        self._metrics = metrics
        self._tracer = tracer
        self._undecodable_log = RateLimitedLog(UNDECODABLE_LOG_WINDOW_S)
        self._agent_from_cert = agent_from_cert
        # without keys or certificate identities every caller may call everything already
        self._guard_reflection = bool(api_keys) or agent_from_cert
        self._wrapped: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        method = details.method
        if handler is None:
            return handler
        if method.startswith(_REFLECTION_PREFIX) and self._guard_reflection:
            return self._authenticated_stream(handler)
        if not method.startswith(_API_PREFIX):
            return handler
        # the wrapped handler of a method is built once (it holds no per-call state)
        seen = self._wrapped.get(method)
        if seen is not None and seen[0] is handler:
            return seen[1]
        wrapped = self._wrap(method.rsplit("/", 1)[-1], handler)
        self._wrapped[method] = (handler, wrapped)
        return wrapped

    def _wrap(self, name: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._unary(name, handler.unary_unary),
                request_deserializer=tolerant(handler.request_deserializer),
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self._stream(name, handler.unary_stream),
                request_deserializer=tolerant(handler.request_deserializer),
                response_serializer=handler.response_serializer,
            )
        return handler

    def _authenticated_stream(self, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        """Reflection's bidirectional stream, answered only to an authenticated caller."""
        inner = handler.stream_stream
        if inner is None:
            return handler

        async def guarded(requests: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            try:
                authenticate(context, self._api_keys, self._agent_from_cert, self._auth_limiter)
            except MemgateError as exc:
                await context.abort(
                    getattr(grpc.StatusCode, exc.status), bounded(exc.message), _trailers(exc)
                )
            async for message in inner(requests, context):
                yield message

        return grpc.stream_stream_rpc_method_handler(
            guarded,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )

    def _unary(self, name: str, inner: Any) -> Callable[..., Awaitable[Any]]:
        async def guarded(request: Any, context: grpc.aio.ServicerContext) -> Any:
            with self._call(name, context) as call:
                call.agent = authenticate(
                    context, self._api_keys, self._agent_from_cert, self._auth_limiter
                )
                CALLER.set(call.agent)  # the call's own task: no other call sees it
                self._check_decoded(name, request)
                return await inner(request, context)
            await self._abort(call, context)
            return None

        return guarded

    def _stream(self, name: str, inner: Any) -> Callable[..., AsyncIterator[Any]]:
        async def guarded(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            with self._call(name, context) as call:
                call.agent = authenticate(
                    context, self._api_keys, self._agent_from_cert, self._auth_limiter
                )
                CALLER.set(call.agent)
                self._check_decoded(name, request)
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
                call.code, call.trailers = exc.status, _trailers(exc)
                call.message = bounded(exc.message)
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

    def _check_decoded(self, name: str, request: Any) -> None:
        if isinstance(request, Undecodable):
            self._undecodable_log("undecodable request body for %s (%s)", name, request.error)
            raise InvalidArgument(
                f"the request body is not a valid protobuf message for {name} (or a string "
                "field is not valid UTF-8): send it with the generated memgate stubs",
                field="request",
            )
