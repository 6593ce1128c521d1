"""In-process metrics (seed 003 §4.3): calls and latency per RPC and status, store calls, recalls
and hits per layer. The figures behind ``Stats``; every observation is also handed to the sinks
that subscribed (``MetricsSink``: the Prometheus exporter in ``gateway/rpc/prometheus.py``)."""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Protocol

from gateway.core.model.models import Layer

_SAMPLES = 2048
NAMESPACE_CLASSES = ("agent", "user", "task", "global")


def percentile(values: Iterable[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def namespace_class(namespace: str) -> str:
    """agent | user | task | global (the part before the slash); 'other' when malformed."""
    kind = namespace.split("/", 1)[0]
    return kind if kind in NAMESPACE_CLASSES else "other"


class MetricsSink(Protocol):
    """Receives each observation as it happens (to keep histograms and labelled counters)."""

    def rpc(self, method: str, seconds: float, code: str) -> None: ...

    def store_call(self, store: str, op: str, seconds: float, ok: bool) -> None: ...

    def recall(
        self,
        asked: Sequence[tuple[str, str]],
        hits: Sequence[tuple[str, str]],
        ages: Sequence[tuple[str, float]],
    ) -> None:
        """``asked``: (layer, namespace class) pairs the recall searched; ``hits``: the pairs
        that answered; ``ages``: (layer, seconds since the memory was last written) per hit."""


class Metrics:
    def __init__(self) -> None:
        self.rpc_calls: defaultdict[tuple[str, str], int] = defaultdict(int)
        self.rpc_seconds: defaultdict[str, deque[float]] = defaultdict(
            lambda: deque(maxlen=_SAMPLES)
        )
        self.recalls: defaultdict[Layer, int] = defaultdict(int)
        self.recall_hits: defaultdict[Layer, int] = defaultdict(int)
        self._sinks: list[MetricsSink] = []

    def add_sink(self, sink: MetricsSink) -> None:
        self._sinks.append(sink)

    def observe_rpc(self, method: str, seconds: float, code: str) -> None:
        self.rpc_calls[(method, code)] += 1
        self.rpc_seconds[method].append(seconds)
        for sink in self._sinks:
            sink.rpc(method, seconds, code)

    def observe_store(self, store: str, op: str, seconds: float, ok: bool) -> None:
        for sink in self._sinks:
            sink.store_call(store, op, seconds, ok)

    def observe_recall(
        self,
        layers: Iterable[Layer],
        namespaces: Sequence[str],
        hits: Iterable[tuple[Layer, str, datetime]],
        now: datetime,
    ) -> None:
        """One recall that asked ``layers`` over ``namespaces`` and returned ``hits``
        (layer, namespace, last written) — counted per layer, and per namespace class too."""
        asked_layers = list(dict.fromkeys(layers))
        found = list(hits)
        for layer in asked_layers:
            self.recalls[layer] += 1
        for layer in {h[0] for h in found}:
            self.recall_hits[layer] += 1
        if not self._sinks:
            return
        classes = list(dict.fromkeys(namespace_class(ns) for ns in namespaces))
        asked = [(layer.value, c) for layer in asked_layers for c in classes]
        answered = list(dict.fromkeys((h[0].value, namespace_class(h[1])) for h in found))
        ages = [(h[0].value, max(0.0, (now - h[2]).total_seconds())) for h in found]
        for sink in self._sinks:
            sink.recall(asked, answered, ages)

    def hit_rate(self, layer: Layer) -> float:
        asked = self.recalls.get(layer, 0)
        return self.recall_hits.get(layer, 0) / asked if asked else 0.0
