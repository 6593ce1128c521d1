"""Who is calling: the agent id (and API key) from the call's metadata — or, with
``tls_agent_from_cert``, from the client certificate (mTLS): its CN or one of its SANs."""

from __future__ import annotations

import hmac
from collections.abc import Mapping

import grpc

from gateway.core.access.namespaces import check_agent_id
from gateway.core.model.errors import InvalidArgument, PermissionDenied, Unauthenticated

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


def authenticate(
    ctx: grpc.aio.ServicerContext, api_keys: Mapping[str, str], from_cert: bool = False
) -> str:
    agent = agent_of(ctx, from_cert)
    if api_keys:
        expected = api_keys.get(agent)
        given = metadata_value(ctx, KEY_HEADER)
        if expected is None or not hmac.compare_digest(expected, given):
            raise Unauthenticated(f"agent {agent!r} is unknown or its {KEY_HEADER} is wrong")
    return agent


def caller(ctx: grpc.aio.ServicerContext) -> str:
    """The authenticated agent id (the interceptor has checked it): the header, or without
    one (allowed only with ``tls_agent_from_cert``) the certificate's identity."""
    agent = getattr(ctx, "_memgate_agent", "")
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
