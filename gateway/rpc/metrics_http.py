"""A small Prometheus endpoint (text format 0.0.4) on the gateway's host: ``GET /metrics``.

No extra dependency: one asyncio server that answers GET and closes. Off unless
``metrics_port`` is set (``memgate serve --metrics-port 9464``)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from gateway.core.metrics import percentile
from gateway.core.service import MemoryService

_STATES = ("closed", "open", "half_open")


def _labels(**labels: Any) -> str:
    if not labels:
        return ""
    body = ",".join(
        f'{k}="{str(v).replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
        for k, v in labels.items()
    )
    return "{" + body + "}"


async def render(service: MemoryService) -> str:
    stats = await service.ops.stats()
    lines: list[str] = []

    def metric(
        name: str, kind: str, help_: str, samples: list[tuple[dict[str, Any], float]]
    ) -> None:
        lines.append(f"# HELP {name} {help_}")
        lines.append(f"# TYPE {name} {kind}")
        lines.extend(f"{name}{_labels(**labels)} {value:g}" for labels, value in samples)

    m = service.metrics
    metric(
        "memgate_rpc_calls_total",
        "counter",
        "gRPC calls by method and status code.",
        [({"method": k[0], "code": k[1]}, v) for k, v in sorted(m.rpc_calls.items())],
    )
    metric(
        "memgate_rpc_latency_seconds",
        "gauge",
        "gRPC latency quantiles over recent calls.",
        [
            ({"method": meth, "quantile": q}, percentile(samples, q * 100))
            for meth, samples in sorted(m.rpc_seconds.items())
            for q in (0.5, 0.99)
        ],
    )
    breakers = service.ops.breakers()
    metric(
        "memgate_store_latency_seconds",
        "gauge",
        "Store call latency quantiles, per store.",
        [
            ({"store": b.layer, "quantile": q}, ms / 1000)
            for b in breakers
            for q, ms in ((0.5, b.p50_ms), (0.99, b.p99_ms))
        ],
    )
    metric(
        "memgate_breaker_state",
        "gauge",
        "1 for the current circuit-breaker state of a store.",
        [({"store": b.layer, "state": s}, float(b.state == s)) for b in breakers for s in _STATES],
    )
    metric(
        "memgate_store_failures_total",
        "counter",
        "Store calls that found the backend down.",
        [({"store": b.layer}, b.failures) for b in breakers],
    )
    metric(
        "memgate_journal_pending",
        "gauge",
        "Acknowledged writes not applied yet (queue depth).",
        [({}, stats["journal_pending"])],
    )
    metric(
        "memgate_apply_lag_seconds",
        "gauge",
        "Age of the oldest acknowledged write not applied.",
        [({}, stats["apply_lag_seconds"])],
    )
    metric("memgate_vectors", "gauge", "Vectors in the FAISS index.", [({}, stats["vectors"])])
    metric(
        "memgate_memories",
        "gauge",
        "Current memories by layer and status.",
        [
            ({"layer": k.split("/")[0], "status": k.split("/")[1]}, v)
            for k, v in sorted(stats["memories"].items())
        ],
    )
    metric(
        "memgate_recalls_total",
        "counter",
        "Recalls that asked a layer.",
        [({"layer": r["layer"].value}, r["recalls"]) for r in stats["recall"]],
    )
    metric(
        "memgate_recall_hits_total",
        "counter",
        "Recalls in which a layer returned a hit.",
        [({"layer": r["layer"].value}, r["hits"]) for r in stats["recall"]],
    )
    metric(
        "memgate_recall_cache_total",
        "counter",
        "Recall cache lookups by result.",
        [
            ({"result": "hit"}, stats["recall_cache_hits"]),
            ({"result": "miss"}, stats["recall_cache_misses"]),
        ],
    )
    return "\n".join(lines) + "\n"


class MetricsServer:
    def __init__(self, service: MemoryService, host: str, port: int) -> None:
        self._service = service
        self._host = host
        self._port = port
        self._server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, self._host, self._port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server:
            self._server.close()
            await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await asyncio.wait_for(reader.readline(), 5)
            while (await asyncio.wait_for(reader.readline(), 5)) not in (b"\r\n", b"\n", b""):
                pass  # headers are not needed
            parts = request.decode("latin-1").split()
            if len(parts) >= 2 and parts[0] == "GET" and parts[1].split("?")[0] == "/metrics":
                status, body = "200 OK", (await render(self._service)).encode()
                ctype = "text/plain; version=0.0.4; charset=utf-8"
            else:
                status, body, ctype = "404 Not Found", b"try GET /metrics\n", "text/plain"
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
                "Connection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        except (TimeoutError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()
