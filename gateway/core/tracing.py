"""The tracing port: the core opens named spans through a ``Tracer`` and never imports a tracing
library. The default does nothing; ``gateway/telemetry.py`` adapts OpenTelemetry to it."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Iterator
from typing import Protocol, TypeVar

T = TypeVar("T")
AttributeValue = str | int | float | bool


class Span(Protocol):
    def set_attribute(self, key: str, value: AttributeValue) -> None: ...


class Tracer(Protocol):
    def span(
        self, name: str, attributes: dict[str, AttributeValue] | None = None
    ) -> contextlib.AbstractContextManager[Span]:
        """A span around the ``with`` body, a child of the current one; an exception that leaves
        the body is recorded on it."""


class _NullSpan:
    def set_attribute(self, key: str, value: AttributeValue) -> None:
        pass


class NullTracer:
    """Tracing off: spans cost one context manager."""

    @contextlib.contextmanager
    def span(
        self, name: str, attributes: dict[str, AttributeValue] | None = None
    ) -> Iterator[Span]:
        yield _NullSpan()


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
