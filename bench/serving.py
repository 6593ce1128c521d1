"""A gateway for a benchmark: in a background thread, yielded once its recall workers are up
(each builds its embedder and fills its index copy: start-up work that must not be timed)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from gateway.core.tracing import Tracer
from gateway.recall_workers.pool import RecallWorkers
from gateway.rpc.server import Gateway, gateway_in_thread
from gateway.settings import Settings


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
    """Yields the address of a gateway whose recall workers (if any) are all ready."""
    with gateway_in_thread(settings, tracer) as (gateway, _):
        wait_for_workers(gateway)
        yield f"{settings.host}:{gateway.port}"
