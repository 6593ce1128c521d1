"""Operators: Prometheus metrics over HTTP and the same figures in Stats."""

from __future__ import annotations

import socket
import urllib.request
from pathlib import Path

from gateway.client import GatewayClient
from gateway.rpc.server import serve_in_thread
from tests.e2e.conftest import gateway_settings


def test_metrics_endpoint_and_stats(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = gateway_settings(tmp_path, metrics_port=port)
    with serve_in_thread(settings) as address:
        with GatewayClient(address, agent_id="master") as c:
            c.write("user/m", "semantic", "The user likes green tea", wait=True)
            c.recall("green tea", namespaces=["user/m"], layers=["semantic"])
            c.recall("nothing about this", namespaces=["user/empty"], layers=["episodic"])
            stats = c.stats()
        by_layer = {r.layer: r for r in stats.recall}
        assert by_layer["semantic"].recalls == 1 and by_layer["semantic"].hits == 1
        assert by_layer["episodic"].recalls == 1 and by_layer["episodic"].hits == 0
        assert stats.apply_lag_seconds == 0 and stats.journal_pending == 0
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    assert "# TYPE memgate_rpc_calls_total counter" in body
    assert 'memgate_rpc_calls_total{method="Write",code="OK"} 1' in body
    assert 'memgate_recall_hits_total{layer="semantic"} 1' in body
    assert 'memgate_breaker_state{store="graph",state="closed"} 1' in body
    assert 'memgate_memories{layer="semantic",status="active"} 1' in body
    assert "memgate_journal_pending 0" in body
