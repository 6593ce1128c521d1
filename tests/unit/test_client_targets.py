"""The clients' targets: one gateway, or several balanced round robin with health checks."""

from __future__ import annotations

import json

import grpc
import pytest

from gateway.client.api import (
    BALANCED_SERVICE_CONFIG,
    HEALTH_SERVICE,
    Call,
    RetryPolicy,
    channel_options,
    channel_target,
)
from gateway.rpc.server import SERVICE_NAME


def test_one_gateway_is_a_plain_target() -> None:
    assert channel_target("127.0.0.1:50051") == ("127.0.0.1:50051", 1)
    assert channel_options(1) == []


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        (["127.0.0.1:1", "127.0.0.1:2"], ("ipv4:127.0.0.1:1,127.0.0.1:2", 2)),
        ("127.0.0.1:1, 127.0.0.1:2,127.0.0.1:3", ("ipv4:127.0.0.1:1,127.0.0.1:2,127.0.0.1:3", 3)),
        ("ipv4:127.0.0.1:1,127.0.0.1:2", ("ipv4:127.0.0.1:1,127.0.0.1:2", 2)),
        (["[::1]:1", "[::1]:2"], ("ipv6:[::1]:1,[::1]:2", 2)),
        ("dns:///gateways.internal:50051", ("dns:///gateways.internal:50051", 2)),
    ],
)
def test_several_gateways_are_balanced(target: object, expected: tuple[str, int]) -> None:
    assert channel_target(target) == expected  # type: ignore[arg-type]
    config = json.loads(dict(channel_options(expected[1]))["grpc.service_config"])
    assert config["loadBalancingConfig"] == [{"round_robin": {}}]
    assert config["healthCheckConfig"]["serviceName"] == SERVICE_NAME == HEALTH_SERVICE
    assert json.loads(BALANCED_SERVICE_CONFIG) == config


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ([], "at least one"),
        (["gw1:50051", "gw2:50051"], "dns:///"),
        ("1.2.3.4:x,1.2.3.5:1", "port"),
    ],
)
def test_bad_targets_say_what_to_do(target: object, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        channel_target(target)  # type: ignore[arg-type]


class _Unavailable(grpc.RpcError):
    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE

    def details(self) -> str:
        return "down"

    def trailing_metadata(self) -> tuple[()]:
        return ()


def test_with_replicas_the_first_retries_go_at_once() -> None:
    call: Call[None] = Call("Write", None, lambda r: None)
    balanced = RetryPolicy(retries=3, replicas=3)
    waits = [balanced.after_failure(call, _Unavailable(), a) for a in range(3)]
    assert waits[:2] == [0.0, 0.0] and 0.4 <= waits[2] <= 0.8  # then the jittered back-off
    single = RetryPolicy(retries=3)
    assert 0.1 <= single.after_failure(call, _Unavailable(), 0) <= 0.2
