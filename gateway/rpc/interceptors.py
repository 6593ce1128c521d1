"""One server interceptor: authenticates the caller and maps domain errors to gRPC statuses.

Internal errors never leak their text: the caller gets INTERNAL with a request id, the log gets
the traceback under the same id.
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


class ErrorMapping(grpc.aio.ServerInterceptor):
    def __init__(
        self,
        api_keys: Mapping[str, str],
        metrics: Callable[[str, float, str], None] | None = None,
        agent_from_cert: bool = False,
    ) -> None:
        self._api_keys = api_keys
        self._metrics = metrics
        self._agent_from_cert = agent_from_cert

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
        from_cert = self._agent_from_cert

        async def guarded(request: Any, context: grpc.aio.ServicerContext) -> Any:
            started = time.perf_counter()
            code = "OK"
            try:
                authenticate(context, api_keys, from_cert)
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
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
