"""A ``VectorIndex`` that tells a listener every change made to the one it wraps."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from gateway.core.model.models import Layer, VectorItem
from gateway.core.ports.ports import VectorIndex

#: ("u", items) | ("d", ids) | ("r", ()) - an upsert, a delete, a reset - after it was made;
#: ("f", ()): forget every text held (an erasure, ``RecallWorkers.forget_texts``)
IndexChange = tuple[str, Sequence[VectorItem] | Sequence[str]]
IndexListener = Callable[[IndexChange], None]


class BroadcastIndex:
    """``inner`` with every upsert, delete and reset passed to ``listener`` once made."""

    def __init__(self, inner: VectorIndex, listener: IndexListener) -> None:
        self._inner = inner
        self._listener = listener

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
        if items:
            self._listener(("u", list(items)))

    async def delete(self, ids: Sequence[str], erased: bool = True) -> None:
        # the workers let go of texts on an erasure's own frame (``RecallWorkers.forget_texts``)
        await self._inner.delete(ids, erased)
        if ids:
            self._listener(("d", list(ids)))

    async def reset(self) -> None:
        await self._inner.reset()
        self._listener(("r", ()))

    async def flush(self) -> None:
        await self._inner.flush()

    async def count(self) -> int:
        return await self._inner.count()

    async def search(
        self,
        vector: np.ndarray,
        namespaces: Sequence[str],
        k: int,
        layers: Sequence[Layer] | None = None,
    ) -> list[tuple[str, float]]:
        return await self._inner.search(vector, namespaces, k, layers)

    async def search_many(
        self,
        vectors: np.ndarray,
        namespaces: Sequence[str],
        k: int,
        layers: Sequence[Layer] | None = None,
    ) -> list[list[tuple[str, float]]]:
        return await self._inner.search_many(vectors, namespaces, k, layers)
