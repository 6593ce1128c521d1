"""One server interceptor: authenticates the caller and maps domain errors to gRPC statuses.

Internal errors never leak their text: the caller gets INTERNAL with a request id, the log gets
the traceback under the same id. A body that does not decode (not protobuf, invalid UTF-8 in a
string field) is INVALID_ARGUMENT: the interceptor wraps the request deserializer, which grpc
runs before any handler, and logs such requests once per ``UNDECODABLE_LOG_WINDOW_S``.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import grpc

from gateway.core.errors import MemgateError
from gateway.rpc.auth import authenticate

log = logging.getLogger("memgate.rpc")

_API_PREFIX = "/memgate.v1."
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
        self, api_keys: Mapping[str, str], metrics: Callable[[str, float, str], None] | None = None
    ) -> None:
        self._api_keys = api_keys
        self._metrics = metrics
        self._undecodable_log = RateLimitedLog(UNDECODABLE_LOG_WINDOW_S)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        method = details.method
        if handler is None or not method.startswith(_API_PREFIX) or handler.unary_unary is None:
            return handler
        inner = handler.unary_unary
        api_keys = self._api_keys
        metrics = self._metrics
        undecodable_log = self._undecodable_log

        async def guarded(request: Any, context: grpc.aio.ServicerContext) -> Any:
            started = time.perf_counter()
            code = "OK"
            try:
                authenticate(context, api_keys)
                if isinstance(request, Undecodable):
                    undecodable_log("undecodable request body for %s (%s)", method, request.error)
                    code = "INVALID_ARGUMENT"
                    await context.abort(
                        grpc.StatusCode.INVALID_ARGUMENT,
                        "the request body is not a valid protobuf message for "
                        f"{method.rsplit('/', 1)[-1]} (or a string field is not valid UTF-8): "
                        "send it with the generated memgate stubs",
                    )
                return await inner(request, context)
            except MemgateError as exc:
                code = exc.status
                await context.abort(getattr(grpc.StatusCode, exc.status), exc.message)
            except grpc.aio.AbortError:
                raise
            except Exception:
                request_id = uuid.uuid4().hex[:12]
                code = "INTERNAL"
                log.exception("internal error in %s (request %s)", method, request_id)
                await context.abort(
                    grpc.StatusCode.INTERNAL,
                    f"internal error (request id {request_id}); see the gateway log",
                )
            finally:
                if metrics is not None:
                    metrics(method.rsplit("/", 1)[-1], time.perf_counter() - started, code)

        return grpc.unary_unary_rpc_method_handler(
            guarded,
            request_deserializer=tolerant(handler.request_deserializer),
            response_serializer=handler.response_serializer,
        )
