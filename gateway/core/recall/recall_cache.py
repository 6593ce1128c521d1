"""What a recall asks and answers, and the short-lived cache of hot recalls (seed 000 §5.4),
dropped when a namespace they read is written and bounded by the text it holds."""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime

from gateway.core.model.events import EVERY_NAMESPACE
from gateway.core.model.models import Layer
from gateway.core.recall import scoring


@dataclass(frozen=True, slots=True)
class RecallQuery:
    query: str
    namespaces: tuple[str, ...]
    layers: tuple[Layer, ...] = ()
    top_k: int = 10
    token_budget: int = 0
    session_id: str = ""
    start: datetime | None = None
    end: datetime | None = None
    types: tuple[str, ...] = ()
    as_of: datetime | None = None  # answer as the memory stood then (validity intervals)


@dataclass(slots=True)
class RecallResult:
    hits: list[scoring.Scored]
    block: str
    block_tokens: int
    routed: tuple[Layer, ...]
    degraded: list[str] = field(default_factory=list)


#: bytes of recalled text the cache may hold; one result may take at most an eighth of it
CACHE_MAX_BYTES = 32 << 20
#: a hit's fixed cost beyond its text (its embedding and objects), for the estimate
HIT_OVERHEAD = 2_048


def result_bytes(r: RecallResult) -> int:
    """A rough size of a cached result: the text it holds plus a fixed cost per hit."""
    text = sum(len(h.memory.content) + HIT_OVERHEAD for h in r.hits)
    return text + len(r.block)


class RecallCache:
    """Hot recalls for a short time; dropped when a namespace they read is written. Bounded by
    entries and by bytes, so large results (top_k 100 of 8,000-char memories) cannot make it
    hold hundreds of megabytes."""

    def __init__(self, ttl_s: float, max_entries: int, max_bytes: int = CACHE_MAX_BYTES) -> None:
        self._ttl = ttl_s
        self._max = max_entries
        self._max_bytes = max_bytes
        self._bytes = 0
        self._items: OrderedDict[RecallQuery, tuple[float, RecallResult, int]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: RecallQuery) -> RecallResult | None:
        item = self._items.get(key)
        if item and time.monotonic() - item[0] < self._ttl:
            self._items.move_to_end(key)
            self.hits += 1
            return item[1]
        self.misses += 1
        return None

    def put(self, key: RecallQuery, value: RecallResult) -> None:
        size = result_bytes(value)
        if self._ttl <= 0 or size > self._max_bytes // 8:
            return
        self._drop(key)
        self._items[key] = (time.monotonic(), value, size)
        self._bytes += size
        while self._items and (len(self._items) > self._max or self._bytes > self._max_bytes):
            self._drop(next(iter(self._items)))

    def _drop(self, key: RecallQuery) -> None:
        item = self._items.pop(key, None)
        if item is not None:
            self._bytes -= item[2]

    def invalidate(self, namespaces: set[str]) -> None:
        """Drop the cached recalls over any of ``namespaces`` (every one: ``EVERY_NAMESPACE``)."""
        every = namespaces >= EVERY_NAMESPACE
        for key in [k for k in self._items if every or namespaces & set(k.namespaces)]:
            self._drop(key)
