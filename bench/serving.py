"""A gateway for a benchmark, yielded once its recall workers are up (each builds its embedder
and fills its index copy: start-up work that must not be timed): in a background thread of the
benchmark's process (``ready_gateway``: its stages can be traced), or as its own process, the way
users run it (``gateway_process``: ``memgate serve``; the benchmark's client does not share the
gateway's GIL)."""

from __future__ import annotations

import collections
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from gateway.core.ports.tracing import Tracer
from gateway.recall_workers.pool import RecallWorkers
from gateway.rpc.server import Gateway, gateway_in_thread
from gateway.settings import Settings

_CHECKOUT = Path(__file__).resolve().parent.parent
#: what ``memgate serve`` prints once it serves, and each recall worker once it is ready
_LISTENING = "memgate: listening on "
_WORKER_READY = "INFO ready: "


def wait_for_workers(gateway: Gateway, timeout_s: float = 300.0) -> None:
    workers = gateway.service.recaller.remote
    deadline = time.monotonic() + timeout_s
    while isinstance(workers, RecallWorkers) and workers.ready < workers.configured:
        if time.monotonic() > deadline:
            raise SystemExit(
                f"recall workers did not start in {timeout_s:.0f} s: see the gateway's log, or "
                "run with MEMGATE_RECALL_PROCESSES=0"
            )
        time.sleep(0.1)


@contextmanager
def ready_gateway(settings: Settings, tracer: Tracer | None = None) -> Iterator[str]:
    """Yields the address of a gateway whose recall workers (if any) are all ready (started
    with the gateway: a benchmark measures them warm)."""
    settings = replace(settings, recall_workers_start="eager")
    with gateway_in_thread(settings, tracer) as (gateway, _):
        wait_for_workers(gateway)
        yield f"{settings.host}:{gateway.port}"


def _env_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def settings_env(settings: Settings) -> dict[str, str]:
    """The ``MEMGATE_*`` variables that give ``memgate serve`` ``settings`` (those that differ
    from the defaults; ``limits`` is not settable from the environment and must be default)."""
    default = Settings()
    if settings.limits != default.limits:
        raise ValueError("gateway_process cannot pass limits: use ready_gateway")
    return {
        f"MEMGATE_{f.name.upper()}": _env_value(getattr(settings, f.name))
        for f in fields(Settings)
        if f.name != "limits" and getattr(settings, f.name) != getattr(default, f.name)
    }


@contextmanager
def gateway_process(
    settings: Settings, timeout_s: float = 300.0, checkout: Path | None = None
) -> Iterator[str]:
    """Yields the address of ``memgate serve`` run with ``settings`` as a child process, once it
    listens and its recall workers are ready (started with it: a benchmark measures them
    warm); stops it (SIGTERM: a clean shutdown) after. ``checkout``: the gateway of another
    source tree (an older commit, for a before/after in one run)."""
    settings = replace(settings, recall_workers_start="eager")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMGATE_")}
    env.update(settings_env(settings))
    # the gateway of this checkout, wherever the benchmark runs from
    src = str(checkout or _CHECKOUT)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "serve"],
        env=env,
        cwd=src,  # ``-m`` puts the working directory first on the path
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
    )
    assert proc.stdout is not None
    out = proc.stdout
    tail: collections.deque[str] = collections.deque(maxlen=40)  # its last lines, for errors
    lines: queue.Queue[str | None] = queue.Queue()
    serving = threading.Event()

    def pump() -> None:  # reads all it prints: a full pipe would block it
        for line in out:
            tail.append(line)
            if not serving.is_set():
                lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    address, ready, workers = "", 0, settings.recall_workers()
    deadline = time.monotonic() + timeout_s
    try:
        while not address or ready < workers:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise SystemExit(
                    f"memgate serve was not ready in {timeout_s:.0f} s:\n" + "".join(tail)
                ) from None
            if line is None:
                raise SystemExit(
                    f"memgate serve exited (code {proc.wait()}) before serving:\n" + "".join(tail)
                )
            if line.startswith(_LISTENING):
                address = line[len(_LISTENING) :].strip()
            elif _WORKER_READY in line:
                ready += 1
        serving.set()
        yield address
        if proc.poll() is not None:
            raise SystemExit(
                f"memgate serve exited (code {proc.returncode}) while serving:\n" + "".join(tail)
            )
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def real_servers(backend: str) -> dict[str, str]:
    """The Settings that put a benchmark's gateway on Redis and Neo4j when ``backend`` is
    "real" (``MEMGATE_TEST_REDIS_URL`` / ``MEMGATE_TEST_NEO4J_URI``, as the tests use), else
    nothing: the embedded stores."""
    if backend != "real":
        return {}
    return {
        "redis_url": os.environ.get("MEMGATE_TEST_REDIS_URL", "redis://127.0.0.1:6390/0"),
        "neo4j_uri": os.environ.get("MEMGATE_TEST_NEO4J_URI", "bolt://127.0.0.1:7690"),
    }
