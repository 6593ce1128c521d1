"""Deterministic feature-hashing embedder, for tests and offline development.

NOT semantic: it measures surface (lexical) overlap only.  "cilantro" and
"coriander" are unrelated to it, while two sentences sharing most of their
words and character trigrams are close.  Use it where a real model would be
too slow or unavailable and only determinism / near-duplicate behaviour
matters.

Features, each hashed with BLAKE2b (stable across processes and platforms,
unlike ``hash()`` which is salted per process) into ``dim`` signed buckets:

* lower-cased word unigrams (``\\w+`` runs; each CJK character counts as
  one word), weight 1.0;
* character 3-grams of the lower-cased, whitespace-collapsed text padded with
  one space on each side, weight 0.5 -- so text without spaces (e.g. Chinese)
  and very short strings still get features.

Rows are L2-normalised.  The empty (or whitespace-only) text maps to a fixed
unit vector of its own.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

__all__ = ["HashEmbedder"]

# CJK ideographs / kana / hangul syllables are single "words" (these scripts do
# not separate words with spaces); other word characters form runs.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_WORD_RE = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+")
_WORD_WEIGHT = 1.0
_CHAR_WEIGHT = 0.5
_NGRAM = 3
_EMPTY_FEATURE = "e:<empty>"


@lru_cache(maxsize=1 << 16)
def _feature_hash(feature: str) -> int:
    """64-bit stable hash of a feature string (lru_cache is thread-safe)."""
    digest = hashlib.blake2b(
        feature.encode("utf-8"), digest_size=8, person=b"memgate-hash"
    ).digest()
    return int.from_bytes(digest, "little")


def _features(text: str) -> list[tuple[str, float]]:
    lowered = " ".join(text.lower().split())
    if not lowered:
        return [(_EMPTY_FEATURE, 1.0)]
    feats: list[tuple[str, float]] = [("w:" + w, _WORD_WEIGHT) for w in _WORD_RE.findall(lowered)]
    padded = f" {lowered} "
    feats.extend(
        ("c:" + padded[i : i + _NGRAM], _CHAR_WEIGHT) for i in range(len(padded) - _NGRAM + 1)
    )
    return feats


class HashEmbedder:
    """Fast, deterministic, non-semantic embedder (see module docstring)."""

    def __init__(self, dim: int = 384) -> None:
        if dim < 2:
            raise ValueError(f"dim must be >= 2, got {dim}")
        self.dim = int(dim)
        self.name = f"hash-{self.dim}"

    def __repr__(self) -> str:
        return f"HashEmbedder(dim={self.dim})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError(
                "embed() takes a sequence of strings, not a single str; wrap it in a list"
            )
        items = list(texts)
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        for row, text in enumerate(items):
            if not isinstance(text, str):
                raise TypeError(f"texts[{row}] is {type(text).__name__}, expected str")
            vec = np.zeros(self.dim, dtype=np.float64)
            for feature, weight in _features(text):
                h = _feature_hash(feature)
                sign = 1.0 if (h >> 63) & 1 else -1.0
                vec[h % self.dim] += sign * weight
            norm = float(np.linalg.norm(vec))
            if norm == 0.0:  # all features cancelled out in their buckets (vanishingly rare)
                vec[_feature_hash(_EMPTY_FEATURE) % self.dim] = 1.0
                norm = 1.0
            out[row] = vec / norm
        return out
