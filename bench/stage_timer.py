"""A ``Tracer`` that times spans instead of exporting them: where one recall's time goes.

``bench.recall_speed --stages`` hands one to the gateway and reads, after each recall, how long
each span took (``rpc Recall`` around the whole call in the server, ``recall.embed``,
``recall.keyword_search`` beside it, ``recall.vector_search``, ``store.records.get`` ...). Calls
must not overlap: ``take()`` returns everything timed since the last ``take()``, background work
that ran meanwhile included (an index flush, access statistics: the spans only some calls have).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Mapping

from gateway.core.ports.tracing import NULL_SPAN, AttributeValue, Span, SpanKind


class StageTimer:
    """Span name -> milliseconds spent in it (summed when a span repeats) since ``take()``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._times: dict[str, float] = {}

    @contextlib.contextmanager
    def span(
        self,
        name: str,
        attributes: dict[str, AttributeValue] | None = None,
        kind: SpanKind = "internal",
        carrier: Mapping[str, str] | None = None,
    ) -> Iterator[Span]:
        start = time.perf_counter()
        try:
            yield NULL_SPAN
        finally:
            ms = (time.perf_counter() - start) * 1000
            with self._lock:
                self._times[name] = self._times.get(name, 0.0) + ms

    def take(self) -> dict[str, float]:
        with self._lock:
            times, self._times = self._times, {}
        return times
