"""The domain's exception tree. Each error names the gRPC status it maps to (as a name, so the
core stays free of grpc); one server interceptor does the mapping."""

from __future__ import annotations


class MemgateError(Exception):
    """Base of every error the gateway reports to a caller."""

    status = "INTERNAL"

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class InvalidArgument(MemgateError):
    status = "INVALID_ARGUMENT"


class NotFound(MemgateError):
    status = "NOT_FOUND"


class PermissionDenied(MemgateError):
    status = "PERMISSION_DENIED"


class Unauthenticated(MemgateError):
    status = "UNAUTHENTICATED"


class Conflict(MemgateError):
    status = "ABORTED"


class FailedPrecondition(MemgateError):
    status = "FAILED_PRECONDITION"


class Unavailable(MemgateError):
    status = "UNAVAILABLE"


class BackendUnavailable(Unavailable):
    """A store's server cannot be reached (connection refused, timeout, breaker open)."""

    def __init__(self, backend: str, detail: str = "") -> None:
        hint = f" ({detail})" if detail else ""
        super().__init__(f"{backend} is unavailable{hint}; retry later or check that it is running")
        self.backend = backend


class Overloaded(MemgateError):
    """Too much in flight: the caller should retry after ``retry_after_ms`` (sent to the client
    as the ``retry-after-ms`` trailing metadata)."""

    status = "RESOURCE_EXHAUSTED"

    def __init__(self, message: str, *, field: str = "", retry_after_ms: int = 0) -> None:
        super().__init__(message, field=field)
        self.retry_after_ms = retry_after_ms


class QuotaExceeded(MemgateError):
    """A caller's budget is spent (e.g. its session state across sessions): it must free some
    first; retrying the same request does not help."""

    status = "RESOURCE_EXHAUSTED"


class Unimplemented(MemgateError):
    status = "UNIMPLEMENTED"


class ExtractionFailed(MemgateError):
    """A model-backed extractor or summariser gave no usable answer (timeout, HTTP error, output
    that fails its schema, breaker open). The gateway falls back to the rule-based one."""

    status = "UNAVAILABLE"
