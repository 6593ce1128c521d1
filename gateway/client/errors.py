"""The client's typed errors, one per gRPC status the gateway answers with."""

from __future__ import annotations

import contextlib

import grpc


class GatewayError(Exception):
    """A call the gateway refused or could not serve; ``code`` is the gRPC status."""

    code: grpc.StatusCode = grpc.StatusCode.UNKNOWN

    def __init__(self, message: str, code: grpc.StatusCode | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class InvalidArgument(GatewayError):
    code = grpc.StatusCode.INVALID_ARGUMENT


class NotFound(GatewayError):
    code = grpc.StatusCode.NOT_FOUND


class PermissionDenied(GatewayError):
    code = grpc.StatusCode.PERMISSION_DENIED


class Unauthenticated(GatewayError):
    code = grpc.StatusCode.UNAUTHENTICATED


class Conflict(GatewayError):
    code = grpc.StatusCode.ABORTED


class FailedPrecondition(GatewayError):
    code = grpc.StatusCode.FAILED_PRECONDITION


class Unavailable(GatewayError):
    """The gateway or one of its stores is unreachable: safe to retry with the same key."""

    code = grpc.StatusCode.UNAVAILABLE


class Overloaded(GatewayError):
    """The gateway is behind or has too many calls in flight: retry after ``retry_after_ms``
    (with the same idempotency key for a write)."""

    code = grpc.StatusCode.RESOURCE_EXHAUSTED
    retry_after_ms: int = 0


class Unimplemented(GatewayError):
    code = grpc.StatusCode.UNIMPLEMENTED


_BY_CODE: dict[grpc.StatusCode, type[GatewayError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.OUT_OF_RANGE: InvalidArgument,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDenied,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.ABORTED: Conflict,
    grpc.StatusCode.ALREADY_EXISTS: Conflict,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPrecondition,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: Unavailable,
    grpc.StatusCode.RESOURCE_EXHAUSTED: Overloaded,
    grpc.StatusCode.UNIMPLEMENTED: Unimplemented,
}


#: trailing metadata the gateway sends with RESOURCE_EXHAUSTED
RETRY_AFTER_HEADER = "retry-after-ms"


def typed(err: grpc.RpcError) -> GatewayError:
    code = err.code()  # type: ignore[attr-defined]
    cls = _BY_CODE.get(code, GatewayError)
    error = cls(err.details() or code.name, code)  # type: ignore[attr-defined]
    if isinstance(error, Overloaded):
        trailers = getattr(err, "trailing_metadata", lambda: ())() or ()
        for key, value in trailers:
            if key == RETRY_AFTER_HEADER:
                with contextlib.suppress(ValueError):
                    error.retry_after_ms = int(value)
    return error
