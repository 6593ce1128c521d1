"""The recall cache: hot recalls kept for a short time, dropped when a namespace they read is
written."""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Generic, TypeVar

R = TypeVar("R")


class RecallCache(Generic[R]):
    """Hot recalls for a short time; dropped when a namespace they read is written."""

    def __init__(self, ttl_s: float, max_entries: int) -> None:
        self._ttl = ttl_s
        self._max = max_entries
        self._items: OrderedDict[tuple[object, ...], tuple[float, R]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[object, ...]) -> R | None:
        item = self._items.get(key)
        if item and time.monotonic() - item[0] < self._ttl:
            self._items.move_to_end(key)
            self.hits += 1
            return item[1]
        self.misses += 1
        return None

    def put(self, key: tuple[object, ...], value: R) -> None:
        if self._ttl <= 0:
            return
        self._items[key] = (time.monotonic(), value)
        self._items.move_to_end(key)
        while len(self._items) > self._max:
            self._items.popitem(last=False)

    def invalidate(self, namespaces: set[str]) -> None:
        for key in [k for k in self._items if namespaces & set(k[1])]:  # type: ignore[call-overload]
            del self._items[key]
