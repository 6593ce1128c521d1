"""In-process metrics (seed 003 §4.3): calls and latency per RPC and status, recalls and hits per
layer. Rendered as Prometheus text by ``gateway/rpc/metrics_http.py``; also behind ``Stats``."""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable

from gateway.core.models import Layer

_SAMPLES = 2048


def percentile(values: Iterable[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


class Metrics:
    def __init__(self) -> None:
        self.rpc_calls: defaultdict[tuple[str, str], int] = defaultdict(int)
        self.rpc_seconds: defaultdict[str, deque[float]] = defaultdict(
            lambda: deque(maxlen=_SAMPLES)
        )
        self.recalls: defaultdict[Layer, int] = defaultdict(int)
        self.recall_hits: defaultdict[Layer, int] = defaultdict(int)

    def observe_rpc(self, method: str, seconds: float, code: str) -> None:
        self.rpc_calls[(method, code)] += 1
        self.rpc_seconds[method].append(seconds)

    def observe_recall(self, layers: Iterable[Layer], hit_layers: Iterable[Layer]) -> None:
        """One recall that asked ``layers`` and got at least one hit from each of ``hit_layers``."""
        for layer in layers:
            self.recalls[layer] += 1
        for layer in set(hit_layers):
            self.recall_hits[layer] += 1

    def hit_rate(self, layer: Layer) -> float:
        asked = self.recalls.get(layer, 0)
        return self.recall_hits.get(layer, 0) / asked if asked else 0.0
