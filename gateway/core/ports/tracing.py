"""The tracing port: the core opens named spans through a ``Tracer`` and never imports a tracing
library. The default does nothing; ``gateway/telemetry.py`` adapts OpenTelemetry to it."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Iterator, Mapping
from typing import Literal, Protocol, TypeVar

T = TypeVar("T")
AttributeValue = str | int | float | bool
#: "server" for the span of an incoming call (its parent may come from the caller's ``carrier``)
SpanKind = Literal["internal", "server"]


class Span(Protocol):
    def set_attribute(self, key: str, value: AttributeValue) -> None: ...

    def set_error(self, message: str) -> None:
        """Marks the span failed (for an error handled inside it, e.g. mapped to a status)."""


class Tracer(Protocol):
    def span(
        self,
        name: str,
        attributes: dict[str, AttributeValue] | None = None,
        kind: SpanKind = "internal",
        carrier: Mapping[str, str] | None = None,
    ) -> contextlib.AbstractContextManager[Span]:
        """A span around the ``with`` body, a child of the current one (or, for a server span, of
        the remote span named in ``carrier``, e.g. a ``traceparent`` header); an exception that
        leaves the body is recorded on it."""


class _NullSpan:
    def set_attribute(self, key: str, value: AttributeValue) -> None:
        pass

    def set_error(self, message: str) -> None:
        pass


#: a span that records nothing (for tracers that only time, or do nothing)
NULL_SPAN: Span = _NullSpan()


class NullTracer:
    """Tracing off: spans cost one context manager."""

    @contextlib.contextmanager
    def span(
        self,
        name: str,
        attributes: dict[str, AttributeValue] | None = None,
        kind: SpanKind = "internal",
        carrier: Mapping[str, str] | None = None,
    ) -> Iterator[Span]:
        yield NULL_SPAN


NULL_TRACER: Tracer = NullTracer()


async def traced(
    tracer: Tracer,
    name: str,
    work: Awaitable[T],
    attributes: dict[str, AttributeValue] | None = None,
) -> T:
    """Await ``work`` inside a span (for stages run side by side with ``asyncio.gather``)."""
    with tracer.span(name, attributes):
        return await work
