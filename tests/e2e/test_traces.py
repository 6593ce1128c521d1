"""Traces: with OpenTelemetry on, each gRPC call is a server span (continuing the caller's trace
from ``traceparent``), a recall shows its stages as child spans, and store calls are spans of the
stage that made them. Recorded with the SDK's in-memory exporter."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from gateway.client import GatewayClient
from gateway.core.ports.tracing import NULL_TRACER
from gateway.rpc.server import create_server
from gateway.telemetry import OtelTracer, build_tracer
from gateway.wiring import build_service
from memgate.v1 import memgate_pb2 as pb
from memgate.v1 import memgate_pb2_grpc as pb_grpc
from tests.e2e.conftest import gateway_settings

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"


@pytest.fixture
def traced_gateway(tmp_path: Path) -> Iterator[tuple[str, InMemorySpanExporter]]:
    settings = gateway_settings(tmp_path)
    exporter = InMemorySpanExporter()
    tracer = build_tracer(settings, exporter)
    assert isinstance(tracer, OtelTracer)
    loop = asyncio.new_event_loop()

    async def boot():  # type: ignore[no-untyped-def]
        gateway = await create_server(settings, build_service(settings, tracer))
        await gateway.start()
        return gateway

    gateway = loop.run_until_complete(boot())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{gateway.port}", exporter
    finally:
        asyncio.run_coroutine_threadsafe(gateway.stop(grace=1.0), loop).result(60)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def _children(spans: list[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    return [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]


def test_a_recall_shows_its_stages_as_spans(
    traced_gateway: tuple[str, InMemorySpanExporter],
) -> None:
    address, exporter = traced_gateway
    ns = "user/traced"
    with GatewayClient(address, "master") as c:
        first = c.record_event(ns, "Met Alice at the harbour", entities=["Alice"], wait=True)
        c.record_event(ns, "Alice showed the lighthouse", entities=["Alice"], wait=True)
        assert first
        exporter.clear()
        c.recall("when did I meet Alice", namespaces=[ns], layers=["episodic", "semantic"])
    spans = list(exporter.get_finished_spans())
    (rpc,) = [s for s in spans if s.name == "rpc Recall"]
    assert rpc.kind is SpanKind.SERVER and rpc.parent is None
    assert rpc.attributes["rpc.grpc.status_code"] == "OK"
    assert rpc.attributes["memgate.agent"] == "master"
    (recall,) = _children(spans, rpc)
    assert recall.name == "recall" and recall.attributes["memgate.namespaces"] == ns
    stages = {s.name: s for s in _children(spans, recall)}
    assert {
        "recall.embed",
        "recall.vector_search",
        "recall.keyword_search",
        "recall.graph_expansion",
        "recall.scoring",
        "recall.rank",
    } <= set(stages)
    # store calls are spans under the stage that made them
    assert [s.name for s in _children(spans, stages["recall.vector_search"])] == [
        "store.vectors.search"
    ]
    assert [s.name for s in _children(spans, stages["recall.keyword_search"])] == [
        "store.records.keyword_memories"
    ]
    assert {s.name for s in _children(spans, stages["recall.graph_expansion"])} >= {
        "store.graph.neighbourhood"
    }
    assert all(s.context.trace_id == rpc.context.trace_id for s in _children(spans, recall))


def test_a_call_continues_the_callers_trace_and_records_errors(
    traced_gateway: tuple[str, InMemorySpanExporter],
) -> None:
    address, exporter = traced_gateway
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.MemoryGatewayStub(channel)
        metadata = (
            ("x-agent-id", "helper"),
            ("traceparent", f"00-{TRACE_ID}-{PARENT_ID}-01"),
        )
        with pytest.raises(grpc.RpcError) as err:
            stub.ListProposals(pb.ListProposalsRequest(), metadata=metadata, timeout=10)
    assert err.value.code() is grpc.StatusCode.PERMISSION_DENIED
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "rpc ListProposals"]
    assert format(span.context.trace_id, "032x") == TRACE_ID
    assert span.parent is not None and format(span.parent.span_id, "016x") == PARENT_ID
    assert span.attributes["rpc.grpc.status_code"] == "PERMISSION_DENIED"
    assert not span.status.is_ok


def test_tracing_is_off_by_default(tmp_path: Path) -> None:
    assert build_tracer(gateway_settings(tmp_path)) is NULL_TRACER
