"""LRU cache in front of any :class:`~gateway.embedding.Embedder`."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from . import Embedder

__all__ = ["CachedEmbedder", "normalize_text"]

#: cache keys of query vectors start with this (no text does: it is a control character)
QUERY_KEY = "\x00q:"

# Characters that every memgate embedder treats as a plain separator: ASCII space, tab, CR, LF and
# the Unicode space separators (Zs) plus U+2028/U+2029.  The BERT normaliser maps exactly these to
# a space and its pre-tokeniser splits on them; HashEmbedder collapses them too.  Deliberately NOT
# included: \v, \f, \x1c-\x1f, \x85 (Python whitespace, but control characters the BERT
# normaliser *deletes*, so "a\x0bb" embeds as "ab", not "a b").
_SEPARATORS = re.compile("[ \t\n\r\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")


def normalize_text(text: str) -> str:
    """Cache key of a text: separator runs collapsed to one space, ends stripped.

    Texts with the same key get the same tokens (MiniLM) or features (hash),
    so they have the same vector.
    """
    return _SEPARATORS.sub(" ", text).strip(" ")


class CachedEmbedder:
    """Per-text LRU cache wrapping another embedder; same ``Embedder`` protocol.

    * ``name`` and ``dim`` are the inner embedder's (the vectors are identical).
    * Keys are :func:`normalize_text` of the texts (whitespace collapsed and
      stripped), and the inner embedder is given the normalised text, so
      "hello  world" and " hello world\n" share one entry and one vector.
    * Only the texts not in the cache are embedded, in a single ``inner.embed``
      call (duplicates within a call are embedded once).
    * Counters: ``misses`` counts texts that had to be sent to the inner
      embedder, ``hits`` counts every other requested item, so
      ``hits + misses`` is the number of texts requested.
    * Thread-safe: the cache and counters are guarded by a lock; the lock is
      *not* held while the inner embedder runs, so concurrent callers are not
      serialised on the model (two threads missing the same text at the same
      time may both compute it; the result is the same).
    * Cached rows are stored read-only and ``embed`` always returns a fresh,
      writable array, so callers cannot corrupt the cache.
    """

    def __init__(self, inner: Embedder, max_entries: int = 1024) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, got {max_entries}")
        self.inner = inner
        self.name: str = inner.name
        self.dim: int = inner.dim
        self.max_entries = int(max_entries)
        self.hits = 0
        self.misses = 0
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.inner!r}, max_entries={self.max_entries})"

    def __len__(self) -> int:
        with self._lock:
            return len(self._cache)

    def clear(self) -> None:
        """Drop all cached vectors and reset the counters."""
        with self._lock:
            self._cache.clear()
            self.hits = 0
            self.misses = 0

    def forget_texts(self) -> None:
        """Drop every cached text, keeping the counters (an erasure: ``gateway.core.screening.memo``)."""
        with self._lock:
            self._cache.clear()

    texts_held = __len__

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._cached(texts, self.inner.embed, "")

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """The inner embedder's query vectors (``embed_queries`` where it has one: a query may be
        embedded differently from a stored text), cached apart from the texts' vectors."""
        inner = getattr(self.inner, "embed_queries", None)
        if inner is None:
            return self.embed(texts)
        return self._cached(texts, inner, QUERY_KEY)

    def _cached(self, texts: Sequence[str], compute: Any, prefix: str) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError(
                "embed() takes a sequence of strings, not a single str; wrap it in a list"
            )
        items = list(texts)
        for i, text in enumerate(items):
            if not isinstance(text, str):
                raise TypeError(f"texts[{i}] is {type(text).__name__}, expected str")
        keys = [prefix + normalize_text(t) for t in items]
        out = np.empty((len(items), self.dim), dtype=np.float32)
        missing: dict[str, list[int]] = {}
        with self._lock:
            for i, text in enumerate(keys):
                vec = self._cache.get(text)
                if vec is not None:
                    self._cache.move_to_end(text)
                    out[i] = vec
                    self.hits += 1
                elif text in missing:
                    missing[text].append(i)
                    self.hits += 1
                else:
                    missing[text] = [i]
                    self.misses += 1
        if not missing:
            return out

        todo = list(missing)
        vecs = np.asarray(compute([t[len(prefix) :] for t in todo]), dtype=np.float32)
        if vecs.shape != (len(todo), self.dim):
            raise RuntimeError(
                f"inner embedder {self.inner!r} returned shape {vecs.shape}, "
                f"expected {(len(todo), self.dim)}"
            )
        with self._lock:
            for text, vec in zip(todo, vecs, strict=True):
                out[missing[text]] = vec
                stored = vec.copy()
                stored.flags.writeable = False
                self._cache[text] = stored
                self._cache.move_to_end(text)
            while len(self._cache) > self.max_entries:
                self._cache.popitem(last=False)
        return out
