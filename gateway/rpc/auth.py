"""Who is calling: the agent id (and API key) from the call's metadata."""

from __future__ import annotations

import hmac
from collections.abc import Mapping

import grpc

from gateway.core.errors import Unauthenticated
from gateway.core.namespaces import check_agent_id

AGENT_HEADER = "x-agent-id"
KEY_HEADER = "x-api-key"
_CALLER = "memgate.caller"


def metadata_value(ctx: grpc.aio.ServicerContext, name: str) -> str:
    for key, value in ctx.invocation_metadata() or ():
        if key == name:
            return value if isinstance(value, str) else value.decode()
    return ""


def authenticate(ctx: grpc.aio.ServicerContext, api_keys: Mapping[str, str]) -> str:
    agent = check_agent_id(metadata_value(ctx, AGENT_HEADER))
    if api_keys:
        expected = api_keys.get(agent)
        given = metadata_value(ctx, KEY_HEADER)
        if expected is None or not hmac.compare_digest(expected, given):
            raise Unauthenticated(f"agent {agent!r} is unknown or its {KEY_HEADER} is wrong")
    return agent


def caller(ctx: grpc.aio.ServicerContext) -> str:
    """The authenticated agent id, as set on the context by the interceptor."""
    agent = getattr(ctx, "_memgate_agent", "")
    return agent or check_agent_id(metadata_value(ctx, AGENT_HEADER))
