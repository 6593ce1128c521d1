"""Text embedders for memgate.

* :class:`MiniLMEmbedder` -- all-MiniLM-L6-v2 in pure numpy (384-d, semantic).
* :class:`HashEmbedder` -- deterministic feature hashing (384-d, NOT semantic; tests).
* :class:`CachedEmbedder` -- thread-safe LRU wrapper around any embedder.
* :func:`build_embedder` -- factory: ``build_embedder("minilm" | "hash", cache_size=1024)``.

Every embedder follows the :class:`Embedder` protocol: ``embed(texts)`` returns
a float32 array of shape ``(len(texts), dim)`` whose rows are L2-normalised
(so cosine similarity is a dot product); an empty input gives ``(0, dim)``.
"""

from __future__ import annotations

from gateway.core.ports import Embedder

from .cache import CachedEmbedder
from .factory import build_embedder
from .hashed import HashEmbedder
from .minilm import MiniLMEmbedder

__all__ = ["Embedder", "MiniLMEmbedder", "HashEmbedder", "CachedEmbedder", "build_embedder"]
