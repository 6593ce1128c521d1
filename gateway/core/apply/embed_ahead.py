"""Embeds the next batch's texts while the current batch is being stored, so the apply lane keeps
the embedder busy: the store round trips of batch N overlap the embedding of batch N+1."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence

import numpy as np

from gateway.core.model.control import JournalEntry
from gateway.core.ports.ports import Embedder

#: returns the journal entries that follow the batch being applied (possibly none)
Upcoming = Callable[[], Awaitable[Sequence[JournalEntry]]]


class EmbedAhead:
    """At most one embedding in flight, keyed by write id. ``vectors`` takes what was embedded
    ahead and embeds only the rest; a text embedded ahead but never asked for is dropped."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._rows: dict[str, int] = {}
        self._task: asyncio.Future[np.ndarray] | None = None

    def start(self, items: Sequence[tuple[str, str]]) -> None:
        """Embed (write id, text) pairs in a worker thread, replacing any earlier ones."""
        self._drop()
        if not items:
            return
        self._rows = {write_id: i for i, (write_id, _) in enumerate(items)}
        texts = [text for _, text in items]
        task = asyncio.ensure_future(asyncio.to_thread(self._embedder.embed, texts))
        task.add_done_callback(_consume)
        self._task = task

    async def vectors(self, items: Sequence[tuple[str, str]]) -> np.ndarray:
        """The vectors of (write id, text) pairs, in order."""
        ahead: np.ndarray | None = None
        rows, task = self._rows, self._task
        self._rows, self._task = {}, None
        if task is not None and any(write_id in rows for write_id, _ in items):
            with contextlib.suppress(Exception):  # a failed look-ahead is simply redone
                ahead = await task
        out: list[np.ndarray | None] = [
            ahead[rows[write_id]] if ahead is not None and write_id in rows else None
            for write_id, _ in items
        ]
        missing = [i for i, v in enumerate(out) if v is None]
        if missing:
            fresh = await asyncio.to_thread(self._embedder.embed, [items[i][1] for i in missing])
            for i, vector in zip(missing, fresh, strict=True):
                out[i] = vector
        if not out:
            return np.zeros((0, self._embedder.dim), dtype=np.float32)
        return np.vstack([v for v in out if v is not None]).astype(np.float32, copy=False)

    def _drop(self) -> None:
        self._rows, self._task = {}, None


def _consume(task: asyncio.Future[np.ndarray]) -> None:
    if not task.cancelled():
        task.exception()  # retrieved: a look-ahead that failed is redone by ``vectors``
