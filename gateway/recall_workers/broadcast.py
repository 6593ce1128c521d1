"""A ``VectorIndex`` that tells a listener every change made to the one it wraps."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gateway.core.model.models import VectorItem
from gateway.core.ports.ports import VectorIndex
from gateway.core.ports.wrapped_index import WrappedIndex

#: ("u", items) | ("d", ids) | ("r", ()) - an upsert, a delete, a reset - after it was made;
#: ("f", ()): forget every text held (an erasure, ``RecallWorkers.forget_texts``)
IndexChange = tuple[str, Sequence[VectorItem] | Sequence[str]]
IndexListener = Callable[[IndexChange], None]


class BroadcastIndex(WrappedIndex[VectorIndex]):
    """``inner`` with every upsert, delete and reset passed to ``listener`` once made."""

    def __init__(self, inner: VectorIndex, listener: IndexListener) -> None:
        super().__init__(inner)
        self._listener = listener

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
