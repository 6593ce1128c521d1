"""``CountingEmbedder``: the hashed embedder (``gateway.embedding.hashed``), recording every
call and failing the first ``failures`` of them — for the tests of what batches, caches or looks
ahead of an embedder. Calls may come from worker threads."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from gateway.embedding.hashed import HashEmbedder


class CountingEmbedder:
    def __init__(self, name: str = "counting", failures: int = 0) -> None:
        self.inner = HashEmbedder()
        self.name = name
        self.dim = self.inner.dim
        self.calls: list[list[str]] = []  # the texts of every call, failed ones too
        self.failures = failures
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            self.calls.append(list(texts))
            if self.failures:
                self.failures -= 1
                raise RuntimeError("model crashed")
        return self.inner.embed(texts)
