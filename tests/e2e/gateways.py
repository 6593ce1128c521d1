"""Gateway processes for multi-gateway tests: started with the CLI on loopback (port 0), each
with its own data dir, killed with SIGKILL or stopped at the end."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class GatewayProcess:
    proc: subprocess.Popen[bytes]
    address: str
    log: Path

    def kill(self) -> None:
        """SIGKILL: no shutdown hook runs (a crash)."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()


def spawn(
    data_dir: Path,
    flags: list[str],
    env: dict[str, str] | None = None,
    start_timeout: float = 90,
) -> GatewayProcess:
    data_dir.mkdir(parents=True, exist_ok=True)
    log = data_dir.parent / f"{data_dir.name}-{time.monotonic_ns()}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gateway.cli", "serve", "--port", "0", "--host", "127.0.0.1",
             "--data-dir", str(data_dir), "--embedder", "hash", *flags],
            stdout=out,
            stderr=subprocess.STDOUT,
            # the rules alone screen injections (the embedder screen: test_injection_screen.py)
            env={**os.environ, "MEMGATE_INJECTION_EMBEDDER": "", **(env or {})},
        )  # fmt: skip
    deadline = time.monotonic() + start_timeout
    while time.monotonic() < deadline:
        m = re.search(r"listening on (\S+)", log.read_text(errors="replace"))
        if m:
            return GatewayProcess(proc, m.group(1), log)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"gateway did not start:\n{log.read_text(errors='replace')[-3000:]}")


@dataclass
class Fleet:
    gateways: list[GatewayProcess] = field(default_factory=list)

    @property
    def addresses(self) -> list[str]:
        return [g.address for g in self.gateways]


@contextlib.contextmanager
def fleet(
    root: Path, n: int, flags: list[str], env: dict[str, str] | None = None
) -> Iterator[Fleet]:
    """``n`` gateways, each with its own data dir under ``root``, started side by side (each
    rebuilds its index from the records store first); all stopped at the end."""
    from concurrent.futures import ThreadPoolExecutor

    running = Fleet()

    def one(i: int) -> GatewayProcess:
        own = {"MEMGATE_REPLICA_ID": f"{root.name}-gw{i}", **(env or {})}
        gw = spawn(root / f"gw{i}", flags, own)
        running.gateways.append(gw)  # stopped at the end even if another one fails to start
        return gw

    try:
        with ThreadPoolExecutor(max_workers=n) as pool:
            started = list(pool.map(one, range(n)))
        running.gateways[:] = started  # in index order
        yield running
    finally:
        for g in running.gateways:
            g.stop()


@dataclass
class PrivateRedis:
    """A redis-server of the test's own on 127.0.0.1 (AOF, fsync on every write), restartable
    on the same port and data."""

    port: int
    data: Path
    proc: subprocess.Popen[bytes] | None = None
    appendfsync: str = "always"

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.data.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir",
             str(self.data), "--appendonly", "yes", "--appendfsync", self.appendfsync, "--save", ""],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s,
            ):
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return
            time.sleep(0.1)
        raise AssertionError("the private redis-server did not start")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(20)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
