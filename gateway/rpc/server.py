"""Builds the gRPC server: the gateway API, standard health checking, reflection, the error
interceptor, and graceful shutdown."""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from gateway.core.ports.tracing import Tracer
from gateway.core.usecases.service import MemoryService
from gateway.rpc.admission import Admission, Bounds
from gateway.rpc.auth import FailureLimiter
from gateway.rpc.interceptors import ErrorMapping
from gateway.rpc.metrics_http import MetricsServer
from gateway.rpc.prometheus import GatewayMetrics
from gateway.rpc.servicer import GatewayServicer
from gateway.rpc.transport import exposure_warning, server_credentials
from gateway.settings import Settings
from gateway.telemetry import build_tracer
from gateway.telemetry import shutdown as shutdown_tracing
from gateway.wiring import build_service
from memgate.v1 import memgate_pb2, memgate_pb2_grpc

log = logging.getLogger("memgate.server")
SERVICE_NAME = memgate_pb2.DESCRIPTOR.services_by_name["MemoryGateway"].full_name


class Gateway:
    """A running gateway: the server, its port and the service behind it."""

    def __init__(
        self,
        server: grpc.aio.Server,
        port: int,
        service: MemoryService,
        health_servicer: health.aio.HealthServicer,
        metrics: MetricsServer | None = None,
        admission: Admission | None = None,
    ) -> None:
        self.admission = admission
        self.server = server
        self.port = port
        self.service = service
        self._health = health_servicer
        self.metrics = metrics

    async def start(self) -> None:
        if self.metrics:
            await self.metrics.start()
        await self.server.start()
        await self._health.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
        await self._health.set("", health_pb2.HealthCheckResponse.SERVING)
        if self.metrics:
            self.metrics.state = "ready"

    async def stop(self, grace: float = 5.0) -> None:
        if self.metrics:
            self.metrics.state = "draining"
        await self._health.enter_graceful_shutdown()
        await self.server.stop(grace)
        if self.metrics:
            await self.metrics.close()
        await self.service.close()
        shutdown_tracing(self.service.tracer)


async def create_server(settings: Settings, service: MemoryService | None = None) -> Gateway:
    """Starts the service's stores and binds the server (port 0 picks a free port), over TLS
    (and mTLS) when the settings name certificates."""
    credentials = server_credentials(settings)  # a missing or bad PEM file fails before anything
    warning = exposure_warning(settings)
    if warning:
        log.warning("!" * 20 + " %s " + "!" * 20, warning)
    service = service or build_service(settings, build_tracer(settings))
    try:
        await service.start()
    except BaseException:
        await service.close()
        raise
    if settings.worker_threads:
        asyncio.get_running_loop().set_default_executor(
            ThreadPoolExecutor(settings.worker_threads, thread_name_prefix="memgate-worker")
        )
    admission = Admission(
        Bounds(
            settings.max_inflight_reads,
            settings.max_inflight_reads_per_agent,
            settings.admission_queue_reads,
            settings.admission_queue_timeout_ms / 1000,
        ),
        Bounds(
            settings.max_inflight_writes,
            settings.max_inflight_writes_per_agent,
            settings.admission_queue_writes,
            settings.admission_queue_timeout_ms / 1000,
        ),
        settings.overload_retry_after_ms,
        settings.overload_retry_after_max_ms,
    )
    server = grpc.aio.server(
        # ErrorMapping first: it authenticates, then admission counts the call
        interceptors=[
            ErrorMapping(
                settings.api_keys,
                service.metrics.observe_rpc,
                service.tracer,
                settings.agent_from_certificate,
                FailureLimiter(settings.auth_failure_limit, settings.auth_failure_window_s),
            ),
            admission,
        ],
        maximum_concurrent_rpcs=settings.concurrent_rpc_cap(),
        options=[
            ("grpc.max_receive_message_length", 16 * 1024 * 1024),
            ("grpc.so_reuseport", 0),
        ],
    )
    memgate_pb2_grpc.add_MemoryGatewayServicer_to_server(GatewayServicer(service), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    address = f"{settings.host}:{settings.port}"
    try:
        if credentials is None:
            port = server.add_insecure_port(address)
        else:
            port = server.add_secure_port(address, credentials)
    except RuntimeError:  # grpcio's "Failed to bind to address …" (older ones returned 0)
        port = 0
    if port == 0:
        await service.close()
        raise OSError(bind_failure(settings.host, settings.port, credentials is not None))
    metrics = (
        MetricsServer(GatewayMetrics(service), settings.host, settings.metrics_port)
        if settings.metrics_port
        else None
    )
    return Gateway(server, port, service, health_servicer, metrics, admission)


def bind_failure(host: str, port: int, tls: bool) -> str:
    """Why the gateway could not listen, in one line that says what to do."""
    try:
        with socket.create_server((host, port)):
            pass
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            return (
                f"{host}:{port} is in use (is another memgate running?): stop it, or pass "
                "--port with a free port"
            )
        return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    if tls:
        return (
            f"cannot listen on {host}:{port} with TLS: check that --tls-cert and --tls-key are "
            "a matching PEM certificate and private key"
        )
    return f"cannot listen on {host}:{port}"


@contextmanager
def gateway_in_thread(
    settings: Settings, tracer: Tracer | None = None
) -> Iterator[tuple[Gateway, asyncio.AbstractEventLoop]]:
    """Run a gateway on its own event loop in a background thread; yields it and its loop
    (``asyncio.run_coroutine_threadsafe(coro, loop)`` reaches the service). ``tracer`` replaces
    the one the settings configure (a benchmark's stage timer)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="memgate-loop", daemon=True)
    thread.start()

    async def boot() -> Gateway:
        service = None if tracer is None else build_service(settings, tracer)
        gateway = await create_server(settings, service)
        await gateway.start()
        return gateway

    try:
        gateway = asyncio.run_coroutine_threadsafe(boot(), loop).result(300)
        try:
            yield gateway, loop
        finally:
            asyncio.run_coroutine_threadsafe(gateway.stop(grace=1.0), loop).result(120)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


@contextmanager
def serve_in_thread(settings: Settings) -> Iterator[str]:
    """Run a gateway on its own event loop in a background thread; yields its address.

    For embedding memgate in a synchronous program (the demo, benchmarks, tests)."""
    with gateway_in_thread(settings) as (gateway, _):
        yield f"{settings.host}:{gateway.port}"
