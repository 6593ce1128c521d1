"""The Prometheus endpoint on the gateway's host: ``GET /metrics`` answers with the exposition
``prometheus_client`` renders from the gateway's registry (``gateway/rpc/prometheus.py``);
``GET /healthz`` answers 200 while the process serves, ``GET /readyz`` 200 once the gateway takes
calls and 503 while it starts or drains (for a load balancer or an orchestrator's probes).

One small asyncio server on the gateway's own loop (so reading the state needs no thread hops).
Off unless ``metrics_port`` is set (``memgate serve --metrics-port 9464``)."""

from __future__ import annotations

import asyncio
import contextlib

from gateway.rpc.prometheus import CONTENT_TYPE, GatewayMetrics

#: bounds of a request: a line (request line or header), the header lines, the time
#: to send the whole head, and connections served at once
MAX_LINE = 8 * 1024
MAX_HEADERS = 100
HEAD_TIMEOUT_S = 5.0
MAX_CONNECTIONS = 64


class MetricsServer:
    def __init__(self, metrics: GatewayMetrics, host: str, port: int) -> None:
        self._metrics = metrics
        self._host = host
        self._port = port
        self._server: asyncio.Server | None = None
        self.port = 0
        self.state = "starting"  # starting | ready | draining (the gateway sets it)
        self._open = 0  # connections being served

    async def start(self) -> None:
        self._server = await asyncio.start_server(
            self._handle, self._host, self._port, limit=MAX_LINE
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server:
            self._server.close()
            await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._open >= MAX_CONNECTIONS:  # bounded: a flood of idle sockets is turned away
            writer.close()
            return
        self._open += 1
        try:
            try:
                async with asyncio.timeout(HEAD_TIMEOUT_S):  # the whole head, not each line
                    request = await reader.readline()
                    for _ in range(MAX_HEADERS):
                        if await reader.readline() in (b"\r\n", b"\n", b""):
                            break  # headers are not needed
                    else:
                        raise ValueError("too many header lines")
            except ValueError:  # a line past ``MAX_LINE`` (asyncio's LimitOverrunError)
                writer.write(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
                             b"Content-Length: 0\r\nConnection: close\r\n\r\n")  # fmt: skip
                await writer.drain()
                return
            parts = request.decode("latin-1").split()
            path = parts[1].split("?")[0] if len(parts) >= 2 and parts[0] == "GET" else ""
            ctype = "text/plain; charset=utf-8"
            if path == "/metrics":
                status, body, ctype = "200 OK", await self._metrics.render(), CONTENT_TYPE
            elif path == "/healthz":
                status, body = "200 OK", b"ok\n"
            elif path == "/readyz":
                ready = self.state == "ready"
                status = "200 OK" if ready else "503 Service Unavailable"
                body = f"{self.state}\n".encode()
            else:
                status, body = "404 Not Found", b"try GET /metrics, /healthz or /readyz\n"
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
                "Connection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        except (TimeoutError, ConnectionError):
            pass
        finally:
            self._open -= 1
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()
