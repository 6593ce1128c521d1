"""A real gateway over a real gRPC channel (port 0), on the embedded stores and — with the
`real` param — on Redis + Neo4j. Tests use fresh namespaces, so the real servers can be shared."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from gateway.client import GatewayClient
from gateway.rpc.server import Gateway, create_server
from gateway.settings import Settings


@dataclass
class RunningGateway:
    address: str
    settings: Settings
    gateway: Gateway
    loop: asyncio.AbstractEventLoop

    def client(self, agent_id: str = "master", **kw: Any) -> GatewayClient:
        return GatewayClient(self.address, agent_id=agent_id, **kw)

    def run(self, coro: Any) -> Any:
        """Run a coroutine on the server's loop (to peek at the service directly)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)


def start_gateway(settings: Settings) -> tuple[RunningGateway, Callable[[], None]]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="gateway-loop", daemon=True)
    thread.start()

    async def boot() -> Gateway:
        gw = await create_server(settings)
        await gw.start()
        return gw

    gw = asyncio.run_coroutine_threadsafe(boot(), loop).result(60)

    def stop() -> None:
        asyncio.run_coroutine_threadsafe(gw.stop(grace=1.0), loop).result(60)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()

    return RunningGateway(f"127.0.0.1:{gw.port}", settings, gw, loop), stop


def gateway_settings(tmp_path: Path, **overrides: Any) -> Settings:
    base = Settings(
        host="127.0.0.1",
        port=0,
        data_dir=tmp_path / "data",
        embedder="hash",
        dialogue_max_turns=6,
        wait_timeout_s=15.0,
        flush_interval_s=0.5,
    )
    return replace(base, **overrides)


@pytest.fixture(params=["embedded", pytest.param("real", marks=pytest.mark.real)])
def backend(request: pytest.FixtureRequest) -> dict[str, str]:
    if request.param == "embedded":
        return {}
    return {
        "redis_url": request.getfixturevalue("redis_url"),
        "neo4j_uri": request.getfixturevalue("neo4j_uri"),
    }


@pytest.fixture
def gw(tmp_path: Path, backend: dict[str, str]) -> Iterator[RunningGateway]:
    running, stop = start_gateway(gateway_settings(tmp_path, **backend))
    try:
        yield running
    finally:
        stop()


@pytest.fixture
def ns() -> str:
    """A fresh user namespace."""
    return f"user/u-{uuid.uuid4().hex[:10]}"
