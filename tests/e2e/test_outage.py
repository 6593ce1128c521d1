"""A backend dies under the gateway: callers get a clear UNAVAILABLE (fast, not a hang, not
INTERNAL), acknowledged writes wait in the journal, and are applied once the server is back.

Each test runs its own Redis / Neo4j (on a free loopback port) so it can stop and restart it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gateway import client as gc
from tests.e2e.conftest import gateway_settings, running_gateway

pytestmark = [pytest.mark.real, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _eventually(check: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except (gc.Unavailable, gc.NotFound):
            pass
        time.sleep(0.25)
    raise AssertionError(f"not within {seconds}s: {what}")


def _timed(fn: Callable[[], object]) -> tuple[BaseException, float]:
    t = time.monotonic()
    try:
        fn()
    except BaseException as exc:  # noqa: BLE001
        return exc, time.monotonic() - t
    raise AssertionError("the call succeeded while its backend was down")


class OwnRedis:
    def __init__(self, tmp: Path) -> None:
        self.port = _free_port()
        self.dir = tmp
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail(
                "redis-server is not installed: run deploy/redis.sh start once (it installs it)"
            )
        self.proc = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "yes",
                "--dir",
                str(self.dir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.1)
        raise AssertionError("own redis did not start")

    def stop(self) -> None:
        if self.proc:
            self.proc.terminate()
            self.proc.wait(20)
            self.proc = None


@pytest.fixture
def own_redis(
    tmp_path: Path, redis_url: str
) -> Iterator[OwnRedis]:  # redis_url: CI must have redis
    r = OwnRedis(tmp_path)
    r.start()
    yield r
    r.stop()


def test_redis_down_unavailable_then_applied_when_back(tmp_path: Path, own_redis: OwnRedis) -> None:
    settings = gateway_settings(tmp_path, redis_url=own_redis.url, wait_timeout_s=20.0)
    ns = "user/outage-redis"
    with running_gateway(settings) as gw, gw.client() as c:
        c.append_turn(ns, "s1", role="user", content="before the outage")
        own_redis.stop()

        exc, took = _timed(lambda: c.append_turn(ns, "s1", role="user", content="during"))
        assert isinstance(exc, gc.Unavailable), exc
        assert took < 8, f"UNAVAILABLE took {took:.1f}s"
        assert "redis" in str(exc).lower() or "working" in str(exc).lower()

        # the fallback for reads is an empty context, not an error
        assert c.window(ns, "s1") == []
        # a turn written without waiting is acknowledged and kept in the journal
        acked = c.write_result(
            ns, "working", "written while redis was down", session_id="s1", role="user"
        )
        assert acked.id and not acked.applied
        # long-term memory does not depend on Redis
        mid = c.write(ns, "semantic", "The user likes hiking", wait=True)
        assert c.get(mid).content == "The user likes hiking"

        own_redis.start()
        _eventually(
            lambda: "written while redis was down" in [t.content for t in c.window(ns, "s1")],
            30,
            "the acknowledged turn applied after Redis came back",
        )
        contents = [t.content for t in c.window(ns, "s1")]
        assert contents[0] == "before the outage"
        assert contents.count("written while redis was down") == 1
        assert {b.layer: b.state for b in c.breakers()}["working"] in ("closed", "half_open")


class OwnNeo4j:
    def __init__(self, tmp: Path) -> None:
        self.port = _free_port()
        self.env = {
            **os.environ,
            "MEMGATE_NEO4J_PORT": str(self.port),
            "MEMGATE_SERVICES_DIR": str(tmp / "services"),
        }

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    def _run(self, action: str) -> None:
        done = subprocess.run(
            [str(REPO / "deploy" / "neo4j.sh"), action],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode != 0:
            raise AssertionError(f"neo4j.sh {action} failed:\n{done.stdout}\n{done.stderr}")

    def start(self) -> None:
        self._run("start")

    def stop(self) -> None:
        self._run("stop")


@pytest.fixture
def own_neo4j(tmp_path: Path, neo4j_uri: str) -> Iterator[OwnNeo4j]:  # neo4j_uri: CI must have it
    n = OwnNeo4j(tmp_path)
    n.start()
    yield n
    n.stop()


def test_neo4j_down_unavailable_then_applied_when_back(tmp_path: Path, own_neo4j: OwnNeo4j) -> None:
    settings = gateway_settings(tmp_path, neo4j_uri=own_neo4j.uri, wait_timeout_s=20.0)
    ns = "user/outage-neo4j"
    with running_gateway(settings) as gw, gw.client() as c:
        before = c.write(ns, "semantic", "The user prefers aisle seats", wait=True)
        own_neo4j.stop()

        exc, took = _timed(lambda: c.get(before))
        assert isinstance(exc, gc.Unavailable), exc
        assert took < 15, f"UNAVAILABLE took {took:.1f}s"
        exc, took = _timed(lambda: c.timeline(ns))
        assert isinstance(exc, gc.Unavailable) and took < 5, (exc, took)
        exc, took = _timed(
            lambda: c.write(
                ns, "semantic", "The user owns a bike", idempotency_key="bike", wait=True
            )
        )
        assert isinstance(exc, gc.Unavailable) and "journaled" in str(exc), exc
        assert took < 15
        acked = c.write_result(ns, "episodic", "Booked a table for two", idempotency_key="table")
        assert acked.id and not acked.applied
        # recall degrades instead of failing; working memory is unaffected
        r = c.recall("what does the user prefer", namespaces=[ns])
        assert r.degraded and r.hits == []
        c.append_turn(ns, "s1", role="user", content="still chatting")

        own_neo4j.start()
        _eventually(
            lambda: c.get(acked.id).content == "Booked a table for two",
            90,
            "the acknowledged event applied after Neo4j came back",
        )
        # the write whose caller heard UNAVAILABLE was kept; its retry gets the same id
        retry = c.write_result(
            ns, "semantic", "The user owns a bike", idempotency_key="bike", wait=True
        )
        assert retry.duplicate and c.get(retry.id).content == "The user owns a bike"
        assert [e.id for e in c.timeline(ns)] == [acked.id]
        assert c.recall("aisle seats", namespaces=[ns]).hits[0].id == before
