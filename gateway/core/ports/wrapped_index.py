"""``WrappedIndex``: a ``VectorIndex`` that passes every call to the one it wraps, for the
indexes built around another (``stores/vector_cache.py``, ``stores/redis_changes.py``,
``gateway/recall_workers/broadcast.py``): each overrides only what it adds, and adds to both
searches at once through ``_searching``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Generic, TypeVar

import numpy as np

from gateway.core.model.models import Layer, VectorItem
from gateway.core.ports.ports import VectorIndex

Inner = TypeVar("Inner", bound=VectorIndex)


class WrappedIndex(Generic[Inner]):
    """``inner`` as it is; a subclass overrides the calls it changes."""

    def __init__(self, inner: Inner) -> None:
        self._inner = inner

    @asynccontextmanager
    async def _searching(self, namespaces: Sequence[str]) -> AsyncIterator[Sequence[str]]:
        """Around ``search`` and ``search_many``: yields the namespaces ``inner`` searches."""
        yield namespaces

    async def search(
        self,
        vector: np.ndarray,
        namespaces: Sequence[str],
        k: int,
        layers: Sequence[Layer] | None = None,
    ) -> list[tuple[str, float]]:
        async with self._searching(namespaces) as searched:
            return await self._inner.search(vector, searched, k, layers)

    async def search_many(
        self,
        vectors: np.ndarray,
        namespaces: Sequence[str],
        k: int,
        layers: Sequence[Layer] | None = None,
    ) -> list[list[tuple[str, float]]]:
        async with self._searching(namespaces) as searched:
            return await self._inner.search_many(vectors, searched, k, layers)

    async def start(self) -> None:
        await self._inner.start()

    async def close(self) -> None:
        await self._inner.close()

    async def ping(self) -> None:
        await self._inner.ping()

    async def durability(self) -> str:
        return await self._inner.durability()

    def needs_rebuild(self) -> bool:
        return self._inner.needs_rebuild()

    def on_demand(self) -> bool:
        return self._inner.on_demand()

    async def sync(self) -> None:
        await self._inner.sync()

    async def upsert(self, items: Sequence[VectorItem]) -> None:
        await self._inner.upsert(items)

    async def delete(self, ids: Sequence[str], erased: bool = True) -> None:
        await self._inner.delete(ids, erased)

    async def flush(self) -> None:
        await self._inner.flush()

    async def reset(self) -> None:
        await self._inner.reset()

    async def count(self) -> int:
        return await self._inner.count()
