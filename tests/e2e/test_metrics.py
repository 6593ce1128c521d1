"""Operators: Prometheus metrics over HTTP and the same figures in Stats."""

from __future__ import annotations

import contextlib
import socket
import time
import urllib.request
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

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
    m = _samples(body)
    assert "# TYPE memgate_rpc_calls_total counter" in body
    assert m[("memgate_rpc_calls_total", ("code", "OK"), ("method", "Write"))] == 1
    assert m[_key("memgate_recall_hits_total", layer="semantic", namespace_class="user")] == 1
    assert m[_key("memgate_recalls_total", layer="episodic", namespace_class="user")] == 1
    assert _key("memgate_recall_hits_total", layer="episodic", namespace_class="user") not in m
    assert m[_key("memgate_breaker_state", store="graph", state="closed")] == 1
    assert m[_key("memgate_memories", layer="semantic", status="active")] == 1
    assert m[_key("memgate_journal_pending")] == 0
    # histograms: RPC latency, store latency, freshness of what was recalled
    assert "# TYPE memgate_rpc_latency_seconds histogram" in body
    assert m[_key("memgate_rpc_latency_seconds_count", method="Recall")] == 2
    assert m[_key("memgate_rpc_latency_seconds_bucket", method="Recall", le="+Inf")] == 2
    assert (
        m[_key("memgate_store_latency_seconds_count", store="records", op="keyword_memories")] >= 1
    )
    # the one semantic hit was written moments ago: inside the first (1 minute) bucket
    assert m[_key("memgate_recall_memory_age_seconds_bucket", layer="semantic", le="60.0")] == 1
    assert m[_key("memgate_proposals_pending")] == 0
    # the process, the interpreter and the build
    assert m[_key("process_resident_memory_bytes")] > 10 * 2**20
    assert m[_key("process_cpu_seconds_total")] > 0 and m[_key("process_open_fds")] > 0
    assert abs(m[_key("process_start_time_seconds")] - time.time()) < 3600
    assert any(k[0] == "python_info" for k in m) and any(
        k[0] == "python_gc_collections_total" for k in m
    )
    (build,) = [dict(k[1:]) for k in m if k[0] == "memgate_build_info"]
    assert build["embedder"] == stats.embedder and build["version"] == version("memgate")
    assert build["commit"] and "\n" not in build["commit"]


def test_proposal_queue_depth_and_age(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with serve_in_thread(gateway_settings(tmp_path, metrics_port=port)) as address:
        with GatewayClient(address, agent_id="helper") as c:
            c.write("global", "semantic", "Deploys go out on Tuesdays")
            c.write("global", "semantic", "Code review needs two approvals")
        time.sleep(1.1)
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        m = _samples(body)
        assert m[_key("memgate_proposals_pending")] == 2
        assert m[_key("memgate_proposal_oldest_age_seconds")] >= 1.0
        with GatewayClient(address, agent_id="master") as c:
            for p in c.proposals():
                c.reject(p.id, "not now")
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    m = _samples(body)
    assert m[_key("memgate_proposals_pending")] == 0
    assert m[_key("memgate_proposal_oldest_age_seconds")] == 0


Key = tuple[Any, ...]


def _key(name: str, **labels: str) -> Key:
    return (name, *sorted(labels.items()))


def _samples(body: str) -> dict[Key, float]:
    """Every sample of the exposition (parsed by prometheus_client), keyed by name and labels."""
    return {
        _key(s.name, **s.labels): s.value
        for family in text_string_to_metric_families(body)
        for s in family.samples
    }


def test_health_and_readiness_probes(tmp_path: Path) -> None:
    """``/healthz`` 200 while the process serves; ``/readyz`` 200 once the gateway takes calls
    and 503 ("draining") from the moment it starts to stop."""
    import urllib.error

    from gateway.rpc.server import gateway_in_thread

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    with gateway_in_thread(gateway_settings(tmp_path, metrics_port=port)) as (gw, _):
        assert urllib.request.urlopen(f"{base}/healthz", timeout=5).read() == b"ok\n"
        assert urllib.request.urlopen(f"{base}/readyz", timeout=5).read() == b"ready\n"
        assert gw.metrics is not None
        gw.metrics.state = "draining"  # what Gateway.stop sets first
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"{base}/readyz", timeout=5)
        assert err.value.code == 503 and err.value.read() == b"draining\n"
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"{base}/nope", timeout=5)
        assert err.value.code == 404


def test_the_metrics_port_is_bounded_under_abuse(tmp_path: Path) -> None:
    """Issue 49 N8: a request line over the limit is answered 431 (it raised an unhandled error);
    headers sent slowly, one every second, are cut at the head's deadline (each line used to get
    5 s of its own, without end); the endpoint goes on serving."""
    from gateway.rpc import metrics_http

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    with serve_in_thread(gateway_settings(tmp_path, metrics_port=port)):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as long:
            long.sendall(b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n")
            assert long.recv(200).startswith(b"HTTP/1.1 431")
        started = time.monotonic()
        with socket.create_connection(("127.0.0.1", port), timeout=30) as slow:
            slow.sendall(b"GET /metrics HTTP/1.1\r\n")
            answer = b""
            for i in range(20):  # 20 s of headers, one a second
                try:
                    slow.sendall(f"X-Slow-{i}: 1\r\n".encode())
                except OSError:
                    break
                time.sleep(1)
            with contextlib.suppress(OSError):
                answer = slow.recv(100)
        assert answer == b"" and time.monotonic() - started < metrics_http.HEAD_TIMEOUT_S + 3
        assert urllib.request.urlopen(f"{base}/healthz", timeout=5).read() == b"ok\n"


def test_a_chinese_store_under_an_english_only_embedder_is_told_the_fix(tmp_path: Path) -> None:
    """Stats, ``memgate status`` and /metrics show the stored texts' languages; a store that is
    mostly Chinese under an embedder that reads English only (here the hash embedder) gets one
    line naming the command that fixes it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = gateway_settings(tmp_path, metrics_port=port)
    zh = [f"用户第{i}次提到她喜欢在周末去西湖边散步。" for i in range(24)]
    en = [f"The user mentioned walk number {i} along the river." for i in range(6)]
    with serve_in_thread(settings) as address:
        with GatewayClient(address, agent_id="master") as c:
            c.batch_write(
                [{"namespace": "user/zh", "layer": "episodic", "content": t} for t in zh + en],
                wait=True,
            )
            stats = c.stats()
            from gateway.status_cli import gather

            status = gather(c, address)
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    assert stats.languages_sampled == 30
    assert stats.languages == pytest.approx({"zh": 0.8, "other": 0.2})
    assert "memgate serve --embedder e5-multilingual" in stats.embedder_advice
    assert status["languages"] == stats.languages and status["embedder_advice"]
    m = _samples(body)
    assert m[_key("memgate_stored_language_share", language="zh")] == pytest.approx(0.8)
    assert m[_key("memgate_embedder_advice")] == 1
