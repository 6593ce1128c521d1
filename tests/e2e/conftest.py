"""A real gateway over a real gRPC channel (port 0), on the embedded stores and — with the
`real` param — on Redis + Neo4j. Tests use fresh namespaces, so the real servers can be shared."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from gateway.client import GatewayClient
from gateway.rpc.server import serve_in_thread
from gateway.settings import Settings
from tests.tags import fresh_tag


@dataclass
class RunningGateway:
    address: str
    settings: Settings

    def client(self, agent_id: str = "master", **kw: Any) -> GatewayClient:
        return GatewayClient(self.address, agent_id=agent_id, **kw)


@contextmanager
def running_gateway(settings: Settings) -> Iterator[RunningGateway]:
    with serve_in_thread(settings) as address:
        yield RunningGateway(address, settings)


def gateway_settings(tmp_path: Path, **overrides: Any) -> Settings:
    base = Settings(
        host="127.0.0.1",
        port=0,
        data_dir=tmp_path / "data",
        embedder="hash",
        # the rules alone screen injections here; the embedder screen loads a 30 MB model and
        # costs each write an embedding (it has its own tests: test_injection_screen.py)
        injection_embedder="",
        dialogue_max_turns=6,
        wait_timeout_s=15.0,
        flush_interval_s=0.5,
        # latency trips are for production; on a loaded CI box only failures should trip
        working_slow_ms=0.0,
        graph_slow_ms=0.0,
        # recall workers only where a test asks (tests/conftest.py; test_recall_workers.py)
        recall_processes=0,
        # the start-up pass that slots facts stored before slots existed reads every stored
        # vector: on the shared test Neo4j that is every earlier test's (test_slot_backfill.py)
        slot_backfill=False,
    )
    return replace(base, **overrides)


@pytest.fixture(scope="module", params=["embedded", pytest.param("real", marks=pytest.mark.real)])
def backend(request: pytest.FixtureRequest) -> dict[str, str]:
    if request.param == "embedded":
        return {}
    return {
        "redis_url": request.getfixturevalue("redis_url"),
        "neo4j_uri": request.getfixturevalue("neo4j_uri"),
    }


@pytest.fixture(scope="module")
def gw(
    tmp_path_factory: pytest.TempPathFactory, backend: dict[str, str]
) -> Iterator[RunningGateway]:
    """One gateway per test module and backend: tests work in fresh namespaces, so they share
    it (a test that needs a gateway of its own starts one with ``running_gateway``)."""
    with running_gateway(gateway_settings(tmp_path_factory.mktemp("gw"), **backend)) as running:
        yield running


@pytest.fixture
def ns() -> str:
    """A fresh user namespace."""
    return f"user/u-{fresh_tag(10)}"
