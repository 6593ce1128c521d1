"""Query embeddings batched naturally: a worker embeds every query waiting, in one run.

Under concurrency, recalls' query embeddings queue up while the embedder is busy; each worker
thread takes the first request waiting and everything else waiting behind it (up to ``max_texts``
texts) and embeds them in one ``Embedder.embed`` call — short queries cost ~1.6x less each in a
batch of 8-16 than one at a time (docs/BENCHMARKS-HISTORY.md). No timer: a lone query is embedded as soon
as a worker is free, so batching only happens when queries would have waited anyway. A request's
texts stay together and its rows come back in its order; a failed run fails the requests in it.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Sequence
from concurrent.futures import Future

import numpy as np

from gateway.core.ports.ports import Embedder

_STOP = None


class QueryBatcher:
    """``await embed(texts)`` from an event loop; ``workers`` threads run the embedder."""

    def __init__(self, embedder: Embedder, workers: int = 1, max_texts: int = 32) -> None:
        if workers < 1 or max_texts < 1:
            raise ValueError("workers and max_texts must be >= 1")
        self._embedder = embedder
        #: an embedder that embeds a query differently from a stored text says so
        #: (``embed_queries``: the paired embedder weights a query by its language only)
        self._embed = getattr(embedder, "embed_queries", embedder.embed)
        self._max = max_texts
        self._queue: queue.SimpleQueue[tuple[list[str], Future[np.ndarray]] | None] = (
            queue.SimpleQueue()
        )
        self._workers = [
            threading.Thread(target=self._work, name=f"memgate-query-embed-{i}", daemon=True)
            for i in range(workers)
        ]
        self._started = False
        self._lock = threading.Lock()
        #: how many runs and texts (for tests and metrics: texts / runs is the batch size)
        self.runs = 0
        self.texts = 0

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        fut: Future[np.ndarray] = Future()
        self._start()
        self._queue.put((list(texts), fut))
        return await asyncio.wrap_future(fut)

    def _start(self) -> None:
        if self._started:
            return
        with self._lock:
            if not self._started:
                for w in self._workers:
                    w.start()
                self._started = True

    def _take(self) -> list[tuple[list[str], Future[np.ndarray]]] | None:
        """The first request waiting (blocks) and every one behind it, up to ``max_texts``."""
        first = self._queue.get()
        if first is None:
            return None
        taken, count = [first], len(first[0])
        while count < self._max:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is None:
                self._queue.put(None)  # for this worker's next turn
                break
            taken.append(item)
            count += len(item[0])
        return taken

    def _work(self) -> None:
        while (taken := self._take()) is not None:
            live = [(texts, fut) for texts, fut in taken if fut.set_running_or_notify_cancel()]
            if not live:
                continue
            flat = [t for texts, _ in live for t in texts]
            try:
                vectors = np.asarray(self._embed(flat), dtype=np.float32)
            except BaseException as exc:  # noqa: BLE001 - handed to every waiting caller
                for _, fut in live:
                    fut.set_exception(exc)
                continue
            with self._lock:
                self.runs += 1
                self.texts += len(flat)
            at = 0
            for texts, fut in live:
                fut.set_result(vectors[at : at + len(texts)])
                at += len(texts)

    def close(self) -> None:
        """Stop the workers once the queued requests are embedded."""
        if self._started:
            for _ in self._workers:
                self._queue.put(_STOP)
