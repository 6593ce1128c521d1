"""OpenTelemetry behind the core's ``Tracer`` port (the optional extra ``memgate[otel]``).

``build_tracer(settings)`` returns the no-op tracer unless ``otel_enabled`` is set; then spans go
through a ``TracerProvider`` of the gateway's own (not the process-wide one) to an OTLP/gRPC
exporter at ``otel_endpoint``. Tests pass an exporter of their own (e.g. the SDK's in-memory one).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from gateway.core.ports.tracing import NULL_TRACER, AttributeValue, Span, SpanKind, Tracer
from gateway.settings import Settings


class _OtelSpan:
    def __init__(self, span: Any) -> None:
        self._span = span

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        self._span.set_attribute(key, value)

    def set_error(self, message: str) -> None:
        from opentelemetry.trace import Status, StatusCode

        self._span.set_status(Status(StatusCode.ERROR, message))


class OtelTracer:
    """A ``Tracer`` that makes OpenTelemetry spans (children follow the current context)."""

    def __init__(self, provider: Any) -> None:
        from opentelemetry import propagate, trace

        self._provider = provider
        self._tracer = provider.get_tracer("memgate")
        self._propagate = propagate
        self._kinds = {"internal": trace.SpanKind.INTERNAL, "server": trace.SpanKind.SERVER}

    @contextlib.contextmanager
    def span(
        self,
        name: str,
        attributes: dict[str, AttributeValue] | None = None,
        kind: SpanKind = "internal",
        carrier: Mapping[str, str] | None = None,
    ) -> Iterator[Span]:
        parent = self._propagate.extract(dict(carrier)) if carrier else None
        with self._tracer.start_as_current_span(
            name, context=parent, kind=self._kinds[kind], attributes=attributes or {}
        ) as span:
            yield _OtelSpan(span)

    def shutdown(self) -> None:
        """Flushes what is buffered and stops the exporter."""
        self._provider.shutdown()


def build_tracer(settings: Settings, exporter: Any = None) -> Tracer:
    """The no-op tracer when tracing is off; else an ``OtelTracer`` exporting to OTLP (or to
    ``exporter``, synchronously, for tests)."""
    if exporter is None and not settings.otel_enabled:
        return NULL_TRACER
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    except ImportError as exc:
        raise RuntimeError("otel_enabled needs OpenTelemetry: pip install 'memgate[otel]'") from exc
    provider = TracerProvider(
        resource=Resource.create({"service.name": settings.otel_service_name})
    )
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    else:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        otlp = OTLPSpanExporter(endpoint=settings.otel_endpoint or None)
        provider.add_span_processor(BatchSpanProcessor(otlp))
    return OtelTracer(provider)


def shutdown(tracer: Tracer) -> None:
    if isinstance(tracer, OtelTracer):
        tracer.shutdown()
