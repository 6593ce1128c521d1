"""Who is calling: the agent id (and API key) from the call's metadata — or, with
``tls_agent_from_cert``, from the client certificate (mTLS): its CN or one of its SANs."""

from __future__ import annotations

import hashlib
import hmac
import threading
import time
from collections.abc import Callable, Mapping
from contextvars import ContextVar

import grpc

from gateway.core.access.namespaces import check_agent_id
from gateway.core.model.errors import (
    InvalidArgument,
    MemgateError,
    Overloaded,
    PermissionDenied,
    Unauthenticated,
)

AGENT_HEADER = "x-agent-id"
KEY_HEADER = "x-api-key"
VIA_HEADER = "x-memgate-via"  # "console": the master's review console is calling
VIAS = ("console",)
_CALLER = "memgate.caller"


def metadata_value(ctx: grpc.aio.ServicerContext, name: str) -> str:
    for key, value in ctx.invocation_metadata() or ():
        if key == name:
            return value if isinstance(value, str) else value.decode()
    return ""


def cert_identities(ctx: grpc.aio.ServicerContext) -> list[str]:
    """The verified client certificate's CN, then its SANs ([] without one)."""
    auth = ctx.auth_context() or {}
    out: list[str] = []
    for key in ("x509_common_name", "x509_subject_alternative_name"):
        for value in auth.get(key, ()):
            text = value.decode() if isinstance(value, bytes) else str(value)
            if text and text not in out:
                out.append(text)
    return out


def agent_of(ctx: grpc.aio.ServicerContext, from_cert: bool) -> str:
    """The caller's agent id. With ``from_cert`` the certificate decides: a header naming
    another identity than the certificate's is refused; no header means the CN (else the first
    SAN)."""
    header = metadata_value(ctx, AGENT_HEADER)
    if not from_cert:
        return check_agent_id(header)
    identities = cert_identities(ctx)
    if not identities:
        raise Unauthenticated(
            "this gateway takes the agent id from the client certificate: connect with one "
            "signed by its client CA (mTLS)"
        )
    if header and header not in identities:
        raise Unauthenticated(
            f"{AGENT_HEADER} {header!r} does not match the client certificate "
            f"({', '.join(identities)}): send the certificate's identity or no header"
        )
    return check_agent_id(header or identities[0])


class FailureLimiter:
    """Failed authentications per bucket (a claimed agent id, a presented key, or, in the
    console, a client address): after ``limit`` failures in ``window_s`` a bucket's further
    failures are refused without counting until the window of its oldest failure has passed.
    Thread-safe (the console's threads, the gateway's event loop)."""

    def __init__(
        self, limit: int, window_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._limit = limit
        self._window = window_s
        self._clock = clock
        self._failures: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, address: str, now: float) -> list[float]:
        recent = [t for t in self._failures.get(address, ()) if now - t < self._window]
        if recent:
            self._failures[address] = recent
        else:
            self._failures.pop(address, None)
        return recent

    def retry_after_s(self, address: str) -> float:
        """0 when ``address`` may try; else how long until it may."""
        if self._limit <= 0:
            return 0.0
        with self._lock:
            now = self._clock()
            recent = self._recent(address, now)
            if len(recent) < self._limit:
                return 0.0
            return max(0.0, recent[-self._limit] + self._window - now)

    def failed(self, address: str) -> None:
        if self._limit <= 0:
            return
        with self._lock:
            now = self._clock()
            self._failures[address] = [*self._recent(address, now), now]
            if len(self._failures) > 100_000:  # bounded: forget the oldest addresses
                for key in list(self._failures)[:50_000]:
                    del self._failures[key]


def peer_address(ctx: grpc.aio.ServicerContext) -> str:
    """The client's address without its port (``ipv4:10.0.0.7``, ``ipv6:[::1]``)."""
    peer = ctx.peer() or ""
    head, sep, _ = peer.rpartition(":")
    return head if sep and head else peer


def authenticate(
    ctx: grpc.aio.ServicerContext,
    api_keys: Mapping[str, str],
    from_cert: bool = False,
    limiter: FailureLimiter | None = None,
) -> str:
    """The caller's agent id, or UNAUTHENTICATED. Failures are limited per claimed agent id and
    per presented key — never per address: every local agent connects from 127.0.0.1, and one
    misconfigured sub-agent used to lock out every agent, the master included. A
    valid credential always passes: only a bucket's wrong credentials are refused
    (RESOURCE_EXHAUSTED, with the wait) once it is over the limit."""
    if limiter is None:
        return _authenticate(ctx, api_keys, from_cert)
    try:
        return _authenticate(ctx, api_keys, from_cert)
    except Unauthenticated:
        buckets = _failure_buckets(ctx, from_cert)
        wait = max(limiter.retry_after_s(b) for b in buckets)
        if wait > 0:
            raise Overloaded(
                f"too many failed authentications for this agent id or key: retry in "
                f"{wait:.0f} s (check the agent's {KEY_HEADER}; a valid key is always let in)",
                retry_after_ms=int(wait * 1000) + 1,
            ) from None
        for bucket in buckets:
            limiter.failed(bucket)
        raise


def _failure_buckets(ctx: grpc.aio.ServicerContext, from_cert: bool) -> tuple[str, ...]:
    """What a failure counts against: the agent id claimed and the key presented (by digest)."""
    try:
        agent = agent_of(ctx, from_cert)
    except MemgateError:
        agent = ""
    key = metadata_value(ctx, KEY_HEADER)
    digest = hashlib.sha256(key.encode()).hexdigest()[:24] if key else ""
    return (f"agent:{agent}", f"key:{digest}") if digest else (f"agent:{agent}",)


def _authenticate(
    ctx: grpc.aio.ServicerContext, api_keys: Mapping[str, str], from_cert: bool
) -> str:
    agent = agent_of(ctx, from_cert)
    if api_keys:
        expected = api_keys.get(agent)
        given = metadata_value(ctx, KEY_HEADER)
        if expected is None or not hmac.compare_digest(expected, given):
            raise Unauthenticated(f"agent {agent!r} is unknown or its {KEY_HEADER} is wrong")
    return agent


#: the agent the interceptor authenticated for the call being served (gRPC serves each call in a
#: task of its own, so each sees its own value): set once (``ErrorMapping``), read by ``caller``
CALLER: ContextVar[str] = ContextVar("memgate_caller", default="")


def caller(ctx: grpc.aio.ServicerContext) -> str:
    """The authenticated agent id: what the interceptor set for this call. Without the
    interceptor (a servicer called directly), the header, or the certificate's identity."""
    agent = CALLER.get()
    if agent:
        return agent
    header = metadata_value(ctx, AGENT_HEADER)
    if header:
        return check_agent_id(header)
    identities = cert_identities(ctx)
    return check_agent_id(identities[0] if identities else "")


def audited_as(ctx: grpc.aio.ServicerContext, agent: str, master: str, action: str) -> str:
    """The audit action of a read: ``action``, or ``console_<action>`` when the master's review
    console calls (``x-memgate-via: console``), so an auditor tells a reviewer's lookups from
    the master agent's own. Another value is INVALID_ARGUMENT; the header from any agent but
    the master is PERMISSION_DENIED (a sub-agent cannot pass its reads off as the console's)."""
    via = metadata_value(ctx, VIA_HEADER)
    if not via:
        return action
    if via not in VIAS:
        raise InvalidArgument(f"{VIA_HEADER} must be one of {', '.join(VIAS)}", field=VIA_HEADER)
    if agent != master:
        raise PermissionDenied(f"only the master agent may call via the {via}")
    return f"{via}_{action}"
