"""A 3-master Redis Cluster started from Debian's redis-server on 127.0.0.1 (loopback only, no
persistence), shared by the contract tests that check cluster safety: the journal's, the ledger's
and the working memory's (the ``cluster`` fixture in ``conftest.py``)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis


def free_port() -> int:
    """A port free for the server and for its cluster bus (port + 10000)."""
    for _ in range(100):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port + 10000 > 65535:
            continue
        with socket.socket() as bus:
            try:
                bus.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port pair for a cluster node")


def start_cluster(root: Path) -> Iterator[list[int]]:
    """Yields the masters' ports; stops the servers afterwards. Skips without redis-server."""
    if not shutil.which("redis-server") or not shutil.which("redis-cli"):
        pytest.skip("redis-server/redis-cli not installed (Debian: apt-get install redis-server)")
    ports = [free_port() for _ in range(3)]
    procs = []
    for port in ports:
        d = root / str(port)
        d.mkdir()
        procs.append(
            subprocess.Popen(
                [
                    "redis-server",
                    "--port",
                    str(port),
                    "--bind",
                    "127.0.0.1",
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    str(d / "nodes.conf"),
                    "--dir",
                    str(d),
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )  # fmt: skip
        )
    try:
        _wait(lambda: all(_pong(p) for p in ports), 20)
        subprocess.run(
            ["redis-cli", "--cluster", "create", *(f"127.0.0.1:{p}" for p in ports),
             "--cluster-replicas", "0", "--cluster-yes"],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        _wait(lambda: all(_cluster_ok(p) for p in ports), 30)
        yield ports
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(10)


def _pong(port: int) -> bool:
    try:
        return bool(Redis(port=port, socket_timeout=1).ping())
    except Exception:  # noqa: BLE001
        return False


def _cluster_ok(port: int) -> bool:
    return Redis(port=port).cluster("INFO").get("cluster_state") == "ok"


def _wait(ok, seconds: float) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not ok():
        if time.monotonic() > deadline:
            raise AssertionError("the local Redis Cluster did not come up")
        time.sleep(0.2)


def node_of(ports: list[int], key: str) -> int:
    slot = int(Redis(port=ports[0]).execute_command("CLUSTER KEYSLOT", key))
    for start, end, (_host, port, *_) in Redis(port=ports[0]).execute_command("CLUSTER SLOTS"):
        if start <= slot <= end:
            return int(port)
    raise AssertionError(f"no node serves slot {slot}")
